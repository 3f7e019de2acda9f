// jobs exec / run / status / merge. The local backend is xargs -P: a process pool every
// machine has, over the same commands a cluster scheduler runs.
#include "jobs/runner.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <optional>
#include <stdexcept>

#include "driver/inputs.hpp"
#include "jobs/job_list.hpp"
#include "jobs/verify_json.hpp"
#include "support/diag.hpp"
#include "support/files.hpp"

extern char** environ;

namespace stepgen {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// The running job's child (its process group) and why it was stopped. The handlers kill the group
// themselves (kill is async-signal-safe), so a signal that comes just before waitpid blocks
// cannot be lost: the wait then returns when the group dies.
volatile pid_t gChild = 0;
volatile std::sig_atomic_t gStop = 0, gTimedOut = 0;

// A job running in this process (runsInProcess) cannot be killed alone: the handler writes its
// status, prepared before it started (open, write, close and rename are async-signal-safe),
// and ends the process; the jobs after it have no status, and `jobs run --resume` takes them.
struct PreparedStatus {
  std::string tmp, path, timedOut, stoppedTerm, stoppedInt;
};
const PreparedStatus* volatile gInProcess = nullptr;
void writePrepared(const std::string& text) {
  const PreparedStatus* p = gInProcess;
  const int fd = open(p->tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    if (write(fd, text.data(), text.size()) == ssize_t(text.size()) && close(fd) == 0) rename(p->tmp.c_str(), p->path.c_str());
  }
}
void onStop(int sig) {
  gStop = sig;
  if (gChild > 0) kill(-gChild, SIGKILL);
  if (gInProcess) {
    writePrepared(sig == SIGINT ? gInProcess->stoppedInt : gInProcess->stoppedTerm);
    _exit(128 + sig);
  }
}
void onAlarm(int) {
  gTimedOut = 1;
  if (gChild > 0) kill(-gChild, SIGKILL);
  if (gInProcess) {
    writePrepared(gInProcess->timedOut);
    _exit(1);
  }
}
void handle(int sig, void (*f)(int)) {
  struct sigaction sa {};
  sa.sa_handler = f;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
}

// The child of execOne: the point (or build) itself. Exit 0 when its result is written.
int runJob(const JobList& l, const Job& job) {
  try {
    json result = {{"key", job.verify}};
    const json& v = job.verify;
    if (v.value("timing_only", false) || v.value("model_only", false)) {
      const std::string arch = v.at("arch").get<std::string>(), graph = v.at("graph").get<std::string>();
      const ModelResult m = v.value("timing_only", false)
                                ? runTimingOnly(arch, graph, nullptr, v.value("inputs", std::string()))
                                : runModelOnly(arch, graph, v.at("inputs").get<std::string>(), v.at("seed").get<uint32_t>());
      const fs::path tensors = jobTensorsPath(l.dir, job.id);
      fs::remove_all(tensors);
      for (const auto& [name, t] : m.outputs) toNpy(tensors / (name + ".npy"), t);
      result["model"] = modelResultJson(m);
    } else if (job.build) {
      result["build_seconds"] = buildFabricFor(verifyOptionsFromJson(v, "job " + std::to_string(job.id)));
    } else {
      try {
        result["report"] = verifyReportJson(verify(verifyOptionsFromJson(v, "job " + std::to_string(job.id))));
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

// A job that runs only the model (model-only, timing-only, or verify without RTL) starts no
// process and allocates a few MB: it runs in this process. Forked, each such job paid the
// first touch of its child's heap: a 102-point model-only study took 1.28x the serial study's
// wall time through `jobs run -j 1`, in-process 1.05x (farm-bench, 5 pairs). A job that builds
// or runs Verilator keeps a process group of its own, which a timeout or a stop kills whole.
bool runsInProcess(const Job& job) {
  const json& v = job.verify;
  return !job.build && (v.value("timing_only", false) || v.value("model_only", false) || v.value("skip_rtl", false));
}

json statusJson(const Job& job, const fs::path& log, std::optional<int> code, int sig, bool timedOut, std::optional<double> seconds) {
  return {{"id", job.id},
          {"label", job.label},
          {"exit", code ? json(*code) : json(nullptr)},
          {"signal", sig ? json(sig) : json(nullptr)},
          {"timed_out", timedOut},
          {"seconds", seconds ? json(*seconds) : json(nullptr)},
          {"log", log.string()}};
}

// How a job ended: its exit code (std::nullopt when killed or timed out) and the signal.
struct Ending {
  std::optional<int> code;
  int signal = 0;
  bool timedOut = false;
};

void startTimer(double seconds) {
  itimerval t{};
  if (seconds > 0) {
    t.it_value.tv_sec = time_t(seconds);
    t.it_value.tv_usec = suseconds_t((seconds - double(t.it_value.tv_sec)) * 1e6);
  }
  setitimer(ITIMER_REAL, &t, nullptr);  // all zero: stopped
}

// The job in a child process (own process group, output to its log).
Ending runForked(const JobList& l, const Job& job, const fs::path& log, double timeoutSeconds) {
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("jobs exec: cannot fork");
  if (pid == 0) {
    setpgid(0, 0);
    std::signal(SIGTERM, SIG_DFL), std::signal(SIGINT, SIG_DFL), std::signal(SIGALRM, SIG_DFL);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || chdir(l.cwd.c_str()) != 0) _exit(1);
    const int rc = runJob(l, job);
    std::cout.flush(), std::cerr.flush();
    _exit(rc);
  }
  setpgid(pid, pid);  // also here: the group exists before any kill of it
  gChild = pid;
  gTimedOut = 0;
  if (gStop) kill(-pid, SIGKILL);  // stopped while this one was being started
  startTimer(timeoutSeconds);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  gChild = 0;
  startTimer(0);
  Ending e;
  e.timedOut = gTimedOut && !gStop;
  e.signal = gStop ? int(gStop) : WIFSIGNALED(st) ? WTERMSIG(st) : 0;
  if (WIFEXITED(st) && !e.timedOut && !gStop) e.code = WEXITSTATUS(st);
  return e;
}

// The job in this process, its output to its log; a timeout or a stop ends the process
// (onAlarm, onStop) after writing the status prepared here.
Ending runInProcess(const JobList& l, const Job& job, const fs::path& log, double timeoutSeconds) {
  const fs::path status = jobStatusPath(l.dir, job.id);
  PreparedStatus prepared{status.string() + fmt::format(".tmp-{}", getpid()), status.string(),
                          statusJson(job, log, std::nullopt, 0, true, timeoutSeconds).dump() + "\n",
                          statusJson(job, log, std::nullopt, SIGTERM, false, std::nullopt).dump() + "\n",
                          statusJson(job, log, std::nullopt, SIGINT, false, std::nullopt).dump() + "\n"};
  fs::create_directories(status.parent_path());
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int out = dup(1), err = dup(2);
  if (fd < 0 || out < 0 || err < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || chdir(l.cwd.c_str()) != 0)
    throw std::runtime_error("jobs exec: cannot open the log " + log.string());
  close(fd);
  gInProcess = &prepared;
  if (gStop) onStop(gStop);  // stopped while this one was being started
  startTimer(timeoutSeconds);
  const int rc = runJob(l, job);
  startTimer(0);
  gInProcess = nullptr;
  std::cout.flush(), std::cerr.flush(), std::fflush(nullptr);
  dup2(out, 1), dup2(err, 2);
  close(out), close(err);
  Ending e;
  e.code = rc;
  return e;
}

// One job (runsInProcess, else in a child process); its status file and progress line. True
// when its result was written.
bool execOne(const JobList& l, int id, double timeoutSeconds) {
  const Job& job = l.jobs[size_t(id)];
  fs::remove(jobResultPath(l.dir, id));
  fs::remove(jobStatusPath(l.dir, id));
  const fs::path log = jobLogPath(l.dir, id);
  fs::create_directories(log.parent_path());
  const auto t0 = std::chrono::steady_clock::now();
  std::cout.flush(), std::cerr.flush();
  const Ending e = runsInProcess(job) ? runInProcess(l, job, log, timeoutSeconds) : runForked(l, job, log, timeoutSeconds);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const bool ok = e.code == 0 && fs::exists(jobResultPath(l.dir, id));
  writeFileAtomically(jobStatusPath(l.dir, id), statusJson(job, log, e.code, e.signal, e.timedOut, seconds).dump() + "\n");
  const std::string what = ok           ? "done"
                           : e.timedOut ? fmt::format("timed out after {:.0f} s", timeoutSeconds)
                           : e.signal   ? fmt::format("killed by signal {}", e.signal)
                                        : fmt::format("failed (exit {}; log {})", e.code.value_or(-1), log.string());
  std::cerr << fmt::format("job {} of {} ({}): {} in {:.1f} s\n", id, l.jobs.size(), job.label, what, seconds);
  return ok;
}

}  // namespace

int execJobs(const fs::path& dirIn, const std::vector<int>& ids, double timeoutSeconds) {
  // First: a stop that comes while the list is read leaves the jobs unstarted, not a dead runner.
  handle(SIGTERM, onStop);
  handle(SIGINT, onStop);
  handle(SIGALRM, onAlarm);
  const JobList l = readJobList(fs::absolute(dirIn));
  for (int id : ids)
    if (id < 0 || id >= int(l.jobs.size()))
      throw DiagError("J-603", {(l.dir / "jobs.json").string()},
                      fmt::format("no job {} in this list (it has jobs 0 to {})", id, int(l.jobs.size()) - 1));
  bool all = true;
  for (int id : ids) {
    if (gStop) return 1;  // the rest never ran: no status, `jobs run --resume` takes them
    all = execOne(l, id, timeoutSeconds) && all;
  }
  return all ? 0 : 1;
}

std::vector<const Job*> pendingJobs(const JobList& l, bool resume) {
  std::vector<const Job*> out;
  for (bool builds : {true, false})
    for (const Job& j : l.jobs) {
      if (j.build != builds || (resume && fs::exists(jobResultPath(l.dir, j.id)))) continue;
      fs::remove(jobResultPath(l.dir, j.id));
      fs::remove(jobStatusPath(l.dir, j.id));
      fs::remove(jobLogPath(l.dir, j.id));
      out.push_back(&j);
    }
  return out;
}

namespace {

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

int runJobsLocal(const fs::path& dirIn, int parallel, bool resume, double timeoutSeconds, int chunk, const std::string& self) {
  const JobList l = readJobList(fs::absolute(dirIn));
  const std::vector<const Job*> pending = pendingJobs(l, resume);
  std::cerr << fmt::format("jobs: running {} of {} job(s) of {}, {} at a time (local backend)\n", pending.size(), l.jobs.size(),
                           l.dir.string(), parallel);
  // The builds, then the points that use them: one xargs each.
  for (bool builds : {true, false}) {
    std::string ids;
    size_t n = 0;
    for (const Job* j : pending)
      if (j->build == builds) ids += std::to_string(j->id) + "\n", ++n;
    if (n == 0) continue;
    const size_t perProcess = builds ? 1 : chunk > 0 ? size_t(chunk) : std::max<size_t>(1, n / (4 * size_t(parallel)));
    const fs::path list = l.dir / (builds ? "pending_builds.txt" : "pending_points.txt");
    writeFileAtomically(list, ids);
    spawnAndWait({"xargs", "-P", std::to_string(parallel), "-n", std::to_string(perProcess), "-a", list.string(), self, "jobs",
                  "exec", "--timeout", fmt::format("{}", timeoutSeconds), l.dir.string()});
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
    const std::string status = readText(jobStatusPath(l.dir, j.id));
    if (status.empty()) {
      ++never;
      detail += fmt::format("  job {} ({}): no result, no status (not run yet, running, or its runner was killed)\n", j.id, j.label);
      continue;
    }
    ++failed;
    detail += fmt::format("  job {} ({}): no result; {}; log {}\n", j.id, j.label, json::parse(status, nullptr, false).dump(),
                          jobLogPath(l.dir, j.id).string());
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
