// CuSelect: rtl_templates/sg_cu.sv func select, the Map(select) of a feedback cycle that
// turns each finished tile into a one-beat "region free" selector row. Its first `initial`
// out tiles need no input (the cycle's initial tokens); then every input DATA tile ends in
// one out tile when its last beat is taken (the beats before it and STOPs are dropped as
// they come, without waiting for the output); the DONE passes.
#include <algorithm>

#include "model/timing/units.hpp"

namespace stepgen::timing {

namespace {
/// The unit's first RUN cycle in engine cycles (as CuStream's first take): the first
/// initial row enters the output register then and is valid one cycle later.
constexpr int64_t kFirstRun = 1;
}  // namespace

bool CuSelect::step(TimingModel& m) {
  Link& l = m.links[size_t(in[0].first)];
  Link& o = m.links[size_t(out)];
  const size_t c = size_t(in[0].second);
  const size_t init = size_t(initial);
  bool progress = false;
  // in0 waits until the last initial row is in the output register: that row enters it in
  // the cycle before it is valid, at the earliest, and once the row before it has left.
  int64_t gate = init > 0 ? kFirstRun + kHop : kFirstRun;
  if (init > 1) gate = o.end[init - 2] == kUnknown ? kUnknown : std::max(gate, o.end[init - 2]);
  while (gate != kUnknown && nextAccept < l.size()) {
    const size_t i = nextAccept;
    int64_t t = gate;
    // The DONE needs the output register (the row before it must have left); a DATA tile's
    // last beat waits for it too, which its hold (below) accounts for.
    if (l.kinds[i] == Kind::Done && outOf[i] > 0) {
      if (o.end[size_t(outOf[i]) - 1] == kUnknown) break;
      t = std::max(t, o.end[size_t(outOf[i]) - 1] - 1);
    }
    l.accept[c][i] = t;
    ++nextAccept, progress = true;
  }
  // Initial rows are offered from the first RUN cycle (the link sends them one per cycle);
  // an input tile's row the cycle after its last beat can be taken: its beats come one per
  // cycle from its first, and the last not before the producer can send it.
  for (; nextOffer < o.size(); ++nextOffer, progress = true) {
    const size_t j = nextOffer;
    if (j < init) {
      o.offer[j] = kFirstRun + kHop + kOutHop;
      continue;
    }
    const int64_t s = inStart(m, 0, inOf[j]), n = l.natEnd[inOf[j]];
    if (s == kUnknown || n == kUnknown) break;
    o.offer[j] = std::max(s + l.beats[inOf[j]], n) - 1 + kHop + kOutHop;
  }
  // A STOP is let go of after its one beat; a tile when its row leaves.
  while (nextHold < l.size()) {
    const size_t i = nextHold;
    int64_t e = kUnknown;
    if (outOf[i] < 0) {
      const int64_t s = inStart(m, 0, i);
      if (s != kUnknown) e = s + l.beats[i];
    } else if (o.end[size_t(outOf[i])] != kUnknown) {
      e = o.end[size_t(outOf[i])] - 1;
    }
    if (e == kUnknown) break;
    l.hold[c][i] = e;
    ++nextHold, progress = true;
  }
  return progress;
}

int64_t CuSelect::endFor(TimingModel& m, size_t j, int64_t start) {
  if (j < size_t(initial)) return start + 1;
  return afterInput(start + 1, m.links[size_t(in[0].first)].natEnd[inOf[j]]);
}

}  // namespace stepgen::timing
