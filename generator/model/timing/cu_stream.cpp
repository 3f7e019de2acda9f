// CuStream: rtl_templates/sg_cu.sv funcs silu, exp, recip, mul, add, sub, rowscale and scan: a beat in, a
// beat out, one per cycle, inputs in lockstep, one register stage; rowmax and rowsum: the
// same behind log2(W) tree stages, each row's beats out once its last beat is in.
// docs/hardware.md s.2.
#include <algorithm>

#include "model/timing/units.hpp"

namespace stepgen::timing {

bool CuStream::step(TimingModel& m) {
  Link& o = m.links[size_t(out)];
  bool progress = false;
  while (nextAccept < o.size()) {
    const size_t i = nextAccept;
    int64_t t = 1;
    if (i > 0) {
      if (o.end[i - 1] == kUnknown) break;
      // A DATA tile's first beat follows the last one of the DATA tile before at once; a
      // STOP or DONE waits until that tile's rows have left, less its own latency
      // (rowBeats = 1: both at once).
      t = o.end[i - 1] - latency(o, o.kinds[i] == Kind::Data ? i - 1 : i) - kOutHop;
    }
    bool ready = true;
    for (auto [li, c] : in) ready = ready && m.links[size_t(li)].offer[i] != kUnknown, t = std::max(t, m.links[size_t(li)].offer[i]);
    if (!ready) break;
    for (auto [li, c] : in) m.links[size_t(li)].accept[size_t(c)][i] = t;
    ++nextAccept, progress = true;
  }
  while (nextOffer < o.size()) {
    const size_t i = nextOffer;
    int64_t t = 0;
    bool ready = true;
    for (size_t p = 0; p < in.size(); ++p) {
      const int64_t s = inStart(m, int(p), i);
      ready = ready && s != kUnknown, t = std::max(t, s);
    }
    // rowmax / rowsum emit a row once its rowBeats beats are in. When the input is
    // Broadcast, beat rowBeats - 1 leaves the producer only once every other consumer has
    // room for it: a consumer whose FIFO and chain absorb fewer beats must have started
    // taking this tile (if it waits for this unit's output, that never happens: the RTL
    // deadlocks, and so does the model).
    if (ready && o.kinds[i] == Kind::Data && rowBeats > 1) {
      const Link& l = m.links[size_t(in[0].first)];
      for (size_t c = 0; c < l.cons.size(); ++c) {
        if (int(c) == in[0].second) continue;
        const int64_t lead = rowBeats - 1 - l.chain[c];
        if (lead <= 0) continue;
        if (l.cstart[c][i] == kUnknown) {
          ready = false;
          break;
        }
        t = std::max(t, l.cstart[c][i] + lead);
      }
    }
    if (!ready) break;
    o.offer[i] = t + latency(o, i) + kOutHop;
    ++nextOffer, progress = true;
  }
  for (; nextHold < o.nextEnd; ++nextHold, progress = true)
    for (auto [li, c] : in) m.links[size_t(li)].hold[size_t(c)][nextHold] = o.end[nextHold] - latency(o, nextHold) - kOutHop;
  return progress;
}

bool CuStream::unstall(TimingModel& m) {
  const Link& o = m.links[size_t(out)];
  const size_t i = nextHold;
  if (rowBeats <= 1 || i >= o.size() || o.kinds[i] != Kind::Data || o.beats[i] > rowBeats) return false;
  if (i > 0 && o.end[i - 1] == kUnknown) return false;
  for (auto [li, c] : in)
    if (m.links[size_t(li)].cstart[size_t(c)][i] == kUnknown) return false;
  // The tile's beats are taken one per `rate`, not before the tile before it has left.
  const int64_t after = i > 0 ? o.end[i - 1] - latency(o, i - 1) - kOutHop : 0;
  for (auto [li, c] : in) {
    Link& l = m.links[size_t(li)];
    l.hold[size_t(c)][i] = std::max(after, l.cstart[size_t(c)][i] + l.beats[i] * l.rate[size_t(c)]);
  }
  ++nextHold;
  return true;
}

int64_t CuStream::beatVisible(const TimingModel& m, size_t i, int64_t k) const {
  int64_t t = kUnknown;
  for (auto [li, c] : in)
    if (m.links[size_t(li)].start[i] != kUnknown) t = std::max(t, m.beatAt(size_t(li), i, k) + latency(m.links[size_t(out)], i) + kOutHop);
  return t;
}

int64_t CuStream::endFor(TimingModel& m, size_t i, int64_t start) {
  const Link& o = m.links[size_t(out)];
  int64_t e = start + o.beats[i];
  if (o.kinds[i] == Kind::Data) e += o.beats[i] / rowscaleRowBeats * rowscaleDrops;
  for (auto [li, c] : in) {
    const int64_t n = m.links[size_t(li)].natEnd[i];
    e = afterInput(e, n == kUnknown ? n : n + latency(o, i) + kOutHop - 1);
  }
  return e;
}

}  // namespace stepgen::timing
