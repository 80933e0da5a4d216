#include "core/StateDigest.hpp"

#include <openssl/evp.h>

#include <memory>

namespace dem {

namespace {

class Sha256 {
public:
    Sha256() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
        EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr);
    }
    void add(const void* data, size_t bytes) { EVP_DigestUpdate(ctx_.get(), data, bytes); }
    template <class T> void addVector(const std::vector<T>& v) {
        const uint64_t n = v.size();
        add(&n, sizeof n);
        if (n)
            add(v.data(), n * sizeof(T));
    }
    std::string hex() {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        EVP_DigestFinal_ex(ctx_.get(), md, &len);
        static const char* digits = "0123456789abcdef";
        std::string out;
        for (unsigned i = 0; i < len; ++i) {
            out += digits[md[i] >> 4];
            out += digits[md[i] & 15];
        }
        return out;
    }

private:
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx_;
};

} // namespace

std::string sha256Hex(const std::string& bytes) {
    Sha256 h;
    h.add(bytes.data(), bytes.size());
    return h.hex();
}

std::string stateDigest(const Simulation& sim) {
    Sha256 h;
    h.add(&sim.step, sizeof sim.step);
    h.add(&sim.time, sizeof sim.time);
    const Particles& P = sim.particles;
    h.addVector(P.id);
    h.addVector(P.pos);
    h.addVector(P.vel);
    h.addVector(P.ori);
    h.addVector(P.angVel);
    // Contacts: only touching pairs with their history. The Verlet candidates depend on when the
    // list was last rebuilt, which is not part of the physical state.
    const SpherePairs& S = sim.pairs;
    S.forEachPair([&](size_t k, uint32_t i, uint32_t j) {
        if (!S.touching(k))
            return;
        const uint32_t ij[2] = {P.id[i], P.id[j]};
        h.add(ij, sizeof ij);
        h.add(S.record(k).shear.data(), sizeof(double) * 3);
        if (S.hasRolling()) { // the moment histories, when kept (the digest is unchanged otherwise)
            h.add(S.rollingOf(k).roll.data(), sizeof(double) * 3);
            h.add(&S.rollingOf(k).twist, sizeof(double));
        }
    });
    const ObstacleContacts& O = sim.obstacleContacts;
    for (size_t p = 0; p + 1 < O.start.size(); ++p) {
        for (uint32_t e = O.start[p]; e < O.start[p + 1]; ++e) {
            if (!O.touching[e])
                continue;
            const uint32_t key[2] = {P.id[p], O.target[e]};
            h.add(key, sizeof key);
            h.add(O.shear[e].data(), sizeof(double) * 3);
            if (O.hasRolling()) {
                h.add(O.roll[e].data(), sizeof(double) * 3);
                h.add(&O.twist[e], sizeof(double));
            }
        }
    }
    for (const RigidObject& o : sim.obstacles.objects) {
        h.add(o.center.data(), sizeof(double) * 3);
        h.add(o.vel.data(), sizeof(double) * 3);
        h.add(o.angVel.data(), sizeof(double) * 3);
    }
    for (const Wall& w : sim.obstacles.walls)
        h.add(w.point.data(), sizeof(double) * 3);
    for (const Facet& f : sim.obstacles.facets)
        for (const Vec3& v : f.v)
            h.add(v.data(), sizeof(double) * 3);
    if (sim.cell.enabled) { // (nothing added without one: the digests of other scenes stay)
        h.add(sim.cell.h.data(), sizeof(double) * 9);
        h.add(sim.cell.velGrad.data(), sizeof(double) * 9);
    }
    return h.hex();
}

} // namespace dem
