// The Slurm round trip of dem batch, for real: a one-node Slurm cluster on localhost (munged,
// slurmctld and slurmd started by the test, configured in a scratch directory), a job array
// written by `dem batch --emit slurm`, submitted with `sbatch --wait`, collected with
// `dem batch --collect`, and compared with the same table run locally.
//
// Needs Debian's slurm-wlm and munge packages and root (slurmd launches the jobs). Without them
// the test warns and skips; with them, any misbehaviour of the daemons is a failure, reported
// with their logs.
#include "../unit/CommandRunner.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>
#include <unistd.h>

using namespace demtest;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

std::string findProgram(const std::string& name) {
    for (const char* dir :
         {"/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/sbin", "/usr/local/bin"}) {
        const fs::path p = fs::path(dir) / name;
        if (access(p.c_str(), X_OK) == 0)
            return p.string();
    }
    return {};
}

int shell(const std::string& cmd) {
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string shortHostname() {
    char buf[256] = {};
    gethostname(buf, sizeof buf - 1);
    std::string h(buf);
    return h.substr(0, h.find('.'));
}

Json readJson(const fs::path& p) {
    std::ifstream in(p);
    return Json::parse(in, nullptr, false);
}

std::map<std::string, std::string> digestsByJob(const fs::path& batch) {
    std::map<std::string, std::string> out;
    const Json j = readJson(batch / "batch.json");
    for (const auto& job : j["jobs"]) {
        const std::string name = job["name"].get<std::string>();
        const Json s = readJson(batch / name / "summary.json");
        out[name] = s.is_object() ? s.value("state_digest", "") : "";
    }
    return out;
}

// munged, slurmctld and slurmd for the duration of the test; stopped (by their pid files) on
// destruction.
class LocalSlurm {
public:
    explicit LocalSlurm(const fs::path& dir) : dir_(dir) {}
    ~LocalSlurm() { stop(); }

    // Starts the daemons and waits until the node is idle; false with `error` set otherwise.
    bool start(std::string& error) {
        fs::create_directories(dir_ / "munge");
        fs::create_directories(dir_ / "state");
        fs::create_directories(dir_ / "spool");
        fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::replace);
        fs::permissions(dir_ / "munge", fs::perms::owner_all, fs::perm_options::replace);
        const fs::path key = dir_ / "munge/munge.key";
        if (shell("dd if=/dev/urandom of='" + key.string() + "' bs=1024 count=1 2>/dev/null") !=
            0) {
            error = "cannot create a munge key";
            return false;
        }
        fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write,
                        fs::perm_options::replace);
        const fs::path socket = dir_ / "munge/munge.socket";
        if (shell(findProgram("munged") + " --force --socket='" + socket.string() +
                  "' --key-file='" + key.string() + "' --log-file='" +
                  (dir_ / "munge/munged.log").string() + "' --pid-file='" +
                  (dir_ / "munge/munged.pid").string() + "' --seed-file='" +
                  (dir_ / "munge/munged.seed").string() + "'") != 0) {
            error = "munged did not start:\n" + slurp(dir_ / "munge/munged.log");
            return false;
        }
        // Ports unlikely to be in use, different for concurrent test processes.
        const int port = 20000 + int(getpid() % 2000) * 2;
        const std::string host = shortHostname();
        const fs::path conf = dir_ / "slurm.conf";
        writeText(dir_ / "plugstack.conf", "");
        writeText(conf, "ClusterName=demtest\n"
                        "SlurmctldHost=" +
                            host +
                            "\n"
                            "SlurmUser=root\nSlurmdUser=root\n"
                            "SlurmctldPort=" +
                            std::to_string(port) +
                            "\n"
                            "SlurmdPort=" +
                            std::to_string(port + 1) +
                            "\n"
                            "AuthType=auth/munge\nCredType=cred/munge\n"
                            "AuthInfo=socket=" +
                            socket.string() +
                            "\n"
                            "StateSaveLocation=" +
                            (dir_ / "state").string() +
                            "\n"
                            "SlurmdSpoolDir=" +
                            (dir_ / "spool").string() +
                            "\n"
                            "SlurmctldPidFile=" +
                            (dir_ / "slurmctld.pid").string() +
                            "\n"
                            "SlurmdPidFile=" +
                            (dir_ / "slurmd.pid").string() +
                            "\n"
                            "SlurmctldLogFile=" +
                            (dir_ / "slurmctld.log").string() +
                            "\n"
                            "SlurmdLogFile=" +
                            (dir_ / "slurmd.log").string() +
                            "\n"
                            "PlugStackConfig=" +
                            (dir_ / "plugstack.conf").string() +
                            "\n"
                            "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
                            "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
                            "SchedulerType=sched/backfill\nReturnToService=2\nMpiDefault=none\n"
                            "JobCompType=jobcomp/none\n"
                            "AccountingStorageType=accounting_storage/none\n"
                            "JobAcctGatherType=jobacct_gather/none\n"
                            "NodeName=" +
                            host +
                            " NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN\n"
                            "PartitionName=debug Nodes=" +
                            host + " Default=YES MaxTime=INFINITE State=UP\n");
        setenv("SLURM_CONF", conf.c_str(), 1);
        if (shell(findProgram("slurmctld") + " -f '" + conf.string() + "'") != 0 ||
            shell(findProgram("slurmd") + " -f '" + conf.string() + "'") != 0) {
            error = "slurmctld or slurmd did not start" + logs();
            return false;
        }
        // Wait for the node to be idle.
        for (int k = 0; k < 60; ++k) {
            if (shell("sinfo -h -o %t 2>/dev/null | grep -q '^idle'") == 0)
                return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
        }
        error = "the Slurm node did not become idle within 30 s" + logs();
        return false;
    }

    std::string logs() const {
        return "\n--- slurmctld.log\n" + slurp(dir_ / "slurmctld.log") + "\n--- slurmd.log\n" +
               slurp(dir_ / "slurmd.log") + "\n--- munged.log\n" + slurp(dir_ / "munge/munged.log");
    }

    void stop() {
        for (const char* pidFile : {"slurmd.pid", "slurmctld.pid", "munge/munged.pid"}) {
            std::ifstream in(dir_ / pidFile);
            pid_t pid = 0;
            if (in >> pid && pid > 1)
                kill(pid, SIGTERM);
            // Give it a moment so the next daemon's shutdown does not race with it.
            for (int k = 0; k < 50 && pid > 1 && kill(pid, 0) == 0; ++k)
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }

private:
    fs::path dir_;
};

} // namespace

TEST_CASE("Slurm round trip: --emit slurm, sbatch --wait, --collect equals a local batch",
          "[batch][slurm][slow]") {
    std::vector<std::string> missing;
    for (const char* p : {"munged", "slurmctld", "slurmd", "sbatch", "sinfo"})
        if (findProgram(p).empty())
            missing.push_back(p);
    if (!missing.empty()) {
        std::string list;
        for (const std::string& m : missing)
            list += " " + m;
        WARN("Slurm is not installed (missing:" << list
                                                << "); skipping. Install it with: apt-get install "
                                                   "slurm-wlm munge");
        return;
    }
    if (geteuid() != 0) {
        WARN("the local Slurm cluster of this test needs root (slurmd starts the jobs); "
             "skipping");
        return;
    }

    const auto dir = scratchDir("batch-slurm");
    LocalSlurm slurm(dir / "slurm");
    std::string error;
    const bool started = slurm.start(error);
    INFO(error);
    REQUIRE(started);

    // A small table over the test deck of the batch tests.
    fs::copy_file(fs::path(DEM_SOURCE_DIR) / "tests/batch/drop.toml", dir / "drop.toml");
    writeText(dir / "study.table", "# friction and drop length\n"
                                   "friction   nsteps  v0\n"
                                   "10         300     0\n"
                                   "20         =       -0.5\n"
                                   "\n"
                                   "30         600     *\n"
                                   "40         =       -1\n");
    const CommandResult emitted = runDem("batch study.table drop.toml --emit slurm --partition "
                                         "debug --time 0:05:00 --cpus-per-task 1 --out runs/slurm",
                                         dir);
    INFO(emitted.err);
    REQUIRE(emitted.code == 0);
    REQUIRE(fs::exists(dir / "runs/slurm/slurm.sh"));

    const int submitted = shell("cd '" + dir.string() +
                                "' && timeout 300 sbatch --wait runs/slurm/slurm.sh > "
                                "sbatch.txt 2>&1");
    std::string outputs;
    for (const auto& entry : fs::directory_iterator(dir / "runs/slurm"))
        if (entry.path().filename().string().rfind("slurm-", 0) == 0 &&
            entry.path().extension() == ".out")
            outputs += entry.path().filename().string() + ": " + slurp(entry.path()) + "\n";
    INFO("sbatch: " << slurp(dir / "sbatch.txt") << "\n" << outputs << slurm.logs());
    REQUIRE(submitted == 0);

    const CommandResult collected = runDem("batch --collect runs/slurm", dir);
    INFO(collected.err);
    REQUIRE(collected.code == 0);
    const std::string slurmTsv = slurp(dir / "runs/slurm/batch.tsv");

    const CommandResult local = runDem("batch study.table drop.toml -j 2 --out runs/local", dir);
    INFO(local.err);
    REQUIRE(local.code == 0);
    const auto slurmDigests = digestsByJob(dir / "runs/slurm");
    REQUIRE(slurmDigests.size() == 4);
    CHECK(slurmDigests == digestsByJob(dir / "runs/local"));

    // batch.tsv agrees too, except for the durations.
    const Json a = readJson(dir / "runs/slurm/batch.json");
    const Json b = readJson(dir / "runs/local/batch.json");
    REQUIRE(a["jobs"].size() == b["jobs"].size());
    for (size_t k = 0; k < a["jobs"].size(); ++k) {
        CHECK(a["jobs"][k]["line"] == b["jobs"][k]["line"]);
        CHECK(a["jobs"][k]["name"] == b["jobs"][k]["name"]);
        CHECK(a["jobs"][k]["status"] == "completed");
        CHECK(a["jobs"][k]["final"] == b["jobs"][k]["final"]);
        CHECK(a["jobs"][k]["params"] == b["jobs"][k]["params"]);
    }
    CHECK(slurmTsv.rfind("line\tname\tfriction\tnsteps\tv0\tr\tstatus", 0) == 0);
}

TEST_CASE("the oedometer example runs as a batch, with batch.tsv and a merged plot",
          "[batch][example][slow]") {
    const auto dir = scratchDir("batch-oedometer");
    const fs::path example = fs::path(DEM_SOURCE_DIR) / "examples/oedometer";
    for (const char* f : {"oedometer.toml", "friction.table"})
        fs::copy_file(example / f, dir / f);
    const CommandResult r = runDem("batch friction.table oedometer.toml --merge "
                                   "object:plate.force.z --merge-x object:plate.position.z",
                                   dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const std::string tsv = slurp(dir / "runs/friction/batch.tsv");
    CHECK(tsv.rfind("line\tname\tfriction\trate\tmax_force\t", 0) == 0);
    CHECK(countLines(tsv) == 6);
    const Json j = readJson(dir / "runs/friction/batch.json");
    for (const auto& job : j["jobs"]) {
        CHECK(job["status"] == "completed");
        CHECK(job["stop_reason"] == "object:plate.force.z > 50");
    }
    // Against another x than time, the script's name says which (writeBatchMergedPlot).
    const fs::path merged =
        dir / "runs/friction/merged-object_plate.force.z-vs-object_plate.position.z.gp";
    CHECK(fs::exists(merged));
    if (shell("command -v gnuplot > /dev/null") == 0)
        CHECK(shell("gnuplot '" + merged.string() + "'") == 0);
}
