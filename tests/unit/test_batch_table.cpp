// Parameter tables of dem batch: every rule of Yade's format, TSV and CSV, job names, errors.
#include "batch/BatchTable.hpp"

#include <catch2/catch.hpp>
#include <filesystem>

using namespace dem;

namespace {

struct Parsed {
    bool ok = false;
    BatchTable table;
    std::vector<DeckError> errors;
    std::string messages() const {
        std::string out;
        for (const DeckError& e : errors)
            out += formatError(e) + "\n";
        return out;
    }
};

Parsed parse(const std::string& text, const std::string& path = "t.table") {
    Parsed p;
    p.ok = readTableText(path, text, p.table, p.errors);
    return p;
}

const TableEntry& entryOnLine(const BatchTable& t, int line) {
    for (const TableEntry& e : t.entries)
        if (e.line == line)
            return e;
    FAIL("no entry on line " << line);
    return t.entries.front();
}

std::string override(const TableEntry& e, const std::string& name) {
    for (const auto& [n, v] : e.overrides)
        if (n == name)
            return v;
    return "<not set>";
}

} // namespace

TEST_CASE("the header is the first line that is not blank or a comment", "[batch][table]") {
    const Parsed p = parse("# a study\n\n   # indented comment\nfriction  r\n10 0.01\n");
    REQUIRE(p.ok);
    CHECK(p.table.headerLine == 4);
    REQUIRE(p.table.columns.size() == 2);
    CHECK(p.table.columns[0].name == "friction");
    CHECK(p.table.columns[1].name == "r");
    CHECK(p.table.columns[1].column == 11);
    REQUIRE(p.table.entries.size() == 1);
    CHECK(p.table.entries[0].line == 5);
}

TEST_CASE("jobs are numbered by editor lines: blank and comment lines count", "[batch][table]") {
    const Parsed p = parse("friction\n"   // 1
                           "10\n"         // 2
                           "\n"           // 3
                           "# comment\n"  // 4
                           "20  # note\n" // 5
                           "\t\n"         // 6
                           "30\n");       // 7
    REQUIRE(p.ok);
    REQUIRE(p.table.entries.size() == 3);
    CHECK(p.table.entries[0].line == 2);
    CHECK(p.table.entries[1].line == 5);
    CHECK(p.table.entries[2].line == 7);
    CHECK(override(p.table.entries[1], "friction") == "20"); // the comment is not part of it
}

TEST_CASE("whitespace columns: spaces and tabs, CRLF line ends, byte order mark",
          "[batch][table]") {
    const Parsed p = parse("\xEF\xBB\xBF"
                           "a\tb   c\r\n1\t\t2 3\r\n");
    REQUIRE(p.ok);
    REQUIRE(p.table.columns.size() == 3);
    CHECK(p.table.columns[0].name == "a");
    const TableEntry& e = p.table.entries.at(0);
    CHECK(override(e, "a") == "1");
    CHECK(override(e, "b") == "2");
    CHECK(override(e, "c") == "3");
    CHECK(e.values[1].column == 4);
}

TEST_CASE("'=' repeats the value above, recursively, including '*'", "[batch][table]") {
    const Parsed p = parse("description a    b\n"
                           "one         1    *\n"
                           "two         =    5\n"
                           "\n"
                           "three       =    =\n"
                           "four        2    =\n");
    REQUIRE(p.ok);
    const auto& t = p.table;
    CHECK(override(entryOnLine(t, 2), "a") == "1");
    CHECK(override(entryOnLine(t, 2), "b") == "<not set>");
    CHECK(override(entryOnLine(t, 3), "a") == "1");
    CHECK(override(entryOnLine(t, 3), "b") == "5");
    CHECK(override(entryOnLine(t, 5), "a") == "1"); // through a blank line
    CHECK(override(entryOnLine(t, 5), "b") == "5");
    CHECK(override(entryOnLine(t, 6), "a") == "2");
    CHECK(override(entryOnLine(t, 6), "b") == "5");

    const Parsed q = parse("a b\n* 1\n= 2\n");
    REQUIRE(q.ok);
    CHECK(override(q.table.entries[1], "a") == "<not set>"); // '=' of '*' is '*'
}

TEST_CASE("'=' on the first data line is an error at its line and column", "[batch][table]") {
    const Parsed p = parse("# c\na   b\n1   =\n");
    CHECK_FALSE(p.ok);
    REQUIRE(p.errors.size() == 1);
    CHECK(p.errors[0].file == "t.table");
    CHECK(p.errors[0].line == 3);
    CHECK(p.errors[0].column == 5);
    CHECK(formatError(p.errors[0]).rfind("t.table:3:5: error: '=' in column 'b'", 0) == 0);
}

TEST_CASE("'*' leaves the deck's default: no override", "[batch][table]") {
    const Parsed p = parse("a b c\n* 2 *\n");
    REQUIRE(p.ok);
    const TableEntry& e = p.table.entries[0];
    REQUIRE(e.overrides.size() == 1);
    CHECK(e.overrides[0] == std::pair<std::string, std::string>("b", "2"));
    CHECK(e.overrideColumns == std::vector<int>{3});
    CHECK(e.values[0].isDefault);
    CHECK_FALSE(e.values[1].isDefault);
}

TEST_CASE("cells are kept as written: expressions and cells without their quotes",
          "[batch][table]") {
    const Parsed p = parse("a b c\n1e6 pi/4 radians(30)\n.05 '#x' \"2 * r\"\n");
    REQUIRE(p.ok);
    CHECK(override(p.table.entries[0], "a") == "1e6");
    CHECK(override(p.table.entries[0], "b") == "pi/4");
    CHECK(override(p.table.entries[0], "c") == "radians(30)");
    CHECK(override(p.table.entries[1], "a") == ".05");
    CHECK(override(p.table.entries[1], "b") == "#x");    // '#' inside quotes is no comment
    CHECK(override(p.table.entries[1], "c") == "2 * r"); // nor is a space a separator
    CHECK(p.table.entries[1].name == "a=.05,b=_x,c=2___r");

    const Parsed empty = parse("a\n''\n");
    CHECK_FALSE(empty.ok);
    CHECK(formatError(empty.errors.at(0)) ==
          "t.table:2:1: error: empty value in column 'a': write * to keep the default");
}

TEST_CASE("the description column names the job", "[batch][table]") {
    const Parsed p = parse("description a\nfirst 1\n'second one' 2\n* 3\n");
    REQUIRE(p.ok);
    CHECK(p.table.entries[0].name == "first");
    CHECK(p.table.entries[1].name == "second_one"); // quotes removed, space made safe
    CHECK(p.table.entries[2].name == "a=3");        // '*': made from the columns
    // The description is not a deck parameter.
    CHECK(p.table.entries[0].overrides.size() == 1);
}

TEST_CASE("without a description the name is name=value of the ! columns, or of all",
          "[batch][table]") {
    SECTION("all parameter columns, '*' cells left out") {
        const Parsed p = parse("a b !THREADS !FOO\n1 2 4 x\n1 * 1 y\n* * * *\n");
        REQUIRE(p.ok);
        CHECK(p.table.entries[0].name == "a=1,b=2");
        CHECK(p.table.entries[1].name == "a=1");
        CHECK(p.table.entries[2].name == "default");
    }
    SECTION("only the columns marked with a trailing '!'") {
        const Parsed p = parse("a b! c!\n1 2 3\n1 2 4\n");
        REQUIRE(p.ok);
        CHECK(p.table.columns[1].name == "b");
        CHECK(p.table.columns[1].inName);
        CHECK_FALSE(p.table.columns[0].inName);
        CHECK(p.table.entries[0].name == "b=2,c=3");
        CHECK(p.table.entries[1].name == "b=2,c=4");
        CHECK(override(p.table.entries[0], "b") == "2"); // still a parameter
    }
    SECTION("a directive marked with '!' takes part too") {
        const Parsed p = parse("a !THREADS!\n1 1\n1 4\n");
        REQUIRE(p.ok);
        CHECK(p.table.entries[0].name == "THREADS=1");
        CHECK(p.table.entries[1].threads == 4);
    }
}

TEST_CASE("directives: !THREADS, !DECK, !COUNT and exported !NAME", "[batch][table]") {
    const Parsed p = parse("a !THREADS !DECK !COUNT !GREETING\n"
                           "1 2 decks/x.toml 3 'hello world'\n"
                           "2 * * * *\n");
    REQUIRE(p.ok);
    REQUIRE(p.table.columns.size() == 5);
    CHECK(p.table.columns[1].kind == ColumnKind::Threads);
    CHECK(p.table.columns[2].kind == ColumnKind::Deck);
    CHECK(p.table.columns[3].kind == ColumnKind::Count);
    CHECK(p.table.columns[4].kind == ColumnKind::Env);
    CHECK(p.table.hasDeckColumn());
    const TableEntry& e = p.table.entries[0];
    CHECK(e.threads == 2);
    CHECK(e.deck == "decks/x.toml");
    CHECK(e.count == 3);
    CHECK(e.env.at("GREETING") == "hello world");
    REQUIRE(e.overrides.size() == 1); // directives are not deck parameters
    CHECK(e.name == "x,a=1");         // the deck's stem leads when decks vary
    const TableEntry& d = p.table.entries[1];
    CHECK(d.threads == 0);
    CHECK(d.deck.empty());
    CHECK(d.count == 1);
    CHECK(d.env.empty());

    const Parsed omp = parse("a !OMP_NUM_THREADS\n1 3\n"); // Yade's other spelling
    REQUIRE(omp.ok);
    CHECK(omp.table.entries[0].threads == 3);
}

TEST_CASE("bad directive values and names are errors at their cells", "[batch][table]") {
    const Parsed p = parse("a !THREADS !COUNT\n1 0 1\n2 two 1\n3 1 -1\n");
    CHECK_FALSE(p.ok);
    REQUIRE(p.errors.size() == 3);
    CHECK(formatError(p.errors[0]).rfind("t.table:2:3: error: THREADS = '0'", 0) == 0);
    CHECK(p.errors[1].line == 3);
    CHECK(p.errors[2].line == 4);
    CHECK(p.errors[2].column == 5);

    const Parsed bad = parse("a !1X\n1 2\n");
    CHECK_FALSE(bad.ok);
    CHECK(bad.errors.at(0).column == 3);
    CHECK(bad.errors.at(0).message.find("environment variable") != std::string::npos);
}

TEST_CASE("duplicate job names stop the batch, naming both lines", "[batch][table]") {
    const Parsed p = parse("description a\nx 1\n\ny 2\nx 3\n");
    CHECK_FALSE(p.ok);
    REQUIRE(p.errors.size() == 1);
    CHECK(p.errors[0].line == 5);
    CHECK(p.errors[0].column == 1);
    CHECK(p.errors[0].message.find("'x' is also the name of line 2") != std::string::npos);

    // Names that only differ in characters made safe collide too.
    const Parsed q = parse("a\n1/2\n1*2\n");
    CHECK_FALSE(q.ok);
    CHECK(q.errors.at(0).message.find("'a=1_2' is also the name of line 2") != std::string::npos);
}

TEST_CASE("header errors: duplicate columns, bad names, a table without data", "[batch][table]") {
    const Parsed dup = parse("a b a\n1 2 3\n");
    CHECK_FALSE(dup.ok);
    CHECK(formatError(dup.errors.at(0)) ==
          "t.table:1:5: error: column 'a' is given twice (also at column 1)");
    const Parsed badName = parse("a 2x\n1 2\n");
    CHECK_FALSE(badName.ok);
    CHECK(badName.errors.at(0).column == 3);
    const Parsed empty = parse("# nothing\n\n");
    CHECK_FALSE(empty.ok);
    CHECK(empty.errors.at(0).message.find("empty") != std::string::npos);
    const Parsed noData = parse("a b\n# no job\n");
    CHECK_FALSE(noData.ok);
    CHECK(noData.errors.at(0).message.find("no data line") != std::string::npos);
}

TEST_CASE("a line with the wrong number of cells is reported and the rest still checked",
          "[batch][table]") {
    const Parsed p = parse("a b\n1 2 3\n=\n4 5\n");
    CHECK_FALSE(p.ok);
    REQUIRE(p.errors.size() == 2);
    CHECK(formatError(p.errors[0])
              .rfind("t.table:2:5: error: 3 cells where the header (line 1) "
                     "has 2 columns",
                     0) == 0);
    CHECK(p.errors[1].line == 3);
    CHECK(p.errors[1].column == 2); // where the missing cell would be
}

TEST_CASE("Yade's documentation example reads unchanged", "[batch][table]") {
    const Parsed p = parse("description density initialVelocity\n"
                           "reference    2400    10\n"
                           "hi_v         =       20\n"
                           "lo_v         =        5\n"
                           "hi_rho       5000    10\n"
                           "hi_rho_v     =       20\n"
                           "hi_rho_lo_v  =        5\n");
    REQUIRE(p.ok);
    REQUIRE(p.table.entries.size() == 6);
    const TableEntry& e = p.table.entries[5];
    CHECK(e.line == 7);
    CHECK(e.name == "hi_rho_lo_v");
    CHECK(override(e, "density") == "5000");
    CHECK(override(e, "initialVelocity") == "5");
}

TEST_CASE("TSV tables: tab-separated, cells may hold spaces", "[batch][table]") {
    const Parsed p =
        parse("# comment\ndescription\ta\tb\nlow damping\t1 + 1\t*\n\nnext\t=\t3\n", "study.tsv");
    REQUIRE(p.ok);
    CHECK(p.table.format == TableFormat::Tab);
    REQUIRE(p.table.entries.size() == 2);
    CHECK(p.table.entries[0].name == "low_damping");
    CHECK(override(p.table.entries[0], "a") == "1 + 1");
    CHECK(override(p.table.entries[1], "a") == "1 + 1");
    CHECK(p.table.entries[1].line == 5);
}

TEST_CASE("CSV tables: comma-separated with a header, RFC 4180 quotes", "[batch][table]") {
    SECTION("by extension") {
        const Parsed p = parse("a,description\n1,\"x, \"\"y\"\"\"\n2 , plain \n", "t.csv");
        REQUIRE(p.ok);
        CHECK(p.table.format == TableFormat::Comma);
        CHECK(p.table.entries[0].name == "x,__y_");
        CHECK(override(p.table.entries[1], "a") == "2");
        CHECK(p.table.entries[1].name == "plain");
    }
    SECTION("by a comma in the header") {
        const Parsed p = parse("a,b\n1,2\n=,*\n");
        REQUIRE(p.ok);
        CHECK(p.table.format == TableFormat::Comma);
        CHECK(override(p.table.entries[1], "a") == "1");
        CHECK(p.table.entries[1].values[1].column == 3);
    }
    SECTION("an empty cell is an error, '*' keeps the default") {
        const Parsed p = parse("a,b\n1,\n", "t.csv");
        CHECK_FALSE(p.ok);
        CHECK(p.errors.at(0).message.find("write *") != std::string::npos);
    }
}

TEST_CASE("job names are safe directory names", "[batch][table]") {
    CHECK(sanitizeJobName("friction=30,r=0.01", 3) == "friction=30,r=0.01");
    CHECK(sanitizeJobName("a/b c*d", 3) == "a_b_c_d");
    CHECK(sanitizeJobName("..", 3) == "_.");
    CHECK(sanitizeJobName("-x", 3) == "_x");
    CHECK(sanitizeJobName("", 7) == "line7");
    const std::string longName = sanitizeJobName(std::string(500, 'a'), 12);
    CHECK(longName.size() <= 200);
    CHECK(longName.find("line12") != std::string::npos);
}

TEST_CASE("job names of the batch directory's own files are errors at their cells",
          "[batch][table]") {
    const Parsed p = parse("a description\n"
                           "1 batch.json\n"
                           "2 ok\n"
                           "3 merged-kinetic_energy.png\n"
                           "4 slurm.sh\n");
    CHECK_FALSE(p.ok);
    REQUIRE(p.errors.size() == 3);
    CHECK(formatError(p.errors[0])
              .rfind("t.table:2:3: error: job name 'batch.json' is that of a file the batch "
                     "writes in its directory",
                     0) == 0);
    CHECK(p.errors[1].line == 4);
    CHECK(p.errors[2].line == 5);
    for (const char* name :
         {"batch.json", "batch.tsv", "timing.tsv", "slurm.sh", "slurm-12_3.out", "merged-x.gp",
          "merged-x.png", "merged-x.svg", "merged-x.pdf", "batch.json.tmp-123"})
        CHECK(isBatchFileName(name));
    for (const char* name : {"batch", "batch.json.1", "merged-x", "timing.tsv.tmp-", "slurm.out"})
        CHECK_FALSE(isBatchFileName(name));
}

TEST_CASE("line lists of --lines: single lines and ranges", "[batch][table]") {
    std::vector<std::pair<int, int>> r;
    std::string error;
    REQUIRE(parseLineList("2,5-9", r, error));
    CHECK(r == std::vector<std::pair<int, int>>{{2, 2}, {5, 9}});
    REQUIRE(parseLineList(" 3 , 4 - 4", r, error));
    CHECK(r == std::vector<std::pair<int, int>>{{3, 3}, {4, 4}});
    CHECK_FALSE(parseLineList("9-5", r, error));
    CHECK_FALSE(parseLineList("x", r, error));
    CHECK_FALSE(parseLineList("0", r, error));
    CHECK_FALSE(parseLineList("", r, error));
}

TEST_CASE("a table file that cannot be opened or read is an error naming it", "[batch]") {
    BatchTable table;
    std::vector<DeckError> errors;
    CHECK_FALSE(readTableFile("/nonexistent/jobs.table", table, errors));
    REQUIRE(errors.size() == 1);
    CHECK(formatError(errors[0]) == "/nonexistent/jobs.table: error: cannot open the table file");
    errors.clear();
    const std::string dir = std::filesystem::temp_directory_path().string();
    CHECK_FALSE(readTableFile(dir, table, errors)); // a directory opens but cannot be read
    REQUIRE(errors.size() == 1);
    CHECK(formatError(errors[0]) == dir + ": error: cannot read the table file (Is a directory)");
}
