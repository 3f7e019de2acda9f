// CuParallelize: rtl_templates/sg_cu.sv func parallelize, one output of Parallelize(n) (one
// CU per output, the input broadcast to all): every input tile is taken; a tile of this
// output's elements passes as in CuStream, any other is dropped at one beat per cycle
// without waiting for the output. func partition adds the selector on in1: element j's
// selector is taken once element j-1 has been taken, and the element only after it. The
// data DONE leaves as the output DONE without waiting for the selector; a longer (fed-back)
// selector's spares and its DONE are then drained, one per cycle.
#include <algorithm>

#include "model/timing/units.hpp"

namespace stepgen::timing {

bool CuParallelize::step(TimingModel& m) {
  Link& l = m.links[size_t(in[0].first)];
  Link& o = m.links[size_t(out)];
  const size_t c = size_t(in[0].second);
  bool progress = false;
  // Partition: selector tile j once data element j-1 is taken (a first spare likewise, once
  // the last element is taken). The rest wait for the data DONE, taken in cycle dd: the
  // selector DONE goes with it if it is there by then, the drain takes the other spares
  // from dd + 1; the link takes them one per cycle (each the cycle after the one before).
  while (partition && nextSel < m.links[size_t(in[1].first)].size()) {
    Link& s = m.links[size_t(in[1].first)];
    const size_t j = nextSel, d = afterData[j];
    int64_t t = 1;
    if (s.kinds[j] == Kind::Done || j >= drainFrom) {
      const int64_t dd = inStart(m, 0, l.size() - 1);
      if (dd == kUnknown) break;
      t = s.kinds[j] == Kind::Done ? dd : dd + 1;
    } else if (d != SIZE_MAX) {
      t = inEnd(m, 0, d);
      if (t == kUnknown) break;
    }
    s.accept[size_t(in[1].second)][j] = t;
    ++nextSel, progress = true;
  }
  while (nextAccept < l.size()) {
    const size_t i = nextAccept;
    int64_t t = 1;
    if (outOf[i] > 0) {
      if (o.end[size_t(outOf[i]) - 1] == kUnknown) break;
      t = o.end[size_t(outOf[i]) - 1] - 1;
    }
    // (The data DONE needs only the output register: it does not wait for the selector.)
    if (partition && selOf[i] != SIZE_MAX) {  // the element opens the cycle after its selector
      const int64_t se = inEnd(m, 1, selOf[i]);
      if (se == kUnknown) break;
      t = std::max(t, se);
    }
    l.accept[c][i] = t;
    ++nextAccept, progress = true;
  }
  // Taken in c, in the output register in c+1, at the head of the next unit's FIFO in c+2;
  // the input beat is let go once the output beat has left the register.
  for (; nextOffer < l.size() && inStart(m, 0, nextOffer) != kUnknown; ++nextOffer, progress = true)
    if (outOf[nextOffer] >= 0) o.offer[size_t(outOf[nextOffer])] = inStart(m, 0, nextOffer) + kHop + kOutHop;
  while (nextHold < l.size()) {
    const size_t i = nextHold;
    int64_t e = kUnknown;
    if (outOf[i] < 0) {
      const int64_t s = inStart(m, 0, i);
      if (s != kUnknown) e = s + l.beats[i];
    } else {
      e = keptHold(m, size_t(outOf[i]));
    }
    if (e == kUnknown) break;
    l.hold[c][i] = e;
    ++nextHold, progress = true;
  }
  return progress;
}

// A passed tile's beat k enters the output register once beat k-1 has left it (valid/ready),
// not once beat k itself has left: the register holds a beat more than the FIFOs. Where the
// next unit's FIFO is full, beat k-1 leaves the cycle after that unit took a beat, since
// sg_fifo's ready is registered (outRoom's + 1). A Parallelize whose outputs meet again at a Zip
// depends on it, beat by beat: output 0's tile i must get out of the way while output 1's
// tile i+1 comes behind it in the Broadcast (tests/data/graphs/parallelize_reconverge.yaml).
// Unstalled, the last beat's hold is the tile's natural end less the two hops, as before.
int64_t CuParallelize::keptHold(TimingModel& m, size_t j) const {
  const Link& o = m.links[size_t(out)];
  if (o.nextNat <= j) return kUnknown;
  const int64_t prev = outRoom(m, j, o.beats[j] - 2);
  return prev == kUnknown ? kUnknown : std::max(o.natEnd[j] - 1 - kOutHop, prev);
}

int64_t CuParallelize::outRoom(const TimingModel& m, size_t j, int64_t b) const {
  const Link& o = m.links[size_t(out)];
  const int64_t r = m.roomFor(o, o.first[j] + b, j);
  return r == kUnknown ? kUnknown : r + 1;
}

int64_t CuParallelize::beatTaken(const TimingModel& m, int port, size_t i, int64_t k) const {
  if (port != 0 || outOf[i] < 0) return kUnknown;  // a dropped tile: the link's hold
  const int64_t s = inStart(m, 0, i);
  if (s == kUnknown) return kUnknown;
  const int64_t t = std::max(s + k, m.beatAt(size_t(in[0].first), i, k)) + 1;
  if (k == 0) return t;
  const int64_t p = outBeat(m, size_t(outOf[i]), k - 1);
  return p == kUnknown ? kUnknown : std::max(t, p);
}

int64_t CuParallelize::outBeat(const TimingModel& m, size_t j, int64_t b) const {
  const Link& o = m.links[size_t(out)];
  if (o.start[j] == kUnknown) return kUnknown;
  const int64_t r = outRoom(m, j, b);
  return r == kUnknown ? kUnknown : std::max({o.start[j] + b * o.interval, beatVisible(m, j, b), r});
}

int64_t CuParallelize::beatVisible(const TimingModel& m, size_t j, int64_t k) const {
  const size_t li = size_t(in[0].first);
  return m.links[li].start[inOf[j]] == kUnknown ? kUnknown : m.beatAt(li, inOf[j], k) + kHop + kOutHop;
}

int64_t CuParallelize::endFor(TimingModel& m, size_t j, int64_t start) {
  return afterInput(start + m.links[size_t(out)].beats[j], m.links[size_t(in[0].first)].natEnd[inOf[j]]);
}

}  // namespace stepgen::timing
