#pragma once
// Reading a JSON object from a file that may be anything: a run's summary.json can be a
// directory, another program's file or half written. Streams were not safe for it: parsing from
// an ifstream opened on a directory throws from inside the stream buffer, which ended the program.
#include <nlohmann/json.hpp>

#include <string>

namespace dem {

// The JSON object in the file at `path`. False, with `error` saying why ("cannot open ...",
// "cannot read ...: Is a directory", "not valid JSON", "not a JSON object"), when there is none.
// Throws std::bad_alloc.
bool readJsonObject(const std::string& path, nlohmann::json& object, std::string& error);

// The same, without the reason: null when there is no object.
nlohmann::json readJsonObject(const std::string& path);

// The string member `key` of `object`, or "" when it has none or not a string (value() would
// throw on a number).
std::string jsonText(const nlohmann::json& object, const char* key);

} // namespace dem
