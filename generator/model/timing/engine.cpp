// Link resolution with bounded FIFOs (engine.hpp), DRAM channel scheduling, the run loop.
#include "model/timing/engine.hpp"

#include <algorithm>
#include <cstdlib>
#include <queue>
#include <stdexcept>
#include <string>
#include <tuple>

#include "common/dram.hpp"

namespace stepgen::timing {

void Link::init(const TokenStream& toks, int64_t wpb) {
  int64_t g = 0;
  for (const Token& t : toks) {
    beats.push_back(tokenBeats(t, wpb)), kinds.push_back(t.kind), first.push_back(g);
    g += beats.back();
  }
  const size_t n = beats.size();
  offer.assign(n, kUnknown), start = offer, natEnd = offer, end = offer;
}

int Link::addConsumer(int unit, int port, bool streaming, int64_t r, int64_t d, bool drops) {
  cons.push_back(unit), consPort.push_back(port), streamingCons.push_back(streaming), dropsBeforeLast.push_back(drops), rate.push_back(r);
  depth.push_back(std::max<int64_t>(d, 1)), chain.push_back(std::max<int64_t>(d, 1));
  if (d <= 1) interval = 2;
  for (auto* v : {&accept, &hold, &cstart, &cend}) v->emplace_back(beats.size(), kUnknown);
  nextCStart.push_back(0), nextCEnd.push_back(0);
  return int(cons.size()) - 1;
}

bool Link::finished() const {
  if (nextEnd != size()) return false;
  for (size_t n : nextCEnd)
    if (n != size()) return false;
  return true;
}

int64_t Unit::inStart(const TimingModel& m, int p, size_t i) const {
  return m.links[size_t(in[size_t(p)].first)].cstart[size_t(in[size_t(p)].second)][i];
}
int64_t Unit::inEnd(const TimingModel& m, int p, size_t i) const {
  return m.links[size_t(in[size_t(p)].first)].cend[size_t(in[size_t(p)].second)][i];
}
bool Unit::inDone(const TimingModel& m, int p) const {
  const Link& l = m.links[size_t(in[size_t(p)].first)];
  return l.nextCEnd[size_t(in[size_t(p)].second)] == l.size();
}
bool Unit::acceptInOrder(TimingModel& m, int p, size_t& next, const std::function<int64_t(size_t)>& wait) {
  Link& l = m.links[size_t(in[size_t(p)].first)];
  const size_t c = size_t(in[size_t(p)].second);
  bool progress = false;
  while (next < l.size()) {
    const size_t i = next;
    if (i > 0 && inEnd(m, p, i - 1) == kUnknown) break;
    const int64_t w = wait ? wait(i) : 0;
    if (w == kUnknown) break;
    l.accept[c][i] = std::max(w, i == 0 ? int64_t(1) : inEnd(m, p, i - 1));
    ++next, progress = true;
  }
  return progress;
}

TimingModel::TimingModel(const ArchModel& a) : arch(a), channels(size_t(a.offchip.channels)), startup(a.offchip.startup) {}

int64_t DramChannel::take(int64_t s, int64_t ii) {
  if (s < floor) ++late, s = floor;
  // The first run that ends after s (most requests come after every run: no search); runs
  // are disjoint, so their ends are sorted too.
  const size_t end = runs.size();
  size_t at = end;
  if (end > head && s < runs.back().second)
    at = s >= runs.back().first ? end - 1  // queued behind the last run: no search
                                : size_t(std::upper_bound(runs.begin() + std::ptrdiff_t(head), runs.end(), s,
                                                          [](int64_t x, const auto& r) { return x < r.second; }) -
                                         runs.begin());
  while (at < runs.size() && runs[at].first < s + ii) s = std::max(s, runs[at].second), ++at;  // [s, s + ii) overlaps it
  // A gap shorter than ii can never take a piece: it joins the runs beside it, which keeps
  // the runs few.
  if (at > head && s - runs[at - 1].second < ii) {
    runs[at - 1].second = s + ii;
    --at;
  } else if (at == runs.size()) {
    runs.emplace_back(s, s + ii);
  } else {
    runs.insert(runs.begin() + std::ptrdiff_t(at), {s, s + ii});
  }
  if (at + 1 < runs.size() && runs[at + 1].first - runs[at].second < ii) {
    runs[at].second = runs[at + 1].second;
    runs.erase(runs.begin() + std::ptrdiff_t(at + 1));
  }
  maxStart = std::max(maxStart, s);
  while (head < runs.size() && runs[head].second + kWindow < maxStart) floor = runs[head++].second;
  // Dropped runs are removed in bulk once they are half the vector (amortised O(1)).
  if (head > 64 && head * 2 > runs.size()) {
    runs.erase(runs.begin(), runs.begin() + std::ptrdiff_t(head));
    head = 0;
  }
  return s;
}

// The RTL's channels serve pieces in request order (next_free); the model issues requests
// in nearly cycle order (issueDeferred), and a request that comes late fills a gap instead.
int64_t TimingModel::dramPiece(uint64_t addr, int64_t t) {
  return channels[size_t(dramChannel(addr, int(channels.size())))].take(std::max(t, startup), arch.offchip.initiationInterval) +
         arch.offchip.latency;
}

int64_t TimingModel::beatAt(size_t li, size_t i, int64_t k) const {
  const Link& l = links[li];
  return std::max(l.start[i] + k * l.interval, units[size_t(l.producer)]->beatVisible(*this, i, k));
}

// The FIFO slot of beat k frees when the consumer takes it. Within an earlier tile the
// beats are taken `rate` apart, as late as the tile's end allows (a consumer that waits for
// its output takes them as that drains); within the tile being pushed only the consumer's
// hold bounds it (a tile longer than the slack couples producer and consumer as in
// lockstep, less the slack). Until the tile's end or hold is known, a consumer that knows
// when it took a beat before the last says so (Unit::beatTaken: Parallelize), where waiting
// for the hold would wait for the producer itself.
int64_t TimingModel::taken(const Link& l, size_t c, int64_t k, size_t tile) const {
  if (k < 0) return 0;
  const size_t j = size_t(std::upper_bound(l.first.begin(), l.first.end(), k) - l.first.begin()) - 1;
  const int64_t last = l.first[j] + l.beats[j] - 1, r = l.rate[c];
  if (l.dropsBeforeLast[c] && k < last) {
    if (l.cstart[c][j] == kUnknown) return kUnknown;
    return l.cstart[c][j] + (k - l.first[j]) * r + 1;
  }
  if (j < tile) {
    if (l.cend[c][j] == kUnknown) {
      const int64_t e = takenEarly(l, c, k, j);
      return e == kUnknown ? kUnknown : std::max(l.cstart[c][j] + (k - l.first[j]) * r + 1, e);
    }
    return std::max(l.cstart[c][j] + (k - l.first[j]) * r + 1, l.cend[c][j] - (last - k) * r);
  }
  if (l.hold[c][j] == kUnknown) return takenEarly(l, c, k, j);
  return l.hold[c][j] - (last - k) * r;
}

int64_t TimingModel::takenEarly(const Link& l, size_t c, int64_t k, size_t j) const {
  if (k == l.first[j] + l.beats[j] - 1 || l.cstart[c][j] == kUnknown) return kUnknown;
  return units[size_t(l.cons[c])]->beatTaken(*this, l.consPort[c], j, k - l.first[j]);
}

int64_t TimingModel::roomFor(const Link& l, int64_t k, size_t tile) const {
  int64_t s = 0;
  for (size_t c = 0; c < l.cons.size(); ++c) {
    const int64_t t = taken(l, c, k - l.chain[c], tile);
    if (t == kUnknown) return kUnknown;
    s = std::max(s, t);
  }
  return s;
}

bool TimingModel::resolve(Link& l) {
  bool progress = false;
  for (bool moved = true; moved;) {
    moved = false;
    if (l.nextStart < l.size()) {  // producer: the first beat leaves once every FIFO has room
      const size_t i = l.nextStart;
      if (l.offer[i] != kUnknown && (i == 0 || l.end[i - 1] != kUnknown)) {
        int64_t s = l.offer[i];
        if (i > 0) s = std::max(s, l.end[i - 1] + l.interval - 1);
        const int64_t t = roomFor(l, l.first[i], i);
        if (t != kUnknown) {
          l.start[i] = std::max(s, t);
          ++l.nextStart, moved = true;
        }
      }
    }
    while (l.nextNat < l.nextStart) {
      const size_t i = l.nextNat;
      const int64_t e = units[size_t(l.producer)]->endFor(*this, i, l.start[i]);
      if (e == kUnknown) break;
      l.natEnd[i] = std::max(e, l.start[i] + (l.beats[i] - 1) * l.interval + 1);
      ++l.nextNat, moved = true;
    }
    for (size_t c = 0; c < l.cons.size(); ++c) {  // consumers take the tile from their FIFO
      while (l.nextCStart[c] < l.nextStart) {
        const size_t i = l.nextCStart[c];
        if (l.accept[c][i] == kUnknown || (i > 0 && l.cend[c][i - 1] == kUnknown)) break;
        int64_t s = std::max(l.start[i], l.accept[c][i]);
        if (i > 0) s = std::max(s, l.cend[c][i - 1]);
        l.cstart[c][i] = s;
        // On a one-beat FIFO a beat is taken every other cycle at best, also in a tile whose
        // first beat waited in the FIFO for the consumer (`interval`).
        if (!l.streamingCons[c]) l.hold[c][i] = std::max(s + l.beats[i] * l.rate[c], s + (l.beats[i] - 1) * l.interval + 1);
        ++l.nextCStart[c], moved = true;
      }
    }
    while (l.nextEnd < l.nextNat) {  // producer: the last beat leaves once every FIFO has room
      const size_t i = l.nextEnd;
      const int64_t t = roomFor(l, l.first[i] + l.beats[i] - 1, i);
      if (t == kUnknown) break;
      l.end[i] = std::max(l.natEnd[i], t + 1);
      ++l.nextEnd, moved = true;
    }
    for (size_t c = 0; c < l.cons.size(); ++c) {
      while (l.nextCEnd[c] < l.nextEnd && l.nextCEnd[c] < l.nextCStart[c]) {
        const size_t i = l.nextCEnd[c];
        if (l.hold[c][i] == kUnknown) break;
        l.cend[c][i] = std::max(l.end[i], l.hold[c][i]);
        ++l.nextCEnd[c], moved = true;
      }
    }
    progress = progress || moved;
  }
  return progress;
}

int64_t TimingModel::chainOf(size_t li, size_t c, int depthLeft) {
  const Link& l = links[li];
  int64_t d = l.depth[c];
  const Unit& u = *units[size_t(l.cons[c])];
  if (depthLeft > 0 && u.passesThrough() && u.out >= 0 && !links[size_t(u.out)].cons.empty()) {
    int64_t down = INT64_MAX;
    for (size_t c2 = 0; c2 < links[size_t(u.out)].cons.size(); ++c2)
      down = std::min(down, chainOf(size_t(u.out), c2, depthLeft - 1));
    d += 1 + down;  // the unit's output register, then what its output FIFOs absorb
  }
  return d;
}

void TimingModel::computeChains() {
  for (size_t li = 0; li < links.size(); ++li)
    for (size_t c = 0; c < links[li].cons.size(); ++c) links[li].chain[c] = chainOf(li, c, 16);
}

// Issuing a unit's whole tile at once would let the first load resolved take every
// channel slot while other loads that the RTL interleaves with it wait: requests go in
// cycle order instead. Stopping at a finished tile lets the loads that tile unblocks join
// before later requests are placed.
bool TimingModel::issueDeferred(std::vector<int>& issued) {
  // A unit's pending request depends on its own state and the links' known times, which
  // only step() and resolve() change: within this loop only the unit that issued moves, so
  // a heap of the units' next requests stays exact. Order: cycle, then fabric unit, then
  // model unit (a load split over several model units of one fabric unit).
  using Req = std::tuple<int64_t, int, size_t>;
  std::vector<Req> reqs;
  for (size_t u = 0; u < units.size(); ++u) {
    const int64_t t = units[u]->pendingRequest(*this);
    if (t != kUnknown) reqs.emplace_back(t, units[u]->fabricUnit, u);
  }
  std::priority_queue<Req, std::vector<Req>, std::greater<Req>> heap(std::greater<Req>(), std::move(reqs));
  bool any = false;
  while (!heap.empty()) {
    auto [t, fu, u] = heap.top();
    heap.pop();
    any = true;
    issued.push_back(int(u));
    // A unit whose next request is still the earliest issues on without a heap round trip.
    for (;;) {
      if (units[u]->issuePending(*this, t)) return true;
      t = units[u]->pendingRequest(*this);
      if (t == kUnknown) break;
      if (!heap.empty() && heap.top() < Req(t, fu, u)) {
        heap.emplace(t, fu, u);
        break;
      }
    }
  }
  return any;
}

void TimingModel::run() {
  // Sweeps step the units, then resolve the links, in index order, until nothing moves; then
  // a deferred DRAM read is issued (or a unit unstalled) and the sweeps go on. A shallow FIFO
  // or a feedback cycle needs tens of thousands of sweeps, in each of which few units can
  // move: a sweep calls only the units and links next to a link that moved since their last
  // call (`near`), and those next to a unit that issued or unstalled; the rest would return
  // false. STEPGEN_TIMING_CHECK=1 checks that with a sweep of everything wherever nothing
  // near moved (a logic_error if anything does).
  std::vector<std::vector<int>> unitsNear(links.size()), linksNear(links.size());
  for (size_t li = 0; li < links.size(); ++li) {
    const Link& l = links[li];
    unitsNear[li] = l.cons;
    if (l.producer >= 0) unitsNear[li].push_back(l.producer);
    linksNear[li].push_back(int(li));
    for (int c : l.cons)  // the consumer's output ends after its inputs (Unit::endFor)
      if (units[size_t(c)]->out >= 0) linksNear[li].push_back(units[size_t(c)]->out);
    if (l.producer >= 0)  // the producer takes its inputs as its output moves (Unit::beatTaken)
      for (const auto& [in, slot] : units[size_t(l.producer)]->in)
        if (in >= 0) linksNear[li].push_back(in);
  }
  std::vector<char> unitDue(units.size(), 1), linkDue(links.size(), 1);
  auto moved = [&](int li) {
    for (int u : unitsNear[size_t(li)]) unitDue[size_t(u)] = 1;
    for (int k : linksNear[size_t(li)]) linkDue[size_t(k)] = 1;
  };
  auto unitMoved = [&](size_t u) {
    unitDue[u] = 1;
    for (const auto& [in, slot] : units[u]->in)
      if (in >= 0) moved(in);  // (-1: a port the configuration leaves unconnected)
    if (units[u]->out >= 0) moved(units[u]->out);
  };
  auto sweep = [&](bool all) {
    bool progress = false;
    for (size_t u = 0; u < units.size(); ++u) {
      if (!all && !unitDue[u]) continue;
      unitDue[u] = 0;
      if (units[u]->step(*this)) progress = true, unitMoved(u);
    }
    for (size_t li = 0; li < links.size(); ++li) {
      if (!all && !linkDue[li]) continue;
      linkDue[li] = 0;
      if (resolve(links[li])) progress = true, moved(int(li));
    }
    return progress;
  };
  const char* check = std::getenv("STEPGEN_TIMING_CHECK");
  const bool checking = check && std::string(check) == "1";
  std::vector<int> issued;
  for (;;) {
    while (sweep(false)) {
    }
    if (checking && sweep(true)) throw std::logic_error("timing: a unit or link moved with nothing near it moving");
    issued.clear();
    bool progress = issueDeferred(issued);
    for (int u : issued) unitMoved(size_t(u));
    for (size_t k = 0; !progress && k < units.size(); ++k)
      if (units[k]->unstall(*this)) progress = true, unitMoved(k);
    if (!progress) break;
  }
  for (auto& u : units) {
    if (u->out < 0) continue;
    const Link& o = links[size_t(u->out)];
    if (o.nextEnd == o.size()) u->doneAt = o.end.back();
  }
}

}  // namespace stepgen::timing
