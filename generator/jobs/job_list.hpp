#pragma once
// A study as a job list (issue 46, docs/cluster.md): the folder `stepgen study ... --plan DIR`
// writes. DIR/jobs.json holds the study's own command line (to merge it later), the working
// folder its paths are relative to, one job per study point (its VerifyOptions as JSON), and
// after them one build job per fabric the RTL points share (buildFabricFor), which backends
// run before the points;
// DIR/commands.txt the jobs as command lines (`stepgen jobs exec DIR <id>`), one per line,
// builds first, for any scheduler. A job writes results/<id>.json (renamed into place when complete, so a
// killed job leaves none), status/<id>.json (exit, signal, seconds, error) and logs/<id>.log.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace stepgen {

/// The job-list format version; a list of another version is refused (J-602).
constexpr int kJobListVersion = 1;

/// One study point, or the fabric build some points share.
struct Job {
  int id = 0;
  bool build = false;      ///< a build job (buildFabricFor of `verify`), else a point (verify)
  std::string label;       ///< the point's output folder, or "build <arch>"
  nlohmann::json verify;   ///< verifyOptionsJson of the point (of a build: its first point's)
};

/// A whole job list.
struct JobList {
  std::filesystem::path dir;           ///< the job-list folder
  std::string cwd;                     ///< working folder of every job and of the merge (absolute)
  std::vector<std::string> study;      ///< the study's arguments after `stepgen`, --plan removed
  std::vector<Job> jobs;               ///< by id, 0 ..
};

/// Reads DIR/jobs.json. Errors: DiagError J-601 (missing, unreadable, malformed: file and
/// field named), J-602 (another format version).
JobList readJobList(const std::filesystem::path& dir);

/// Writes DIR/jobs.json and DIR/commands.txt (each through a temporary file and a rename)
/// and the empty results/, status/ and logs/ folders. `self` is the stepgen binary the
/// commands call. Throws std::runtime_error when a file cannot be written.
void writeJobList(const JobList& l, const std::string& self);

/// DIR/results/<id>.json, DIR/status/<id>.json, DIR/logs/<id>.log, and DIR/results/<id>.tensors/
/// (a model-only point's output tensors, written before its result file).
std::filesystem::path jobResultPath(const std::filesystem::path& dir, int id);
std::filesystem::path jobStatusPath(const std::filesystem::path& dir, int id);
std::filesystem::path jobLogPath(const std::filesystem::path& dir, int id);
std::filesystem::path jobTensorsPath(const std::filesystem::path& dir, int id);

}  // namespace stepgen
