// sbatch job arrays over a job list. The array task maps to a job id through a file of ids
// (one per line), so a resumed run submits only the jobs still missing.
#include "jobs/slurm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "jobs/job_list.hpp"
#include "jobs/runner.hpp"
#include "support/files.hpp"

namespace stepgen {

namespace fs = std::filesystem;

namespace {

// Single quotes for sh.
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs a shell command; its output (stdout and stderr). Throws with it when the command exits
// non-zero, unless `mayFail`.
std::string capture(const std::string& cmd, bool mayFail = false) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) throw std::runtime_error("cannot run: " + cmd);
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), int(buf.size()), p)) out += buf.data();
  const int st = pclose(p);
  if (st != 0 && !mayFail) throw std::runtime_error(fmt::format("`{}` failed: {}", cmd, out));
  return out;
}

// sbatch of one array of `tasks` tasks over the ids in `idsFile`: task t runs lines
// first + t * chunk + 1 .. first + (t + 1) * chunk (1-based; sed stops at the end). Its job id.
std::string submitArray(const JobList& l, const SlurmOptions& o, const fs::path& idsFile, size_t first, size_t tasks,
                        size_t chunk, const std::string& name, const std::string& dependency, double timeoutSeconds,
                        const std::string& self) {
  const fs::path sd = l.dir / "slurm";
  std::string cmd = fmt::format("sbatch --parsable --job-name={} --array=0-{} --output={} --chdir={}", quoted(name), tasks - 1,
                                quoted((sd / (name + "_%A_%a.out")).string()), quoted(l.cwd));
  if (!o.partition.empty()) cmd += " --partition=" + quoted(o.partition);
  if (!o.time.empty()) cmd += " --time=" + quoted(o.time);
  if (!o.mem.empty()) cmd += " --mem=" + quoted(o.mem);
  if (!dependency.empty()) cmd += " --dependency=afterany:" + dependency;
  for (const std::string& e : o.extra) cmd += " " + quoted(e);
  const std::string script = fmt::format(
      "#!/bin/sh\n# stepgen jobs run --backend slurm: array task T runs the job ids on lines {0} + T * {1} + 1 .. + {1} of the ids file\n"
      "a=$(({0} + SLURM_ARRAY_TASK_ID * {1} + 1))\nids=$(sed -n \"${{a}},$((a + {1} - 1))p\" {2})\nexec {3} jobs exec --timeout {4} {5} $ids\n",
      first, chunk, quoted(idsFile.string()), quoted(self), timeoutSeconds, quoted(l.dir.string()));
  const fs::path scriptFile = sd / (name + ".sh");
  writeFileAtomically(scriptFile, script);
  cmd += " " + quoted(scriptFile.string());
  std::string id = capture(cmd);
  while (!id.empty() && (id.back() == '\n' || id.back() == '\r')) id.pop_back();
  if (const size_t nl = id.rfind('\n'); nl != std::string::npos) id = id.substr(nl + 1);  // after any warning sbatch printed
  if (const size_t semi = id.find(';'); semi != std::string::npos) id = id.substr(0, semi);  // "id;cluster"
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw std::runtime_error("sbatch did not return a job id: " + id);
  return id;
}

}  // namespace

int runJobsSlurm(const fs::path& dirIn, const SlurmOptions& o, bool resume, double timeoutSeconds, int chunk,
                 const std::string& self) {
  const JobList l = readJobList(fs::absolute(dirIn));
  std::vector<int> builds, points;
  for (const Job* j : pendingJobs(l, resume)) (j->build ? builds : points).push_back(j->id);
  std::cerr << fmt::format("jobs: submitting {} of {} job(s) of {} to Slurm ({} build(s), {} point(s))\n",
                           builds.size() + points.size(), l.jobs.size(), l.dir.string(), builds.size(), points.size());
  const fs::path sd = l.dir / "slurm";
  fs::create_directories(sd);
  std::vector<std::string> submitted;
  auto idsFile = [&](const std::vector<int>& ids, const std::string& name) {
    std::string text;
    for (int id : ids) text += std::to_string(id) + "\n";
    const fs::path f = sd / (name + ".txt");
    writeFileAtomically(f, text);
    return f;
  };
  std::string buildJob;
  if (!builds.empty()) {
    buildJob = submitArray(l, o, idsFile(builds, "builds"), 0, builds.size(), 1, "stepgen-build", "", timeoutSeconds, self);
    submitted.push_back(buildJob);
  }
  if (!points.empty()) {
    const fs::path f = idsFile(points, "points");
    constexpr size_t kMaxArray = 1000;
    const size_t per = size_t(std::max(1, chunk)), perArray = kMaxArray * per;
    for (size_t first = 0; first < points.size(); first += perArray) {
      const size_t n = std::min(perArray, points.size() - first);
      submitted.push_back(submitArray(l, o, f, first, (n + per - 1) / per, per, fmt::format("stepgen-points{}", first / perArray),
                                      buildJob, timeoutSeconds, self));
    }
  }
  std::string ids;
  for (const std::string& s : submitted) ids += (ids.empty() ? "" : ",") + s;
  writeFileAtomically(sd / "submitted.txt", ids + "\n");
  std::cout << "slurm job ids: " << ids << "\n";
  if (!o.wait || submitted.empty()) return 0;
  size_t lastDone = size_t(-1);
  for (;;) {
    // A job that has left squeue's memory (MinJobAge) makes it fail with "Invalid job id": gone too.
    const std::string q = capture("squeue -h -o %i -j " + ids, true);
    size_t done = 0;
    for (const Job& j : l.jobs) done += fs::exists(jobResultPath(l.dir, j.id));
    if (done != lastDone) std::cerr << fmt::format("jobs: {} of {} with a result\n", done, l.jobs.size()), lastDone = done;
    if (q.find_first_not_of(" \n") == std::string::npos || q.find("Invalid job id") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
  return jobsStatus(l.dir);
}

}  // namespace stepgen
