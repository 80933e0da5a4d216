#include "batch/BatchRunner.hpp"

#include "app/ExitCodes.hpp"
#include "app/OutOfMemory.hpp"
#include "app/RunLog.hpp"
#include "app/StoppedRun.hpp"
#include "batch/BatchReport.hpp"
#include "io/AtomicFile.hpp"
#include "io/JsonFile.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <new>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace dem {

namespace {

// --- signals: the handlers record the signal and wake the loop through a pipe --------------

int wakePipe[2] = {-1, -1};
volatile std::sig_atomic_t signalCount = 0;
volatile std::sig_atomic_t lastSignal = 0;

extern "C" void onBatchSignal(int sig) {
    const int saved = errno;
    if (sig != SIGCHLD) {
        lastSignal = sig;
        signalCount = signalCount + 1;
    }
    const char byte = 0;
    [[maybe_unused]] const ssize_t n = write(wakePipe[1], &byte, 1);
    errno = saved;
}

void installHandlers() {
    if (wakePipe[0] < 0 && pipe2(wakePipe, O_CLOEXEC | O_NONBLOCK) != 0)
        wakePipe[0] = wakePipe[1] = -1;
    struct sigaction sa {};
    sa.sa_handler = onBatchSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, nullptr);
}

void drainWakePipe() {
    char buf[64];
    while (wakePipe[0] >= 0 && read(wakePipe[0], buf, sizeof buf) > 0) {
    }
}

// --- small helpers ------------------------------------------------------------------------

double secondsSince(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string clockTime() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
    return buf;
}

std::string duration(double s) {
    if (!std::isfinite(s))
        return "?";
    if (s < 60)
        return fmt::format("{:.1f} s", s);
    const long total = long(s + 0.5);
    if (total < 3600)
        return fmt::format("{} min {:02} s", total / 60, total % 60);
    return fmt::format("{} h {:02} min", total / 3600, (total % 3600) / 60);
}

std::string threadsText(int n) {
    return fmt::format("{} thread{}", n, n == 1 ? "" : "s");
}

// Waits for the child process `pid` to end, again after an interrupted wait; its wait status.
int waitFor(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

std::string signalName(int sig) {
    switch (sig) {
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    case SIGKILL:
        return "SIGKILL";
    case SIGSEGV:
        return "SIGSEGV";
    case SIGABRT:
        return "SIGABRT";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGHUP:
        return "SIGHUP";
    default:
        return fmt::format("signal {}", sig);
    }
}

// Last value of the first column (step) in a history file, or -1.
double lastHistoryStep(const fs::path& history) {
    std::ifstream in(history, std::ios::binary);
    if (!in)
        return -1;
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    const std::streamoff chunk = std::min<std::streamoff>(size, 4096);
    in.seekg(size - chunk);
    std::string tail(size_t(chunk), '\0');
    in.read(tail.data(), chunk);
    const size_t end = tail.rfind('\n');
    if (end == std::string::npos || end == 0)
        return -1;
    const size_t start = tail.rfind('\n', end - 1);
    const std::string line = tail.substr(start == std::string::npos ? 0 : start + 1,
                                         end - (start == std::string::npos ? 0 : start + 1));
    char* stop = nullptr;
    const double v = std::strtod(line.c_str(), &stop);
    return stop == line.c_str() ? -1 : v;
}

bool paramsEqual(const std::map<std::string, double>& a, const nlohmann::json& b) {
    if (!b.is_object() || b.size() != a.size())
        return false;
    for (const auto& [k, v] : a) {
        if (!b.contains(k) || !b[k].is_number() || b[k].get<double>() != v)
            return false;
    }
    return true;
}

nlohmann::json readSummaryFile(const fs::path& dir) {
    return readJsonObject((dir / "summary.json").string());
}

// How the run in `dir` ended, as a word of the --resume messages.
std::string runState(const std::string& dir) {
    const StoppedRun stopped = stoppedRunIn(dir);
    return stopped == StoppedRun::Completed     ? "completed"
           : stopped == StoppedRun::Interrupted ? "interrupted"
           : stopped == StoppedRun::Failed      ? "failed"
                                                : "unfinished";
}

// --- the batch ----------------------------------------------------------------------------

struct Running {
    size_t job = 0;
    Clock::time_point start;
};

class Batch {
public:
    Batch(BatchPlan& plan, const RunnerOptions& o) : plan_(plan), o_(o) {
        live_ = !o.quiet && isatty(STDERR_FILENO);
    }

    int run();
    // Tells the running jobs to stop, as SIGTERM does, and waits for them; takes no memory.
    void stopJobs() noexcept;

private:
    int runJobs();
    bool prepare(); // --resume decisions, refusal to overwrite completed runs
    void schedule();
    void start(size_t k);
    void reap();
    void finished(size_t k, int status);
    void forwardSignal();
    void refresh(bool force);
    void event(const std::string& line);
    void warn(const std::string& message);
    bool writeFiles(std::string& error); // batch.json and batch.tsv
    bool saveFiles();                    // writeFiles, warning when it fails
    pid_t startHook(const std::string& cmd, const std::map<std::string, std::string>& env);
    void hookEnded(const std::string& what, int status);
    void jobHookEnded(pid_t pid, int status);
    void waitForHooks();
    std::string eta() const;
    int usedCores() const;
    void writeTiming() const;

    BatchPlan& plan_;
    const RunnerOptions& o_;
    BatchInfo info_;
    std::vector<std::string> extraFlags_; // per job: --resume / --force
    std::vector<Job> others_;             // --lines: the earlier records of the other jobs
    std::map<pid_t, Running> running_;
    std::map<pid_t, size_t> hooks_; // running --on-job-done commands, and their jobs
    bool live_ = false, dirty_ = false;
    int forwarded_ = 0;
    std::string saveError_; // the last failure of saveFiles, warned about once
    Clock::time_point lastRefresh_ = Clock::now();
    Clock::time_point begin_ = Clock::now();
};

int Batch::usedCores() const {
    int used = 0;
    for (const auto& [pid, r] : running_)
        used += plan_.jobs[r.job].threads;
    return used;
}

void Batch::event(const std::string& line) {
    if (o_.quiet)
        return;
    if (dirty_)
        std::cerr << "\r\033[K";
    dirty_ = false;
    std::cerr << clockTime() << "  " << line << '\n';
    refresh(true);
}

// A warning is printed with --quiet too: only the progress is left out then.
void Batch::warn(const std::string& message) {
    if (!o_.quiet)
        event("warning: " + message);
    else
        std::cerr << "dem batch: warning: " << message << '\n';
}

std::string Batch::eta() const {
    // A running job's expected duration comes from its own progress: the last step of its
    // history.tsv against the steps its stages plan. A queued job's from the pace (steps per
    // second) of the jobs seen so far when its steps are known, else from their mean duration.
    double durationSum = 0, paceSum = 0;
    int durationCount = 0, paceCount = 0;
    for (const Job& job : plan_.jobs) {
        const JobResult& r = job.result;
        if (r.status != "completed" || r.skipped || !std::isfinite(r.duration) || r.duration <= 0)
            continue;
        durationSum += r.duration;
        ++durationCount;
        // Start-up dominates very short jobs: their pace says little about longer ones.
        if (std::isfinite(r.steps) && r.steps > 0 && r.duration > 1) {
            paceSum += r.steps / r.duration;
            ++paceCount;
        }
    }
    struct Estimate {
        double left = 0;
        int threads = 1;
    };
    std::vector<Estimate> running;
    for (const auto& [pid, r] : running_) {
        const Job& job = plan_.jobs[r.job];
        const double elapsed = secondsSince(r.start);
        double total = durationCount ? durationSum / durationCount : NAN;
        if (job.plannedSteps > 0) {
            const double step = lastHistoryStep(fs::path(job.dir) / "history.tsv");
            const double f = step / job.plannedSteps;
            if (f > 0.01 && f <= 1 && elapsed > 0.2)
                total = elapsed / f;
            if (f > 0.01 && f <= 1 && elapsed > 1) {
                paceSum += step / elapsed;
                ++paceCount;
            }
        }
        if (!std::isfinite(total))
            return "";
        running.push_back({std::max(total - elapsed, 0.0), job.threads});
    }
    double work = 0, longest = 0;
    for (const Estimate& e : running) {
        longest = std::max(longest, e.left);
        work += e.left * e.threads;
    }
    for (const Job& job : plan_.jobs) {
        if (job.result.status != "queued" || signalCount > 0)
            continue;
        double total = NAN;
        if (job.plannedSteps > 0 && paceCount > 0)
            total = job.plannedSteps / (paceSum / paceCount);
        else if (durationCount > 0)
            total = durationSum / durationCount;
        if (!std::isfinite(total))
            return "";
        work += total * std::min(job.threads, o_.budget);
    }
    return duration(std::max(longest, work / std::max(o_.budget, 1)));
}

void Batch::refresh(bool force) {
    if (!live_)
        return;
    if (!force && secondsSince(lastRefresh_) < 0.5)
        return;
    lastRefresh_ = Clock::now();
    int done = 0, failed = 0, queued = 0;
    for (const Job& job : plan_.jobs) {
        if (job.result.status == "completed")
            ++done;
        else if (job.result.status == "queued")
            ++queued;
        else if (job.result.status != "running")
            ++failed;
    }
    std::string line =
        fmt::format("[batch {}] {} running, {} done, {} failed, {} queued",
                    duration(secondsSince(begin_)), running_.size(), done, failed, queued);
    if (signalCount > 0)
        line += ", stopping";
    else if (const std::string e = eta(); !e.empty())
        line += ", ETA " + e;
    std::cerr << "\r\033[K" << line << std::flush;
    dirty_ = true;
}

bool Batch::writeFiles(std::string& error) {
    return others_.empty() ? writeBatchFiles(plan_, info_, error)
                           : writeBatchFiles(withOtherJobs(plan_, others_), info_, error);
}

bool Batch::saveFiles() {
    std::string error;
    const bool saved = writeFiles(error);
    if (saved) {
        saveError_.clear();
    } else if (error != saveError_) { // not once per job when the same write keeps failing
        warn(error);
        saveError_ = error;
    }
    return saved;
}

bool Batch::prepare() {
    removeAtomicWriteTemporaries(plan_.dir); // batch files a killed batch was writing
    extraFlags_.assign(plan_.jobs.size(), "");
    if (plan_.someLines)
        others_ = otherRecordedJobs(plan_);
    std::vector<std::string> inTheWay;
    // Durations recorded by an earlier batch, for the jobs --resume skips.
    std::map<std::string, double> oldDurations;
    if (o_.resume) {
        BatchPlan old;
        BatchInfo oldInfo;
        std::string ignored;
        if (readBatchJson(plan_.dir, old, oldInfo, ignored))
            for (const Job& j : old.jobs)
                oldDurations[j.name] = j.result.duration;
    }
    for (size_t k = 0; k < plan_.jobs.size(); ++k) {
        Job& job = plan_.jobs[k];
        const JobStart start = jobStart(job, o_.resume, o_.force);
        extraFlags_[k] = runFlag(start);
        if (start == JobStart::Skip) {
            readJobSummary(job);
            job.result.skipped = true;
            job.result.exitCode = ExitOk;
            if (const auto it = oldDurations.find(job.name);
                it != oldDurations.end() && std::isfinite(it->second))
                job.result.duration = it->second;
        } else if (start == JobStart::Changed) {
            event(changedText(job));
        } else if (start == JobStart::InTheWay) {
            inTheWay.push_back(job.dir);
        }
    }
    if (!inTheWay.empty()) {
        std::cerr << "dem batch: error: " << inTheWayMessage(inTheWay.size(), inTheWay.front())
                  << '\n';
        return false;
    }
    return true;
}

std::string skipText(const Job& job) {
    return fmt::format("completed   line {} {} (done before, skipped)", job.line, job.name);
}

void Batch::start(size_t k) {
    Job& job = plan_.jobs[k];
    std::error_code ec;
    fs::create_directories(job.dir, ec);
    std::vector<std::string> args = runArguments(job);
    if (!extraFlags_[k].empty())
        args.push_back(extraFlags_[k]);
    const pid_t pid = spawnProcess(
        o_.executable.empty() ? o_.program : o_.executable, args, jobEnvironment(plan_, job),
        (fs::path(job.dir) / "console.txt").string(), o_.nice, o_.program);
    if (pid >= 0) {
        // Tracked before anything else may run out of memory, so that stopJobs reaches it.
        try {
            running_[pid] = Running{k, Clock::now()};
        } catch (const std::bad_alloc&) {
            kill(-pid, SIGTERM);
            waitFor(pid);
            throw;
        }
    }
    job.result = JobResult{};
    job.result.started = timestampNow();
    if (pid < 0) {
        job.result.status = "failed";
        job.result.error = fmt::format("cannot start a process: {}", std::strerror(errno));
        job.result.finished = job.result.started;
        event(fmt::format("failed      line {} {}: {}", job.line, job.name, job.result.error));
        return;
    }
    job.result.status = "running";
    job.result.pid = int(pid);
    std::string note;
    if (job.threads > o_.budget)
        note = fmt::format(", more than the budget of {}: running alone", o_.budget);
    event(fmt::format("started     line {} {} ({}{}{})", job.line, job.name,
                      threadsText(job.threads), note,
                      extraFlags_[k] == "--resume" ? ", resuming" : ""));
}

void Batch::schedule() {
    if (signalCount > 0)
        return;
    int free = o_.budget - usedCores();
    for (size_t k = 0; k < plan_.jobs.size(); ++k) {
        const Job& job = plan_.jobs[k];
        if (job.result.status != "queued")
            continue;
        // First fit in table order; a job wider than the budget runs when nothing else does.
        if (job.threads <= free || running_.empty()) {
            start(k);
            if (plan_.jobs[k].result.status == "running") {
                free -= job.threads;
                saveFiles();
            }
        }
        if (free <= 0)
            break;
    }
}

void Batch::finished(size_t k, int status) {
    Job& job = plan_.jobs[k];
    JobResult& r = job.result;
    r.finished = timestampNow();
    const bool hasSummary = readJobSummary(job);
    if (WIFEXITED(status)) {
        r.exitCode = WEXITSTATUS(status);
        switch (r.exitCode) {
        case ExitOk:
            r.status = hasSummary && r.status == "completed" ? "completed" : "failed";
            if (r.status != "completed")
                r.error = "exit code 0 but no completed summary.json";
            break;
        case ExitInterrupted:
            r.status = "interrupted";
            break;
        case 127:
            r.status = "failed";
            r.error = fmt::format("cannot execute '{}'", o_.program);
            break;
        default:
            r.status = "failed";
            if (r.error.empty())
                r.error = r.exitCode == ExitBadInput
                              ? "dem run refused to start (exit code 2), see console.txt"
                              : fmt::format("exit code {}", r.exitCode);
        }
    } else if (WIFSIGNALED(status)) {
        r.signal = WTERMSIG(status);
        r.exitCode = -1;
        // Killed after the batch was told to stop: interrupted; otherwise a crash.
        r.status = signalCount > 0 ? "interrupted" : "crashed";
        r.error = "killed by " + signalName(r.signal);
    }
    std::string line = fmt::format("{:<11} line {} {} after {}", r.status, job.line, job.name,
                                   duration(r.duration));
    if (r.status != "completed" && !r.error.empty())
        line += ": " + r.error;
    line += ", log " + job.logPath();
    event(line);
    saveFiles();
    if (o_.onJobDone.empty())
        return;
    const pid_t hook = startHook(
        o_.onJobDone, {{"DEM_JOB_DIR", job.dir},
                       {"DEM_JOB_NAME", job.name},
                       {"DEM_JOB_LINE", std::to_string(job.line)},
                       {"DEM_JOB_STATUS", r.status},
                       {"DEM_JOB_EXIT_CODE", r.exitCode >= 0 ? std::to_string(r.exitCode) : ""},
                       {"DEM_JOB_LOG", job.logPath()},
                       {"DEM_BATCH_DIR", plan_.dir}});
    if (hook > 0)
        hooks_[hook] = k;
}

void Batch::reap() {
    while (true) {
        int status = 0;
        const pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0)
            break;
        const auto it = running_.find(pid);
        if (it == running_.end()) {
            jobHookEnded(pid, status);
            continue;
        }
        const Running r = it->second;
        running_.erase(it);
        plan_.jobs[r.job].result.duration = secondsSince(r.start);
        finished(r.job, status);
    }
}

void Batch::forwardSignal() {
    if (signalCount <= forwarded_)
        return;
    forwarded_ = signalCount;
    const int sig = forwarded_ >= 3 ? SIGKILL : int(lastSignal);
    for (const auto& [pid, r] : running_)
        kill(-pid, sig);
    if (forwarded_ == 1)
        event(fmt::format("{}: telling {} running job{} to stop (they checkpoint and write their "
                          "summary); no new job starts",
                          signalName(int(lastSignal)), running_.size(),
                          running_.size() == 1 ? "" : "s"));
    else if (forwarded_ == 2)
        event("waiting for the jobs to stop; interrupt once more to kill them");
    else
        event("killing the remaining jobs");
}

// Starts a hook without waiting for it; -1 (reported) when it cannot be started.
pid_t Batch::startHook(const std::string& cmd, const std::map<std::string, std::string>& env) {
    const pid_t pid = spawnProcess("/bin/sh", {"-c", cmd}, env, "", 0);
    if (pid < 0)
        warn(fmt::format("cannot run '{}': {}", cmd, std::strerror(errno)));
    return pid;
}

void Batch::hookEnded(const std::string& what, int status) {
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return;
    warn(fmt::format("{} failed ({})", what,
                     WIFEXITED(status) ? fmt::format("exit code {}", WEXITSTATUS(status))
                                       : signalName(WTERMSIG(status))));
}

// The --on-job-done commands still running once the last job has ended.
// An --on-job-done command among the running ones ended: forget it, report a failure.
void Batch::jobHookEnded(pid_t pid, int status) {
    const auto h = hooks_.find(pid);
    if (h == hooks_.end())
        return;
    const Job& job = plan_.jobs[h->second];
    hooks_.erase(h);
    hookEnded(fmt::format("--on-job-done command of line {} {}", job.line, job.name), status);
}

void Batch::waitForHooks() {
    while (!hooks_.empty()) {
        int status = 0;
        const pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0 && errno != EINTR)
            break;
        jobHookEnded(pid, status);
    }
}

// !COUNT: duration statistics of the repeated lines, on the console and in timing.tsv.
void Batch::writeTiming() const {
    std::map<int, std::vector<double>> byLine;
    for (const Job& job : plan_.jobs)
        if (job.count > 1 && job.result.status == "completed" && std::isfinite(job.result.duration))
            byLine[job.line].push_back(job.result.duration);
    if (byLine.empty())
        return;
    std::string tsv = "line\tname\tcount\tavg\tdev\trel_dev\tmin\tmax\n";
    if (!o_.quiet)
        std::cerr << "dem batch: timing (seconds)\n  line  count       avg       dev   rel.dev"
                     "       min       max  name\n";
    for (const auto& [line, d] : byLine) {
        double sum = 0, sq = 0;
        for (double v : d)
            sum += v;
        const double avg = sum / double(d.size());
        for (double v : d)
            sq += (v - avg) * (v - avg);
        const double dev = std::sqrt(sq / double(d.size())); // population deviation, as Yade
        const auto [lo, hi] = std::minmax_element(d.begin(), d.end());
        std::string name;
        for (const Job& job : plan_.jobs)
            if (job.line == line)
                name = job.name.substr(0, job.name.rfind('.'));
        tsv += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", line, name, d.size(), avg, dev,
                           avg > 0 ? dev / avg : 0.0, *lo, *hi);
        if (!o_.quiet)
            std::cerr << fmt::format("  {:>4}  {:>5}  {:>8.3f}  {:>8.3f}  {:>8.3f}  {:>8.3f}  "
                                     "{:>8.3f}  {}\n",
                                     line, d.size(), avg, dev, avg > 0 ? dev / avg : 0.0, *lo, *hi,
                                     name);
    }
    std::string error;
    if (!writeTextAtomically((fs::path(plan_.dir) / "timing.tsv").string(), tsv, Durability::Synced,
                             error))
        std::cerr << "dem batch: warning: " << error << '\n';
}

// The batch running in this process, for the out-of-memory handlers' exit (OutOfMemory.hpp):
// process-wide, as the signal handlers' state above.
Batch* runningBatch = nullptr;

// Out of memory, the batch ends with status 1 (main.cpp, or the handlers where a library ran out
// in a function that may not throw) only once its running jobs have stopped: told to, as on
// SIGTERM (each checkpoints and writes its summary), and waited for, so that none still writes
// into its directory when `dem batch --resume` continues them.
int Batch::run() {
    struct Registration {
        explicit Registration(Batch* b) {
            runningBatch = b;
            setOutOfMemoryExitHook([] { runningBatch->stopJobs(); });
        }
        ~Registration() {
            setOutOfMemoryExitHook(nullptr);
            runningBatch = nullptr;
        }
    } registration(this);
    try {
        return runJobs();
    } catch (const std::bad_alloc&) {
        stopJobs();
        throw;
    }
}

void Batch::stopJobs() noexcept {
    for (const auto& [pid, r] : running_)
        kill(-pid, SIGTERM);
    for (const auto& [pid, r] : running_)
        waitFor(pid);
}

int Batch::runJobs() {
    std::error_code ec;
    fs::create_directories(plan_.dir, ec);
    if (ec || !fs::is_directory(plan_.dir)) {
        std::cerr << fmt::format("dem batch: error: cannot create the batch directory '{}': {}\n",
                                 plan_.dir, ec ? ec.message() : "not a directory");
        return ExitBadInput;
    }
    if (!prepare())
        return ExitBadInput;
    info_.started = timestampNow();
    info_.coreBudget = o_.budget;
    info_.program = o_.program;
    // Jobs whose records cannot be kept are not started.
    if (std::string error; !writeFiles(error)) {
        std::cerr << "dem batch: error: " << error << "; no job was started\n";
        return ExitBadInput;
    }
    const size_t toRun = size_t(std::count_if(plan_.jobs.begin(), plan_.jobs.end(),
                                              [](const Job& j) { return !j.result.skipped; }));
    if (!o_.quiet) {
        std::cerr << fmt::format(
            "dem batch: {} job{} from {} into {}; core budget {}{}\n", plan_.jobs.size(),
            plan_.jobs.size() == 1 ? "" : "s",
            plan_.table.empty() ? "the deck list"
                                : plan_.table + (plan_.deck.empty() ? "" : " with " + plan_.deck),
            plan_.dir, o_.budget,
            toRun < plan_.jobs.size()
                ? fmt::format(", {} already completed", plan_.jobs.size() - toRun)
                : "");
        for (const Job& job : plan_.jobs)
            if (job.result.skipped)
                std::cerr << clockTime() << "  " << skipText(job) << '\n';
    }
    installHandlers();
    begin_ = Clock::now();
    while (true) {
        reap();
        forwardSignal();
        schedule();
        if (running_.empty()) {
            const bool queued = std::any_of(plan_.jobs.begin(), plan_.jobs.end(), [](const Job& j) {
                return j.result.status == "queued";
            });
            if (!queued || signalCount > 0)
                break;
        }
        pollfd p{wakePipe[0], POLLIN, 0};
        poll(&p, wakePipe[0] >= 0 ? 1 : 0, live_ ? 250 : 1000);
        drainWakePipe();
        refresh(false);
    }
    waitForHooks();
    if (dirty_)
        std::cerr << "\r\033[K" << std::flush;
    dirty_ = false;
    live_ = false;

    std::vector<std::string> failed;
    for (const Job& job : plan_.jobs)
        if (job.result.status != "completed" && job.result.status != "queued")
            failed.push_back(fmt::format("{} ({}: {})", job.line, job.name, job.result.status));
    const size_t queued =
        size_t(std::count_if(plan_.jobs.begin(), plan_.jobs.end(),
                             [](const Job& j) { return j.result.status == "queued"; }));
    const bool interrupted = signalCount > 0;
    info_.status = interrupted ? "interrupted" : failed.empty() ? "completed" : "failed";
    info_.finished = timestampNow();
    const bool saved = saveFiles();
    for (const std::string& column : o_.merge) {
        std::string script, error;
        if (writeBatchMergedPlot(plan_.dir, column, o_.mergeX, script, error)) {
            if (!o_.quiet)
                std::cerr << "dem batch: merged plot of " << column << ": gnuplot " << script
                          << '\n';
        } else {
            std::cerr << "dem batch: warning: --merge " << column << ": " << error << '\n';
        }
    }
    writeTiming();
    const std::string tsv = saved ? (fs::path(plan_.dir) / "batch.tsv").string()
                                  : "the job directories (batch.tsv could not be written)";
    const size_t completed = plan_.jobs.size() - failed.size() - queued;
    if (interrupted) {
        std::cerr << fmt::format("dem batch: interrupted after {}: {} completed, {} stopped, {} "
                                 "not started; continue with --resume; results in {}\n",
                                 duration(secondsSince(begin_)), completed, failed.size(), queued,
                                 tsv);
    } else if (failed.empty()) {
        if (!o_.quiet)
            std::cerr << fmt::format("dem batch: all {} jobs completed in {}; results in {}\n",
                                     plan_.jobs.size(), duration(secondsSince(begin_)), tsv);
    } else {
        std::cerr << fmt::format("dem batch: {} of {} jobs did not complete, lines: {}; results "
                                 "in {}\n",
                                 failed.size(), plan_.jobs.size(), fmt::join(failed, ", "), tsv);
    }
    if (!o_.onBatchDone.empty()) {
        std::vector<std::string> lines;
        for (const Job& job : plan_.jobs)
            if (job.result.status != "completed")
                lines.push_back(std::to_string(job.line));
        const pid_t hook = startHook(
            o_.onBatchDone, {{"DEM_BATCH_DIR", plan_.dir},
                             {"DEM_BATCH_STATUS", info_.status},
                             {"DEM_BATCH_JSON", (fs::path(plan_.dir) / "batch.json").string()},
                             {"DEM_BATCH_TSV", tsv},
                             {"DEM_BATCH_FAILED", std::to_string(lines.size())},
                             {"DEM_BATCH_FAILED_LINES", fmt::format("{}", fmt::join(lines, ","))}});
        if (hook > 0)
            hookEnded("--on-batch-done command", waitFor(hook));
    }
    if (interrupted)
        return ExitInterrupted;
    return failed.empty() && saved ? ExitOk : ExitFailed;
}

} // namespace

int availableCores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return std::max(1, CPU_COUNT(&set));
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? int(n) : 1;
}

pid_t spawnProcess(const std::string& program, const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env, const std::string& output,
                   int nice, const std::string& argv0) {
    // Everything the child needs is prepared before fork: only async-signal-safe calls after.
    std::vector<std::string> argStore{argv0.empty() ? program : argv0};
    argStore.insert(argStore.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argStore)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> envStore;
    for (char** e = environ; e && *e; ++e) {
        const std::string entry(*e);
        const std::string name = entry.substr(0, entry.find('='));
        if (!env.count(name))
            envStore.push_back(entry);
    }
    for (const auto& [name, value] : env)
        envStore.push_back(name + "=" + value);
    std::vector<char*> envp;
    for (std::string& e : envStore)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid != 0) {
        if (pid > 0)
            setpgid(pid, pid); // also in the child: whichever runs first
        return pid;
    }
    // Child.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM); // a batch killed outright does not leave jobs running
    if (getppid() != parent)
        _exit(ExitInterrupted);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    if (nice > 0) {
        errno = 0;
        const int current = getpriority(PRIO_PROCESS, 0);
        if (errno == 0)
            setpriority(PRIO_PROCESS, 0, std::min(current + nice, 19));
    }
    const int in = open("/dev/null", O_RDONLY);
    if (in >= 0) {
        dup2(in, STDIN_FILENO);
        close(in);
    }
    if (!output.empty()) {
        const int out = open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out >= 0) {
            dup2(out, STDOUT_FILENO);
            dup2(out, STDERR_FILENO);
            close(out);
        }
    }
    execve(program.c_str(), argv.data(), envp.data());
    _exit(127);
}

// What --resume does with a job, from the summary in its directory.
static JobStart resumeStart(const Job& job) {
    const nlohmann::json s = readSummaryFile(job.dir);
    if (!s.is_object())
        return JobStart::Resume; // never finished: its checkpoints, if any, are the way on
    const std::string status = jsonText(s, "status");
    if (status == "failed")
        return JobStart::Force; // dem run refuses to replace a failed run otherwise
    // dem run --resume refuses checkpoints of other parameters or another deck, and a completed
    // run of them is not this job's result: either way only a fresh start gives the job's run.
    const bool same = s.contains("params") && paramsEqual(job.params, s["params"]) &&
                      jsonText(s, "deck_sha256") == job.deckSha256;
    if (!same)
        return JobStart::Changed;
    return status == "completed" ? JobStart::Skip : JobStart::Resume;
}

JobStart jobStart(const Job& job, bool resume, bool force) {
    if (resume)
        return resumeStart(job);
    if (force)
        return JobStart::Force;
    // As `dem run` refuses them: starting afresh would delete a stopped run's progress.
    return stoppedRunIn(job.dir) == StoppedRun::None ? JobStart::Fresh : JobStart::InTheWay;
}

std::string runFlag(JobStart start) {
    switch (start) {
    case JobStart::Force:
    case JobStart::Changed:
        return "--force";
    case JobStart::Resume:
        return "--resume";
    default:
        return "";
    }
}

std::string changedText(const Job& job) {
    return fmt::format("line {} {}: the {} run in {} used other parameters or another deck; "
                       "running it again from the start",
                       job.line, job.name, runState(job.dir), job.dir);
}

std::string inTheWayMessage(size_t count, const std::string& first) {
    return fmt::format("{} of the jobs already have a completed, failed, interrupted or killed "
                       "run (e.g. '{}'): use --resume to skip the completed ones, run the failed "
                       "ones again and continue the others, --force to run them all again from "
                       "the start, or --out to choose another directory",
                       count, first);
}

int runBatch(BatchPlan& plan, const RunnerOptions& options) {
    Batch batch(plan, options);
    return batch.run();
}

} // namespace dem
