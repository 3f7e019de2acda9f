// Banked: rtl_templates/sg_cu.sv funcs accum and retile, and rtl_templates/sg_mu.sv buffer
// mode (Bufferize + Streamify, RepeatStatic): tiles collect into one of two banks; the tile
// that closes a group (stop >= b, or DONE) makes its bank drain as the group's out tiles
// at `rate` cycles per beat while the other bank fills. docs/hardware.md section 2.
#include <algorithm>

#include "model/timing/units.hpp"

namespace stepgen::timing {

int64_t Banked::groupFree(TimingModel& m, int k) const {  // bank k%2 is free once group k-2 left
  if (k < 2) return 1;
  if (outCount[size_t(k - 2)] == 0) return inEnd(m, 0, closer[size_t(k - 2)]);
  return m.links[size_t(out)].end[firstOut[size_t(k - 2)] + outCount[size_t(k - 2)] - 1];
}

bool Banked::step(TimingModel& m) {
  Link& l = m.links[size_t(in[0].first)];
  Link& o = m.links[size_t(out)];
  bool progress = false;
  while (nextAccept < l.size()) {
    const size_t i = nextAccept;
    int64_t t = 1;
    if (i == 0 || group[i] != group[i - 1]) {
      const int64_t f = groupFree(m, group[i]);
      if (f == kUnknown) break;
      t = std::max(t, f);
    }
    l.accept[size_t(in[0].second)][i] = t;
    ++nextAccept, progress = true;
  }
  while (nextOffer < o.size()) {
    const size_t j = nextOffer;
    const int64_t e = inEnd(m, 0, closer[size_t(outGroupOf[j])]);
    if (e == kUnknown) break;
    o.offer[j] = e + kHop;
    ++nextOffer, progress = true;
  }
  return progress;
}

int64_t Banked::endFor(TimingModel& m, size_t i, int64_t start) { return start + m.links[size_t(out)].beats[i] * rate; }

}  // namespace stepgen::timing
