// Tile-level timing model. Each link token goes through: consumers publish `accept` (the
// earliest cycle they can take its first beat), the producer publishes `offer`; the link
// resolves start = max(offer, accepts) and the producer's natural end; consumers publish
// `hold` (when they let go of the last beat); end = max(natural end, holds). Unit models
// mirror the RTL templates of the same names (docs/hardware.md section 2).
#include "model/timing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

#include "common/dram.hpp"
#include "ir/attrs.hpp"

namespace stepgen {

namespace {

constexpr int64_t kUnknown = -1;
// Cycles from a DRAM response being available to the consumer taking that beat:
// response FIFO, AG output register, input FIFO (sg_ag.sv, sg_fifo.sv).
constexpr int64_t kRespToTake = 3;
// Cycles from a unit's output register to the consumer taking the beat (one FIFO hop).
constexpr int64_t kHop = 1;
// Extra cycles a matmul tile spends in the MAC array besides passes * K (start, write-back).
constexpr int64_t kMatmulOverhead = 2;

using Kind = Token::Kind;

struct Link {
  std::string name;
  int producer = -1;
  std::vector<int> cons;     // consumer unit indices
  std::vector<bool> streamingCons;
  std::vector<int64_t> rate; // cycles per beat at each consumer
  std::vector<int64_t> beats;
  std::vector<Kind> kinds;
  std::vector<int64_t> offer, start, natEnd, end;
  std::vector<std::vector<int64_t>> accept, hold;
  size_t nextStart = 0, nextEnd = 0;

  void init(const TokenStream& toks, int64_t wpb) {
    for (const Token& t : toks) beats.push_back(tokenBeats(t, wpb)), kinds.push_back(t.kind);
    size_t n = beats.size();
    offer.assign(n, kUnknown), start = offer, natEnd = offer, end = offer;
  }
  int addConsumer(int unit, bool streaming, int64_t r) {
    cons.push_back(unit), streamingCons.push_back(streaming), rate.push_back(r);
    accept.emplace_back(beats.size(), kUnknown), hold.emplace_back(beats.size(), kUnknown);
    return int(cons.size()) - 1;
  }
  size_t size() const { return beats.size(); }
};

class TimingModel;

struct Unit {
  std::string name;
  std::vector<std::pair<int, int>> in;  // (link, consumer slot) per input port
  int out = -1;
  int64_t doneAt = kUnknown;
  virtual ~Unit() = default;
  virtual bool step(TimingModel& m) = 0;
  // Producer side: when the last beat of out token i has left, given its start.
  virtual int64_t endFor(TimingModel& m, size_t i, int64_t start) = 0;
  // Consumer side: true if the unit sets the `hold` of the tokens it takes on input `port`
  // itself (it passes them on as they come); false: the link holds a token for beats x rate.
  virtual bool streams(int /*port*/) const { return false; }
};

class TimingModel {
 public:
  std::vector<Link> links;
  std::vector<std::unique_ptr<Unit>> units;
  const ArchModel& arch;
  std::vector<std::vector<int64_t>> nextSlot;  // per channel: union-find over II-cycle slots
  int64_t readBytes = 0, writeBytes = 0, lastWrite = 0;

  explicit TimingModel(const ArchModel& a) : arch(a), nextSlot(size_t(a.offchip.channels)) {}

  // Schedules a 64-byte piece issued at cycle t on the earliest free II-cycle slot of its
  // channel at or after t (slots are aligned to II; the RTL's channels run back to back
  // once busy, so this moves an idle-channel start by < II cycles). Returns the completion
  // cycle. Free slots are found with a union-find "next free slot" forest, so requests may
  // arrive in any order at O(alpha) cost.
  int64_t dramPiece(uint64_t addr, int64_t t) {
    auto& next = nextSlot[size_t(dramChannel(addr, int(nextSlot.size())))];
    const int64_t ii = arch.offchip.initiationInterval;
    int64_t slot = (std::max<int64_t>(t, arch.offchip.startup) + ii - 1) / ii;
    auto grow = [&](int64_t n) {
      while (int64_t(next.size()) <= n) next.push_back(int64_t(next.size()));
    };
    grow(slot + 1);
    int64_t root = slot;
    while (next[root] != root) {
      next[root] = next[next[root]];
      root = next[root];
      grow(root + 1);
    }
    next[root] = root + 1;
    return root * ii + arch.offchip.latency;
  }

  bool resolve(Link& l) {
    bool progress = false;
    while (l.nextStart < l.size()) {
      size_t i = l.nextStart;
      if (l.offer[i] == kUnknown || (i > 0 && l.end[i - 1] == kUnknown)) break;
      int64_t s = l.offer[i];
      if (i > 0) s = std::max(s, l.end[i - 1]);
      bool ready = true;
      for (auto& a : l.accept) ready = ready && a[i] != kUnknown, s = std::max(s, a[i]);
      if (!ready) break;
      l.start[i] = s;
      l.natEnd[i] = units[l.producer]->endFor(*this, i, s);
      for (size_t c = 0; c < l.cons.size(); ++c)
        if (!l.streamingCons[c]) l.hold[c][i] = s + l.beats[i] * l.rate[c];
      ++l.nextStart, progress = true;
    }
    while (l.nextEnd < l.nextStart) {
      size_t i = l.nextEnd;
      int64_t e = l.natEnd[i];
      bool ready = true;
      for (auto& h : l.hold) ready = ready && h[i] != kUnknown, e = std::max(e, h[i]);
      if (!ready) break;
      l.end[i] = e;
      ++l.nextEnd, progress = true;
    }
    return progress;
  }
};

// ---------------------------------------------------------------- AG (sg_ag.sv)
struct AgLoad : Unit {
  std::vector<std::vector<uint64_t>> tilePieces;  // per out token: piece addresses
  int64_t outstanding = 16, piecesPerBeat = 1;
  std::vector<int64_t> issue, pop;  // per beat (global index)
  std::vector<size_t> firstBeat;    // per token
  size_t nextOffer = 0;

  // Earliest cycle token i's first beat may issue (a random load waits for its address), or
  // kUnknown while that is not known yet.
  virtual int64_t earliestIssue(TimingModel&, size_t) { return 0; }

  void issueBeat(TimingModel& m, size_t g, size_t tok, size_t beatInTok, int64_t earliest = 0) {
    int64_t t = std::max(earliest, g == 0 ? int64_t(1) : issue[g - 1] + 1);
    if (int64_t(g) >= outstanding) t = std::max(t, pop[g - outstanding] + 1);
    issue[g] = t;
    int64_t done = t;
    for (int64_t k = 0; k < piecesPerBeat; ++k)
      done = std::max(done, m.dramPiece(tilePieces[tok][beatInTok * piecesPerBeat + k], t));
    m.readBytes += 64 * piecesPerBeat;
    pop[g] = done + kRespToTake;  // earliest; refined when the transfer starts
  }

  bool step(TimingModel& m) override {
    Link& l = m.links[out];
    bool progress = false;
    while (nextOffer < l.size()) {
      size_t i = nextOffer;
      if (i > 0 && l.start[i - 1] == kUnknown) break;
      size_t g = firstBeat[i];
      const int64_t earliest = earliestIssue(m, i);
      if (earliest == kUnknown) break;
      if (l.kinds[i] == Kind::Data) {
        issueBeat(m, g, i, 0, earliest);
        l.offer[i] = pop[g];
      } else {
        l.offer[i] = std::max(earliest + 1, g == 0 ? int64_t(1) : pop[g - 1] + 1);
      }
      ++nextOffer, progress = true;
    }
    if (doneAt == kUnknown && l.nextEnd == l.size()) doneAt = l.end.back(), progress = true;
    return progress;
  }

  int64_t endFor(TimingModel& m, size_t i, int64_t start) override {
    Link& l = m.links[out];
    size_t g0 = firstBeat[i];
    if (l.kinds[i] != Kind::Data) {
      pop[g0] = start;
      return start + 1;
    }
    for (int64_t b = 0; b < l.beats[i]; ++b) {
      size_t g = g0 + size_t(b);
      if (b > 0) issueBeat(m, g, i, size_t(b));
      pop[g] = std::max(pop[g], b == 0 ? start : pop[g - 1] + 1);
    }
    return pop[g0 + size_t(l.beats[i]) - 1] + 1;
  }
};

// RandomOffChipLoad of expert weights (sg_ag.sv per_group): in0 carries the route unit's
// meta groups (one link token per group); each group runs one walk of output tokens. The
// beats of a group are taken as they come, except its closing beat, which needs one of the
// two job-queue entries: group k closes once walk k-2 has been taken (its first issue - 1).
// A group closed in cycle a has its first request in a+2.
struct AgRandomLoad : AgLoad {
  std::vector<size_t> groupOf;     // per out token: the meta group it belongs to (DONE: the input DONE)
  std::vector<size_t> groupFirst;  // per meta group: its first out token, or SIZE_MAX if empty
  size_t nextAccept = 0, nextHold = 0;

  bool streams(int) const override { return true; }  // holds each group until it may close

  int64_t earliestIssue(TimingModel& m, size_t i) override {
    const Link& a = m.links[in[0].first];
    const size_t k = groupOf[i];
    if (a.end[k] == kUnknown) return kUnknown;
    bool first = i == 0 || groupOf[i - 1] != k;
    return first ? a.end[k] + 1 : 0;
  }

  bool step(TimingModel& m) override {
    Link& a = m.links[in[0].first];
    const int c = in[0].second;
    bool progress = false;
    while (nextAccept < a.size()) {
      size_t k = nextAccept;
      if (k > 0 && a.end[k - 1] == kUnknown) break;
      a.accept[c][k] = k == 0 ? 1 : a.end[k - 1];
      ++nextAccept, progress = true;
    }
    while (nextHold < a.size() && a.start[nextHold] != kUnknown) {
      size_t k = nextHold;
      int64_t h = a.start[k] + a.beats[k];
      if (k >= 2 && groupFirst[k - 2] != SIZE_MAX) {
        size_t g = firstBeat[groupFirst[k - 2]];
        if (issue[g] == 0) break;  // walk k-2 not taken yet
        h = std::max(h, issue[g]);
      }
      a.hold[c][k] = h;
      ++nextHold, progress = true;
    }
    return AgLoad::step(m) || progress;
  }
};

struct AgStore : Unit {
  std::vector<std::vector<uint64_t>> tilePieces;  // per in token (Data only)
  int64_t piecesPerBeat = 1;
  size_t nextAccept = 0, nextWrite = 0;

  bool step(TimingModel& m) override {
    Link& l = m.links[in[0].first];
    int c = in[0].second;
    bool progress = false;
    while (nextAccept < l.size()) {
      size_t i = nextAccept;
      if (i > 0 && l.end[i - 1] == kUnknown) break;
      l.accept[c][i] = i == 0 ? 1 : l.end[i - 1];
      ++nextAccept, progress = true;
    }
    while (nextWrite < l.nextStart) {
      size_t i = nextWrite;
      if (l.kinds[i] == Kind::Data)
        for (int64_t b = 0; b < l.beats[i]; ++b)
          for (int64_t k = 0; k < piecesPerBeat; ++k) {
            int64_t t = l.start[i] + b + 1;
            m.lastWrite = std::max(m.lastWrite, m.dramPiece(tilePieces[i][size_t(b * piecesPerBeat + k)], t));
            m.writeBytes += 64;
          }
      if (l.kinds[i] == Kind::Done) doneAt = l.start[i] + 1;
      ++nextWrite, progress = true;
    }
    return progress;
  }
  int64_t endFor(TimingModel&, size_t, int64_t start) override { return start; }
};

// ---------------------------------------------------------------- CU (sg_cu.sv)
struct CuMatmul : Unit {
  std::vector<int64_t> computeCycles;  // per in token: passes * K (dynamic tiles differ)
  std::vector<int64_t> computeEnd;
  size_t nextAccept = 0, nextCompute = 0, nextOffer = 0;

  bool step(TimingModel& m) override {
    Link& a = m.links[in[0].first];
    Link& b = m.links[in[1].first];
    Link& o = m.links[out];
    bool progress = false;
    computeEnd.resize(a.size(), kUnknown);
    while (nextAccept < a.size()) {  // bank i%2 is free once tile i-2 has been computed
      size_t i = nextAccept;
      int64_t t = 1;
      if (i >= 2) {
        if (computeEnd[i - 2] == kUnknown) break;
        t = computeEnd[i - 2];
      }
      a.accept[in[0].second][i] = t, b.accept[in[1].second][i] = t;
      ++nextAccept, progress = true;
    }
    while (nextCompute < a.size()) {
      size_t i = nextCompute;
      if (a.end[i] == kUnknown || b.end[i] == kUnknown) break;
      int64_t t = std::max(a.end[i], b.end[i]) + 1;
      if (i > 0) t = std::max(t, computeEnd[i - 1]);
      if (i >= 2) {
        if (o.end[i - 2] == kUnknown) break;  // output bank i%2 still draining
        t = std::max(t, o.end[i - 2]);
      }
      computeEnd[i] = t + (a.kinds[i] == Kind::Data ? computeCycles[i] + kMatmulOverhead : 1);
      ++nextCompute, progress = true;
    }
    while (nextOffer < nextCompute) {
      o.offer[nextOffer] = computeEnd[nextOffer] + kHop;
      ++nextOffer, progress = true;
    }
    if (doneAt == kUnknown && o.nextEnd == o.size()) doneAt = o.end.back(), progress = true;
    return progress;
  }
  int64_t endFor(TimingModel& m, size_t i, int64_t start) override { return start + m.links[out].beats[i]; }
};

// silu / mul / add: one beat per cycle, inputs in lockstep, one register stage.
struct CuStream : Unit {
  size_t nextAccept = 0, nextOffer = 0, nextHold = 0;

  bool step(TimingModel& m) override {
    Link& o = m.links[out];
    bool progress = false;
    while (nextAccept < o.size()) {
      size_t i = nextAccept;
      int64_t t = 1;
      if (i > 0) {
        if (o.end[i - 1] == kUnknown) break;
        t = o.end[i - 1] - 1;
      }
      bool ready = true;
      for (auto [li, c] : in) ready = ready && m.links[li].offer[i] != kUnknown, t = std::max(t, m.links[li].offer[i]);
      if (!ready) break;
      for (auto [li, c] : in) m.links[li].accept[c][i] = t;
      ++nextAccept, progress = true;
    }
    while (nextOffer < o.size()) {
      size_t i = nextOffer;
      int64_t t = 0;
      bool ready = true;
      for (auto [li, c] : in) ready = ready && m.links[li].start[i] != kUnknown, t = std::max(t, m.links[li].start[i]);
      if (!ready) break;
      o.offer[i] = t + kHop;
      ++nextOffer, progress = true;
    }
    while (nextHold < o.nextEnd) {
      for (auto [li, c] : in) m.links[li].hold[c][nextHold] = o.end[nextHold] - 1;
      ++nextHold, progress = true;
    }
    if (doneAt == kUnknown && o.nextEnd == o.size()) doneAt = o.end.back(), progress = true;
    return progress;
  }
  int64_t endFor(TimingModel& m, size_t i, int64_t start) override {
    int64_t e = start + m.links[out].beats[i];
    for (auto [li, c] : in) e = std::max(e, m.links[li].natEnd[i] + kHop);
    return e;
  }
  bool streams(int) const override { return true; }
};

// Expand (sg_cu.sv func 9): in0 = data elements, in1 = ref; out token j is ref token j's
// copy of its data element (or the ref's STOP / DONE), so the ref streams to the output as
// in CuStream (c -> c+1). A ref token of group k waits for data element k: a tile is held
// from the cycle after its last beat; a STOP or DONE must be at in0's head and is taken in
// the cycle of the ref token that uses it up. Data tile k+1 loads from the cycle the ref
// token closing group k is consumed. (The RTL drops a ref tile's beats before its last as
// they come, even before the data tile is held; the model waits: at most R-1 cycles late.)
struct CuExpand : Unit {
  std::vector<size_t> groupOf;  // per ref token: its data element (the ref DONE: the data DONE)
  std::vector<size_t> closer;   // per data element: the ref token that uses it up
  size_t nextData = 0, nextRef = 0, nextOffer = 0, nextHold = 0;

  // First cycle data element k may be taken: the one before it has been used up.
  int64_t freeFrom(TimingModel& m, size_t k) const {
    if (k == 0) return 1;
    const int64_t e = m.links[in[1].first].end[closer[k - 1]];
    return e == kUnknown ? kUnknown : e - 1;
  }

  bool step(TimingModel& m) override {
    Link& d = m.links[in[0].first];
    Link& r = m.links[in[1].first];
    Link& o = m.links[out];
    const int dc = in[0].second, rc = in[1].second;
    bool progress = false;
    while (nextData < d.size()) {
      const size_t k = nextData;
      int64_t t = d.kinds[k] == Kind::Data ? freeFrom(m, k) : r.start[closer[k]];
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
        if (d.end[k] == kUnknown) break;
        t = std::max(t, d.end[k]);
      } else {  // the STOP / DONE is at in0's head
        const int64_t f = freeFrom(m, k);
        if (f == kUnknown || d.offer[k] == kUnknown) break;
        t = std::max({t, f, d.offer[k]});
      }
      r.accept[rc][j] = t;
      ++nextRef, progress = true;
    }
    for (; nextOffer < o.size() && r.start[nextOffer] != kUnknown; ++nextOffer, progress = true)
      o.offer[nextOffer] = r.start[nextOffer] + kHop;
    for (; nextHold < o.nextEnd; ++nextHold, progress = true) r.hold[rc][nextHold] = o.end[nextHold] - 1;
    if (doneAt == kUnknown && o.nextEnd == o.size()) doneAt = o.end.back(), progress = true;
    return progress;
  }
  int64_t endFor(TimingModel& m, size_t j, int64_t start) override {
    return std::max(start + m.links[out].beats[j], m.links[in[1].first].natEnd[j] + kHop);
  }
  bool streams(int port) const override { return port == 1; }
};

// One output of Parallelize (sg_cu.sv func 10; one CU per output, the input broadcast to
// all): every input token is taken; a token of this output's elements passes as in
// CuStream (c -> c+1), any other is dropped at one beat per cycle without waiting for the
// output.
struct CuParallelize : Unit {
  int index = 0;               // this unit's output
  std::vector<int64_t> outOf;  // per in token: its out token, or -1 (dropped)
  std::vector<size_t> inOf;    // per out token: its in token
  size_t nextAccept = 0, nextOffer = 0, nextHold = 0;

  bool step(TimingModel& m) override {
    Link& l = m.links[in[0].first];
    Link& o = m.links[out];
    const int c = in[0].second;
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
    for (; nextOffer < l.size() && l.start[nextOffer] != kUnknown; ++nextOffer, progress = true)
      if (outOf[nextOffer] >= 0) o.offer[size_t(outOf[nextOffer])] = l.start[nextOffer] + kHop;
    while (nextHold < l.size()) {
      const size_t i = nextHold;
      const int64_t e = outOf[i] < 0 ? (l.start[i] == kUnknown ? kUnknown : l.start[i] + l.beats[i])
                                     : (o.end[size_t(outOf[i])] == kUnknown ? kUnknown : o.end[size_t(outOf[i])] - 1);
      if (e == kUnknown) break;
      l.hold[c][i] = e;
      ++nextHold, progress = true;
    }
    if (doneAt == kUnknown && o.nextEnd == o.size()) doneAt = o.end.back(), progress = true;
    return progress;
  }
  int64_t endFor(TimingModel& m, size_t j, int64_t start) override {
    return std::max(start + m.links[out].beats[j], m.links[in[0].first].natEnd[inOf[j]] + kHop);
  }
  bool streams(int) const override { return true; }
};

// Accum / retile, and the MU: tokens accumulate into one of two banks; a closing token
// makes the bank drain as `outPer[k]` output tokens, at `rate` cycles per beat.
struct Banked : Unit {
  std::vector<int> group;          // per in token: its group (bank use)
  std::vector<bool> closes;        // per in token: closes its group
  std::vector<size_t> firstOut;    // per group: first out token
  std::vector<size_t> outCount;    // per group: number of out tokens
  std::vector<size_t> closer;      // per group: closing in token
  int64_t rate = 1;
  size_t nextAccept = 0, nextOffer = 0;

  std::vector<int> outGroupOf;     // per out token: its group

  int64_t groupFree(TimingModel& m, int k) const {  // bank k%2 is free once group k-2 left
    if (k < 2) return 1;
    if (outCount[k - 2] == 0) return m.links[in[0].first].end[closer[k - 2]];
    return m.links[out].end[firstOut[k - 2] + outCount[k - 2] - 1];
  }

  bool step(TimingModel& m) override {
    Link& l = m.links[in[0].first];
    Link& o = m.links[out];
    bool progress = false;
    while (nextAccept < l.size()) {
      size_t i = nextAccept;
      int64_t t = 1;
      if (i == 0 || group[i] != group[i - 1]) {
        int64_t f = groupFree(m, group[i]);
        if (f == kUnknown) break;
        t = std::max(t, f);
      }
      l.accept[in[0].second][i] = t;
      ++nextAccept, progress = true;
    }
    while (nextOffer < o.size()) {
      size_t j = nextOffer;
      size_t ci = closer[outGroupOf[j]];
      if (l.end[ci] == kUnknown) break;
      o.offer[j] = l.end[ci] + kHop;
      ++nextOffer, progress = true;
    }
    if (doneAt == kUnknown && o.nextEnd == o.size()) doneAt = o.end.back(), progress = true;
    return progress;
  }

  int64_t endFor(TimingModel& m, size_t i, int64_t start) override { return start + m.links[out].beats[i] * rate; }
};

// DRAM pieces (64-byte addresses) of every Data token of an AG's stream. The walk's tiles
// are laid out one after the other and each token takes the next ceil(words*4/64) pieces,
// as the AG moves beats: one walk tile per token for loads and matching stores, a run of
// rows for a dynamic stream stored into a walk of rows. A SelectGen reads one 64-byte
// routing row per element.
// ---------------------------------------------------------------- MU route mode (sg_route.sv)
// Collects every token row (in0) and routing row (in1), one beat per cycle each; the first
// output beat is valid 3 cycles after the later DONE was accepted, then one beat per cycle.
struct MuRoute : Unit {
  size_t nextAccept[2] = {0, 0};
  bool offered = false;

  // Earliest cycle token i of port p may be taken besides the port's own order (kUnknown
  // while not known yet); the route unit takes both inputs freely.
  virtual int64_t waitFor(TimingModel&, size_t /*p*/, size_t /*i*/) { return 0; }

  bool step(TimingModel& m) override {
    bool progress = false;
    int64_t lastDone = 0;
    bool allIn = true;
    for (size_t p = 0; p < in.size(); ++p) {
      if (in[p].first < 0) continue;  // the meta twin has no port 0
      Link& l = m.links[in[p].first];
      while (nextAccept[p] < l.size()) {
        size_t i = nextAccept[p];
        if (i > 0 && l.end[i - 1] == kUnknown) break;
        const int64_t w = waitFor(m, p, i);
        if (w == kUnknown) break;
        l.accept[in[p].second][i] = std::max(w, i == 0 ? int64_t(1) : l.end[i - 1]);
        ++nextAccept[p], progress = true;
      }
      allIn = allIn && l.nextEnd == l.size();
      if (allIn) lastDone = std::max(lastDone, l.end.back());
    }
    Link& o = m.links[out];
    if (!offered && allIn) {
      for (size_t j = 0; j < o.size(); ++j) o.offer[j] = lastDone + 2;  // DONE accepted at end - 1, valid 3 later
      offered = true, progress = true;
    }
    if (doneAt == kUnknown && o.nextEnd == o.size()) doneAt = o.end.back(), progress = true;
    return progress;
  }
  int64_t endFor(TimingModel& m, size_t i, int64_t start) override { return start + m.links[out].beats[i]; }
};

// ---------------------------------------------------------------- MU combine mode (sg_combine.sv)
// Takes the meta entries (port 1) one beat per cycle whenever they come; the expert output
// rows (port 0) of group n only once group n's first meta entry is in; the first output
// beat is valid 3 cycles after the later DONE was accepted, then one beat per cycle.
struct MuCombine : MuRoute {
  std::vector<size_t> metaOf;  // per port-0 token: the port-1 token it waits for (SIZE_MAX: none)

  int64_t waitFor(TimingModel& m, size_t p, size_t i) override {
    if (p != 0 || metaOf[i] == SIZE_MAX) return 0;
    const int64_t s = m.links[in[1].first].start[metaOf[i]];
    return s == kUnknown ? kUnknown : s + 1;
  }
};

// The route unit's meta beats (sg_route.sv meta mode) as link tokens: one token per group
// (tile of the EagerMerge data output) with one beat per entry, then DONE.
TokenStream metaTokens(const TokenStream& merged, int64_t wpb) {
  TokenStream meta;
  for (const Token& t : merged) {
    if (t.kind == Kind::Data) meta.push_back(Token::tile(t.rows, wpb, {}, 1));
    if (t.kind == Kind::Done) meta.push_back(t);
  }
  return meta;
}

std::vector<std::vector<uint64_t>> walkPieces(const StepGraph& g, const Op& op, const TokenStream& toks) {
  const Tensor& t = g.tensors.at(*g.findTensor(attrString(op, "tensor")));
  int64_t cols = *t.shape.at(1).evaluate(g.symbols);
  std::vector<int64_t> tile, iter = attrIntList(g, op, "iter");
  std::vector<std::vector<int64_t>> strides;
  if (op.kind == OpKind::SelectGen) {
    tile = {1, kRoutingRowWords}, strides = {{1, 0}};
  } else {
    strides = attrIntMatrix(g, op, "strides");
    if (op.attrs.count("tile")) {
      tile = attrIntList(g, op, "tile");
    } else {  // a store without `tile`: the shape of its input tiles
      for (const Token& t : toks)
        if (t.kind == Kind::Data) tile = {t.rows, t.cols};
      if (tile.empty()) return std::vector<std::vector<uint64_t>>(toks.size());
    }
  }
  std::vector<uint64_t> flat;
  std::vector<int64_t> idx(iter.size(), 0);
  int64_t total = 1;
  for (int64_t n : iter) total *= n;
  const int64_t ppr = tile[1] * 4 / 64;
  for (int64_t e = 0; e < total; ++e) {
    int64_t base = t.baseAddress;
    for (size_t l = 0; l < idx.size(); ++l) base += idx[l] * (strides[l][0] * tile[0] * cols + strides[l][1] * tile[1]) * 4;
    for (int64_t r = 0; r < tile[0]; ++r)
      for (int64_t c = 0; c < ppr; ++c) flat.push_back(uint64_t(base + r * cols * 4 + c * 64));
    for (int l = int(idx.size()) - 1; l >= 0; --l) {
      if (++idx[l] < iter[size_t(l)]) break;
      idx[l] = 0;
    }
  }
  std::vector<std::vector<uint64_t>> out;
  size_t next = 0;
  for (const Token& tok : toks) {
    out.emplace_back();
    if (tok.kind != Kind::Data) continue;
    for (int64_t k = 0; k < (tok.words() * 4 + 63) / 64 && next < flat.size(); ++k) out.back().push_back(flat[next++]);
  }
  return out;
}

// Groups of a banked unit from its input and output token sequences.
void buildGroups(Banked& u, const TokenStream& in, const TokenStream& out, int b, bool accum) {
  int k = 0;
  size_t outPos = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    u.group.push_back(k);
    const Token& t = in[i];
    bool close = t.kind == Kind::Done || t.stop >= b;
    u.closes.push_back(close);
    if (!close) continue;
    // Count the out tokens this closing produced by walking the output in step.
    size_t n = 0;
    if (t.kind == Kind::Done) {
      n = 1;
    } else if (accum) {
      n = (outPos < out.size() && out[outPos].kind != Kind::Done) ? 1 : 0;
    } else {
      while (outPos + n < out.size() && out[outPos + n].kind != Kind::Done) {
        ++n;
        const Token& e = out[outPos + n - 1];
        if (e.kind == Kind::Stop || e.stop >= b + 1) break;  // last element of the last copy
      }
    }
    u.firstOut.push_back(outPos), u.outCount.push_back(n), u.closer.push_back(i);
    for (size_t j = 0; j < n; ++j) u.outGroupOf.push_back(k);
    outPos += n;
    ++k;
  }
}

// Data element of every ref token of an Expand(b) (a token with stop >= b uses it up; the
// ref DONE pairs with the data DONE), and the ref token that uses each element up.
void buildExpandGroups(CuExpand& u, const TokenStream& ref, int b, size_t dataTokens) {
  size_t k = 0;
  for (size_t j = 0; j < ref.size(); ++j) {
    u.groupOf.push_back(k);
    if (ref[j].kind == Kind::Done || ref[j].stop >= b) u.closer.push_back(j), ++k;
  }
  if (k != dataTokens) throw std::logic_error("internal error: Expand data and ref groups disagree");
}

// Which input tokens output `index` of Parallelize(n) passes: the outermost elements (closed
// by a stop >= the stream's rank, the largest stop in it, as the functional model counts)
// e with e mod n = index, and DONE.
void buildParallelOutput(CuParallelize& u, const TokenStream& in, size_t n, size_t outTokens) {
  int rank = 0;
  for (const Token& t : in)
    if (t.kind != Kind::Done) rank = std::max(rank, t.stop);
  size_t e = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool pass = in[i].kind == Kind::Done || e % n == size_t(u.index);
    u.outOf.push_back(pass ? int64_t(u.inOf.size()) : -1);
    if (pass) u.inOf.push_back(i);
    if (in[i].kind != Kind::Done && in[i].stop >= rank) ++e;
  }
  if (u.inOf.size() != outTokens) throw std::logic_error("internal error: Parallelize output tokens disagree");
}

// Output pieces of a RandomOffChipLoad: token j reads the tile named by address token j
// (AddrGen: tile a of the tensor in row-major tile order, tiles spanning whole rows).
std::vector<std::vector<uint64_t>> randomPieces(const StepGraph& g, const Op& op, const TokenStream& addr) {
  const Tensor& t = g.tensors.at(*g.findTensor(attrString(op, "tensor")));
  const int64_t cols = *t.shape.at(1).evaluate(g.symbols), rows = attrIntList(g, op, "tile").at(0);
  std::vector<std::vector<uint64_t>> out(addr.size());
  for (size_t j = 0; j < addr.size(); ++j) {
    if (addr[j].kind != Kind::Data) continue;
    const int64_t base = t.baseAddress + int64_t(addr[j].sel.at(0)) * rows * cols * 4;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols * 4 / 64; ++c) out[j].push_back(uint64_t(base + r * cols * 4 + c * 64));
  }
  return out;
}

// Meta group of every output token of a weight load: T tiles per group, DONE with the
// input's DONE (meta token `groups`).
void buildWalkGroups(AgRandomLoad& u, const TokenStream& out, int64_t T, size_t groups) {
  size_t data = 0;
  for (const Token& t : out) {
    if (t.kind == Kind::Done) u.groupOf.push_back(groups);
    else u.groupOf.push_back(t.kind == Kind::Data ? size_t(int64_t(data++) / T) : (data ? size_t(int64_t(data - 1) / T) : 0));
  }
  u.groupFirst.assign(groups + 1, SIZE_MAX);
  for (size_t j = out.size(); j-- > 0;) u.groupFirst[u.groupOf[j]] = j;
}

}  // namespace

TimingResult estimateTiming(const StepGraph& g, const Mapping& mp, const ArchModel& a,
                            const std::vector<TokenStream>& streams) {
  TimingModel m(a);
  const int64_t wpb = a.wordsPerBeat();
  const int64_t cpb = (a.linkBytes() + a.mu.bytesPerCycle - 1) / a.mu.bytesPerCycle;
  std::map<int, int> unitOf, linkOf;  // fabric unit -> timing unit / its output link
  std::map<int, int> opOf;            // fabric unit -> the op it runs
  std::set<int> metaUnits;            // route units in meta mode
  // Units, in op order (a route EagerMerge with a selector output also has its meta twin).
  for (size_t op = 0; op < g.ops.size(); ++op) {
    const OpPlacement& pl = mp.ops[op];
    if (pl.unit < 0) continue;
    const Op& o = g.ops[op];
    std::unique_ptr<Unit> u;
    if (o.kind == OpKind::LinearOffChipLoad || o.kind == OpKind::SelectGen) {
      auto x = std::make_unique<AgLoad>();
      x->outstanding = a.offchip.outstanding, x->piecesPerBeat = a.linkBytes() / 64;
      x->tilePieces = walkPieces(g, o, streams.at(o.outputs[0].v));
      u = std::move(x);
    } else if (o.kind == OpKind::RandomOffChipLoad) {
      auto x = std::make_unique<AgRandomLoad>();
      x->outstanding = a.offchip.outstanding, x->piecesPerBeat = a.linkBytes() / 64;
      x->tilePieces = randomPieces(g, o, streams.at(o.inputs[0].v));
      u = std::move(x);
    } else if (o.kind == OpKind::LinearOffChipStore) {
      auto x = std::make_unique<AgStore>();
      x->piecesPerBeat = a.linkBytes() / 64;
      x->tilePieces = walkPieces(g, o, streams.at(o.inputs[0].v));
      u = std::move(x);
    } else if (o.kind == OpKind::EagerMerge) {  // the host of a route cluster (map/clusters.hpp)
      u = std::make_unique<MuRoute>();
    } else if (o.kind == OpKind::Reassemble) {  // the host of a combine cluster
      u = std::make_unique<MuCombine>();
    } else if (o.kind == OpKind::Map && (attrString(o, "fn") == "matmul" || attrString(o, "fn") == "matmul_t")) {
      u = std::make_unique<CuMatmul>();
    } else if (o.kind == OpKind::Map || o.kind == OpKind::Scan) {  // Scan(add): c -> c+1 as well
      u = std::make_unique<CuStream>();
    } else if (o.kind == OpKind::Expand) {
      u = std::make_unique<CuExpand>();
    } else if (o.kind == OpKind::Parallelize) {  // output 0; outputs 1.. below
      u = std::make_unique<CuParallelize>();
    } else {
      u = std::make_unique<Banked>();
    }
    u->name = o.name;
    unitOf[pl.unit] = int(m.units.size()), opOf[pl.unit] = int(op);
    m.units.push_back(std::move(u));
    if (pl.auxUnit >= 0) {
      auto meta = std::make_unique<MuRoute>();
      meta->name = o.name + " (selector)";
      unitOf[pl.auxUnit] = int(m.units.size()), opOf[pl.auxUnit] = int(op);
      metaUnits.insert(pl.auxUnit);
      m.units.push_back(std::move(meta));
    }
    for (size_t k = 0; k < pl.extraUnits.size(); ++k) {  // Parallelize outputs 1..n-1
      auto x = std::make_unique<CuParallelize>();
      x->index = int(k) + 1;
      x->name = fmt::format("{} (output {})", o.name, k + 1);
      unitOf[pl.extraUnits[k]] = int(m.units.size()), opOf[pl.extraUnits[k]] = int(op);
      m.units.push_back(std::move(x));
    }
  }
  // One output link per producing unit, carrying the stream its consumers read (a meta
  // twin: its meta beats, one token per group).
  for (const Route& r : mp.routes) {
    if (linkOf.count(r.srcUnit)) continue;
    Link l;
    l.name = g.stream(r.stream).name;
    l.producer = unitOf.at(r.srcUnit);
    if (metaUnits.count(r.srcUnit)) l.init(metaTokens(streams.at(g.ops[opOf.at(r.srcUnit)].outputs[0].v), wpb), wpb);
    else l.init(streams.at(r.stream.v), wpb);
    linkOf[r.srcUnit] = int(m.links.size());
    m.units[l.producer]->out = int(m.links.size());
    m.links.push_back(std::move(l));
  }
  for (const Route& r : mp.routes) {
    Link& l = m.links[linkOf.at(r.srcUnit)];
    Unit& u = *m.units[unitOf.at(r.dstUnit)];
    bool streaming = u.streams(r.dstPort);
    bool mu = a.units[r.dstUnit].kind == UnitKind::Memory && !dynamic_cast<MuRoute*>(&u);  // route, combine: 1 beat/cycle
    int c = l.addConsumer(unitOf.at(r.dstUnit), streaming, mu ? cpb : 1);
    if (int(u.in.size()) <= r.dstPort) u.in.resize(size_t(r.dstPort) + 1, {-1, -1});
    u.in[size_t(r.dstPort)] = {linkOf.at(r.srcUnit), c};
    l.name += fmt::format(" ({} -> {})", m.units[size_t(l.producer)]->name, u.name);
  }
  // Unit parameters that depend on their links.
  for (const auto& [hw, ui] : unitOf) {
    const Op& o = g.ops[size_t(opOf.at(hw))];
    Unit* u = m.units[size_t(ui)].get();
    if (auto* mm = dynamic_cast<CuMatmul*>(u)) {
      const bool bt = attrString(o, "fn") == "matmul_t";
      for (const Token& x : streams.at(o.inputs[0].v)) {
        int64_t c = 0;
        if (x.kind == Kind::Data) {
          int64_t M = x.parts[0].rows, K = x.parts[0].cols, N = bt ? x.parts[1].rows : x.parts[1].cols;
          c = (M * N + a.cu.lanes - 1) / a.cu.lanes * K;
        }
        mm->computeCycles.push_back(c);
      }
    } else if (auto* ag = dynamic_cast<AgLoad*>(u)) {
      const Link& l = m.links[ag->out];
      size_t g0 = 0;
      for (int64_t nb : l.beats) ag->firstBeat.push_back(g0), g0 += size_t(nb);
      ag->issue.assign(g0, 0), ag->pop.assign(g0, 0);
      if (auto* rl = dynamic_cast<AgRandomLoad*>(u)) {
        const Op& addr = g.op(g.stream(o.inputs[0]).producer);
        buildWalkGroups(*rl, streams.at(o.outputs[0].v), attrInt(g, addr, "tiles"), m.links[rl->in[0].first].size() - 1);
      }
    } else if (auto* ex = dynamic_cast<CuExpand*>(u)) {
      buildExpandGroups(*ex, streams.at(o.inputs[1].v), int(attrInt(g, o, "b")), m.links[ex->in[0].first].size());
    } else if (auto* pz = dynamic_cast<CuParallelize*>(u)) {
      buildParallelOutput(*pz, streams.at(o.inputs[0].v), o.outputs.size(), m.links[pz->out].size());
    } else if (auto* cb = dynamic_cast<MuCombine*>(u)) {
      const Link &rows = m.links[cb->in[0].first], &meta = m.links[cb->in[1].first];
      std::vector<size_t> metaData;
      for (size_t k = 0; k < meta.size(); ++k)
        if (meta.kinds[k] == Kind::Data) metaData.push_back(k);
      size_t n = 0;
      for (size_t i = 0; i < rows.size(); ++i)
        cb->metaOf.push_back(rows.kinds[i] == Kind::Data && n < metaData.size() ? metaData[n++] : SIZE_MAX);
    } else if (auto* bk = dynamic_cast<Banked*>(u)) {
      bool isMu = o.kind != OpKind::Accum;
      int b = o.kind == OpKind::RepeatStatic ? 0 : int(attrInt(g, o, "b"));
      StreamId outS = o.outputs[0];
      if (o.kind == OpKind::Bufferize) outS = g.op(g.stream(o.outputs[0]).consumers.at(0)).outputs.at(0);
      if (o.kind == OpKind::Accum && attrString(o, "fn") == "retile") isMu = false;
      bk->rate = isMu ? cpb : 1;
      buildGroups(*bk, streams.at(o.inputs[0].v), streams.at(outS.v), b, o.kind == OpKind::Accum);
    }
  }

  bool progress = true;
  while (progress) {
    progress = false;
    for (auto& u : m.units) progress |= u->step(m);
    for (auto& l : m.links) progress |= m.resolve(l);
  }

  if (const char* dbg = std::getenv("STEPGEN_MODEL_TRACE")) {  // calibration aid: every transfer
    std::FILE* f = std::fopen(dbg, "w");
    for (auto& l : m.links)
      for (size_t i = 0; i < l.size(); ++i)
        std::fprintf(f, "%s tile %zu beats %lld offer %lld start %lld end %lld\n", l.name.c_str(), i, (long long)l.beats[i],
                     (long long)l.offer[i], (long long)l.start[i], (long long)l.end[i]);
    std::fclose(f);
  }
  TimingResult r;
  r.offchipReadBytes = m.readBytes;
  r.offchipWriteBytes = m.writeBytes;
  // Stuck streams: first those whose producer offers a tile that a consumer does not take
  // (the hardware's full FIFOs), then those still waiting for data.
  std::vector<std::string> waiting;
  for (auto& l : m.links) {
    if (l.nextEnd == l.size()) continue;
    r.deadlock = true;
    const size_t i = l.nextStart;
    std::string refusing;
    if (i < l.size() && l.offer[i] != kUnknown)
      for (size_t c = 0; c < l.cons.size(); ++c)
        if (l.accept[c][i] == kUnknown) refusing += (refusing.empty() ? "" : ", ") + m.units[size_t(l.cons[c])]->name;
    std::string s = fmt::format("{} at tile {} of {}", l.name, l.nextEnd, l.size());
    if (refusing.empty()) waiting.push_back(s + ": no data");
    else r.stuck.push_back(s + ": offered, not taken by " + refusing);
  }
  r.stuck.insert(r.stuck.end(), waiting.begin(), waiting.end());
  for (auto& u : m.units) {
    if (u->doneAt == kUnknown) {
      if (!r.deadlock) r.stuck.push_back(fmt::format("unit '{}' never finished", u->name));
      r.deadlock = true;
    }
    r.cycles = std::max(r.cycles, u->doneAt);
  }
  r.cycles = std::max(r.cycles, m.lastWrite);
  return r;
}

}  // namespace stepgen
