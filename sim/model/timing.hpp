#pragma once
// Cycle-approximate timing of a mapped graph (step.md section 3, docs/hardware.md s.2).
// Works on whole tiles: every link moves a tile as a transfer with a start and an end
// cycle; each unit model (one per RTL template) says when it can accept a tile, when it
// can offer one, and how long a transfer takes at its end. DRAM pieces are scheduled on
// the arch's channels (latency, initiation interval, start-up).
#include <cstdint>
#include <string>
#include <vector>

#include "arch/arch_model.hpp"
#include "ir/graph.hpp"
#include "map/mapping.hpp"
#include "model/tokens.hpp"

namespace stepgen {

/// Timing result. `deadlock` lists the stuck links as "stream (producer -> consumer) at
/// token i of n" when no unit can make progress before every stream has ended.
struct TimingResult {
  int64_t cycles = 0;            ///< cycles from start to the last write completing
  int64_t offchipReadBytes = 0;  ///< bytes
  int64_t offchipWriteBytes = 0; ///< bytes
  bool deadlock = false;
  std::vector<std::string> stuck;
};

/// Estimates cycles for the mapped graph whose streams `streams` (indexed by StreamId)
/// came from runFunctional. Never hangs: returns deadlock = true when stuck.
TimingResult estimateTiming(const StepGraph& g, const Mapping& m, const ArchModel& a,
                            const std::vector<TokenStream>& streams);

}  // namespace stepgen
