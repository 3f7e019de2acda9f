#pragma once
// Running a job list (docs/cluster.md): one job in a process of its own (`stepgen jobs exec`),
// all of them on this machine through xargs -P (the local backend), their state, and the
// merge, which runs the study again over the jobs' results.
#include <filesystem>
#include <string>
#include <vector>

#include "jobs/job_list.hpp"

namespace stepgen {

/// `stepgen jobs exec DIR ID...`: runs the jobs of the list in DIR one after another, in the
/// list's working folder, output to logs/ID.log. A job that builds or runs Verilator runs in
/// a child process (its own process group), killed after `timeoutSeconds` (0: never) or when
/// this process gets SIGTERM / SIGINT (the jobs after it do not start); a model-only or
/// timing-only job runs in this process, and a timeout or a stop during it ends the process
/// after writing its status. Then writes status/ID.json (exit, signal, timed_out, seconds,
/// log) and one progress line to stderr. The job writes results/ID.json
/// (a DiagError of the point is a result too). Several ids per process save its start-up,
/// which costs as much as a small model-only point. Returns 0 when every result was written,
/// else 1. Errors: readJobList's; DiagError J-603 for an id not in the list.
int execJobs(const std::filesystem::path& dir, const std::vector<int>& ids, double timeoutSeconds);

/// The jobs a run takes: all, or with `resume` those without a result; builds first. The
/// results, statuses and logs they had are removed (a result left from before must not count
/// for a job that then never starts).
std::vector<const Job*> pendingJobs(const JobList& l, bool resume);

/// `stepgen jobs run DIR --backend local -j N [--resume]`: every job (after removing earlier
/// results), or with `resume` only those without a result, `parallel` processes at a time
/// through xargs -P calling `jobs exec` with `chunk` points each (0: a quarter of the points
/// per process slot; builds always one each, before the points). Prints what it runs and a
/// summary. Returns 0 when every job has a result, else 4. Errors: readJobList's;
/// std::runtime_error when xargs cannot start.
int runJobsLocal(const std::filesystem::path& dir, int parallel, bool resume, double timeoutSeconds, int chunk,
                 const std::string& self);

/// `stepgen jobs status DIR`: jobs done, failed (exit or signal, with the log), never run.
/// Returns 0 when every job has a result, else 4.
int jobsStatus(const std::filesystem::path& dir);

/// `stepgen jobs merge DIR`: replaces this process by the study's own command (the list's
/// `study` arguments and `--merge DIR`) in the list's working folder. Returns only on
/// failure (std::runtime_error).
[[noreturn]] void mergeJobs(const std::filesystem::path& dir, const std::string& self);

}  // namespace stepgen
