// The step loop, in one place (physics.md §1):
//   1. imposed motions set the velocities of moving objects and sphere groups (and a
//      stress-controlled periodic cell its velocity gradient)
//   2. neighbour lists are rebuilt when the skin is used up
//   3. sphere–sphere contact forces, over the pairs listed under the spheres of a block
//   4. per sphere: gather the forces of the other pairs in a fixed order, obstacle contacts,
//      engine forces, leapfrog integration with Cundall damping, displacement since the rebuild
//   5. reactions on obstacles, obstacle motion, energy sums in fixed-size chunks, whether the
//      lists must be rebuilt before the next step
// The steps between rebuilds allocate nothing but when the given-up pair records are compacted
// (an index per record) and when the lists grow; a rebuild allocates small scratch of its own.
#include "core/ContactLaws.hpp"
#include "core/Measures.hpp"
#include "core/PairBatch.hpp"
#include "core/Parallel.hpp"
#include "core/Scratch.hpp"
#include "core/ServoLaw.hpp"
#include "core/SphereLoad.hpp"
#include "core/SweepRoom.hpp"
#include "core/SweepSplit.hpp"
#include "core/Workspace.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <numbers>
#include <omp.h>

namespace dem {

namespace {

constexpr double infiniteMass = std::numeric_limits<double>::infinity();

double translationalMass(const Particles& P, size_t p) {
    return (P.blocked(p) & BlockTranslation) == BlockTranslation ? infiniteMass : P.mass(p);
}

// Sum of f(k) for k in [0, n), in fixed chunks added in order: the same bits for any thread count.
template <class F> double chunkedSum(size_t n, F f) {
    constexpr size_t chunk = 4096;
    const size_t chunks = (n + chunk - 1) / chunk;
    double partial[256];
    double total = 0;
    for (size_t base = 0; base < chunks; base += 256) {
        const size_t m = std::min<size_t>(256, chunks - base);
#pragma omp parallel for schedule(static) if (n > parallelThreshold)
        for (size_t c = 0; c < m; ++c) {
            double s = 0;
            const size_t b = (base + c) * chunk, e = std::min(n, b + chunk);
            for (size_t k = b; k < e; ++k)
                s += f(k);
            partial[c] = s;
        }
        for (size_t c = 0; c < m; ++c)
            total += partial[c];
    }
    return total;
}

Vec3 objectVelocityAt(const RigidObject& o, const Vec3& point) {
    return o.vel + o.angVel.cross(point - o.center);
}

// --- 1. imposed motions --------------------------------------------------------------------
// A controller on the force of the step before (what Yade's triaxial stress controller does for
// walls, with ServoPIDController's integral term): the push F of the spheres against `direction`
// falls short of the target by e, and the object moves on at the speed servoOutput gives for e,
// while sliding across at its own velocity (zero unless the deck gives one).
// `advance`: the step's update of the integral term; without it (a stage's start, which the
// first step then sets again) the term is left as it is.
Vec3 servoVelocity(const Simulation& sim, Motion& m, bool advance) {
    double integral = m.integral;
    const double speed = servoOutput(m.servoForce - servoPush(sim, m), m.gain, m.maxSpeed,
                                     m.integralTime, sim.dt, integral);
    if (advance)
        m.integral = integral;
    return m.velocity + m.direction * speed;
}

// The velocities the motions impose on this step; `advanceServos` as for servoVelocity.
void applyMotions(Simulation& sim, bool advanceServos) {
    const double tMid = sim.time + 0.5 * sim.dt; // velocities live at mid-steps
    for (Motion& m : sim.motions) {
        Vec3 v = Vec3::Zero(), w = Vec3::Zero();
        switch (m.kind) {
        case Motion::Kind::Translation:
            v = m.velocity;
            break;
        case Motion::Kind::Rotation:
            w = m.axis.normalized() * m.angularVelocity;
            break;
        case Motion::Kind::Harmonic: {
            const double omega = 2 * std::numbers::pi * m.frequency;
            v = m.amplitude * omega * std::cos(omega * (tMid - sim.stageStartTime) + m.phase);
            break;
        }
        case Motion::Kind::Servo:
            v = servoVelocity(sim, m, advanceServos);
            break;
        }
        if (m.object >= 0) {
            // The object keeps its own centre, which a rotation about another point carries
            // along: its velocity is that of the centre (moveObstacles).
            RigidObject& o = sim.obstacles.objects[m.object];
            o.vel = v + w.cross(o.center - m.center);
            o.angVel = w;
        } else if (m.group >= 0) {
            Particles& P = sim.particles;
            const uint32_t bit = 1u << m.group;
            for (size_t p = 0; p < P.size(); ++p) {
                if (!(P.groups(p) & bit))
                    continue;
                P.hold(p);
                P.vel[p] = v + w.cross(P.pos[p] - m.center);
                P.angVel[p] = w;
            }
        }
    }
}

// --- 3. sphere–sphere forces ---------------------------------------------------------------
// A record for a contact that forms, from the thread's block (Workspace::recordBlocks).
inline uint32_t takeRecord(RecordBlock& block, std::atomic<size_t>& next) {
    if (block.next == block.end) {
        block.next = next.fetch_add(pairRecordBlock, std::memory_order_relaxed);
        block.end = block.next + pairRecordBlock;
    }
    return uint32_t(block.next++);
}

// The branch vector of pair k from sphere i to sphere j, in a periodic cell to the image of j the
// pair is listed with.
template <bool Periodic>
inline Vec3 branch(const Particles& P, const SpherePairs& S, const CellImages& cell, uint32_t k,
                   uint32_t i, uint32_t j) {
    if constexpr (Periodic)
        return P.pos[j] - P.pos[i] - cell.shift[S.image[k]];
    else
        return P.pos[j] - P.pos[i];
}

// Lane l of `batch` gets the state of pair k = (i, j) (PairBatch.hpp).
template <bool Periodic, bool Rolling>
[[gnu::always_inline]] inline void copyPairIn(const Simulation& sim, const CellImages& cell,
                                              uint32_t k, uint32_t i, uint32_t materials,
                                              PairBatch& batch, int l) {
    const Particles& P = sim.particles;
    const SpherePairs& S = sim.pairs;
    const uint32_t j = S.j[k];
    const Vec3 d = branch<Periodic>(P, S, cell, k, i, j);
    const Vec3 dv = P.vel[j] - P.vel[i];
    // A contact that forms reads record 0: it starts without history.
    const Vec3 shear = S.records[S.contact[k]].shear;
    double mi = translationalMass(P, i), mj = translationalMass(P, j);
    // Two kinematic spheres (e.g. of a moved group) touching: their contact force moves nothing,
    // but an infinite m_eff would make the dashpot inf (NaN with e = 1 or v_n = 0) and poison
    // their reported forces and the energy sums; use the spheres' own masses.
    if (std::isinf(mi) && std::isinf(mj))
        mi = P.mass(i), mj = P.mass(j);
    for (int c = 0; c < 3; ++c) {
        batch.d[c][l] = d[c];
        batch.dv[c][l] = dv[c];
        batch.wi[c][l] = P.angVel[i][c];
        batch.wj[c][l] = P.angVel[j][c];
        batch.shear[c][l] = shear[c];
        if constexpr (Periodic)
            batch.shiftVel[c][l] = cell.shiftVelocity[S.image[k]][c];
    }
    batch.ri[l] = P.radius[i];
    batch.rj[l] = P.radius[j];
    batch.mi[l] = mi;
    batch.mj[l] = mj;
    batch.params[l] = P.material[i] * materials + P.material[j];
    if constexpr (Rolling) {
        const PairRolling& m = S.rolling[S.contact[k]];
        for (int c = 0; c < 3; ++c)
            batch.roll[c][l] = m.roll[c];
        batch.twist[l] = m.twist;
    }
}

// How many touching pairs before a batch reads them blockPairForces fetches their second spheres'
// velocities and spins and their records from memory.
constexpr size_t prefetchAhead = 16;

// Each pair is listed once, under its lower index i. The force and torque on i from its own pairs
// are summed here in pair order (into own[i - first]); the force on j is stored with the pair and
// added in j's gather (4b). The sum on every sphere thus has one fixed order whatever the
// number of threads, and needs no atomics. Energy: the contact energies are computed and kept only
// when the simulation tracks energy (the compiler drops their arithmetic otherwise).
//
// The spheres [first, last) are done in two passes. The first tests every listed pair for overlap
// without a branch and writes the touching ones to `touching`: in a dense packing about half the
// listed pairs touch, in no predictable pattern, and a branch per pair would be mispredicted
// every other time. A pair found apart gives its record up. The second computes the contacts of
// the touching pairs, `batch` at a time (PairBatch.hpp), into their records; a contact that forms
// takes a record from the thread's `block`. Returns how many pairs touch. With `Rolling`, the pairs
// also keep moment histories (SpherePairs::rolling) and i receives the opposite of the couple.
// Inlined into the sweep, as GCC did before there were rolling versions.
template <LawKind Law, bool Energy, bool Periodic, bool Rolling>
[[gnu::always_inline]] inline size_t
blockPairForces(Simulation& sim, const CellImages& cell, size_t first, size_t last, SphereLoad* own,
                std::vector<TouchingPair>& touching, PairBatch& batch, RecordBlock& block,
                std::atomic<size_t>& nextRecord) {
    const Particles& P = sim.particles;
    SpherePairs& S = sim.pairs;
    const double dt = sim.dt;
    for (size_t i = first; i < last; ++i)
        own[i - first] = SphereLoad{};
    const uint32_t k0 = S.start[first], k1 = S.start[last];
    if (touching.size() < k1 - k0 + 1) // not with the room reserveSweepScratch gives
        touching.resize(k1 - k0 + 1);
    TouchingPair* list = touching.data();
    uint32_t* contact = S.contact.data();
    // Offsets and arrays through locals: the stores into `list` and `contact` would otherwise have
    // the compiler reload them for every pair (as in the pair listing, Neighbours.cpp).
    const uint32_t *start = S.start.data(), *partner = S.j.data();
    const double* radius = P.radius.data();
    // One loop over the block's pairs, not one per sphere: the exit of a sphere's loop over its
    // few pairs (a varying number) was mispredicted for most spheres. The sphere of pair k is
    // counted up by marks at the spheres' first pairs, kept in list[k - k0].first until the pass
    // writes entry k - k0 or below (no earlier than it reads the mark).
    for (uint32_t e = 0; e <= k1 - k0; ++e)
        list[e].first = 0;
    for (size_t i = first + 1; i < last; ++i)
        ++list[start[i] - k0].first;
    size_t w = 0;
    uint32_t i = uint32_t(first);
    for (uint32_t k = k0; k < k1; ++k) {
        i += list[k - k0].first;
        const uint32_t j = partner[k];
        const double reach = radius[i] + radius[j];
        const bool overlaps = branch<Periodic>(P, S, cell, k, i, j).squaredNorm() < reach * reach;
        list[w] = {k, i};
        w += overlaps;
        contact[k] &= -uint32_t(overlaps); // apart: 0, the record given up
    }
    PairContact* records = S.records.data();
    PairEnergy* energies = S.energies.data();
    PairRolling* rolling = S.rolling.data();
    const PairParams* table = sim.pairTable.params.data();
    const uint32_t materials = uint32_t(sim.pairTable.count);
    size_t touchingPairs = 0;
    for (size_t e0 = 0; e0 < w; e0 += PairBatch::width) {
        const int m = int(std::min<size_t>(PairBatch::width, w - e0));
        // The first pass read the second spheres' positions only: the loads of the rest held 18%
        // of the sweep's perf samples on the 105k falling ball (contacts phase -5% with this).
        // A record spans two cache lines, and the history read here (shear, its last 24 bytes)
        // lies mostly in the second: both are fetched (contacts phase 2.5-7.4% shorter on the 105k
        // falling ball). The second through the history's first byte, which for a record starting
        // a line is in the first: the record's last byte, always in the second, measured 3-9%
        // slower (four pairs side by side), for no reason found.
        for (size_t e = e0 + prefetchAhead; e < std::min(w, e0 + prefetchAhead + m); ++e) {
            const uint32_t k = list[e].pair, j = partner[k];
            __builtin_prefetch(&P.vel[j]);
            __builtin_prefetch(&P.angVel[j]);
            __builtin_prefetch(&records[contact[k]]);
            __builtin_prefetch(&records[contact[k]].shear);
        }
        for (int l = 0; l < m; ++l)
            copyPairIn<Periodic, Rolling>(sim, cell, list[e0 + l].pair, list[e0 + l].first,
                                          materials, batch, l);
        computePairBatch<Law, Periodic, Rolling>(batch, table, int(materials), dt);
        for (int l = 0; l < m; ++l) {
            const uint32_t k = list[e0 + l].pair, i = list[e0 + l].first;
            if (batch.overlap[l] <= 0) { // the square root rounded up to the reach: apart
                contact[k] = 0;
                continue;
            }
            const Vec3 force(batch.force[0][l], batch.force[1][l], batch.force[2][l]);
            const Vec3 nxf(batch.nxf[0][l], batch.nxf[1][l], batch.nxf[2][l]);
            if (contact[k] == 0)
                contact[k] = takeRecord(block, nextRecord);
            PairContact& rec = records[contact[k]];
            rec.force = force;
            rec.nxf = nxf;
            rec.halfOverlap = 0.5 * batch.overlap[l];
            rec.shear = Vec3(batch.shear[0][l], batch.shear[1][l], batch.shear[2][l]);
            if constexpr (Energy)
                energies[contact[k]] = PairEnergy(batch.dissipated[l], batch.elastic[l]);
            own[i - first].force -= force;
            own[i - first].torque -= batch.armI[l] * nxf;
            if constexpr (Rolling) {
                PairRolling& m = rolling[contact[k]];
                m.roll = Vec3(batch.roll[0][l], batch.roll[1][l], batch.roll[2][l]);
                m.twist = batch.twist[l];
                m.couple = Vec3(batch.couple[0][l], batch.couple[1][l], batch.couple[2][l]);
                own[i - first].torque -= m.couple;
            }
            ++touchingPairs;
        }
    }
    return touchingPairs;
}

// blockPairForces for the simulation's law and energy tracking. Inlined into the sweep, where the
// batch is a local the compiler knows nothing else points to (as a callee's reference parameter it
// made the pair loop reload what it had loaded: 3.5% more instructions in a dense packing's sweep).
template <bool Periodic, bool Rolling, class... Args>
[[gnu::always_inline]] inline size_t blockPairForcesOf(LawKind law, bool energy, Args&&... args) {
    auto run = [&]<LawKind Law>() __attribute__((always_inline)) {
        if (energy)
            return blockPairForces<Law, true, Periodic, Rolling>(args...);
        return blockPairForces<Law, false, Periodic, Rolling>(args...);
    };
    switch (law) {
    case LawKind::Linear:
        return run.template operator()<LawKind::Linear>();
    case LawKind::HertzMindlin:
        return run.template operator()<LawKind::HertzMindlin>();
    case LawKind::ViscoElastic:
        return run.template operator()<LawKind::ViscoElastic>();
    }
    return 0; // not reached: the laws are a closed set
}

// --- 4a. obstacle contacts of one sphere ---------------------------------------------------
// Keeps one contact per mesh feature: face contacts always; an edge contact only if no face contact
// of a facet holding that edge and no other contact on the same edge; a vertex likewise. A sphere
// on a smooth mesh thus never feels two contacts at a shared edge or vertex.
void filterFacetContacts(std::vector<FacetCandidate>& c, const Obstacles& B,
                         const ObstacleContacts& O) {
    auto facetOf = [&](const FacetCandidate& x) -> const Facet& {
        return B.facets[O.target[x.entry] & ((1u << ObstacleContacts::kindShift) - 1)];
    };
    auto hasVertex = [](const Facet& f, uint32_t v) {
        return f.vid[0] == v || f.vid[1] == v || f.vid[2] == v;
    };
    for (size_t k = 0; k < c.size(); ++k) {
        FacetCandidate& x = c[k];
        if (!x.keep || x.geom.region == FacetRegion::Face)
            continue;
        const uint32_t object = facetOf(x).object;
        for (size_t o = 0; o < c.size() && x.keep; ++o) {
            if (o == k || !c[o].keep || facetOf(c[o]).object != object)
                continue;
            const FacetGeom& y = c[o].geom;
            if (y.region == FacetRegion::Face) {
                x.keep =
                    !(hasVertex(facetOf(c[o]), x.geom.a) && hasVertex(facetOf(c[o]), x.geom.b));
            } else if (y.region == FacetRegion::Edge && x.geom.region == FacetRegion::Vertex) {
                x.keep = !(y.a == x.geom.a || y.b == x.geom.a);
            } else if (y.region == x.geom.region && y.a == x.geom.a && y.b == x.geom.b) {
                x.keep = o > k; // same feature seen from two facets: the first one keeps it
            }
        }
    }
}

struct ObstacleContactContext {
    Simulation& sim;
    const Particles& P;
    ObstacleContacts& O;
    size_t p;
    SphereLoad& load;
};

// With `Rolling`, the contact also resists rolling and twisting (the obstacle is body 1: the sphere
// turns relative to it).
template <bool Rolling>
void obstacleContact(ObstacleContactContext& c, uint32_t e, const Vec3& n, double overlap,
                     int material, uint32_t objectIndex, double refR1) {
    const Particles& P = c.P;
    const size_t p = c.p;
    const RigidObject& obj = c.sim.obstacles.objects[objectIndex];
    const double a = P.radius[p] - 0.5 * overlap;
    const Vec3 point = P.pos[p] - a * n;
    ContactInput in;
    in.n = lawVec(n);
    in.overlap = overlap;
    in.vRel = lawVec((P.vel[p] - P.angVel[p].cross(a * n)) - objectVelocityAt(obj, point));
    in.spin = n.dot(P.angVel[p] + obj.angVel);
    in.mEff = P.mass(p);
    in.refR1 = refR1;
    in.refR2 = P.radius[p];
    in.rStar = P.radius[p];
    Vec3Of<double> shear = lawVec(c.O.shear[e]);
    const PairParams& params = c.sim.pairTable(material, P.material[p]);
    ContactResult r = contactForce(params, in, shear, c.sim.dt);
    const Vec3 force = eigenVec(r.force);
    Vec3 torque = -(a * n.cross(force));
    if constexpr (Rolling) {
        in.wRel = lawVec(P.angVel[p] - obj.angVel);
        in.rRoll = a;
        Vec3Of<double> roll = lawVec(c.O.roll[e]);
        const Vec3 couple =
            eigenVec(rollingResistance(params, in, roll, c.O.twist[e], c.sim.dt, r));
        c.O.roll[e] = eigenVec(roll);
        c.O.couple[e] = couple;
        torque += couple;
    }
    c.O.shear[e] = eigenVec(shear);
    c.O.touching[e] = 1;
    c.O.force[e] = force;
    c.O.torque[e] = torque;
    c.O.point[e] = point;
    c.O.elastic[e] = r.elastic;
    c.load.force += force;
    c.load.torque += torque;
    c.load.loss += r.dissipated;
}

template <bool Rolling> void clearObstacleContact(ObstacleContacts& O, uint32_t e) {
    O.touching[e] = 0;
    O.shear[e] = O.force[e] = O.torque[e] = O.point[e] = Vec3::Zero();
    O.elastic[e] = 0;
    if constexpr (Rolling) {
        O.roll[e] = O.couple[e] = Vec3::Zero();
        O.twist[e] = 0;
    }
}

// Adds the contacts of sphere p with walls, boxes and facets to `load`. Inlined into both
// versions of finishSphere, as it was into the one before periodic cells (a call measured 10%
// slower in the dense packing's integration phase).
template <bool Rolling>
[[gnu::always_inline]] inline void sphereObstacleForces(Simulation& sim, size_t p,
                                                        std::vector<FacetCandidate>& facets,
                                                        SphereLoad& load) {
    const Particles& P = sim.particles;
    ObstacleContacts& O = sim.obstacleContacts;
    const Obstacles& B = sim.obstacles;
    const double R = P.radius[p];
    ObstacleContactContext ctx{sim, P, O, p, load};
    facets.clear();
    for (uint32_t e = O.start[p]; e < O.start[p + 1]; ++e) {
        const auto kind = ObstacleKind(O.target[e] >> ObstacleContacts::kindShift);
        const uint32_t idx = O.target[e] & ((1u << ObstacleContacts::kindShift) - 1);
        if (kind == ObstacleKind::Wall) {
            const Wall& w = B.walls[idx];
            const SphereSphereGeom g = sphereWall(w, P.pos[p], R);
            if (g.overlap > 0)
                obstacleContact<Rolling>(ctx, e, g.n, g.overlap, B.objects[w.object].material,
                                         w.object, R);
            else
                clearObstacleContact<Rolling>(O, e);
        } else if (kind == ObstacleKind::Box) {
            const Box& b = B.boxes[idx];
            const BoxGeom g = sphereBox(b, P.pos[p], R);
            if (g.overlap > 0)
                obstacleContact<Rolling>(ctx, e, g.n, g.overlap, B.objects[b.object].material,
                                         b.object, R);
            else
                clearObstacleContact<Rolling>(O, e);
        } else {
            const FacetGeom g = sphereFacet(B.facets[idx], idx, P.pos[p], R);
            facets.push_back({e, g, g.overlap > 0});
        }
    }
    if (facets.empty())
        return;
    filterFacetContacts(facets, B, O);
    // A contact that moves to a neighbouring facet of the same mesh keeps its tangential history.
    for (FacetCandidate& x : facets) {
        if (!x.keep || O.touching[x.entry])
            continue;
        const uint32_t object =
            B.facets[O.target[x.entry] & ((1u << ObstacleContacts::kindShift) - 1)].object;
        for (FacetCandidate& y : facets) {
            const uint32_t yObject =
                B.facets[O.target[y.entry] & ((1u << ObstacleContacts::kindShift) - 1)].object;
            if (!y.keep && O.touching[y.entry] && yObject == object) {
                O.shear[x.entry] = O.shear[y.entry];
                if constexpr (Rolling) {
                    O.roll[x.entry] = O.roll[y.entry];
                    O.twist[x.entry] = O.twist[y.entry];
                }
                O.touching[y.entry] = 0;
                break;
            }
        }
    }
    for (const FacetCandidate& x : facets) {
        const Facet& f = B.facets[O.target[x.entry] & ((1u << ObstacleContacts::kindShift) - 1)];
        // Facets keep Yade's reference radius 2R for the linear stiffness (physics.md §2.6).
        if (x.keep)
            obstacleContact<Rolling>(ctx, x.entry, x.geom.n, x.geom.overlap,
                                     B.objects[f.object].material, f.object, 2 * R);
        else
            clearObstacleContact<Rolling>(O, x.entry);
    }
}

// --- 4b. integrate ------------------------------------------------------------------------
// Cundall's non-viscous damping on one component (physics.md §9.3, with Yade's on-step velocity):
// a (1 - lambda sign(a v)). Written without a branch, which the sign of a v defeats; the factor
// is exactly 1 - lambda, 1 + lambda or 1.
inline double damped(double a, double v, double dt, double lambda) {
    const double s = a * (v + 0.5 * dt * a);
    const double sign = double(int(s > 0) - int(s < 0));
    return a * (1 - lambda * sign);
}

// Turns q by the rotation vector w dt: q <- (cos(a/2), sin(a/2) w/|w|) q, with a = |w| dt. The
// half-angle functions use their Taylor series (error below a^6/46080, i.e. round-off for the
// angles of a stable step) instead of sin and cos, then q is renormalised.
inline void rotate(Quat& q, const Vec3& w, double dt) {
    const double a2 = w.squaredNorm() * dt * dt;
    if (a2 == 0)
        return;
    // Products with the reciprocals: dividing by 24, 384 or 1920 would be three divisions.
    constexpr double c2 = 1.0 / 8, c4 = 1.0 / 384, s2 = 1.0 / 24, s4 = 1.0 / 1920;
    const double c = 1 - a2 * c2 + a2 * a2 * c4;
    const double s = 0.5 * dt * (1 - a2 * s2 + a2 * a2 * s4); // sin(a/2)/|w|
    q = Quat(c, s * w.x(), s * w.y(), s * w.z()) * q;
    // Renormalise by 1/|q| = 1/sqrt(n2). q was unit before the turn and the series are accurate,
    // so n2 = 1 + e with |e| tiny, and one Newton step 1.5 - 0.5 n2 (error 3 e^2 / 8, round-off
    // for |e| < 1e-8) avoids a square root and a division on each sphere's chain.
    const double n2 = q.squaredNorm();
    q.coeffs() *= std::abs(n2 - 1) < 1e-8 ? 1.5 - 0.5 * n2 : 1 / std::sqrt(n2);
}

// One velocity component over a step: v += a dt, with Cundall's damping when lambda > 0, whose
// loss lambda dt |v| |f| (f the undamped force or torque component) is added to `loss` when the
// simulation tracks energy.
inline double dampedAcceleration(double v, double a, double f, double dt, double lambda,
                                 bool energy, double& loss) {
    if (lambda > 0) {
        if (energy)
            loss += lambda * dt * std::abs(v) * std::abs(f);
        a = damped(a, v, dt, lambda);
    }
    return a;
}

inline double kick(double v, double a, double f, double dt, double lambda, bool energy,
                   double& loss) {
    return v + dt * dampedAcceleration(v, a, f, dt, lambda, energy, loss);
}

// 1/m and 1/I of a sphere. Two divisions per sphere instead of six (a division costs as much as a
// dozen products); the sweep computes them for a block of spheres in a loop of their own, where
// the divisions of successive spheres overlap instead of stalling each sphere's integration
// (13% of finishSphere on the falling ball).
struct InverseMass {
    double mass, inertia;
};

inline InverseMass inverseMass(const Particles& P, size_t p) {
    return {1 / P.mass(p), 1 / P.inertia(p)};
}

// What integrate leaves in registers for finishSphere: reading the new state back from memory
// just after it was stored stalled store-to-load forwarding (15% of finishSphere on the falling
// ball). `finite`: position and velocities all finite; dampingLoss: 0 unless the simulation
// tracks energy.
struct Integrated {
    Vec3 pos;
    double dampingLoss;
    bool finite;
};

// 0 for each finite component of x, NaN for an infinite or NaN one: the sum of the components of
// these is 0 exactly when all are finite, tested without a branch per component.
inline Vec3 zeroIfFinite(const Vec3& x) {
    return x * 0.0;
}

// Leapfrog: v(t+dt/2) = v(t-dt/2) + a dt, x(t+dt) = x(t) + v(t+dt/2) dt.
// Components live in scalars and each vector is stored once: writing components one by one and
// reading the vector back stalls store-to-load forwarding (a third of this function's time).
// In a periodic cell (Periodic) the sphere is also carried by the mean flow u = L (x - origin):
// the convective acceleration L v is added (physics.md §11.3, Yade's homoDeform = 2), and the
// damping acts on the fluctuation v - u, so that a sphere moving with the flow is not slowed.
// Always inlined into finishSphere, which keeps the load in registers (GCC stopped inlining it on
// its own once finishSphere came in four versions: 5% more instructions in the step).
template <bool Periodic>
[[gnu::always_inline]] inline Integrated integrate(Simulation& sim, size_t p,
                                                   const SphereLoad& load, const InverseMass& inv) {
    Particles& P = sim.particles;
    const double dt = sim.dt, lambda = sim.damping;
    const bool energy = sim.trackEnergy;
    const uint8_t blocked = P.blocked(p);
    double v[3] = {P.vel[p].x(), P.vel[p].y(), P.vel[p].z()};
    double w[3] = {P.angVel[p].x(), P.angVel[p].y(), P.angVel[p].z()};
    double loss = 0;
    if ((blocked & BlockAll) != BlockAll) {
        const double m = P.mass(p), invM = inv.mass, invI = inv.inertia;
#pragma GCC unroll 3
        for (int k = 0; k < 3; ++k) {
            if (!(blocked & (BlockX << k))) {
                const double a = load.force[k] * invM + sim.gravity[k];
                if constexpr (Periodic) {
                    const Mat3& L = sim.cell.velGrad;
                    const double flow = L.row(k).dot(P.pos[p] - sim.cell.origin);
                    const double convective = L.row(k).dot(P.vel[p]);
                    v[k] +=
                        dt * (dampedAcceleration(v[k] - flow, a, m * a, dt, lambda, energy, loss) +
                              convective);
                } else {
                    v[k] = kick(v[k], a, m * a, dt, lambda, energy, loss);
                }
            }
            if (!(blocked & (BlockRX << k)))
                w[k] = kick(w[k], load.torque[k] * invI, load.torque[k], dt, lambda, energy, loss);
        }
        P.vel[p] = Vec3(v[0], v[1], v[2]);
        P.angVel[p] = Vec3(w[0], w[1], w[2]);
    }
    const Vec3 vNew(v[0], v[1], v[2]), wNew(w[0], w[1], w[2]);
    const Vec3 x = P.pos[p] + dt * vNew;
    P.pos[p] = x;
    if (P.keepsOrientation)
        rotate(P.ori[p], wNew, dt);
    // Tested on the vectors, in registers: a sum over the components of v and w read them back
    // from their arrays two at a time, after they were written one by one, which stalls store
    // forwarding (4-5% of the integration phase on the 105k falling ball, 1 thread).
    const double check = (zeroIfFinite(x) + zeroIfFinite(vNew) + zeroIfFinite(wNew)).sum();
    return {x, loss, check == 0};
}

// --- 5. obstacles --------------------------------------------------------------------------
void obstacleReactions(Simulation& sim) {
    Obstacles& B = sim.obstacles;
    const ObstacleContacts& O = sim.obstacleContacts;
    for (RigidObject& o : B.objects)
        o.force = o.torque = Vec3::Zero();
    const uint32_t mask = (1u << ObstacleContacts::kindShift) - 1;
    const bool rolling = O.hasRolling();
    for (size_t e = 0; e < O.size(); ++e) {
        if (!O.touching[e])
            continue;
        const auto kind = ObstacleKind(O.target[e] >> ObstacleContacts::kindShift);
        const uint32_t idx = O.target[e] & mask;
        const uint32_t obj = kind == ObstacleKind::Wall  ? B.walls[idx].object
                             : kind == ObstacleKind::Box ? B.boxes[idx].object
                                                         : B.facets[idx].object;
        RigidObject& o = B.objects[obj];
        o.force -= O.force[e];
        o.torque -= (O.point[e] - o.center).cross(O.force[e]);
        if (rolling)
            o.torque -= O.couple[e];
    }
}

// Each object moves over the step as its velocities, constant over the step, carry it: the velocity
// field v(x) = vel + angVel x (x - center) turns it by q about the axis along angVel through the
// point where v is parallel to that axis, and slides it along the axis (a screw motion). Its
// centre thus moves by shift = (q - I) r + v_par dt, r the centre's offset from that axis
// (-angVel x vel / |angVel|^2) and v_par the part of vel along it; every point x moves to
// center + q (x - center) + shift. An object turning about a point other than its centre so keeps
// to the circle exactly, not to the tangent of a step of vel dt; without rotation the shift is
// vel dt. `steps` is scratch memory (one per object), kept by the caller.
void moveObstacles(Simulation& sim, std::vector<ObjectStep>& steps) {
    Obstacles& B = sim.obstacles;
    const double dt = sim.dt;
    steps.resize(B.objects.size());
    for (size_t k = 0; k < B.objects.size(); ++k) {
        const RigidObject& o = B.objects[k];
        const double w2 = o.angVel.squaredNorm();
        if (w2 > 0) {
            const double w = std::sqrt(w2);
            const Quat q(Eigen::AngleAxisd(w * dt, o.angVel / w));
            const Vec3 r = -o.angVel.cross(o.vel) / w2;
            const Vec3 along = o.angVel * (o.angVel.dot(o.vel) / w2);
            steps[k] = {q, q * r - r + along * dt};
        } else {
            steps[k] = {Quat::Identity(), o.vel * dt};
        }
    }
    auto move = [&](Vec3& x, const RigidObject& o, const ObjectStep& s) {
        x = o.center + s.turn * (x - o.center) + s.shift;
    };
    for (Wall& w : B.walls) {
        const RigidObject& o = B.objects[w.object];
        if (o.vel.isZero() && o.angVel.isZero())
            continue;
        move(w.point, o, steps[w.object]);
        w.normal = (steps[w.object].turn * w.normal).normalized();
    }
    for (Facet& f : B.facets) {
        const RigidObject& o = B.objects[f.object];
        if (o.vel.isZero() && o.angVel.isZero())
            continue;
        for (Vec3& v : f.v)
            move(v, o, steps[f.object]);
        f.normal = (f.v[1] - f.v[0]).cross(f.v[2] - f.v[0]).normalized();
    }
    for (Box& b : B.boxes) {
        const RigidObject& o = B.objects[b.object];
        if (o.vel.isZero() && o.angVel.isZero())
            continue;
        move(b.center, o, steps[b.object]);
        b.ori = (steps[b.object].turn * b.ori).normalized();
    }
    for (size_t k = 0; k < B.objects.size(); ++k) {
        RigidObject& o = B.objects[k];
        // No point of the object moved farther than its centre's chord (at most |vel| dt) plus
        // the turn of the points within `extent` of the centre.
        o.center += steps[k].shift;
        o.travel += (o.vel.norm() + o.angVel.norm() * o.extent) * dt;
    }
}

// Before the sweep: room after the records for the contacts that may form in the step (one per
// pair apart, and a block per thread left partly used), not written until used, so that no thread
// moves the records while the others read them. The room comes from the memory reserved when the
// records were laid out (recordRoom); when that is used up, or the records given up outnumber half
// the touching pairs, the touching pairs' records are laid out afresh (the memory they hold stays
// in proportion to the contacts, and growing them never copies them). A run that tracks no energy
// keeps none: a list loaded from a checkpoint has them (ckpt::io). False when the records would
// outgrow their 32-bit indices.
bool prepareRecords(Simulation& sim, Workspace& ws, size_t threads) {
    SpherePairs& S = sim.pairs;
    if (!sim.trackEnergy && S.energies.capacity() != 0)
        freeMemory(S.energies);
    const bool energy = sim.trackEnergy;
    if (energy && !S.hasEnergy())
        S.energies.assign(S.records.size(), PairEnergy(0, 0));
    // Moment histories for every record and obstacle candidate exactly when some pair resists
    // rolling (those without start from none).
    const bool rolling = sim.pairTable.resistsRolling();
    if (!rolling && S.rolling.capacity() != 0)
        freeMemory(S.rolling);
    if (rolling && !S.hasRolling())
        S.rolling.assign(S.records.size(), PairRolling::none());
    ObstacleContacts& O = sim.obstacleContacts;
    if (rolling != O.hasRolling() && O.size() > 0) {
        O.roll.assign(rolling ? O.size() : 0, Vec3::Zero());
        O.twist.assign(rolling ? O.size() : 0, 0.0);
        O.couple.assign(rolling ? O.size() : 0, Vec3::Zero());
    }
    ws.recordBlocks.resize(std::max(ws.recordBlocks.size(), threads));
    if (ws.touchingPairs == SIZE_MAX)
        ws.touchingPairs = S.touchingCount();
    size_t live = 1 + ws.touchingPairs; // record 0, the touching pairs', the blocks' untaken ones
    for (const RecordBlock& b : ws.recordBlocks)
        live += b.end - b.next;
    const size_t givenUp = S.records.size() > live ? S.records.size() - live : 0;
    const size_t room = S.size() + pairRecordBlock * threads;
    if (givenUp > ws.touchingPairs / 2 + 4096 || S.records.size() + room > S.records.capacity()) {
        // Compactions come every few steps at most: their scratch, an index per record, would
        // stay resident in between if kept.
        std::vector<uint32_t> renumber;
        compactPairRecords(S, recordRoom(S, threads, pairRecordBlock), renumber);
        for (RecordBlock& b : ws.recordBlocks)
            b = RecordBlock{};
    }
    const size_t used = S.records.size(), need = used + room;
    if (need > UINT32_MAX)
        return false;
    S.records.resize(need);
    if (energy)
        S.energies.resize(need);
    if (rolling)
        S.rolling.resize(need);
    ws.nextRecord = used;
    return true;
}

// Displacements since the last rebuild, d = x - x_ref: their range per component and the two
// largest lengths. Min and max are exact and merging is order-free, so the result does not depend
// on the thread count.
struct Displacements {
    static constexpr double inf = std::numeric_limits<double>::infinity();
    double lo[3] = {inf, inf, inf};
    double hi[3] = {-inf, -inf, -inf};
    double far2 = 0;  // largest |d|^2
    double next2 = 0; // second largest |d|^2 (of another sphere)

    void add(const Vec3& d) {
        for (int a = 0; a < 3; ++a) {
            lo[a] = std::min(lo[a], d[a]);
            hi[a] = std::max(hi[a], d[a]);
        }
        const double d2 = d.squaredNorm();
        next2 = std::max(next2, std::min(far2, d2));
        far2 = std::max(far2, d2);
    }
    void merge(const Displacements& o) {
        for (int a = 0; a < 3; ++a) {
            lo[a] = std::min(lo[a], o.lo[a]);
            hi[a] = std::max(hi[a], o.hi[a]);
        }
        next2 = std::max({next2, o.next2, std::min(far2, o.far2)});
        far2 = std::max(far2, o.far2);
    }
};
#pragma omp declare reduction(merge:Displacements : omp_out.merge(omp_in))

struct SweepResult {
    Displacements moved;
    int64_t firstBad = INT64_MAX; // lowest index of a sphere with a non-finite state
    size_t touchingPairs = 0;
    double pairSeconds = 0, sphereSeconds = 0;
};

// Step 4 for sphere p, once all its pairs have their forces (`own`: the load of the pairs in which
// it is i): gather, obstacle contacts, engine forces, leapfrog, and its displacement since the
// last rebuild.
template <bool Periodic, bool Rolling>
void finishSphere(Simulation& sim, Workspace& ws, const CellImages& cell, size_t p,
                  const SphereLoad& own, const InverseMass& inv,
                  std::vector<FacetCandidate>& facets, SweepResult& out) {
    Particles& P = sim.particles;
    // The obstacle contacts add to the gathered load in place: a second load summed into it
    // would be written and read back through memory in pieces, which stalls store forwarding.
    // Only a sphere with obstacle candidates passes its load through memory for that: a load
    // whose address is taken stays in memory, and storing it reads back in 16 bytes what was
    // written in 8 (a stall on every sphere).
    SphereLoad load = addPairsAsSecond(sim.pairs, p, P.radius[p], own);
    if constexpr (Rolling)
        load.torque = addCouplesAsSecond(sim.pairs, p, load.torque);
    if (sim.obstacleContacts.start[p] < sim.obstacleContacts.start[p + 1]) {
        SphereLoad withObstacles = load;
        sphereObstacleForces<Rolling>(sim, p, facets, withObstacles);
        load = withObstacles;
    }
    for (const ConstantForce& f : sim.forces)
        if (P.groups(p) & (1u << f.group))
            load.force += f.force;
    const Integrated now = integrate<Periodic>(sim, p, load, inv);
    if (sim.trackEnergy) {
        ws.contactLoss[p] = load.loss;
        ws.dampingLoss[p] = now.dampingLoss;
    }
    if (!now.finite)
        out.firstBad = std::min(out.firstBad, int64_t(p));
    // In a periodic cell, the displacement beside the mean flow's since the rebuild (rebuildDue).
    Vec3 d;
    if constexpr (Periodic)
        d = now.pos - sim.cell.origin -
            cell.sinceRebuild * (sim.neighbours.refPos[p] - sim.cell.origin);
    else
        d = now.pos - sim.neighbours.refPos[p];
    out.moved.add(d);
}

// Steps 3 and 4 for the spheres [a, b) of one thread, in blocks: the pair forces of a block, then
// the spheres of the block are finished while their pair results are still in cache. With the
// spheres in index order this is safe: every pair of sphere p is (i, p) with i < p, computed
// before, or (p, j), computed in p's block; no pair computed later reads p. A sphere paired with
// a sphere of an earlier thread's range waits for that thread (the barrier). The arithmetic is the
// same for any number of threads; only the order of independent work changes.
template <bool Periodic, bool Rolling>
void sweepSpheres(Simulation& sim, Workspace& ws, int thread, int threads, SweepResult& out) {
    constexpr size_t block = sweepBlock;
    const SpherePairs& S = sim.pairs;
    const size_t a = ws.sweepSplit.bounds[size_t(thread)];
    const size_t b = ws.sweepSplit.bounds[size_t(thread + 1)];
    // The thread's scratch vectors are its own while it sweeps: side by side in ws their sizes
    // share cache lines, which each append writes (false sharing; listPerSphere, Neighbours.cpp).
    std::vector<FacetCandidate> facets = std::move(ws.facetScratch[size_t(thread)]);
    std::vector<DeferredSphere> deferred = std::move(ws.deferred[size_t(thread)]);
    std::vector<TouchingPair> touching = std::move(ws.touchingScratch[size_t(thread)]);
    RecordBlock& records = ws.recordBlocks[size_t(thread)];
    deferred.clear();
    const CellImages cell(sim.cell, sim.dt);
    // One law for the whole simulation (buildPairTable refuses materials of different laws).
    const LawKind law =
        sim.pairTable.params.empty() ? LawKind::HertzMindlin : sim.pairTable.params.front().law;
    PairBatch batch{}; // zeros in the lanes a batch of fewer pairs leaves unused
    batch.lanes = pairLaneWidth();
    SphereLoad own[block];  // the load of each sphere of the block from its own pairs
    InverseMass inv[block]; // 1/m and 1/I of each sphere of the block
    double clock = omp_get_wtime();
    const double began = clock;
    for (size_t first = a; first < b; first += block) {
        const size_t last = std::min(b, first + block);
        out.touchingPairs +=
            blockPairForcesOf<Periodic, Rolling>(law, sim.trackEnergy, sim, cell, first, last, own,
                                                 touching, batch, records, ws.nextRecord);
        const double mid = omp_get_wtime();
        out.pairSeconds += mid - clock;
        for (size_t p = first; p < last; ++p)
            inv[p - first] = inverseMass(sim.particles, p);
        for (size_t p = first; p < last; ++p) {
            // jPairs lists p's pairs as second sphere in pair order: the first has the lowest i.
            // Its owner i is below a exactly when the pair index is below start[a].
            const bool waits =
                a > 0 && S.jStart[p] < S.jStart[p + 1] && S.jPairs[S.jStart[p]] < S.start[a];
            if (waits)
                deferred.push_back({uint32_t(p), own[p - first]});
            else
                finishSphere<Periodic, Rolling>(sim, ws, cell, p, own[p - first], inv[p - first],
                                                facets, out);
        }
        clock = omp_get_wtime();
        out.sphereSeconds += clock - mid;
    }
    ws.deferred[size_t(thread)] = std::move(deferred);
    ws.touchingScratch[size_t(thread)] = std::move(touching);
    ws.sweepSplit.seconds[size_t(thread)] = clock - began; // the next step's split follows it
#pragma omp barrier
    // Every pair force is known now. The spheres that waited, all threads' together, are shared
    // out in chunks to whichever thread is free: one thread's would otherwise be finished by it
    // alone while the others idle (the spheres of the plane of grid cells next to the range
    // boundary, 14% of the range at 10k spheres on two threads), and an even split by count left
    // one thread, most often the first, waiting for the other at the region's end. Any thread may
    // finish any sphere: finishSphere writes that sphere's state and exact minima and maxima
    // only, so the results do not depend on which thread took which chunk.
    PerThread<size_t> base(size_t(threads) + 1, 0); // index of thread t's first sphere among all
    for (int t = 0; t < threads; ++t)
        base[size_t(t) + 1] = base[size_t(t)] + ws.deferred[size_t(t)].size();
#pragma omp for schedule(dynamic, 32) nowait
    for (size_t g = 0; g < base[size_t(threads)]; ++g) {
        const size_t list =
            size_t(std::upper_bound(base.begin(), base.end(), g) - base.begin()) - 1;
        const DeferredSphere& d = ws.deferred[list][g - base[list]];
        finishSphere<Periodic, Rolling>(sim, ws, cell, d.sphere, d.own,
                                        inverseMass(sim.particles, d.sphere), facets, out);
    }
    ws.facetScratch[size_t(thread)] = std::move(facets);
    out.sphereSeconds += omp_get_wtime() - clock;
}

// The lists stay valid while no listed-out pair can touch. Two spheres have closed by at most
// |d_i - d_j|, which two bounds hold: the norm of the ranges of d per component, which common
// motion (a falling or sliding mass) does not use up, and |d_i| + |d_j|, at most the sum of the
// two largest |d|, which a few fast spheres (a splash, rattlers) use up only by their own motion,
// not through the range's three axes at once. The smaller counts. A sphere and an obstacle have
// closed by at most |d| + the obstacle's travel.
bool rebuildDue(const Simulation& sim, const Displacements& d, size_t n) {
    if (n == 0)
        return false;
    // The reference positions are rounded to single precision, by at most e per component: each
    // d is off by at most sqrt(3) e in length, so both bounds on the closing by at most 2 sqrt(3) e
    // (in a periodic cell, F e: at most 2 - s times that, s below).
    const double e = std::sqrt(3.0) * sim.neighbours.refPos.error;
    const Vec3 range(d.hi[0] - d.lo[0], d.hi[1] - d.lo[1], d.hi[2] - d.lo[2]);
    const double closing = std::min(range.norm(), std::sqrt(d.far2) + std::sqrt(d.next2));
    double maxTravel = 0;
    for (const RigidObject& o : sim.obstacles.objects)
        maxTravel = std::max(maxTravel, o.travel);
    const double skin = sim.neighbours.skin;
    if (sim.cell.enabled) {
        // The displacements d are beside the mean flow's, which maps the cell and everything that
        // follows it by F = h h_rebuild^-1 (finishSphere). A pair not listed, at b0 with
        // |b0| >= R + skin (R = r_i + r_j, at most the grid's cell size less the skin), is now at
        // b = F b0 + d_j - d_i, and |b| >= s |b0| - |d_j - d_i| with s <= the smallest singular
        // value of F (here 1 - |F - I|, Frobenius norm): it cannot touch while
        // R (1/s - 1) + closing / s < skin. The flow itself thus uses the skin up only through the
        // strain, whatever the size of the cell.
        const Mat3 F = sim.cell.h * sim.cell.hAtRebuild.inverse();
        const double s = 1 - (F - Mat3::Identity()).norm();
        const double reach = sim.neighbours.cellSize - skin;
        const double f = (2 - s) * e;
        return !(s > 0) || reach * (1 / s - 1) + (closing + 2 * f) / s >= skin ||
               std::sqrt(d.far2) + f + maxTravel >= skin;
    }
    return closing + 2 * e >= skin || std::sqrt(d.far2) + e + maxTravel >= skin;
}

// A new velocity gradient of the periodic cell: every sphere joins the new mean flow,
// v += dL (x - origin), and turns with its change of spin, w += (-W_12, W_02, -W_01) with
// W = (dL - dL^T) / 2 (physics.md §11.3). Blocked components keep their velocity.
void changeVelocityGradient(Simulation& sim, const Mat3& L) {
    Particles& P = sim.particles;
    const Mat3 dL = L - sim.cell.velGrad;
    const Mat3 W = 0.5 * (dL - dL.transpose());
    const Vec3 spin(-W(1, 2), W(0, 2), -W(0, 1));
    for (size_t p = 0; p < P.size(); ++p) {
        const Vec3 dv = dL * (P.pos[p] - sim.cell.origin);
        for (int k = 0; k < 3; ++k) {
            if (!(P.blocked(p) & (BlockX << k)))
                P.vel[p][k] += dv[k];
            if (!(P.blocked(p) & (BlockRX << k)))
                P.angVel[p][k] += spin[k];
        }
    }
    sim.cell.velGrad = L;
}

// --- 1b. stress-controlled periodic cell ----------------------------------------------------
// Each controlled axis stretches in proportion to how far the cell's stress is from its target
// (StressControl); the spheres join the new mean flow as with a stage's new gradient.
void controlCellStress(Simulation& sim) {
    StressControl& c = sim.stressControl;
    const Mat3 sigma = cellStress(sim);
    Mat3 L = sim.cell.velGrad;
    for (int a = 0; a < 3; ++a) {
        if (!(c.axes & (1u << a)))
            continue;
        // Before the first neighbour lists there is no contact, hence no stress.
        const double stress = std::isfinite(sigma(a, a)) ? sigma(a, a) : 0.0;
        L(a, a) = servoOutput(c.target[a] - stress, c.gain, c.maxRate, c.integralTime, sim.dt,
                              c.integral[a]);
    }
    if (L != sim.cell.velGrad)
        changeVelocityGradient(sim, L);
}

} // namespace

void beginStage(Simulation& sim) {
    const Stage& s = sim.stages[sim.stage];
    if (s.gravity)
        sim.gravity = *s.gravity;
    if (s.damping)
        sim.damping = *s.damping;
    if (s.stressControl)
        sim.stressControl = *s.stressControl;
    else if (s.velocityGradient)
        sim.stressControl = StressControl{};
    if (s.velocityGradient && sim.cell.enabled)
        changeVelocityGradient(sim, *s.velocityGradient);
    if (s.clearMotions || !s.motions.empty()) {
        // The motions stop: their objects stand still, and the spheres of their groups are
        // released at rest, blocked again only as the deck blocks them.
        for (RigidObject& o : sim.obstacles.objects)
            o.vel = o.angVel = Vec3::Zero();
        sim.particles.releaseHeld();
        sim.motions.clear();
    } else {
        // The motions carry over and go on: a harmonic one's time counts from the start of the
        // stage that set it, so its phase takes up the stage that ended.
        const double ended = sim.time - sim.stageStartTime;
        for (Motion& m : sim.motions)
            if (m.kind == Motion::Kind::Harmonic)
                m.phase += 2 * std::numbers::pi * m.frequency * ended;
    }
    for (Motion m : s.motions) {
        if (m.centerAtObject)
            m.center = sim.obstacles.objects[size_t(m.object)].center;
        sim.motions.push_back(m);
    }
    sim.forces = s.forces;
    if (!s.frictionAngles.empty() || !s.rollingChanges.empty()) {
        for (const auto& [mat, angle] : s.frictionAngles)
            sim.materials[mat].frictionAngle = angle;
        for (const RollingChange& r : s.rollingChanges) {
            Material& m = sim.materials[size_t(r.material)];
            m.rollingFriction = r.rolling.value_or(m.rollingFriction);
            m.twistingFriction = r.twisting.value_or(m.twistingFriction);
        }
        // A table that starts or stops resisting rolling gives the contacts moment histories
        // (from none) or takes them away at the next step (prepareRecords).
        std::string error;
        buildPairTable(sim.materials, sim.overrides, sim.pairTable, error);
    }
    sim.stageStartStep = sim.step;
    sim.stageStartTime = sim.time;
    sim.stageStarted = true;
    // The velocities the motions impose on the stage's first step, as that step sets them again:
    // the outputs of the stage's start (history row and VTK files of step 0) show them.
    applyMotions(sim, false);
}

namespace {

// Gives each of the threads its sweep scratch, grown to the room any split may need
// (SweepRoom.hpp), here rather than in the parallel region: a step after a rebuild then allocates
// nothing, and an allocation that fails does so where it can be reported (dem's new-handler ends
// the process inside a parallel region).
void reserveSweepScratch(const SweepRoom& room, Workspace& ws, size_t threads) {
    ws.touchingScratch.resize(std::max(ws.touchingScratch.size(), threads));
    ws.facetScratch.resize(std::max(ws.facetScratch.size(), threads));
    ws.deferred.resize(std::max(ws.deferred.size(), threads));
    for (size_t t = 0; t < threads; ++t) {
        if (ws.touchingScratch[t].size() < room.touchingEntries)
            ws.touchingScratch[t].resize(room.touchingEntries);
        ws.facetScratch[t].reserve(room.obstacles);
        if (t > 0) // the first range starts at sphere 0: none of its spheres waits
            ws.deferred[t].reserve(room.waiting);
    }
}

} // namespace

bool advance(Simulation& sim, Workspace& ws) {
    Particles& P = sim.particles;
    PhaseTimes& times = ws.times;
    const double t0 = omp_get_wtime();
    if (sim.stressControl.axes != 0 && sim.cell.enabled)
        controlCellStress(sim);
    applyMotions(sim, true);
    const double t1 = omp_get_wtime();
    if (sim.neighbours.needRebuild || sim.neighbours.refPos.size() != P.size()) {
        if (!rebuildNeighbours(sim, ws))
            return false;
    }
    if (!measuredOn(ws.sweepRoom, sim))
        ws.sweepRoom = measureSweepRoom(sim); // timed with the rebuild
    const double t2 = omp_get_wtime();
    const size_t n = P.size();
    ws.dampingLoss.resize(sim.trackEnergy ? n : 0);
    ws.contactLoss.resize(sim.trackEnergy ? n : 0);
    const int threads = n > parallelThreshold ? omp_get_max_threads() : 1;
    ws.sweepSplit.seconds.resize(size_t(threads));
    splitSweep(ws.sweepSplit.bounds, ws.sweepSplit.seconds, n, size_t(threads));
    if (!prepareRecords(sim, ws, size_t(threads))) {
        ws.error = fmt::format("{} listed sphere pairs: more than the contact records can address",
                               sim.pairs.size());
        return false;
    }
    // After the records: before them, the 105k falling ball's contacts phase measured 3-8% longer
    // on one thread than without the reserve (8 pairs side by side), for a reason not found; here
    // -4.9% to +2.3% (10 pairs).
    reserveSweepScratch(ws.sweepRoom, ws, size_t(threads));
    // prepareRecords gave the contacts their moment histories when some pair resists rolling.
    const bool rolling = sim.pairs.hasRolling();
    Displacements moved;
    double pairSeconds = 0, sphereSeconds = 0;
    int64_t firstBad = int64_t(n);
    size_t touchingPairs = 0;
#pragma omp parallel num_threads(threads) reduction(min : firstBad) reduction(merge : moved)       \
    reduction(+ : pairSeconds, sphereSeconds, touchingPairs)
    {
        // The runtime may give the region fewer threads than asked for (dynamic adjustment, a
        // nested region; main() rules both out, a caller of the library may not): the spheres
        // are then shared out evenly among the team it got. Any split gives the same results.
        const int team = omp_get_num_threads();
        if (team != threads) {
#pragma omp single
            splitSweep(ws.sweepSplit.bounds, {}, n, size_t(team));
        }
        SweepResult mine;
        const int t = omp_get_thread_num();
        if (sim.cell.enabled)
            rolling ? sweepSpheres<true, true>(sim, ws, t, team, mine)
                    : sweepSpheres<true, false>(sim, ws, t, team, mine);
        else
            rolling ? sweepSpheres<false, true>(sim, ws, t, team, mine)
                    : sweepSpheres<false, false>(sim, ws, t, team, mine);
        firstBad = std::min(firstBad, mine.firstBad);
        moved.merge(mine.moved);
        pairSeconds += mine.pairSeconds;
        sphereSeconds += mine.sphereSeconds;
        touchingPairs += mine.touchingPairs;
    }
    // The records end with the last block a thread claimed (the room after it was not written).
    sim.pairs.records.resize(ws.nextRecord);
    if (sim.trackEnergy)
        sim.pairs.energies.resize(ws.nextRecord);
    if (!sim.pairs.rolling.empty())
        sim.pairs.rolling.resize(ws.nextRecord);
    ws.touchingPairs = touchingPairs;
    if (firstBad < int64_t(n)) {
        ws.error = fmt::format("non-finite state at step {}: sphere {} (position {} {} {})",
                               sim.step + 1, P.id[firstBad], P.pos[firstBad].x(),
                               P.pos[firstBad].y(), P.pos[firstBad].z());
        return false;
    }
    const double t4 = omp_get_wtime();
    obstacleReactions(sim);
    moveObstacles(sim, ws.objectSteps);
    if (sim.trackEnergy) {
        sim.energy.dampingDissipated += chunkedSum(n, [&](size_t p) { return ws.dampingLoss[p]; });
        sim.energy.contactDissipated +=
            chunkedSum(n, [&](size_t p) { return ws.contactLoss[p]; }) +
            chunkedSum(sim.pairs.size(), [&](size_t k) { return sim.pairs.energy(k).dissipated; });
    }
    if (sim.cell.enabled) // h(t + dt) = (I + L dt) h(t), physics.md §11.2
        sim.cell.h += sim.dt * (sim.cell.velGrad * sim.cell.h);
    sim.step += 1;
    sim.time += sim.dt;
    sim.neighbours.needRebuild = rebuildDue(sim, moved, n);
    const double t5 = omp_get_wtime();
    // The sweep interleaves pair forces and integration: its wall time is split between them in
    // the proportion of the time the threads spent in each.
    const double pairShare = pairSeconds / std::max(pairSeconds + sphereSeconds, 1e-300);
    times.neighbours += t2 - t1;
    times.contacts += (t4 - t2) * pairShare;
    times.integration += (t4 - t2) * (1 - pairShare);
    times.other += (t1 - t0) + (t5 - t4);
    return true;
}

} // namespace dem
