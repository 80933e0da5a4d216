// loadDeck / loadDeckText: parse, validate and build, section by section, collecting every
// error rather than stopping at the first.
#include "deck/DeckBuild.hpp"
#include "deck/ResolvedWriter.hpp"
#include "io/WholeFile.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace dem {

namespace {

// The sections in dependency order: expressions need the parameters, everything else refers
// to materials, stages refer to objects and groups (and to the periodic cell), and the time
// step and the periodic cell's size check need the spheres.
void readSections(TableReader& root, const ParamOverrides& overrides, DeckBuild& b) {
    readParams(root, overrides, b);
    readSimulation(root, b);
    readPeriodic(root, b);
    readMaterials(root, b);
    readObstacles(root, b);
    readSpheres(root, b);
    readGroups(root, b);
    checkPeriodic(root, b);
    readStages(root, b);
    readOutput(root, b);
    if (b.ctx.diag.count() == 0)
        chooseTimeStep(root, b);
    if (b.ctx.diag.count() == 0)
        checkCellStrainPerStep(root, b);
}

bool load(const std::string& path, const std::string& text, const ParamOverrides& overrides,
          Deck& deck, std::vector<DeckError>& errors) {
    DeckContext ctx{Diagnostics(path, errors), Expressions(),
                    std::filesystem::path(path).parent_path()};
    toml::table doc;
    try {
        doc = toml::parse(text, std::string_view(path));
    } catch (const toml::parse_error& e) {
        ctx.diag.error(e.source(), "TOML syntax: " + std::string(e.description()));
        return false;
    }
    Deck result;
    result.path = path;
    result.name = std::filesystem::path(path).stem().string();
    result.text = text;
    toml::table resolved;
    TableReader root(ctx, doc, resolved, deckSpec());
    DeckBuild build{ctx, result.sim, result.output, result.params};
    readSections(root, overrides, build);
    if (ctx.diag.count() > 0)
        return false;
    const OptionalState read = optionalStateRead(result.output, result.sim);
    result.sim.particles.keepOptional(read.orientation, read.start);
    result.resolvedToml = writeResolvedToml(resolved, build.paramOrder);
    deck = std::move(result);
    return true;
}

} // namespace

bool loadDeckText(const std::string& path, const std::string& text, const ParamOverrides& overrides,
                  Deck& deck, std::vector<DeckError>& errors) {
    const size_t before = errors.size();
    try {
        return load(path, text, overrides, deck, errors) && errors.size() == before;
    } catch (const std::bad_alloc&) {
        throw; // not the deck's fault: reported as out of memory, exit status 1
    } catch (const std::exception& e) {
        // A bug, not a deck error; still reported, never thrown.
        errors.push_back(DeckError{path, 0, 0, std::string("internal error: ") + e.what()});
    }
    return false;
}

bool loadDeck(const std::string& path, const ParamOverrides& overrides, Deck& deck,
              std::vector<DeckError>& errors) {
    std::string text;
    if (const FileRead r = readWholeFile(path, text, maxInputFileBytes); !r) {
        errors.push_back(DeckError{
            path, 0, 0,
            r.error == EFBIG ? fmt::format("the deck file is larger than {} MiB: not a deck",
                                           maxInputFileBytes >> 20)
            : r.opened       ? fmt::format("cannot read the deck file ({})", std::strerror(r.error))
                             : "cannot open the deck file"});
        return false;
    }
    return loadDeckText(path, text, overrides, deck, errors);
}

} // namespace dem
