#pragma once
// Cycle-approximate timing of a configured fabric (docs/step_semantics.md#timing,
// docs/hardware.md s.2). Works on whole tiles: every link moves a tile as a transfer with a
// start and an end cycle at the producer and at each consumer, decoupled by the consumer's
// input FIFO of link.fifo_depth beats; each unit model (one per RTL behaviour, chosen from
// the unit's configuration fields, generator/model/timing/) says when it can take a tile,
// when it can offer one, and how long a transfer takes at its end. DRAM pieces are
// scheduled on the arch's channels (latency, initiation interval, start-up).
#include <cstdint>
#include <string>
#include <vector>

#include "arch/arch_model.hpp"
#include "arch/config_layout.hpp"
#include "bitstream/config_image.hpp"
#include "ir/graph.hpp"
#include "map/mapping.hpp"
#include "ir/tokens.hpp"

namespace stepgen {

/// Timing result. `deadlock` lists the stuck links as "stream (producer -> consumer) at
/// token i of n" when no unit can make progress before every stream has ended.
struct TimingResult {
  int64_t cycles = 0;            ///< cycles from start to the last write completing
  int64_t offchipReadBytes = 0;  ///< bytes
  int64_t offchipWriteBytes = 0; ///< bytes
  bool deadlock = false;
  std::vector<std::string> stuck;
  std::vector<int64_t> sectionStart;  ///< per section: its first cycle (the barrier's release)
  int64_t reloadWords = 0;            ///< configuration words written while running (one per cycle)
  int64_t reloadExposedCycles = 0;    ///< cycles a finished section waited for the next one's words
  /// DRAM requests that came more than DramChannel::kWindow cycles behind the latest one and
  /// were served from the window's floor (docs/step_semantics.md#timing-only: a load whose
  /// consumer idles that long; its data is not needed earlier); 0 on every graph of fewer
  /// than 2^21 cycles.
  int64_t dramLate = 0;
  /// Per EagerMerge on a compute unit: the order in which the unit, as timed, would take its
  /// inputs' tiles (sg_cu.sv merge arbitration replayed on the tiles' arrival cycles). When
  /// it differs from the order the streams were computed with, runModel runs again with it.
  /// In a deadlock: the decisions the unit could make before it stopped, for the merges
  /// whose timed decisions differ from the order assumed (`mergeOrderRevised`).
  MergeOrders mergeOrders;
  /// A deadlock that came from an assumed merge order the timing contradicts: runModel
  /// tries again with the decisions in `mergeOrders` before it reports the deadlock.
  bool mergeOrderRevised = false;
  /// The most cycles one unit computes one tile while no beat need move on any link (a
  /// matmul's passes x K, sg_cu.sv): an RTL run's watchdog must wait longer than this before
  /// it calls a stall a deadlock (verify waits at least twice this).
  int64_t longestCompute = 0;
};

/// Cycles from the end of a section (every unit idle, every DRAM write complete) to the
/// `start`-equivalent cycle of the next one: the barrier opens at the edge after that
/// cycle, the units enter INIT one cycle later (rtl_templates/sg_sec_seq.sv).
constexpr int64_t kSectionSwitch = 1;

/// Estimates cycles for the fabric configured by `img` (built by buildConfig for mapping `m`
/// of graph `g`), whose streams `streams` (indexed by StreamId) came from runFunctional:
/// each enabled unit runs the unit model its configuration fields select. Sections run one
/// after the other, each timed alone from its start (kSectionSwitch after the previous
/// one's end). Never hangs: returns deadlock = true when stuck (and stops at that section).
/// `orders`: the merge orders the streams were computed with (runFunctional's).
TimingResult estimateTiming(const StepGraph& g, const Mapping& m, const ArchModel& a, const ConfigLayout& layout,
                            const ConfigImage& img, const std::vector<TokenStream>& streams,
                            const MergeOrders& orders = {});

}  // namespace stepgen
