#pragma once
// The harness side of the compute units' decision log (sg_cu.sv, SG_DECISION_LOG): every
// arbitration decision of an EagerMerge, as the fabric made it, one CSV line each:
//   cycle,section,unit,input
// cycle counts from `start` (cycle 0), section is dbg_section at that cycle, unit the
// compute unit's instance name (e.g. u_cu_x1_y0) and input the port whose tile goes next
// (0 or 1). `stepgen verify` maps the lines back to the graph's EagerMerge ops and replays
// them in the model (driver/decisions.hpp).
#include <cstdint>
#include <cstdio>
#include <filesystem>

namespace stepgen::harness {

/// Where sg_decision writes: the file (nullptr = no log asked for) and the current cycle and
/// section, which the harness updates every cycle before the rising edge.
struct DecisionLog {
  std::FILE* file = nullptr;
  uint64_t cycle = 0;
  unsigned section = 0;
  /// Opens `path` with the CSV header ("" = no log). Throws std::runtime_error if it cannot.
  void open(const std::filesystem::path& path);
  void close();
};

/// The one log of this process (sg_decision is a C function without a context argument).
DecisionLog& decisionLog();

}  // namespace stepgen::harness
