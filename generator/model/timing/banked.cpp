// Banked: rtl_templates/sg_cu.sv funcs accum and retile, and rtl_templates/sg_mu.sv buffer
// mode (Bufferize + Streamify, RepeatStatic): tiles collect into one of two banks; the tile
// that closes a group (stop >= b, or DONE) makes its bank drain as the group's out tiles
// at `rate` cycles per beat while the other bank fills. docs/hardware.md section 2.
// Accum(rescale_add) reads a second input (the scale tiles) in lockstep with the first.
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
    if (in.size() > 1) {  // lockstep: each input waits for the other's tile
      bool ready = true;
      for (auto [li, c] : in) ready = ready && m.links[size_t(li)].offer[i] != kUnknown, t = std::max(t, m.links[size_t(li)].offer[i]);
      if (!ready) break;
    }
    for (auto [li, c] : in) m.links[size_t(li)].accept[size_t(c)][i] = t;
    ++nextAccept, progress = true;
  }
  while (nextOffer < o.size()) {
    const size_t j = nextOffer;
    int64_t e = 0;
    for (size_t p = 0; p < in.size() && e != kUnknown; ++p) {
      const int64_t ep = inEnd(m, int(p), closer[size_t(outGroupOf[j])]);
      e = ep == kUnknown ? kUnknown : std::max(e, ep);
    }
    if (e == kUnknown) break;
    o.offer[j] = e + kHop;
    ++nextOffer, progress = true;
  }
  return progress;
}

int64_t Banked::endFor(TimingModel& m, size_t i, int64_t start) { return start + m.links[size_t(out)].beats[i] * rate; }

}  // namespace stepgen::timing
