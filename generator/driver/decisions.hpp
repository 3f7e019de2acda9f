#pragma once
// The fabric's arbitration decisions (the harness's decision log, sim/harness/decision_log.hpp)
// as the model's merge orders, so `stepgen verify` can replay them: where the fabric decides
// by arrival order (an EagerMerge on a compute unit, e.g. the dynamic dispatch's free-region
// choice) a near tie may go the other way than in the model, and both are correct.
#include <cstdint>
#include <filesystem>

#include "driver/pipeline.hpp"
#include "ir/tokens.hpp"

namespace stepgen {

/// The RTL's merge orders read from the decision log `csv` (header cycle,section,unit,input):
/// per EagerMerge op, the input of each data tile in the order the unit took them. A line
/// belongs to the EagerMerge mapped on its unit in its section's context (input p = port
/// in<p>, as the model's CuMerge). Errors: std::runtime_error naming the file and line for
/// a missing file, a malformed line, or a decision on a unit that holds no EagerMerge there.
MergeOrders readRtlMergeOrders(const CompileResult& c, const std::filesystem::path& csv);

/// Decisions of `rtl` that differ from `model`: per op, the positions whose inputs differ,
/// plus the decisions only one of them has. 0 when equal.
int64_t differingDecisions(const MergeOrders& model, const MergeOrders& rtl);

/// All decisions in `orders` (data tiles merged by every EagerMerge).
int64_t decisionCount(const MergeOrders& orders);

}  // namespace stepgen
