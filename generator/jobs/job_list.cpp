// The job-list folder: jobs.json, commands.txt and the per-job result, status and log paths.
#include "jobs/job_list.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "support/diag.hpp"
#include "support/files.hpp"

namespace stepgen {

namespace fs = std::filesystem;
using json = nlohmann::json;

fs::path jobResultPath(const fs::path& dir, int id) { return dir / "results" / fmt::format("{}.json", id); }
fs::path jobStatusPath(const fs::path& dir, int id) { return dir / "status" / fmt::format("{}.json", id); }
fs::path jobLogPath(const fs::path& dir, int id) { return dir / "logs" / fmt::format("{}.log", id); }
fs::path jobTensorsPath(const fs::path& dir, int id) { return dir / "results" / fmt::format("{}.tensors", id); }

void writeJobList(const JobList& l, const std::string& self) {
  json jobs = json::array();
  for (const Job& j : l.jobs) jobs.push_back({{"id", j.id}, {"kind", j.build ? "build" : "point"}, {"label", j.label}, {"verify", j.verify}});
  const json doc = {{"format", "stepgen-jobs"}, {"version", kJobListVersion}, {"cwd", l.cwd}, {"study", l.study}, {"jobs", jobs}};
  for (const char* sub : {"results", "status", "logs"}) fs::create_directories(l.dir / sub);
  // Builds first: a scheduler that runs the lines in order then finds each fabric built (one
  // that does not is still right: a point waits on its fabric's lock, driver/rtl_run.cpp).
  std::string commands;
  for (bool builds : {true, false})
    for (const Job& j : l.jobs)
      if (j.build == builds) commands += fmt::format("'{}' jobs exec '{}' {}\n", self, fs::absolute(l.dir).string(), j.id);
  writeFileAtomically(l.dir / "commands.txt", commands);
  writeFileAtomically(l.dir / "jobs.json", doc.dump(1) + "\n");
}

JobList readJobList(const fs::path& dir) {
  const fs::path file = dir / "jobs.json";
  const std::string where = file.string();
  if (!fs::is_regular_file(file))
    throw DiagError("J-601", {where}, "cannot read the job list (is this a folder written by `stepgen study ... --plan`?)");
  json doc;
  try {
    doc = json::parse(readText(file));
  } catch (const json::parse_error& e) {
    throw DiagError("J-601", {where}, fmt::format("the job list is not valid JSON: {}", e.what()));
  }
  std::string field = "format";
  try {
    if (!doc.is_object() || doc.value("format", "") != "stepgen-jobs")
      throw DiagError("J-601", {where}, "not a stepgen job list: the field 'format' is not \"stepgen-jobs\"");
    field = "version";
    if (const int v = doc.at("version").get<int>(); v != kJobListVersion)
      throw DiagError("J-602", {where}, fmt::format("job list of format version {}; this stepgen reads version {} (plan the "
                                                    "study again with this stepgen)",
                                                    v, kJobListVersion));
    JobList l;
    l.dir = dir;
    field = "cwd";
    l.cwd = doc.at("cwd").get<std::string>();
    field = "study";
    l.study = doc.at("study").get<std::vector<std::string>>();
    field = "jobs";
    for (const json& j : doc.at("jobs")) {
      const std::string kind = j.at("kind").get<std::string>();
      if (kind != "point" && kind != "build")
        throw DiagError("J-601", {where}, fmt::format("field 'jobs': job {} has kind '{}' (point or build)", l.jobs.size(), kind));
      Job job{j.at("id").get<int>(), kind == "build", j.at("label").get<std::string>(), j.at("verify")};
      if (job.id != int(l.jobs.size()))
        throw DiagError("J-601", {where}, fmt::format("field 'jobs': job {} is listed where job {} belongs", job.id, l.jobs.size()));
      l.jobs.push_back(std::move(job));
    }
    return l;
  } catch (const json::exception& e) {
    throw DiagError("J-601", {where}, fmt::format("field '{}' is missing or malformed: {}", field, e.what()));
  }
}

}  // namespace stepgen
