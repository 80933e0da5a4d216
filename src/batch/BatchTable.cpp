#include "batch/BatchTable.hpp"

#include "io/AtomicFile.hpp"
#include "io/WholeFile.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <sstream>

namespace dem {

namespace {

bool isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

bool isIdentifier(const std::string& s) {
    if (s.empty() || !(std::isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return std::isalnum((unsigned char)c) || c == '_'; });
}

std::string lower(std::string s) {
    for (char& c : s)
        c = char(std::tolower((unsigned char)c));
    return s;
}

// Splits one line into cells. `comment` receives whether anything but a comment or whitespace
// was on the line. Quotes protect separators and '#'.
struct LineSplitter {
    TableFormat format;
    const std::string& path;
    std::vector<DeckError>& errors;

    // Returns false on a syntax error (already reported).
    bool split(const std::string& line, int lineNo, std::vector<TableCell>& cells) const {
        cells.clear();
        const size_t n = line.size();
        size_t i = 0;
        if (format == TableFormat::Whitespace) {
            while (i < n) {
                while (i < n && isSpace(line[i]))
                    ++i;
                if (i == n || line[i] == '#')
                    break;
                TableCell cell;
                cell.column = int(i) + 1;
                while (i < n && !isSpace(line[i]) && line[i] != '#') {
                    if (line[i] == '"' || line[i] == '\'') {
                        const char q = line[i];
                        const size_t close = line.find(q, i + 1);
                        if (close == std::string::npos) {
                            errors.push_back({path, lineNo, int(i) + 1,
                                              fmt::format("unterminated quote {}", q)});
                            return false;
                        }
                        cell.text += line.substr(i, close + 1 - i);
                        i = close + 1;
                    } else {
                        cell.text += line[i++];
                    }
                }
                cells.push_back(std::move(cell));
            }
            return true;
        }
        // Tab- or comma-separated: a line that is blank or a comment has no cells at all.
        const char sep = format == TableFormat::Tab ? '\t' : ',';
        size_t first = 0;
        while (first < n && isSpace(line[first]))
            ++first;
        if (first == n || line[first] == '#')
            return true;
        i = 0;
        while (true) {
            TableCell cell;
            while (i < n && line[i] != sep && isSpace(line[i]))
                ++i;
            cell.column = int(i) + 1;
            bool quoted = false;
            std::string text;
            if (format == TableFormat::Comma && i < n && line[i] == '"') {
                // RFC 4180 quoting: "" stands for ".
                quoted = true;
                size_t j = i + 1;
                while (true) {
                    if (j >= n) {
                        errors.push_back({path, lineNo, int(i) + 1, "unterminated quote \""});
                        return false;
                    }
                    if (line[j] == '"') {
                        if (j + 1 < n && line[j + 1] == '"') {
                            text += '"';
                            j += 2;
                            continue;
                        }
                        ++j;
                        break;
                    }
                    text += line[j++];
                }
                i = j;
                while (i < n && isSpace(line[i]) && line[i] != sep)
                    ++i;
                if (i < n && line[i] != sep && line[i] != '#') {
                    errors.push_back({path, lineNo, int(i) + 1,
                                      "unexpected text after a quoted cell (expected ',')"});
                    return false;
                }
            } else {
                while (i < n && line[i] != sep && line[i] != '#') {
                    if (format == TableFormat::Tab && (line[i] == '"' || line[i] == '\'')) {
                        const size_t close = line.find(line[i], i + 1);
                        if (close == std::string::npos) {
                            errors.push_back({path, lineNo, int(i) + 1,
                                              fmt::format("unterminated quote {}", line[i])});
                            return false;
                        }
                        text += line.substr(i, close + 1 - i);
                        i = close + 1;
                    } else {
                        text += line[i++];
                    }
                }
                while (!text.empty() && isSpace(text.back()))
                    text.pop_back();
            }
            cell.text = text;
            if (quoted && cell.text.empty())
                cell.text = "\"\""; // keep an explicitly empty string distinguishable
            cells.push_back(std::move(cell));
            if (i < n && line[i] == sep) {
                ++i;
                continue;
            }
            break; // end of line or comment
        }
        return true;
    }
};

const char* formatName(TableFormat f) {
    switch (f) {
    case TableFormat::Whitespace:
        return "whitespace-separated";
    case TableFormat::Tab:
        return "tab-separated";
    case TableFormat::Comma:
        return "comma-separated";
    }
    return "?";
}

bool parsePositive(const std::string& text, int max, int& out) {
    if (text.empty() || text.size() > 9 ||
        !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return false;
    out = std::stoi(text);
    return out >= 1 && out <= max;
}

std::string deckStem(const std::string& deck) {
    return std::filesystem::path(deck).stem().string();
}

} // namespace

bool BatchTable::hasDeckColumn() const {
    return columnIndex(ColumnKind::Deck) >= 0;
}

int BatchTable::columnIndex(ColumnKind kind) const {
    for (size_t c = 0; c < columns.size(); ++c)
        if (columns[c].kind == kind)
            return int(c);
    return -1;
}

std::string unquote(const std::string& text) {
    if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') &&
        text.back() == text.front())
        return text.substr(1, text.size() - 2);
    return text;
}

const char* const batchFileNames =
    "batch.json, batch.tsv, timing.tsv, slurm.sh, slurm-*.out, merged-*.gp, .png, .svg, .pdf";

bool isBatchFileName(const std::string& name) {
    const std::string base =
        isAtomicWriteTemporary(name) ? name.substr(0, name.rfind(".tmp-")) : name;
    if (base == "batch.json" || base == "batch.tsv" || base == "timing.tsv" || base == "slurm.sh")
        return true;
    if (base.starts_with("slurm-") && base.ends_with(".out"))
        return true;
    if (!base.starts_with("merged-"))
        return false;
    const std::string ext = std::filesystem::path(base).extension().string();
    return ext == ".gp" || ext == ".png" || ext == ".svg" || ext == ".pdf";
}

std::string sanitizeJobName(const std::string& name, int line) {
    std::string out;
    for (char c : name) {
        const bool ok = std::isalnum((unsigned char)c) || c == '.' || c == ',' || c == '=' ||
                        c == '+' || c == '-' || c == '_';
        out += ok ? c : '_';
    }
    if (out.empty())
        return fmt::format("line{}", line);
    if (out[0] == '.' || out[0] == '-')
        out[0] = '_';
    constexpr size_t maxLength = 200;
    if (out.size() > maxLength)
        out = out.substr(0, maxLength - 20) + fmt::format("__line{}", line);
    return out;
}

TableFormat tableFormatFor(const std::string& path, const std::string& headerText) {
    const std::string ext = lower(std::filesystem::path(path).extension().string());
    if (ext == ".tsv")
        return TableFormat::Tab;
    if (ext == ".csv")
        return TableFormat::Comma;
    // Yade's column names never hold commas, so a comma in the header means CSV.
    const std::string beforeComment = headerText.substr(0, headerText.find('#'));
    if (beforeComment.find(',') != std::string::npos)
        return TableFormat::Comma;
    return TableFormat::Whitespace;
}

bool splitTable(const std::string& path, const std::string& text, RawTable& table,
                std::vector<DeckError>& errors) {
    const size_t before = errors.size();
    std::vector<std::string> lines;
    {
        std::istringstream in(text);
        in.exceptions(std::ios::badbit); // a failed allocation is thrown, not taken for the end
        std::string l;
        while (std::getline(in, l)) {
            if (!l.empty() && l.back() == '\r')
                l.pop_back();
            lines.push_back(l);
        }
    }
    if (!lines.empty() && lines[0].rfind("\xEF\xBB\xBF", 0) == 0)
        lines[0] = lines[0].substr(3); // UTF-8 byte order mark, as spreadsheets write it
    // The header decides the format; find it with the whitespace rules (comments and blank lines
    // look the same in every format).
    size_t headerIndex = lines.size();
    for (size_t k = 0; k < lines.size(); ++k) {
        const std::string& l = lines[k];
        const size_t first = l.find_first_not_of(" \t\r\f\v");
        if (first != std::string::npos && l[first] != '#') {
            headerIndex = k;
            break;
        }
    }
    if (headerIndex == lines.size()) {
        errors.push_back({path, 0, 0,
                          "the table is empty: it needs a header line naming the "
                          "columns and at least one data line"});
        return false;
    }
    table.format = tableFormatFor(path, lines[headerIndex]);
    LineSplitter splitter{table.format, path, errors};
    table.headerLine = int(headerIndex) + 1;
    if (!splitter.split(lines[headerIndex], table.headerLine, table.header)) {
        table.header.clear();
        return false;
    }
    std::vector<TableCell> cells;
    for (size_t k = headerIndex + 1; k < lines.size(); ++k) {
        const int lineNo = int(k) + 1;
        if (!splitter.split(lines[k], lineNo, cells))
            continue;
        if (cells.empty())
            continue; // blank or comment: counted, not a job
        if (cells.size() != table.header.size()) {
            const int column = cells.size() > table.header.size()
                                   ? cells[table.header.size()].column
                                   : int(lines[k].find_last_not_of(" \t\r") + 2);
            errors.push_back(
                {path, lineNo, column,
                 fmt::format("{} cells where the header (line {}) has {} columns ({} table)",
                             cells.size(), table.headerLine, table.header.size(),
                             formatName(table.format))});
            continue;
        }
        table.rows.push_back({lineNo, cells});
    }
    if (errors.size() == before && table.rows.empty())
        errors.push_back(
            {path, table.headerLine, 1, "the table has a header but no data line: nothing to run"});
    return errors.size() == before;
}

namespace {

// Interprets the header cells as columns.
void readColumns(const std::string& path, const RawTable& raw, BatchTable& table,
                 std::vector<DeckError>& errors) {
    for (const TableCell& h : raw.header) {
        auto error = [&](const std::string& message) {
            errors.push_back({path, raw.headerLine, h.column, message});
        };
        TableColumn col;
        col.column = h.column;
        std::string name = unquote(h.text);
        const bool directive = !name.empty() && name[0] == '!';
        if (directive)
            name.erase(0, 1);
        if (!name.empty() && name.back() == '!') {
            col.inName = true;
            name.pop_back();
        }
        if (name.empty()) {
            error(fmt::format("column header '{}' has no name", h.text));
            continue;
        }
        col.name = name;
        if (directive) {
            if (name == "THREADS" || name == "OMP_NUM_THREADS")
                col.kind = ColumnKind::Threads;
            else if (name == "DECK")
                col.kind = ColumnKind::Deck;
            else if (name == "COUNT")
                col.kind = ColumnKind::Count;
            else if (isIdentifier(name))
                col.kind = ColumnKind::Env;
            else {
                error(fmt::format("directive column '{}': '{}' is not a valid environment variable "
                                  "name (letters, digits and _, not starting with a digit)",
                                  h.text, name));
                continue;
            }
        } else if (name == "description") {
            col.kind = ColumnKind::Description;
            if (col.inName) {
                error("column 'description!': the description already names the job, drop the "
                      "'!'");
                continue;
            }
        } else {
            col.kind = ColumnKind::Param;
            if (!isIdentifier(name)) {
                error(fmt::format("column '{}' is not a parameter name (letters, digits and _, not "
                                  "starting with a digit; directives start with '!')",
                                  h.text));
                continue;
            }
        }
        bool duplicate = false;
        for (const TableColumn& other : table.columns) {
            const bool sameThreads =
                other.kind == ColumnKind::Threads && col.kind == ColumnKind::Threads;
            if ((other.name == col.name &&
                 (other.kind == ColumnKind::Param) == (col.kind == ColumnKind::Param)) ||
                sameThreads) {
                error(fmt::format("column '{}' is given twice (also at column {})", h.text,
                                  other.column));
                duplicate = true;
                break;
            }
        }
        if (!duplicate)
            table.columns.push_back(col);
    }
}

} // namespace

bool readTableText(const std::string& path, const std::string& text, BatchTable& table,
                   std::vector<DeckError>& errors) {
    const size_t before = errors.size();
    table = BatchTable{};
    table.path = path;
    RawTable raw;
    // Lines with the wrong number of cells are reported and left out; the others are still
    // interpreted so that one pass reports every problem.
    splitTable(path, text, raw, errors);
    if (raw.header.empty())
        return false;
    table.format = raw.format;
    table.headerLine = raw.headerLine;
    const size_t beforeColumns = errors.size();
    readColumns(path, raw, table, errors);
    if (errors.size() != beforeColumns)
        return false;
    const bool anyMarked = std::any_of(table.columns.begin(), table.columns.end(),
                                       [](const TableColumn& c) { return c.inName; });

    std::map<std::string, int> nameLines; // job name -> first line using it
    const TableEntry* previous = nullptr;
    for (const TableRow& row : raw.rows) {
        TableEntry e;
        e.line = row.line;
        bool ok = true;
        for (size_t c = 0; c < table.columns.size(); ++c) {
            const TableColumn& col = table.columns[c];
            const TableCell& cell = row.cells[c];
            auto error = [&](const std::string& message) {
                errors.push_back({path, row.line, cell.column, message});
                ok = false;
            };
            TableValue v;
            v.column = cell.column;
            if (cell.text == "=") {
                if (!previous) {
                    error(fmt::format("'=' in column '{}' on the first data line: there is no "
                                      "value above to repeat",
                                      col.name));
                    e.values.push_back(v);
                    continue;
                }
                v.text = previous->values[c].text;
                v.isDefault = previous->values[c].isDefault;
            } else if (cell.text == "*") {
                v.isDefault = true;
            } else if (cell.text.empty()) {
                error(fmt::format("empty cell in column '{}': write * to keep the default",
                                  col.name));
            } else {
                v.isDefault = false;
                v.text = unquote(cell.text); // quotes only keep whitespace and '#' in the cell
            }
            e.values.push_back(v);
            if (v.isDefault)
                continue;
            switch (col.kind) {
            case ColumnKind::Param:
                if (v.text.empty())
                    error(fmt::format("empty value in column '{}': write * to keep the default",
                                      col.name));
                break;
            case ColumnKind::Description:
                break;
            case ColumnKind::Threads:
                if (!parsePositive(v.text, 4096, e.threads))
                    error(fmt::format("{} = '{}': expected a whole number of threads from 1 to "
                                      "4096",
                                      table.columns[c].name, v.text));
                break;
            case ColumnKind::Count:
                if (!parsePositive(v.text, 10000, e.count))
                    error(fmt::format("COUNT = '{}': expected a whole number of repetitions from 1 "
                                      "to 10000",
                                      v.text));
                break;
            case ColumnKind::Deck:
                e.deck = v.text;
                if (e.deck.empty())
                    error("DECK: empty deck file name");
                break;
            case ColumnKind::Env:
                e.env[col.name] = v.text;
                break;
            }
            if (col.kind == ColumnKind::Param && !v.text.empty()) {
                e.overrides.emplace_back(col.name, v.text);
                e.overrideColumns.push_back(cell.column);
            }
        }
        // The job's name: the description, else name=value of the marked columns (or of all).
        const int descColumn = table.columnIndex(ColumnKind::Description);
        std::string name;
        if (descColumn >= 0 && !e.values[descColumn].isDefault) {
            name = e.values[descColumn].text;
        } else {
            std::vector<std::string> parts;
            for (size_t c = 0; c < table.columns.size(); ++c) {
                const TableColumn& col = table.columns[c];
                const TableValue& v = e.values[c];
                if (v.isDefault || col.kind == ColumnKind::Description)
                    continue;
                if (anyMarked ? !col.inName
                              : (col.kind != ColumnKind::Param && col.kind != ColumnKind::Deck))
                    continue;
                if (col.kind == ColumnKind::Deck)
                    parts.insert(parts.begin(), deckStem(v.text));
                else
                    parts.push_back(col.name + "=" + v.text);
            }
            for (const std::string& p : parts)
                name += (name.empty() ? "" : ",") + p;
            if (name.empty())
                name = "default";
        }
        e.name = sanitizeJobName(name, e.line);
        if (ok && isBatchFileName(e.name)) {
            errors.push_back(
                {path, e.line, descColumn >= 0 ? row.cells[descColumn].column : 1,
                 fmt::format("job name '{}' is that of a file the batch writes in its directory "
                             "({}): give the line another description",
                             e.name, batchFileNames)});
            ok = false;
        }
        if (ok) {
            const auto [it, fresh] = nameLines.emplace(e.name, e.line);
            if (!fresh) {
                const int column = descColumn >= 0 ? row.cells[descColumn].column : 1;
                errors.push_back(
                    {path, e.line, column,
                     fmt::format("job name '{}' is also the name of line {}: give the lines "
                                 "distinct descriptions, or mark with a trailing '!' the columns "
                                 "that tell them apart",
                                 e.name, it->second)});
            }
        }
        table.entries.push_back(std::move(e));
        previous = &table.entries.back();
    }
    std::stable_sort(errors.begin() + long(before), errors.end(),
                     [](const DeckError& a, const DeckError& b) { return a.line < b.line; });
    return errors.size() == before;
}

bool readTableFile(const std::string& path, BatchTable& table, std::vector<DeckError>& errors) {
    std::string text;
    if (const FileRead r = readWholeFile(path, text, maxInputFileBytes); !r) {
        errors.push_back(
            {path, 0, 0,
             r.error == EFBIG ? fmt::format("the table file is larger than {} MiB: not a table",
                                            maxInputFileBytes >> 20)
             : r.opened ? fmt::format("cannot read the table file ({})", std::strerror(r.error))
                        : "cannot open the table file"});
        return false;
    }
    return readTableText(path, text, table, errors);
}

bool parseLineList(const std::string& text, std::vector<std::pair<int, int>>& ranges,
                   std::string& error) {
    ranges.clear();
    std::string item;
    std::istringstream in(text);
    in.exceptions(std::ios::badbit); // a failed allocation is thrown, not taken for the end
    auto number = [](const std::string& s, int& out) {
        std::string t = s;
        t.erase(std::remove_if(t.begin(), t.end(), [](char c) { return isSpace(c); }), t.end());
        return parsePositive(t, 1000000000, out);
    };
    while (std::getline(in, item, ',')) {
        const size_t dash = item.find('-');
        int a = 0, b = 0;
        if (dash == std::string::npos) {
            if (!number(item, a)) {
                error = fmt::format("'{}' is not a line number", item);
                return false;
            }
            b = a;
        } else if (!number(item.substr(0, dash), a) || !number(item.substr(dash + 1), b) || b < a) {
            error = fmt::format("'{}' is not a range of lines like 5-9", item);
            return false;
        }
        ranges.emplace_back(a, b);
    }
    if (ranges.empty()) {
        error = "no line given";
        return false;
    }
    return true;
}

} // namespace dem
