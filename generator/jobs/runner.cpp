// jobs exec / run / status / merge. The local backend is xargs -P: a process pool every
// machine has, over the same commands a cluster scheduler runs.
#include "jobs/runner.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "driver/inputs.hpp"
#include "jobs/job_list.hpp"
#include "jobs/verify_json.hpp"
#include "support/diag.hpp"

extern char** environ;

namespace stepgen {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

volatile std::sig_atomic_t gStop = 0;
void onStop(int sig) { gStop = sig; }

// The child of execJob: the point (or build) itself. Exit 0 when its result is written.
int runJob(const JobList& l, const Job& job) {
  try {
    json result = {{"key", job.verify}};
    const json& v = job.verify;
    if (v.value("timing_only", false) || v.value("model_only", false)) {
      const std::string arch = v.at("arch").get<std::string>(), graph = v.at("graph").get<std::string>();
      const ModelResult m = v.value("timing_only", false)
                                ? runTimingOnly(arch, graph)
                                : runModelOnly(arch, graph, v.at("inputs").get<std::string>(), v.at("seed").get<uint32_t>());
      const fs::path tensors = jobTensorsPath(l.dir, job.id);
      fs::remove_all(tensors);
      for (const auto& [name, t] : m.outputs) toNpy(tensors / (name + ".npy"), t);
      result["model"] = modelResultJson(m);
      writeFileAtomically(jobResultPath(l.dir, job.id), result.dump(1) + "\n");
      return 0;
    }
    const VerifyOptions vo = verifyOptionsFromJson(job.verify, "job " + std::to_string(job.id));
    if (job.build) {
      result["build_seconds"] = buildFabricFor(vo);
    } else {
      try {
        result["report"] = verifyReportJson(verify(vo));
      } catch (const DiagError& e) {
        result["diag"] = diagErrorJson(e);
        std::cerr << "the point does not compile (a result): " << e.what() << "\n";
      }
    }
    writeFileAtomically(jobResultPath(l.dir, job.id), result.dump(1) + "\n");
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

size_t countResults(const JobList& l) {
  size_t n = 0;
  for (const Job& j : l.jobs) n += fs::exists(jobResultPath(l.dir, j.id));
  return n;
}

}  // namespace

int execJob(const fs::path& dirIn, int id, double timeoutSeconds, const std::string& self) {
  (void)self;
  JobList l = readJobList(fs::absolute(dirIn));
  if (id < 0 || id >= int(l.jobs.size()))
    throw DiagError("J-603", {(l.dir / "jobs.json").string()},
                    fmt::format("no job {} in this list (it has jobs 0 to {})", id, int(l.jobs.size()) - 1));
  const Job& job = l.jobs[size_t(id)];
  fs::remove(jobResultPath(l.dir, id));
  fs::remove(jobStatusPath(l.dir, id));
  const fs::path log = jobLogPath(l.dir, id);
  fs::create_directories(log.parent_path());
  const auto t0 = std::chrono::steady_clock::now();
  std::signal(SIGTERM, onStop);
  std::signal(SIGINT, onStop);
  std::cout.flush(), std::cerr.flush();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("jobs exec: cannot fork");
  if (pid == 0) {
    setpgid(0, 0);
    std::signal(SIGTERM, SIG_DFL), std::signal(SIGINT, SIG_DFL);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || chdir(l.cwd.c_str()) != 0) _exit(1);
    const int rc = runJob(l, job);
    std::cout.flush(), std::cerr.flush();
    _exit(rc);
  }
  setpgid(pid, pid);  // also here: no race with a kill before the child ran setpgid
  int st = 0;
  bool timedOut = false;
  int stopSignal = 0;
  for (;;) {
    if (waitpid(pid, &st, WNOHANG) == pid) break;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if ((timeoutSeconds > 0 && s > timeoutSeconds) || gStop) {
      timedOut = !gStop, stopSignal = gStop;
      kill(-pid, SIGKILL);  // the whole group: Verilator builds and harness runs too
      waitpid(pid, &st, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const bool exited = WIFEXITED(st) && !timedOut && !stopSignal;
  const int code = exited ? WEXITSTATUS(st) : -1;
  const int sig = stopSignal ? stopSignal : WIFSIGNALED(st) ? WTERMSIG(st) : 0;
  const bool ok = exited && code == 0 && fs::exists(jobResultPath(l.dir, id));
  const json status = {{"id", id},         {"label", job.label},  {"exit", exited ? json(code) : json(nullptr)},
                       {"signal", sig ? json(sig) : json(nullptr)}, {"timed_out", timedOut}, {"seconds", seconds},
                       {"log", log.string()}};
  writeFileAtomically(jobStatusPath(l.dir, id), status.dump() + "\n");
  const std::string what = ok          ? "done"
                           : timedOut  ? fmt::format("timed out after {:.0f} s", timeoutSeconds)
                           : sig       ? fmt::format("killed by signal {}", sig)
                                       : fmt::format("failed (exit {}; log {})", code, log.string());
  std::cerr << fmt::format("[{}/{}] job {} ({}): {} in {:.1f} s\n", countResults(l), l.jobs.size(), id, job.label, what, seconds);
  return ok ? 0 : 1;
}

namespace {

// The jobs to run (all, or with `resume` those without a result), builds first; earlier
// results and statuses of the ones returned are removed.
std::vector<const Job*> pendingJobs(const JobList& l, bool resume) {
  std::vector<const Job*> out;
  for (bool builds : {true, false})
    for (const Job& j : l.jobs) {
      if (j.build != builds || (resume && fs::exists(jobResultPath(l.dir, j.id)))) continue;
      fs::remove(jobResultPath(l.dir, j.id));
      fs::remove(jobStatusPath(l.dir, j.id));
      out.push_back(&j);
    }
  return out;
}

// Runs `args` (argv[0] looked up in PATH) and waits; its exit status.
int spawnAndWait(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0)
    throw std::runtime_error(fmt::format("jobs: cannot start {}", args[0]));
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return st;
}

}  // namespace

int runJobsLocal(const fs::path& dirIn, int parallel, bool resume, double timeoutSeconds, const std::string& self) {
  const JobList l = readJobList(fs::absolute(dirIn));
  const std::vector<const Job*> pending = pendingJobs(l, resume);
  std::cerr << fmt::format("jobs: running {} of {} job(s) of {}, {} at a time (local backend)\n", pending.size(), l.jobs.size(),
                           l.dir.string(), parallel);
  // The builds, then the points that use them: one xargs each.
  for (bool builds : {true, false}) {
    std::string ids;
    for (const Job* j : pending)
      if (j->build == builds) ids += std::to_string(j->id) + "\n";
    if (ids.empty()) continue;
    const fs::path list = l.dir / (builds ? "pending_builds.txt" : "pending_points.txt");
    writeFileAtomically(list, ids);
    spawnAndWait({"xargs", "-P", std::to_string(parallel), "-n", "1", "-a", list.string(), self, "jobs", "exec", "--timeout",
                  fmt::format("{}", timeoutSeconds), l.dir.string()});
  }
  return jobsStatus(l.dir);
}

int jobsStatus(const fs::path& dirIn) {
  const JobList l = readJobList(dirIn);
  size_t done = 0, failed = 0, never = 0;
  std::string detail;
  for (const Job& j : l.jobs) {
    if (fs::exists(jobResultPath(l.dir, j.id))) {
      ++done;
      continue;
    }
    std::ifstream f(jobStatusPath(l.dir, j.id));
    if (!f) {
      ++never;
      detail += fmt::format("  job {} ({}): no result, no status (not run yet, running, or its runner was killed)\n", j.id, j.label);
      continue;
    }
    ++failed;
    const json s = json::parse(f, nullptr, false);
    detail += fmt::format("  job {} ({}): no result; {}; log {}\n", j.id, j.label, s.dump(), jobLogPath(l.dir, j.id).string());
  }
  std::cout << fmt::format("{}: {} job(s): {} with a result, {} failed or killed, {} without status\n{}", l.dir.string(),
                           l.jobs.size(), done, failed, never, detail);
  return done == l.jobs.size() ? 0 : 4;
}

void mergeJobs(const fs::path& dirIn, const std::string& self) {
  const JobList l = readJobList(fs::absolute(dirIn));
  if (chdir(l.cwd.c_str()) != 0) throw std::runtime_error("jobs merge: cannot enter the study's folder " + l.cwd);
  std::vector<std::string> args = {self};
  args.insert(args.end(), l.study.begin(), l.study.end());
  args.push_back("--merge");
  args.push_back(l.dir.string());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush(), std::cerr.flush();
  execv(self.c_str(), argv.data());
  throw std::runtime_error("jobs merge: cannot run " + self);
}

}  // namespace stepgen
