#include "io/Snapshot.hpp"

#include "io/Gnuplot.hpp"
#include "io/ScratchFiles.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <numeric>

namespace dem {

namespace fs = std::filesystem;

namespace {

void segment(std::string& out, const Vec3& a, const Vec3& b) {
    out += fmt::format("{} {}\n{} {}\n\n", a.x(), a.z(), b.x(), b.z());
}

} // namespace

bool renderSnapshot(const Simulation& sim, const std::string& pngPath, const std::string& colourBy,
                    int width, int height, std::string& error) {
    const Particles& P = sim.particles;
    const size_t n = P.size();
    if (n == 0) {
        error = "no spheres to draw";
        return false;
    }
    if (P.radius.size() != n || P.vel.size() != n || P.material.size() != n) {
        error = "inconsistent particle arrays (sizes differ)";
        return false;
    }
    std::string label;
    std::vector<double> value(n);
    if (colourBy == "velocity") {
        label = "|velocity| [m/s]";
        for (size_t p = 0; p < n; ++p)
            value[p] = P.vel[p].norm();
    } else if (colourBy == "z") {
        label = "z [m]";
        for (size_t p = 0; p < n; ++p)
            value[p] = P.pos[p].z();
    } else if (colourBy == "material") {
        label = "material";
        for (size_t p = 0; p < n; ++p)
            value[p] = P.material[p];
    } else if (colourBy == "radius") {
        label = "radius [m]";
        for (size_t p = 0; p < n; ++p)
            value[p] = P.radius[p];
    } else {
        error = fmt::format("cannot colour by \"{}\" (velocity, z, material or radius)", colourBy);
        return false;
    }
    if (width < 16 || height < 16 || width > 20000 || height > 20000) {
        error = fmt::format("snapshot size {}x{} out of range (16 to 20000 pixels)", width, height);
        return false;
    }
    if (findGnuplot().empty()) {
        error = gnuplotNotFound();
        return false;
    }

    // View box: the spheres' extent in x and z, with a margin.
    Vec3 lo = P.pos[0], hi = P.pos[0], centroid = Vec3::Zero();
    double vmin = value[0], vmax = value[0];
    for (size_t p = 0; p < n; ++p) {
        lo = lo.cwiseMin(P.pos[p] - Vec3::Constant(P.radius[p]));
        hi = hi.cwiseMax(P.pos[p] + Vec3::Constant(P.radius[p]));
        centroid += P.pos[p];
        vmin = std::min(vmin, value[p]);
        vmax = std::max(vmax, value[p]);
    }
    centroid /= double(n);
    const double margin = 0.05 * std::max({hi.x() - lo.x(), hi.z() - lo.z(), 1e-12});
    lo -= Vec3::Constant(margin);
    hi += Vec3::Constant(margin);
    if (!(vmax > vmin)) { // one value: a range around it, not below 0 for a value that is not
        const double half = std::max(1.0, std::abs(vmin)) * 0.5;
        vmin = vmin >= 0 ? std::max(0.0, vmin - half) : vmin - half;
        vmax += half;
    }

    ScratchDirectory tmp;
    if (!tmp.make("dem-snapshot-", {"spheres.dat", "outlines.dat", "snapshot.gp"}, error))
        return false;

    // Farthest first (largest y), so that nearer discs cover farther ones.
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return P.pos[a].y() > P.pos[b].y(); });
    std::string spheres;
    spheres.reserve(n * 80);
    for (uint32_t p : order)
        spheres += fmt::format("{} {} {} {} {}\n", P.pos[p].x(), P.pos[p].y(), P.pos[p].z(),
                               P.radius[p], value[p]);

    // Obstacle outlines projected on the x-z plane, one polyline per blank-line-separated block.
    const Obstacles& B = sim.obstacles;
    std::string outlines;
    const double reach = 4 * (hi - lo).norm();
    for (const Wall& w : B.walls) {
        const Vec3 nrm = w.normal.normalized();
        const Vec3 d(-nrm.z(), 0, nrm.x()); // the wall's trace in a plane y = const
        if (d.norm() < 1e-6)
            continue; // the wall faces the viewer
        const Vec3 q = centroid - (centroid - w.point).dot(nrm) * nrm;
        segment(outlines, q - reach * d.normalized(), q + reach * d.normalized());
    }
    for (const Facet& f : B.facets)
        outlines +=
            fmt::format("{} {}\n{} {}\n{} {}\n{} {}\n\n", f.v[0].x(), f.v[0].z(), f.v[1].x(),
                        f.v[1].z(), f.v[2].x(), f.v[2].z(), f.v[0].x(), f.v[0].z());
    for (const Box& b : B.boxes) {
        Vec3 c[8];
        for (int k = 0; k < 8; ++k)
            c[k] = b.center + b.ori * Vec3((k & 1 ? 1 : -1) * b.half.x(),
                                           (k & 2 ? 1 : -1) * b.half.y(),
                                           (k & 4 ? 1 : -1) * b.half.z());
        for (int k = 0; k < 8; ++k)
            for (int bit = 1; bit < 8; bit <<= 1)
                if (!(k & bit))
                    segment(outlines, c[k], c[k | bit]);
    }

    const fs::path dataPath = tmp.file(0), outlinePath = tmp.file(1), scriptPath = tmp.file(2);
    std::string script;
    script += fmt::format("if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {{\n"
                          "    set terminal pngcairo size {0}, {1} noenhanced\n"
                          "}} else {{\n"
                          "    set terminal png size {0}, {1} noenhanced\n"
                          "}}\n",
                          width, height);
    script += "set output " + gnuplotQuote(pngPath) + "\n";
    script += fmt::format("set title {}\n",
                          gnuplotQuote(fmt::format("step {}, t = {:.6g} s, {} spheres, side view "
                                                   "(x, z)",
                                                   sim.step, sim.time, n)));
    script += "set xlabel 'x [m]'\nset ylabel 'z [m]'\nset size ratio -1\n";
    script +=
        fmt::format("set xrange [{}:{}]\nset yrange [{}:{}]\n", lo.x(), hi.x(), lo.z(), hi.z());
    script += "set cblabel " + gnuplotQuote(label) + "\nset format cb '%g'\n";
    if (colourBy == "material") {
        const int count = std::max(1, int(std::lround(vmax)) + 1);
        script +=
            fmt::format("set cbrange [-0.5:{}]\nset palette maxcolors {}\n", count - 0.5, count);
        script += "set cbtics 1\n";
    } else {
        script += fmt::format("set cbrange [{}:{}]\n", vmin, vmax);
    }
    // Perceptually ordered blue-green-yellow palette.
    script += "set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', "
              "1 '#fde725')\n";
    script += n <= 3000 ? "set style fill solid 1.0 border lc rgb 'gray20'\n"
                        : "set style fill solid 1.0 noborder\n";
    script += "set key off\nset clip two\n"; // outlines may cross the view from outside
    script += "plot " + gnuplotQuote(dataPath.string()) +
              " using 1:3:4:5 with circles lc palette notitle";
    if (!outlines.empty())
        script += ", \\\n     " + gnuplotQuote(outlinePath.string()) +
                  " using 1:2 with lines lc rgb 'gray30' lw 1.5 notitle";
    script += "\n";

    for (const auto& [path, text] :
         {std::pair{dataPath, &spheres}, {outlinePath, &outlines}, {scriptPath, &script}}) {
        std::ofstream f(path);
        f << *text;
        f.close();
        if (!f) {
            error = fmt::format("cannot write {}", path.string());
            return false;
        }
    }
    std::error_code ec;
    const fs::path png(pngPath);
    if (png.has_parent_path())
        fs::create_directories(png.parent_path(), ec);
    fs::remove(png, ec);
    if (!runGnuplot({scriptPath.string()}, error)) {
        fs::remove(png, ec); // gnuplot opens the output before it fails
        error = "snapshot: " + error;
        return false;
    }
    if (!fs::is_regular_file(png)) {
        error = fmt::format("snapshot: gnuplot wrote no {}", pngPath);
        return false;
    }
    return true;
}

} // namespace dem
