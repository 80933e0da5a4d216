#include "app/RunLog.hpp"

#include <chrono>
#include <ctime>
#include <iostream>

namespace dem {

namespace {
// The timestamp in `buf`, without taking memory from the heap: a log line is written after a
// run's summary, when running out of memory must no longer change how the run ended.
const char* formatTimestamp(char (&buf)[64]) {
    const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    localtime_r(&t, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", &tm);
    return buf;
}
} // namespace

std::string timestampNow() {
    char buf[64];
    return formatTimestamp(buf);
}

bool RunLog::open(const std::string& path) {
    file_.open(path, std::ios::app);
    return bool(file_);
}

void RunLog::write(const std::string& level, const std::string& message) {
    char buf[64];
    if (file_)
        file_ << formatTimestamp(buf) << ' ' << level << ' ' << message << '\n' << std::flush;
}

void RunLog::info(const std::string& message) {
    if (!quiet_)
        std::cerr << message << '\n';
    write("info ", message);
}

void RunLog::warning(const std::string& message) {
    std::cerr << "dem: warning: " << message << '\n';
    write("warn ", message);
}

void RunLog::error(const std::string& message) {
    std::cerr << "dem: error: " << message << '\n';
    write("error", message);
}

void RunLog::fileOnly(const std::string& message) {
    write("info ", message);
}

} // namespace dem
