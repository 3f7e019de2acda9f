// CuParallelize: rtl_templates/sg_cu.sv func parallelize, one output of Parallelize(n) (one
// CU per output, the input broadcast to all): every input tile is taken; a tile of this
// output's elements passes as in CuStream, any other is dropped at one beat per cycle
// without waiting for the output.
#include <algorithm>

#include "model/timing/units.hpp"

namespace stepgen::timing {

bool CuParallelize::step(TimingModel& m) {
  Link& l = m.links[size_t(in[0].first)];
  Link& o = m.links[size_t(out)];
  const size_t c = size_t(in[0].second);
  bool progress = false;
  while (nextAccept < l.size()) {
    const size_t i = nextAccept;
    int64_t t = 1;
    if (outOf[i] > 0) {
      if (o.end[size_t(outOf[i]) - 1] == kUnknown) break;
      t = o.end[size_t(outOf[i]) - 1] - 1;
    }
    l.accept[c][i] = t;
    ++nextAccept, progress = true;
  }
  for (; nextOffer < l.size() && inStart(m, 0, nextOffer) != kUnknown; ++nextOffer, progress = true)
    if (outOf[nextOffer] >= 0) o.offer[size_t(outOf[nextOffer])] = inStart(m, 0, nextOffer) + kHop;
  while (nextHold < l.size()) {
    const size_t i = nextHold;
    const int64_t s = inStart(m, 0, i);
    const int64_t e = outOf[i] < 0 ? (s == kUnknown ? kUnknown : s + l.beats[i])
                                   : (o.end[size_t(outOf[i])] == kUnknown ? kUnknown : o.end[size_t(outOf[i])] - 1);
    if (e == kUnknown) break;
    l.hold[c][i] = e;
    ++nextHold, progress = true;
  }
  return progress;
}

int64_t CuParallelize::endFor(TimingModel& m, size_t j, int64_t start) {
  return afterInput(start + m.links[size_t(out)].beats[j], m.links[size_t(in[0].first)].natEnd[inOf[j]]);
}

}  // namespace stepgen::timing
