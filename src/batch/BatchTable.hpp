#pragma once
// Parameter tables of `dem batch`: Yade's format (whitespace-separated columns, '#' comments,
// counted blank lines, '=' and '*', a description column, name! and !DIRECTIVE columns), plus
// tab- and comma-separated tables with a header line.
#include "deck/Deck.hpp"

#include <map>
#include <string>
#include <vector>

namespace dem {

// One cell as written: its text (surrounding whitespace removed, CSV quoting undone) and its
// 1-based column in the line.
struct TableCell {
    std::string text;
    int column = 0;
};

struct TableRow {
    int line = 0; // 1-based, as an editor shows it
    std::vector<TableCell> cells;
};

enum class TableFormat { Whitespace, Tab, Comma };

// The table split into cells, before any interpretation.
struct RawTable {
    TableFormat format = TableFormat::Whitespace;
    int headerLine = 0;
    std::vector<TableCell> header;
    std::vector<TableRow> rows; // data lines
};

// Whitespace unless the file name ends in .tsv (tab) or .csv (comma), or the header holds a comma
// (comma).
TableFormat tableFormatFor(const std::string& path, const std::string& headerText);

// Splits `text` into header and data rows. Errors (unterminated quote, wrong cell count, no
// header) are appended as path:line:column messages; returns false when there was any.
bool splitTable(const std::string& path, const std::string& text, RawTable& table,
                std::vector<DeckError>& errors);

enum class ColumnKind {
    Param,       // a deck parameter
    Description, // names the job
    Threads,     // !THREADS (or Yade's !OMP_NUM_THREADS)
    Deck,        // !DECK: deck file of the line
    Count,       // !COUNT: run the line this many times
    Env,         // !NAME: exported to the job's environment as NAME
};

struct TableColumn {
    std::string name; // parameter or environment variable name, without any '!'
    ColumnKind kind = ColumnKind::Param;
    bool inName = false; // header ended in '!': the column names the job
    int column = 0;      // of the header cell
};

// A cell after '=' has been resolved.
struct TableValue {
    std::string text;      // the value, one level of quotes around it removed
    bool isDefault = true; // '*': leave the deck's default (or the command line's setting)
    int column = 0;        // where the cell is on its own line
};

struct TableEntry {
    int line = 0;
    std::string name;               // sanitised job name (a directory name)
    std::vector<TableValue> values; // one per column
    int threads = 0;                // 0: not set by the table
    int count = 1;                  // !COUNT
    std::string deck;               // !DECK, empty when not set
    std::map<std::string, std::string> env;
    ParamOverrides overrides;         // the parameter columns not left at '*', in column order
    std::vector<int> overrideColumns; // the cell column of each override (for messages)
};

struct BatchTable {
    std::string path;
    TableFormat format = TableFormat::Whitespace;
    int headerLine = 0;
    std::vector<TableColumn> columns;
    std::vector<TableEntry> entries; // in line order
    bool hasDeckColumn() const;
    int columnIndex(ColumnKind kind) const; // first column of that kind, or -1
};

// Reads and interprets a table: columns, '=' and '*', directives, job names (unique). Errors are
// appended (every one found, in line order); returns false when there was any.
bool readTableText(const std::string& path, const std::string& text, BatchTable& table,
                   std::vector<DeckError>& errors);
bool readTableFile(const std::string& path, BatchTable& table, std::vector<DeckError>& errors);

// A job name made safe as a single directory name: characters other than letters, digits and
// . , = + - _ become '_', a leading '.' or '-' becomes '_', very long names are shortened
// (keeping them distinct with the line number). Empty names become "line<line>".
std::string sanitizeJobName(const std::string& name, int line);

// Whether a job directory of this name would clash with a file the batch writes in its directory:
// batch.json, batch.tsv, timing.tsv, slurm.sh, slurm-*.out, merged-*.gp and the images rendered
// from those, or the temporary file of an atomic write of one of them.
bool isBatchFileName(const std::string& name);

// What a message says isBatchFileName refuses.
extern const char* const batchFileNames;

// Removes one level of matching single or double quotes around `text`.
std::string unquote(const std::string& text);

// "2,5-9" -> the set of line numbers; false with `error` set on bad syntax.
bool parseLineList(const std::string& text, std::vector<std::pair<int, int>>& ranges,
                   std::string& error);

} // namespace dem
