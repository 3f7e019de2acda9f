// Mapping pass: places STeP operators on fabric units and routes their streams.
// Input: graph + inferred stream types + arch. Output: Mapping (placement, routes).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <random>

#include "arch/config_layout.hpp"
#include "arch/unit_catalogue.hpp"
#include "ir/stops.hpp"
#include "ir/attrs.hpp"
#include "ir/op_table.hpp"
#include "map/clusters.hpp"
#include "map/mapping.hpp"
#include "map/unit_config.hpp"
#include "passes/graph_order.hpp"

namespace stepgen {

StopMap identityStopMap() { return {0, 1, 2, 3, 4, 5, 6, 7}; }

namespace {

bool isAbsorbed(OpKind k) { return opRow(k).hardware == OpHardware::Absorbed; }

// Stop map of one absorbed shape operator (docs/step_semantics.md#stop-rules).
StopMap opStopMap(const StepGraph& g, const Op& op) {
  StopMap m = identityStopMap();
  if (op.kind == OpKind::Promote) {
    int r = int(attrInt(g, op, "b"));
    for (int s = 0; s < 8; ++s) m[s] = std::min(7, promoteStop(s, r));
  } else if (op.kind == OpKind::Flatten) {
    int lo = int(attrInt(g, op, "lo")), hi = int(attrInt(g, op, "hi"));
    for (int s = 0; s < 8; ++s) m[s] = flattenStop(s, lo, hi);
  }
  return m;
}

StopMap compose(const StopMap& first, const StopMap& then) {
  StopMap r{};
  for (int s = 0; s < 8; ++s) r[s] = then[first[s]];
  return r;
}

struct Source {
  int op = -1;
  int output = 0;   // which output of `op` (Parallelize outputs and a route selector have units of their own)
  StreamId stream;  // stream leaving the absorbed chain into the consumer
  StopMap map = identityStopMap();
};

class Mapper {
  // One link of the mapping: the unit emitting `src` feeds input `port` of one of `dst`'s
  // units: `slot` 0 its main unit, k >= 1 the unit of its output k (Parallelize, Partition),
  // kAuxSlot its route meta unit.
  static constexpr int kAuxSlot = -1;
  struct Wire {
    Source src;
    int dst;
    int port;
    int slot;
  };

 public:
  Mapper(const StepGraph& g, const ArchModel& a, const std::vector<int>& sectionOf)
      : g_(g), a_(a), cat_(a), cl_(findClusters(g)), sec_(sectionOf) {
    for (UnitKind k : {UnitKind::AddressGen, UnitKind::Compute, UnitKind::Memory}) ofKind_[k] = cat_.unitsOfKind(k);
  }

  /// Units of each kind the graph takes in one section (wantFor, plus route meta units and
  /// Parallelize / Partition outputs beyond the first).
  /// With sections, the most any section takes: a kept buffer counts in every section from
  /// its Bufferize's to its Streamify's, a carried Streamify not at all (it is on that unit).
  std::map<UnitKind, int> demand() const {
    const int sections = sec_.empty() ? 1 : *std::max_element(sec_.begin(), sec_.end()) + 1;
    std::vector<std::map<UnitKind, int>> per(size_t(std::max(sections, 1)));
    for (int op : placedOrder()) {
      const UnitKind k = wantFor(op);
      if (k == UnitKind::Empty || carriedStreamify(op)) continue;
      const Op& o = g_.ops[size_t(op)];
      const int replay = keptFor(op);
      for (int s = sectionOf(op); s <= (replay >= 0 ? sectionOf(replay) : sectionOf(op)); ++s)
        per[size_t(s)][k] += 1 + (hasMeta(op) ? 1 : 0) + (perOutput(op) ? int(o.outputs.size()) - 1 : 0);
    }
    std::map<UnitKind, int> n;
    for (const auto& p : per)
      for (const auto& [k, c] : p) n[k] = std::max(n[k], c);
    return n;
  }

  Mapping run() {
    m_.ops.assign(g_.ops.size(), {});
    std::vector<int> order = placedOrder();
    m_.sections = sec_.empty() ? 1 : *std::max_element(sec_.begin(), sec_.end()) + 1;
    consumers_.assign(g_.ops.size(), {});
    for (int op : order) {
      std::vector<Source> src;
      for (StreamId in : inputStreams(op)) sources(in, identityStopMap(), src);
      for (const Source& x : src) consumers_[size_t(x.op)].push_back(op);
    }
    placeAll(order);
    std::vector<Wire> ws = wires(order);
    if (outOfReach(ws) > 0) {
      // In dependency order every load is placed before its consumers, with nothing to be
      // near: on a large grid the loads of a deep graph pile up in one corner. Placing each
      // load right after its first consumer, next to it, keeps a layer together; it is
      // tried only here so that fabrics the dependency order maps keep their placement.
      const Mapping first = m_;
      const auto firstTaken = taken_;
      try {
        placeAll(nearConsumerOrder(order));
      } catch (const DiagError&) {  // a unit kind ran out in this order: keep the first
        m_ = first, taken_ = firstTaken;
      }
      std::vector<Wire> again = wires(order);
      if (outOfReach(again) <= outOfReach(ws)) ws = std::move(again);
      else m_ = first, taken_ = firstTaken;
    }
    repairPlacement(order, ws);
    for (const Wire& w : ws) addRoute(w);
    for (size_t op = 0; op < g_.ops.size(); ++op)
      if (cl_.isMember(int(op))) m_.ops[op].hostOp = cl_.host[op];
    std::sort(m_.routes.begin(), m_.routes.end(), [](const Route& x, const Route& y) {
      return std::tie(x.dstUnit, x.ctx, x.dstPort) < std::tie(y.dstUnit, y.ctx, y.dstPort);
    });
    for (size_t u = 0; u < a_.units.size(); ++u)
      m_.unitsUsed += std::any_of(taken_.begin(), taken_.end(), [&](const std::vector<bool>& t) { return bool(t[u]); });
    return m_;
  }

 private:
  const StepGraph& g_;
  const ArchModel& a_;
  const UnitCatalogue cat_;
  const Clusters cl_;
  const std::vector<int>& sec_;
  Mapping m_;
  std::vector<std::vector<bool>> taken_;  // per section: units in use
  std::vector<std::vector<int>> consumers_;  // per op: the placed ops that read its output
  std::map<UnitKind, std::vector<UnitId>> ofKind_;  // the fabric's units of each kind

  // Places every op of `order` on an empty fabric.
  void placeAll(const std::vector<int>& order) {
    m_.ops.assign(g_.ops.size(), {});
    // Section s runs from context s: each section has the whole fabric to itself.
    taken_.assign(size_t(m_.sections), std::vector<bool>(a_.units.size(), false));
    for (int op : order) place(op);
  }

  // `order` with each op that reads no placed op (a load) moved to just after its first
  // consumer in `order`.
  std::vector<int> nearConsumerOrder(const std::vector<int>& order) const {
    std::vector<size_t> pos(g_.ops.size(), SIZE_MAX);
    for (size_t k = 0; k < order.size(); ++k) pos[size_t(order[k])] = k;
    std::vector<std::vector<int>> after(g_.ops.size());
    std::vector<int> out;
    for (int op : order) {
      std::vector<Source> src;
      for (StreamId in : inputStreams(op)) sources(in, identityStopMap(), src);
      int first = -1;
      for (int c : consumers_[size_t(op)])
        if (first < 0 || pos[size_t(c)] < pos[size_t(first)]) first = c;
      if (src.empty() && !carriedStreamify(op) && first >= 0) after[size_t(first)].push_back(op);
      else out.push_back(op);
      for (int d : after[size_t(op)]) out.push_back(d);
    }
    return out;
  }

  int outOfReach(const std::vector<Wire>& ws) const {
    return int(std::count_if(ws.begin(), ws.end(), [&](const Wire& x) { return !inReach(x); }));
  }

  int sectionOf(int op) const { return sec_.empty() ? 0 : sec_[size_t(op)]; }

  // A Streamify in a later section than its Bufferize (map/sections.hpp: a stream carried in
  // a memory unit): it is placed, on its Bufferize's unit, and replays the kept stream.
  bool carriedStreamify(int op) const {
    const Op& o = g_.ops[size_t(op)];
    return o.kind == OpKind::Streamify && sectionOf(op) != sectionOf(g_.stream(o.inputs.at(0)).producer.v);
  }
  // The Streamify a Bufferize's buffer is replayed by in a later section, or -1.
  int keptFor(int op) const {
    const Op& o = g_.ops[size_t(op)];
    if (o.kind != OpKind::Bufferize) return -1;
    for (OpId c : g_.stream(o.outputs.at(0)).consumers)
      if (carriedStreamify(c.v)) return c.v;
    return -1;
  }
  bool placedOp(int op) const { return !isAbsorbed(g_.ops[size_t(op)].kind) || carriedStreamify(op); }

  bool isKind(int op, ClusterKind k) const { return cl_.isHost(op) && cl_.kind.at(op) == k; }
  // A route EagerMerge whose selector output is read: a second MU emits it (meta mode).
  // Ops with one unit per output: Parallelize, and a Partition of its own (ClusterKind::Dispatch).
  bool perOutput(int op) const { return g_.ops[size_t(op)].kind == OpKind::Parallelize || isKind(op, ClusterKind::Dispatch); }
  bool hasMeta(int op) const { return isKind(op, ClusterKind::Route) && g_.ops[size_t(op)].outputs.size() == 2; }

  // The streams a placed op reads, port by port (a cluster host reads its cluster's inputs).
  std::vector<StreamId> inputStreams(int op) const {
    if (cl_.isHost(op)) return cl_.ports.at(op);
    if (carriedStreamify(op)) return {};  // its data is in its unit already
    return g_.ops[size_t(op)].inputs;
  }

  // Walks upstream from a stream through absorbed ops to the placed producer(s); a Zip
  // splits into one source per member, in order.
  void sources(StreamId sid, StopMap below, std::vector<Source>& out) const {
    const Stream& st = g_.stream(sid);
    const Op& p = g_.op(st.producer);
    if (placedOp(st.producer.v)) {
      int k = 0;
      for (size_t j = 0; j < p.outputs.size(); ++j)
        if (p.outputs[j].v == sid.v) k = int(j);
      out.push_back({st.producer.v, k, sid, below});
      return;
    }
    if (p.kind == OpKind::Zip) {
      for (StreamId in : p.inputs) sources(in, below, out);
      return;
    }
    if (p.kind == OpKind::Streamify) {  // realised by the MU holding the buffer
      out.push_back({g_.stream(p.inputs.at(0)).producer.v, 0, sid, below});
      return;
    }
    sources(p.inputs.at(0), compose(opStopMap(g_, p), below), out);
  }

  // Placed ops in dependency order (passes/graph_order.hpp: lowest OpId first among the ready).
  std::vector<int> placedOrder() const {
    std::vector<int> order;
    for (int op : orderOps(g_).order)
      if (placedOp(op) && !cl_.isMember(op)) order.push_back(op);
    return order;
  }

  int unitOf(const Source& s) const { return m_.ops[s.op].unitOfOutput(size_t(s.output)); }

  // Units of the op's producers and consumers placed so far (in dependency order only
  // producers are).
  std::vector<int> placedNeighbours(int op) const {
    std::vector<int> n;
    std::vector<Source> src;
    for (StreamId in : inputStreams(op)) sources(in, identityStopMap(), src);
    for (const auto& s : src)
      if (unitOf(s) >= 0) n.push_back(unitOf(s));
    for (int c : consumers_[size_t(op)])
      if (m_.ops[size_t(c)].unit >= 0) n.push_back(m_.ops[size_t(c)].unit);
    return n;
  }

  int distance(int u, int v) const { return cat_.distance({u}, {v}); }
  bool reachable(int u, int v) const { return cat_.reaches({u}, {v}); }

  // The unit kind of an op of its own (its operator table row) or of a cluster host (its cluster's).
  UnitKind wantFor(int op) const {
    if (carriedStreamify(op)) return UnitKind::Memory;
    if (cl_.isHost(op)) return clusterUnit(cl_.kind.at(op));
    const OpRow& r = opRow(g_.ops[size_t(op)].kind);
    return r.hardware == OpHardware::Unit ? r.unit : UnitKind::Empty;
  }

  void place(int op) {
    const Op& o = g_.ops[op];
    if (carriedStreamify(op)) {  // its Bufferize reserved the unit for this section
      const OpPlacement& b = m_.ops[size_t(g_.stream(o.inputs.at(0)).producer.v)];
      m_.ops[op].unit = b.unit;
      m_.ops[op].ctx = sectionOf(op);
      return;
    }
    // A kept buffer holds its unit from its Bufferize's section to its Streamify's.
    const int replay = keptFor(op);
    const int last = replay >= 0 ? sectionOf(replay) : sectionOf(op);
    std::vector<std::vector<bool>*> taken;
    for (int s = sectionOf(op); s <= last; ++s) taken.push_back(&taken_[size_t(s)]);
    UnitKind want = wantFor(op);
    if ((isKind(op, ClusterKind::Route) || isKind(op, ClusterKind::Combine)) && !a_.mu.route)
      throw DiagError("M-304", o.loc,
                      fmt::format("operator '{}': {} needs a memory unit with route mode, and the memory units of '{}' "
                                  "have none (memory_unit.route: true)",
                                  o.name, isKind(op, ClusterKind::Route) ? "Partition + EagerMerge" : "Partition + Reassemble",
                                  a_.name));
    if (want == UnitKind::Empty)
      throw DiagError("M-306", o.loc, fmt::format("operator '{}' ({}) has no unit to run on", o.name, opKindName(o.kind)));
    if (want == UnitKind::Compute) checkFunction(o);
    m_.ops[op].unit = takeUnit(o, want, placedNeighbours(op), taken);
    m_.ops[op].ctx = sectionOf(op);
    if (hasMeta(op)) m_.ops[op].auxUnit = takeUnit(o, want, placedNeighbours(op), taken);
    if (perOutput(op))  // output k > 0 runs on a CU of its own
      for (size_t k = 1; k < o.outputs.size(); ++k)
        m_.ops[op].extraUnits.push_back(takeUnit(o, want, placedNeighbours(op), taken));
  }

  // The unit of kind `want` free in every section of `taken` nearest to the placed
  // neighbours (ties: lowest grid index); taken in all of them.
  int takeUnit(const Op& o, UnitKind want, const std::vector<int>& placedNbrs, const std::vector<std::vector<bool>*>& taken) {
    int best = -1;
    long bestScore = 0;
    const std::vector<UnitId>& ofKind = ofKind_.at(want);
    for (UnitId u : ofKind) {
      if (std::any_of(taken.begin(), taken.end(), [&](const std::vector<bool>* t) { return bool((*t)[size_t(u.v)]); }))
        continue;
      long score = 0;
      for (int v : placedNbrs) score += distance(u.v, v) + (reachable(u.v, v) ? 0 : 1000);
      if (best < 0 || score < bestScore) best = u.v, bestScore = score;
    }
    if (best < 0) {
      const int total = int(ofKind.size());
      throw DiagError("M-301", o.loc,
                      fmt::format("graph too big for the fabric: operator '{}' ({}) needs a {} unit, and all {} of "
                                  "the fabric's {} units are taken",
                                  o.name, opKindName(o.kind), unitKindName(want), total, unitKindName(want)),
                      {{a_.loc, fmt::format("architecture '{}' declares {} {} unit(s)", a_.name, total, unitKindName(want))}});
    }
    for (std::vector<bool>* t : taken) (*t)[size_t(best)] = true;
    return best;
  }

  void checkFunction(const Op& o) const {
    const std::string fn = cuFunctionName(o);
    if (fn.empty()) return;
    const auto& fs = a_.cu.functions;
    if (std::find(fs.begin(), fs.end(), fn) == fs.end())
      throw DiagError("M-304", o.attrs.count("fn") ? o.attrs.at("fn").loc : o.loc,
                      fmt::format("operator '{}': the compute units of '{}' have no function '{}'", o.name, a_.name, fn));
  }

  // The links of every placed op, port by port. Throws M-306 for a weight load whose
  // selector is not a route EagerMerge's meta output.
  std::vector<Wire> wires(const std::vector<int>& order) const {
    std::vector<Wire> w;
    for (int op : order) {
      std::vector<Source> src;
      for (StreamId in : inputStreams(op)) sources(in, identityStopMap(), src);
      if (isKind(op, ClusterKind::WeightLoad) && !(src.at(0).output == 1 && hasMeta(src[0].op)))
        throw DiagError("M-306", g_.ops[size_t(op)].loc,
                        fmt::format("operator '{}': on a fabric an AddrGen -> RandomOffChipLoad reads the selector "
                                    "output of a route EagerMerge (one group of meta beats per chunk); its selector "
                                    "comes from '{}'",
                                    g_.ops[size_t(op)].name, g_.ops[size_t(src[0].op)].name));
      for (size_t p = 0; p < src.size(); ++p) w.push_back({src[p], op, int(p), 0});
      // Parallelize / Partition: every output's CU reads the inputs; the meta unit reads the
      // routing rows only.
      for (size_t k = 1; k <= m_.ops[size_t(op)].extraUnits.size(); ++k)
        for (size_t p = 0; p < src.size(); ++p) w.push_back({src[p], op, int(p), int(k)});
      if (hasMeta(op)) w.push_back({src.at(1), op, 1, kAuxSlot});
    }
    return w;
  }
  int& slotUnit(int op, int slot) {
    OpPlacement& p = m_.ops[size_t(op)];
    return slot == kAuxSlot ? p.auxUnit : slot >= 1 ? p.extraUnits.at(size_t(slot - 1)) : p.unit;
  }
  int dstUnit(const Wire& x) const {
    const OpPlacement& p = m_.ops[size_t(x.dst)];
    return x.slot == kAuxSlot ? p.auxUnit : x.slot >= 1 ? p.extraUnits.at(size_t(x.slot - 1)) : p.unit;
  }
  // The slot of `op` whose unit emits source s: output k's own unit for a per-output op.
  int srcSlot(const Source& x) const { return perOutput(x.op) && x.output >= 1 ? x.output : 0; }
  // Cost of one link for the placement search: its distance, plus 20 per hop beyond the
  // reach (a shaped penalty, so that the search can walk through illegal placements toward
  // legal ones); 0 extra when the link is in reach.
  long wireCost(const Wire& x) const { return linkCost(unitOf(x.src), dstUnit(x)); }
  long linkCost(int a, int b) const {
    const int d = distance(a, b);
    return d + (reachable(a, b) ? 0 : 20L * std::max(1, d - a_.link.reach));
  }
  bool inReach(const Wire& x) const { return reachable(unitOf(x.src), dstUnit(x)); }

  // The greedy placement (place) puts each op next to the ops placed before it, so a load
  // placed early can end up out of reach of a consumer placed later (on a large grid, two
  // loads at opposite edges). When a link is out of reach, this searches for a legal
  // placement by simulated annealing over the ops that hold one unit in one section: move an
  // op to a free unit of its kind (half the time one within reach of a neighbour), or swap
  // two ops of the same kind and section; cost = wireCost summed. It starts cool from the
  // greedy placement, then restarts hot from a random placement of those ops up to 7 times,
  // and stops at the first legal placement (deterministic: fixed seed). The greedy placement is
  // kept when every link is in reach, so fabrics that map greedily map as before. A legal
  // placement is not guaranteed (tests/unit/test_mapper.cpp checks small grids exhaustively);
  // addRoute reports M-303 when none was found.
  void repairPlacement(const std::vector<int>& order, const std::vector<Wire>& ws) {
    auto legal = [&] { return std::all_of(ws.begin(), ws.end(), [&](const Wire& x) { return inReach(x); }); };
    if (legal()) return;
    // What the search moves: one unit of an op in one section (an op's main unit, or the unit
    // of one output of a Parallelize / Partition).
    struct Slot {
      int op, slot;
    };
    std::vector<Slot> movable;
    std::map<std::pair<int, int>, int> slotIndex;
    for (int op : order) {
      const OpPlacement& pl = m_.ops[size_t(op)];
      if (pl.auxUnit >= 0 || keptFor(op) >= 0 || carriedStreamify(op)) continue;
      if (!pl.extraUnits.empty() && !perOutput(op)) continue;
      for (int k = 0; k <= int(pl.extraUnits.size()); ++k) {
        slotIndex[{op, k}] = int(movable.size());
        movable.push_back({op, k});
      }
    }
    if (movable.empty()) return;
    auto indexOf = [&](int op, int slot) {
      auto it = slotIndex.find({op, slot});
      return it == slotIndex.end() ? -1 : it->second;
    };
    // The wires each slot's unit moves (as consumer or as producer).
    std::vector<std::vector<size_t>> touching(movable.size());
    for (size_t i = 0; i < ws.size(); ++i) {
      const int a = indexOf(ws[i].src.op, srcSlot(ws[i].src)), b = indexOf(ws[i].dst, ws[i].slot);
      if (a >= 0) touching[size_t(a)].push_back(i);
      if (b >= 0 && b != a) touching[size_t(b)].push_back(i);
    }
    // Cost of the wires of slots a and b (b may be -1), and how many of them are out of reach.
    struct Local {
      long cost = 0;
      int bad = 0;
    };
    auto local = [&](int a, int b) {
      Local c;
      auto add = [&](size_t i) {
        const int from = unitOf(ws[i].src), to = dstUnit(ws[i]);
        c.cost += linkCost(from, to), c.bad += !reachable(from, to);
      };
      for (size_t i : touching[size_t(a)]) add(i);
      if (b >= 0)
        for (size_t i : touching[size_t(b)])
          if (std::find(touching[size_t(a)].begin(), touching[size_t(a)].end(), i) == touching[size_t(a)].end()) add(i);
      return c;
    };
    auto unitOfSlot = [&](int i) -> int& { return slotUnit(movable[size_t(i)].op, movable[size_t(i)].slot); };
    // Per slot, read once (the loop below asks them every step): section, kind, units of that kind.
    std::vector<int> slotSection(movable.size());
    std::vector<UnitKind> slotKind(movable.size());
    std::vector<const std::vector<UnitId>*> slotUnits(movable.size());
    for (size_t i = 0; i < movable.size(); ++i) {
      slotSection[i] = sectionOf(movable[i].op);
      slotKind[i] = wantFor(movable[i].op);
      slotUnits[i] = &ofKind_.at(slotKind[i]);
    }
    auto sectionOfSlot = [&](int i) { return slotSection[size_t(i)]; };
    // occupant[section][unit]: the movable slot on that unit, or -1.
    std::vector<std::vector<int>> occupant(taken_.size(), std::vector<int>(a_.units.size(), -1));
    for (int i = 0; i < int(movable.size()); ++i) occupant[size_t(sectionOfSlot(i))][size_t(unitOfSlot(i))] = i;
    auto slotOn = [&](int unit, int section) { return occupant[size_t(section)][size_t(unit)]; };
    // Moves slot i to `target`, swapping with the movable slot there (if any); false if a fixed op holds it.
    auto move = [&](int i, int target) {
      const size_t sec = size_t(sectionOfSlot(i));
      std::vector<bool>& taken = taken_[sec];
      const int from = unitOfSlot(i);
      if (taken[size_t(target)]) {
        const int other = slotOn(target, int(sec));
        if (other < 0) return false;
        unitOfSlot(other) = from;
        occupant[sec][size_t(from)] = other;
      } else {
        taken[size_t(from)] = false, taken[size_t(target)] = true;
        occupant[sec][size_t(from)] = -1;
      }
      occupant[sec][size_t(target)] = i;
      unitOfSlot(i) = target;
      return true;
    };
    // Half the moves put a slot within reach of the unit at the other end of one of its
    // wires (a directed move, as VPR's range-limited moves: on a large grid a uniformly drawn
    // unit is almost always far from the op's neighbours and rejected); the other half draw
    // any unit of the op's kind, so the search can still cross the grid.
    // near[kind][v], filled on first use.
    std::map<UnitKind, std::vector<std::optional<std::vector<int>>>> nearCache;
    for (const auto& [k, units] : ofKind_) nearCache[k].resize(a_.units.size());
    auto near = [&](UnitKind k, const std::vector<UnitId>& ofKind, int v) -> const std::vector<int>& {
      std::optional<std::vector<int>>& n = nearCache[k][size_t(v)];
      if (!n) {
        n.emplace();
        for (UnitId u : ofKind)
          if (reachable(u.v, v) && reachable(v, u.v)) n->push_back(u.v);
      }
      return *n;
    };
    auto otherEnd = [&](int i, size_t wire) {
      const Wire& x = ws[wire];
      return unitOf(x.src) == unitOfSlot(i) ? dstUnit(x) : unitOf(x.src);  // the end that is not slot i
    };
    std::mt19937 rng(1);
    const int steps = std::min(100000, 10000 * int(movable.size()));
    for (int restart = 0; restart < 8 && !legal(); ++restart) {
      if (restart > 0)  // a random placement of the movable slots
        for (int i = 0; i < int(movable.size()); ++i) {
          const std::vector<UnitId>& ofKind = *slotUnits[size_t(i)];
          move(i, ofKind[rng() % ofKind.size()].v);
        }
      long cur = 0;
      int bad = outOfReach(ws);
      for (const Wire& x : ws) cur += wireCost(x);
      // From the greedy placement only a few links are out of reach: a cool start repairs them
      // without first scrambling what is already good; a random restart starts hot.
      double temp = restart == 0 ? 1.0 : 20.0;
      for (int step = 0; step < steps; ++step) {
        temp = std::max(0.05, temp * 0.9995);
        const int i = int(rng() % movable.size());
        const std::vector<UnitId>& ofKind = *slotUnits[size_t(i)];
        const std::vector<size_t>& mine = touching[size_t(i)];
        int target = -1;
        if (!mine.empty() && (rng() & 1)) {
          const std::vector<int>& n = near(slotKind[size_t(i)], ofKind, otherEnd(i, mine[rng() % mine.size()]));
          if (!n.empty()) target = n[rng() % n.size()];
        }
        if (target < 0) target = ofKind[rng() % ofKind.size()].v;
        const int from = unitOfSlot(i);
        if (target == from) continue;
        const int other = slotOn(target, sectionOfSlot(i));
        const Local before = local(i, other);
        if (!move(i, target)) continue;
        const Local after = local(i, other);
        const long next = cur - before.cost + after.cost;
        const double u = double(rng()) / double(std::mt19937::max());
        // exp of an argument below -746 is 0 (and takes libm's slow underflow path): rejected.
        const double x = double(cur - next) / temp;
        if (next <= cur || (x > -746 && u < std::exp(x))) {
          cur = next;
          bad += after.bad - before.bad;
          if (bad == 0) break;
        } else {
          move(i, from);  // undo (swaps back)
        }
      }
    }
  }

  void addRoute(const Wire& w) {
    const int op = w.dst;
    const Source& s = w.src;
    const Op& o = g_.ops[op];
    Route r;
    r.srcOp = s.op;
    r.dstOp = op;
    r.srcUnit = unitOf(s);
    r.dstUnit = dstUnit(w);
    r.dstPort = w.port;
    r.ctx = m_.ops[op].ctx;
    r.stream = s.stream;
    r.stopMap = s.map;
    r.distance = distance(r.srcUnit, r.dstUnit);
    r.fifoDepth = a_.link.fifoDepth;
    if (!reachable(r.srcUnit, r.dstUnit)) {
      const Op& so = g_.ops[r.srcOp];
      const auto& su = a_.units[r.srcUnit];
      const auto& du = a_.units[r.dstUnit];
      throw DiagError("M-303", g_.stream(r.stream).loc,
                      fmt::format("stream '{}' from '{}' at ({},{}) to '{}' at ({},{}) spans distance {} but links "
                                  "reach only {} (unroutable)",
                                  g_.stream(r.stream).name, so.name, su.x, su.y, o.name, du.x, du.y, r.distance,
                                  a_.link.reach),
                      {{so.loc, "producer"}, {o.loc, "consumer"}});
    }
    m_.routes.push_back(r);
  }
};

}  // namespace

Mapping mapGraph(const StepGraph& g, const ShapeResult& shapes, const ArchModel& a, const std::vector<int>& sectionOf) {
  const auto t0 = std::chrono::steady_clock::now();
  Mapping m = Mapper(g, a, sectionOf).run();
  m.fields = configureUnits(g, shapes, m, a);
  m.placeSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return m;
}

std::map<UnitKind, int> unitDemand(const StepGraph& g, const ArchModel& a) { return Mapper(g, a, {}).demand(); }

ArchModel fabricForGraph(const ArchModel& a, const StepGraph& g, const std::vector<int>& sectionOf) {
  if (!a.unbounded) return a;
  ArchModel f = a;
  const std::map<UnitKind, int> n = Mapper(g, a, sectionOf).demand();
  const UnitKind kinds[] = {UnitKind::AddressGen, UnitKind::Compute, UnitKind::Memory};
  f.cols = 1, f.rows = 3;
  for (UnitKind k : kinds) f.cols = std::max(f.cols, n.count(k) ? n.at(k) : 0);
  f.units.clear();
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < f.cols; ++x) {
      const int have = n.count(kinds[y]) ? n.at(kinds[y]) : 0;
      f.units.push_back({x < have ? kinds[y] : UnitKind::Empty, x, y, a.loc});
    }
  f.link.topology = "crossbar";
  f.cu.bufferBytes = f.mu.capacityBytes = int64_t(1) << 40;
  f.offchip.addressBits = 48;
  return f;
}

}  // namespace stepgen
