#pragma once
// Study points as jobs (issue 46, docs/cluster.md). Every study runs its points through
// studyVerify; the mode says what that does: run the point here (serial, the default), record
// it as a job of a job list (`--plan DIR`), or take the result a job wrote (`--merge DIR`,
// which `stepgen jobs merge DIR` runs), so the merged study writes its tables from the same
// reports, byte for byte, as a serial run.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "driver/pipeline.hpp"

namespace stepgen {

/// How studyVerify runs a point.
enum class PointMode { Serial, Plan, Merge };

/// Sets the mode for this process (main, from a study's --plan / --merge). Plan: `dir` must
/// not hold a job list yet (DiagError J-604); `studyArgs` (the arguments after `stepgen`,
/// --plan removed) and the working folder are recorded in it. Merge: reads the job list in
/// `dir` (readJobList's errors). Serial: `dir` and `studyArgs` unused.
void setPointMode(PointMode m, const std::string& dir, const std::vector<std::string>& studyArgs);

/// The mode setPointMode set (Serial until it is called).
PointMode pointMode();

/// One study point. Serial: verify(vo). Plan: the point becomes the next job, and an empty
/// report (model only, 0 cycles, rtl.status "") stands in for it. Merge: the job's report;
/// a job's DiagError is thrown again; a planned point without a result gives a report with
/// rtl.status "missing" and is counted for finishPointMode; a point the plan did not have
/// (a study that chose it from a result) runs here. Errors: as verify; std::runtime_error for
/// a result file that does not belong to its job.
VerifyReport studyVerify(const VerifyOptions& vo);

/// A timing-only study point (runTimingOnly of the arch and graph, meta rows from
/// `inputsDir`), in the same three modes as studyVerify; a planned point without a result
/// gives a ModelResult with 0 cycles. Errors: as runTimingOnly; std::runtime_error for a
/// result of another point.
ModelResult studyTimingOnly(const std::string& archPath, const std::string& graphPath, const std::string& inputsDir = "");

/// A model-only study point (runModelOnly: functional model and cost figures, no mapping),
/// in the same three modes; a planned point without a result gives an empty ModelResult.
/// Errors: as runModelOnly; std::runtime_error for a result of another point.
ModelResult studyModelOnly(const std::string& archPath, const std::string& graphPath, const std::string& inputsDir,
                           uint32_t seed);

/// The job key of a timing-only point (what studyTimingOnly records and `jobs exec` reads).
nlohmann::json timingOnlyKey(const std::string& archPath, const std::string& graphPath, const std::string& inputsDir = "");

/// After the study: Plan writes the job list (its path and how to run it go to stderr) and
/// returns 0; Merge names every point without a result on stderr and returns 4 if there are
/// any, else `studyExit`; Serial returns `studyExit`.
int finishPointMode(int studyExit, const std::string& self);

}  // namespace stepgen
