#pragma once
// The Slurm backend of `stepgen jobs run` (docs/cluster.md): a job list's builds and points
// as sbatch job arrays, the points depending on the builds (afterany: a point whose build
// failed builds, or reports the failure, itself, as it would serially).
#include <filesystem>
#include <string>
#include <vector>

namespace stepgen {

/// What `stepgen jobs run --backend slurm` passes to sbatch.
struct SlurmOptions {
  std::string partition;           ///< --partition ("" = the cluster's default)
  std::string time;                ///< --time per job, Slurm's format ("" = the partition's)
  std::string mem;                 ///< --mem per job, e.g. 8G ("" = the partition's)
  std::vector<std::string> extra;  ///< more sbatch options, passed as given
  bool wait = true;                ///< wait for the jobs, else print their ids and return
};

/// Submits the job list's pending jobs (all, or with `resume` those without a result): the
/// builds as one array, the points as arrays of at most 1000 tasks (MaxArraySize's default)
/// of `chunk` points each that start after the builds. Each task runs `<self> jobs exec DIR
/// <ids>`, its Slurm output
/// in DIR/slurm/. The job ids go to stdout and DIR/slurm/submitted.txt. With `wait`, polls
/// squeue every 2 s (progress on stderr) until they have left it and returns jobsStatus;
/// else 0. Errors: readJobList's; std::runtime_error naming sbatch's message when a
/// submission fails (sbatch not found, a bad option).
int runJobsSlurm(const std::filesystem::path& dir, const SlurmOptions& o, bool resume, double timeoutSeconds, int chunk,
                 const std::string& self);

}  // namespace stepgen
