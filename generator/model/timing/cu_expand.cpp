// CuExpand: rtl_templates/sg_cu.sv func expand (Expand(b)). in0 = data elements, in1 = ref;
// out tile j is ref tile j's copy of its data element (or the ref's STOP / DONE), so the
// ref streams to the output as in CuStream. A ref tile of group k waits for data element
// k: a tile is held from the cycle after its last beat; a STOP or DONE must be at in0's
// head and is taken in the cycle of the ref tile that uses it up. Data tile k+1 loads from
// the cycle the ref tile closing group k is consumed. (The RTL, too, takes no ref beat
// before the data tile is held.)
#include <algorithm>

#include "model/timing/units.hpp"

namespace stepgen::timing {

int64_t CuExpand::freeFrom(TimingModel& m, size_t k) const {
  if (k == 0) return 1;
  const int64_t e = inEnd(m, 1, closer[k - 1]);
  return e == kUnknown ? kUnknown : e - 1;
}

bool CuExpand::step(TimingModel& m) {
  Link& d = m.links[size_t(in[0].first)];
  Link& r = m.links[size_t(in[1].first)];
  Link& o = m.links[size_t(out)];
  const size_t dc = size_t(in[0].second), rc = size_t(in[1].second);
  bool progress = false;
  while (nextData < d.size()) {
    const size_t k = nextData;
    const int64_t t = d.kinds[k] == Kind::Data ? freeFrom(m, k) : inStart(m, 1, closer[k]);
    if (t == kUnknown) break;
    d.accept[dc][k] = t;
    ++nextData, progress = true;
  }
  while (nextRef < r.size()) {
    const size_t j = nextRef, k = groupOf[j];
    int64_t t = 1;
    if (j > 0) {
      if (o.end[j - 1] == kUnknown) break;
      t = o.end[j - 1] - 1;
    }
    if (d.kinds[k] == Kind::Data) {  // the tile is held
      const int64_t e = inEnd(m, 0, k);
      if (e == kUnknown) break;
      t = std::max(t, e);
    } else {  // the STOP / DONE is at in0's head
      const int64_t f = freeFrom(m, k);
      if (f == kUnknown || d.offer[k] == kUnknown) break;
      t = std::max({t, f, d.offer[k]});
    }
    r.accept[rc][j] = t;
    ++nextRef, progress = true;
  }
  // A one-beat copy is its own last beat: it leaves with the ref tile's last beat.
  for (; nextOffer < o.size(); ++nextOffer, progress = true) {
    const size_t j = nextOffer;
    const int64_t s = inStart(m, 1, j), last = o.beats[j] == 1 && o.kinds[j] == Kind::Data ? lastBeat(m, j) : 0;
    if (s == kUnknown || last == kUnknown) break;
    o.offer[j] = std::max(s + kHop, last);
  }
  for (; nextHold < o.nextEnd; ++nextHold, progress = true) r.hold[rc][nextHold] = o.end[nextHold] - 1;
  return progress;
}

int64_t CuExpand::lastBeat(const TimingModel& m, size_t j) const {
  const int64_t n = m.links[size_t(in[1].first)].natEnd[j];
  return n == kUnknown ? kUnknown : n - 1 + kHop;
}

int64_t CuExpand::beatVisible(const TimingModel& m, size_t j, int64_t k) const {
  const Link& o = m.links[size_t(out)];
  return k + 1 == o.beats[j] && o.kinds[j] == Kind::Data ? lastBeat(m, j) : kUnknown;
}

int64_t CuExpand::endFor(TimingModel& m, size_t j, int64_t start) {
  return afterInput(start + m.links[size_t(out)].beats[j], m.links[size_t(in[1].first)].natEnd[j]);
}

}  // namespace stepgen::timing
