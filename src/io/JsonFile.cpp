#include "io/JsonFile.hpp"

#include "io/WholeFile.hpp"

namespace dem {

bool readJsonObject(const std::string& path, nlohmann::json& object, std::string& error) {
    std::string text;
    if (!readWholeFile(path, text, error))
        return false;
    object = nlohmann::json::parse(text, nullptr, false);
    if (object.is_discarded()) {
        error = "'" + path + "' is not valid JSON";
        return false;
    }
    if (!object.is_object()) {
        error = "'" + path + "' holds " + object.type_name() + ", not a JSON object";
        return false;
    }
    return true;
}

nlohmann::json readJsonObject(const std::string& path) {
    nlohmann::json object;
    std::string error;
    return readJsonObject(path, object, error) ? object : nlohmann::json(nullptr);
}

std::string jsonText(const nlohmann::json& object, const char* key) {
    if (!object.is_object() || !object.contains(key) || !object[key].is_string())
        return {};
    return object[key].get<std::string>();
}

} // namespace dem
