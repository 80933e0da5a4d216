// The sphere pairs' contacts run in SIMD lanes (core/PairBatch.hpp). A lane must give the bits a
// contact computed alone gives (contactForce, as obstacle contacts use it), whatever lane it is
// in: otherwise results would depend on how pairs fall into batches, i.e. on the thread count.
#include "core/PairBatch.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

using namespace dem;

namespace {

bool sameBits(double a, double b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

struct Lane {
    Vec3 d, dv, shiftVel, wi, wj, shear;
    double ri, rj, mi, mj;
    uint32_t params;
};

// One pair computed alone, as the pair loop computed it before batches: Eigen geometry, then the
// law through contactForce.
struct Alone {
    double overlap;
    Vec3 force, nxf, shear;
    double dissipated, elastic;
};

Alone alone(const Lane& in, const PairParams& p, double dt, bool periodic) {
    const double reach = in.ri + in.rj;
    const double l = std::sqrt(in.d.squaredNorm());
    const double overlap = reach - l;
    const Vec3 n = l > 0 ? Vec3(in.d * (1 / l)) : Vec3::UnitZ();
    const double ai = in.ri - 0.5 * overlap, aj = in.rj - 0.5 * overlap;
    ContactInput c;
    c.n = lawVec(n);
    c.overlap = overlap;
    Vec3 vRel = in.dv - (aj * in.wj + ai * in.wi).cross(n);
    if (periodic)
        vRel -= in.shiftVel;
    c.vRel = lawVec(vRel);
    c.spin = n.dot(in.wi + in.wj);
    const double inf = std::numeric_limits<double>::infinity();
    c.mEff = in.mi == inf ? in.mj : in.mj == inf ? in.mi : in.mi * in.mj / (in.mi + in.mj);
    c.refR1 = in.ri;
    c.refR2 = in.rj;
    c.rStar = in.ri * in.rj / reach;
    Vec3Of<double> shear = lawVec(in.shear);
    const ContactResult r = contactForce(p, c, shear, dt);
    const Vec3 force = eigenVec(r.force);
    return {overlap, force, n.cross(force), eigenVec(shear), r.dissipated, r.elastic};
}

// Random touching pairs of every kind a step meets: new contacts (no history), sticking and
// sliding, closing and separating fast (a normal force the dashpot would make attractive), a
// blocked sphere (infinite mass), a zero tangential history.
std::vector<Lane> randomLanes(std::mt19937_64& rng, int count, int materials) {
    std::uniform_real_distribution<double> unit(-1, 1), pos(0.5, 1.5);
    std::vector<Lane> lanes(static_cast<size_t>(count));
    for (int k = 0; k < count; ++k) {
        Lane& a = lanes[size_t(k)];
        a.ri = 1e-3 * pos(rng);
        a.rj = 1e-3 * pos(rng);
        const Vec3 dir = Vec3(unit(rng), unit(rng), unit(rng)).normalized();
        a.d = dir * ((a.ri + a.rj) * (1 - 0.02 * std::abs(unit(rng))));
        a.dv = Vec3(unit(rng), unit(rng), unit(rng)) * (k % 3 == 0 ? 5.0 : 0.05);
        a.shiftVel = Vec3(unit(rng), unit(rng), unit(rng)) * 0.01;
        a.wi = Vec3(unit(rng), unit(rng), unit(rng)) * 20.0;
        a.wj = Vec3(unit(rng), unit(rng), unit(rng)) * 20.0;
        // Tangential forces from far below to far above the Coulomb limit (~1e-2 N here).
        const double size = std::pow(10.0, -5 + 5 * std::abs(unit(rng)));
        a.shear =
            k % 4 == 0 ? Vec3(Vec3::Zero()) : Vec3(Vec3(unit(rng), unit(rng), unit(rng)) * size);
        a.mi = 1e-5 * pos(rng);
        a.mj = k % 7 == 5 ? std::numeric_limits<double>::infinity() : 1e-5 * pos(rng);
        a.params = uint32_t((k % materials) * materials + (k / 2) % materials);
    }
    return lanes;
}

template <LawKind Law, bool Periodic> void checkLaw(LawKind law, int materials, int lanes) {
    std::vector<Material> mats(static_cast<size_t>(materials));
    for (int m = 0; m < materials; ++m) {
        Material& x = mats[size_t(m)];
        x.name.assign(1, char('a' + m));
        x.law = law;
        x.young = 1e7 * (1 + m);
        x.poisson = 0.2 + 0.05 * m;
        x.frictionAngle = 0.3 + 0.2 * m;
        x.restitution = 0.5 + 0.2 * m;
        x.contactTime = 1e-4 * (1 + m);
        x.restitutionN = 0.6 + 0.1 * m;
        x.restitutionT = 0.7;
    }
    PairTable table;
    std::string error;
    REQUIRE(buildPairTable(mats, {}, table, error));
    const double dt = 1e-6;
    std::mt19937_64 rng(7);
    PairBatch batch{};
    batch.lanes = lanes;
    for (int round = 0; round < 20; ++round) {
        const std::vector<Lane> lanes = randomLanes(rng, PairBatch::width, materials);
        for (int l = 0; l < PairBatch::width; ++l) {
            const Lane& a = lanes[size_t(l)];
            for (int c = 0; c < 3; ++c) {
                batch.d[c][l] = a.d[c], batch.dv[c][l] = a.dv[c];
                batch.shiftVel[c][l] = a.shiftVel[c], batch.wi[c][l] = a.wi[c];
                batch.wj[c][l] = a.wj[c], batch.shear[c][l] = a.shear[c];
            }
            batch.ri[l] = a.ri, batch.rj[l] = a.rj, batch.mi[l] = a.mi, batch.mj[l] = a.mj;
            batch.params[l] = a.params;
        }
        computePairBatch<Law, Periodic, false>(batch, table.params.data(), materials, dt);
        for (int l = 0; l < PairBatch::width; ++l) {
            const Lane& a = lanes[size_t(l)];
            const Alone e = alone(a, table.params[a.params], dt, Periodic);
            INFO("round " << round << ", lane " << l);
            REQUIRE(e.overlap > 0);
            CHECK(sameBits(batch.overlap[l], e.overlap));
            CHECK(sameBits(batch.armI[l], a.ri - 0.5 * e.overlap));
            CHECK(sameBits(batch.dissipated[l], e.dissipated));
            CHECK(sameBits(batch.elastic[l], e.elastic));
            for (int c = 0; c < 3; ++c) {
                CHECK(sameBits(batch.force[c][l], e.force[c]));
                CHECK(sameBits(batch.nxf[c][l], e.nxf[c]));
                CHECK(sameBits(batch.shear[c][l], e.shear[c]));
            }
        }
    }
}

} // namespace

// Every lane width this processor runs (pairLaneWidth() is the widest, unless DEM_LANES says less).
TEST_CASE("contact lanes: each law gives the bits of a contact alone", "[contact][lanes]") {
    for (int lanes : {2, 4, 8}) {
        if (lanes > pairLaneWidth())
            continue;
        for (int materials : {1, 3}) {
            INFO(lanes << " lanes, " << materials << " material(s)");
            checkLaw<LawKind::HertzMindlin, false>(LawKind::HertzMindlin, materials, lanes);
            checkLaw<LawKind::Linear, false>(LawKind::Linear, materials, lanes);
            checkLaw<LawKind::ViscoElastic, false>(LawKind::ViscoElastic, materials, lanes);
            checkLaw<LawKind::HertzMindlin, true>(LawKind::HertzMindlin, materials, lanes);
        }
    }
}
