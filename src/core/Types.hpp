#pragma once
// Basic numeric types shared by the whole engine.
#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cstdint>

namespace dem {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Quat = Eigen::Quaterniond;

inline bool isFinite(const Vec3& v) {
    return std::isfinite(v.x()) && std::isfinite(v.y()) && std::isfinite(v.z());
}

// Degrees of freedom that can be blocked on a body, as in Yade's "xyzXYZ".
enum DofBit : uint8_t {
    BlockX = 1,
    BlockY = 2,
    BlockZ = 4,
    BlockRX = 8,
    BlockRY = 16,
    BlockRZ = 32,
    BlockTranslation = 7,
    BlockRotation = 56,
    BlockAll = 63
};

} // namespace dem
