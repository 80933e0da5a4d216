#pragma once
// Messages of a run: to stderr (unless quiet) and, with a timestamp, to the run's log.txt.
#include <fstream>
#include <string>

namespace dem {

class RunLog {
public:
    explicit RunLog(bool quiet) : quiet_(quiet) {}
    bool open(const std::string& path);       // appends; false when the file cannot be written
    void info(const std::string& message);    // progress and events
    void warning(const std::string& message); // always shown
    void error(const std::string& message);   // always shown
    void fileOnly(const std::string& message);

private:
    void write(const std::string& level, const std::string& message);
    bool quiet_;
    std::ofstream file_;
};

std::string timestampNow(); // ISO 8601, local time with offset

} // namespace dem
