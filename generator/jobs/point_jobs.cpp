// studyVerify and its three modes: a process-wide setting, because every study calls it at
// the same place (where it called verify) and main alone knows the mode.
#include "jobs/point_jobs.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <iostream>
#include <map>

#include "driver/inputs.hpp"
#include "jobs/job_list.hpp"
#include "jobs/verify_json.hpp"
#include "support/diag.hpp"
#include "support/files.hpp"

namespace stepgen {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct State {
  PointMode mode = PointMode::Serial;
  JobList list;
  std::map<std::string, int> byKey;  // verifyOptionsJson dump -> job id (merge)
  std::vector<int> missing;          // planned points without a result (merge)
};

State& state() {
  static State s;
  return s;
}

// Every <name>.npy of a folder (none if it does not exist), by name.
std::map<std::string, Matrix> readTensors(const fs::path& dir) {
  std::map<std::string, Matrix> t;
  if (!fs::is_directory(dir)) return t;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".npy") t[e.path().stem().string()] = fromNpy(e.path());
  return t;
}

// The result document of a job, checked against its key.
json resultOf(const Job& job) {
  const fs::path file = jobResultPath(state().list.dir, job.id);
  json r;
  try {
    r = json::parse(readText(file));
  } catch (const json::parse_error& e) {
    throw std::runtime_error(fmt::format("job result {}: not valid JSON: {}", file.string(), e.what()));
  }
  if (r.value("key", json()) != job.verify)
    throw std::runtime_error(fmt::format("job result {} belongs to another point than job {} ({})", file.string(), job.id, job.label));
  if (r.contains("diag")) throw diagErrorFromJson(r.at("diag"));
  return r;
}

// A study point in the current mode. Serial: run(). Plan: a job for `key`, and T{} stands in.
// Merge: read(result) of the job planned for `key`; `missing` for a planned job without a
// result (counted); run() for a point the plan does not have.
template <typename T, typename Run, typename Read>
T point(const json& key, const std::string& label, Run run, Read read, T missing) {
  State& s = state();
  if (s.mode == PointMode::Serial) return run();
  if (s.mode == PointMode::Plan) {
    s.list.jobs.push_back({int(s.list.jobs.size()), false, label, key});
    return T{};
  }
  const auto it = s.byKey.find(key.dump());
  if (it == s.byKey.end()) {
    std::cerr << fmt::format("merge: the point {} is not in the job list; running it here\n", label);
    return run();
  }
  const Job& job = s.list.jobs.at(size_t(it->second));
  if (!fs::exists(jobResultPath(s.list.dir, job.id))) {
    s.missing.push_back(job.id);
    return missing;
  }
  const json r = resultOf(job);
  try {
    return read(r, job);
  } catch (const json::exception& e) {
    throw std::runtime_error(fmt::format("job result {}: {}", jobResultPath(s.list.dir, job.id).string(), e.what()));
  }
}

// One build job per fabric build the RTL points ask for (the same arch file, cache, trace,
// hierarchy and AXI), after the points, in the order the points first ask for it.
void addBuildJobs(JobList& l) {
  std::map<std::string, bool> seen;
  const size_t points = l.jobs.size();
  for (size_t i = 0; i < points; ++i) {
    const json& v = l.jobs[i].verify;
    const bool modelOnly = v.value("timing_only", false) || v.value("model_only", false);
    if (modelOnly || v.at("skip_rtl").get<bool>() || v.at("build_cache").get<std::string>().empty()) continue;
    const json key = {v.at("arch"), v.at("build_cache"), v.at("trace"), v.at("hierarchical"), v.at("axi")};
    if (!seen.emplace(key.dump(), true).second) continue;
    l.jobs.push_back({int(l.jobs.size()), true, "build " + v.at("arch").get<std::string>(), v});
  }
}

}  // namespace

PointMode pointMode() { return state().mode; }

void setPointMode(PointMode m, const std::string& dir, const std::vector<std::string>& studyArgs) {
  State& s = state();
  s = State{};
  s.mode = m;
  if (m == PointMode::Plan) {
    if (fs::exists(fs::path(dir) / "jobs.json"))
      throw DiagError("J-604", {(fs::path(dir) / "jobs.json").string()},
                      "the folder already holds a job list: remove it or plan into another folder");
    s.list.dir = dir;
    s.list.cwd = fs::current_path().string();
    s.list.study = studyArgs;
  } else if (m == PointMode::Merge) {
    s.list = readJobList(dir);
    for (const Job& j : s.list.jobs)
      if (!j.build) s.byKey[j.verify.dump()] = j.id;
  }
}

VerifyReport studyVerify(const VerifyOptions& vo) {
  VerifyReport missing;
  missing.rtl.status = "missing";
  return point(
      verifyOptionsJson(vo), vo.outDir, [&] { return verify(vo); },
      [&](const json& r, const Job& job) {
        VerifyReport v = verifyReportFromJson(r.at("report"), "job result " + jobResultPath(state().list.dir, job.id).string());
        // The tensors are where the job's verify wrote them.
        v.model.outputs = readTensors(fs::path(vo.outDir) / "model");
        if (v.replay) v.replay->outputs = readTensors(fs::path(vo.outDir) / "model_replay");
        return v;
      },
      missing);
}

json timingOnlyKey(const std::string& archPath, const std::string& graphPath, const std::string& inputsDir) {
  json k = {{"timing_only", true}, {"arch", archPath}, {"graph", graphPath}};
  if (!inputsDir.empty()) k["inputs"] = inputsDir;
  return k;
}

namespace {

// A timing-only or model-only point: its ModelResult and the tensors its job wrote.
ModelResult modelPoint(const json& key, const std::string& label, const std::function<ModelResult()>& run) {
  return point(
      key, label, run,
      [](const json& r, const Job& job) {
        ModelResult m = modelResultFromJson(r.at("model"));
        m.outputs = readTensors(jobTensorsPath(state().list.dir, job.id));
        return m;
      },
      ModelResult{});
}

}  // namespace

ModelResult studyTimingOnly(const std::string& archPath, const std::string& graphPath, const std::string& inputsDir) {
  return modelPoint(timingOnlyKey(archPath, graphPath, inputsDir), graphPath,
                    [&] { return runTimingOnly(archPath, graphPath, nullptr, inputsDir); });
}

ModelResult studyModelOnly(const std::string& archPath, const std::string& graphPath, const std::string& inputsDir,
                           uint32_t seed) {
  const json key = {{"model_only", true}, {"arch", archPath}, {"graph", graphPath}, {"inputs", inputsDir}, {"seed", seed}};
  return modelPoint(key, graphPath, [&] { return runModelOnly(archPath, graphPath, inputsDir, seed); });
}

int finishPointMode(int studyExit, const std::string& self) {
  State& s = state();
  if (s.mode == PointMode::Plan) {
    addBuildJobs(s.list);
    writeJobList(s.list, self);
    std::cerr << fmt::format("planned {} job(s) in {} (points and fabric builds); run them with `stepgen jobs run {} --backend local -j 2` (or any "
                             "scheduler over {}/commands.txt), then `stepgen jobs merge {}`\n",
                             s.list.jobs.size(), s.list.dir.string(), s.list.dir.string(), s.list.dir.string(),
                             s.list.dir.string());
    return 0;
  }
  if (s.mode == PointMode::Merge && !s.missing.empty()) {
    std::cerr << fmt::format("merge: {} of {} job(s) have no result; their rows are marked 'missing' (rtl status):\n",
                             s.missing.size(), s.list.jobs.size());
    for (int id : s.missing) {
      const Job& j = s.list.jobs.at(size_t(id));
      const std::string status = readText(jobStatusPath(s.list.dir, id));
      const std::string why = status.empty() ? "no status: killed, or never ran" : "status " + json::parse(status, nullptr, false).dump();
      std::cerr << fmt::format("  job {} ({}): {}; log {}\n", id, j.label, why, jobLogPath(s.list.dir, id).string());
    }
    std::cerr << fmt::format("rerun them with `stepgen jobs run {} --resume`\n", s.list.dir.string());
    return 4;
  }
  return studyExit;
}

}  // namespace stepgen
