#pragma once
// VerifyOptions and VerifyReport as JSON: a study point run as a job (jobs/point_jobs.hpp)
// is its VerifyOptions in the job list and its VerifyReport in the job's result file, and a
// study merged from those results writes the same tables as one run serially. The report
// leaves out the output tensors (they stay in the point's output folder as .npy).
#include <nlohmann/json.hpp>

#include "driver/pipeline.hpp"
#include "support/diag.hpp"

namespace stepgen {

/// Every field of `o` (paths as given, relative to the job list's working folder).
nlohmann::json verifyOptionsJson(const VerifyOptions& o);
/// The inverse of verifyOptionsJson. Throws std::runtime_error naming `what` and the field
/// for a missing or mistyped field.
VerifyOptions verifyOptionsFromJson(const nlohmann::json& j, const std::string& what);

/// Every field of `m` but its output tensors, and back (outputs empty). modelResultFromJson
/// throws nlohmann::json::exception for a malformed document.
nlohmann::json modelResultJson(const ModelResult& m);
ModelResult modelResultFromJson(const nlohmann::json& j);

/// Every field of `r` but the tensors of `r.model.outputs` and `r.replay->outputs`.
nlohmann::json verifyReportJson(const VerifyReport& r);
/// The inverse of verifyReportJson (outputs empty). Throws std::runtime_error naming `what`
/// for a malformed document.
VerifyReport verifyReportFromJson(const nlohmann::json& j, const std::string& what);

/// A point's DiagError as JSON (id, file, line, col, message; notes are left out) and back.
nlohmann::json diagErrorJson(const DiagError& e);
DiagError diagErrorFromJson(const nlohmann::json& a);

}  // namespace stepgen
