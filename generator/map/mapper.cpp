// Mapping pass: places STeP operators on fabric units and routes their streams.
// Input: graph + inferred stream types + arch. Output: Mapping (placement, routes).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>

#include "arch/config_layout.hpp"
#include "common/stops.hpp"
#include "ir/attrs.hpp"
#include "map/clusters.hpp"
#include "map/mapping.hpp"

namespace stepgen {

StopMap identityStopMap() { return {0, 1, 2, 3, 4, 5, 6, 7}; }

namespace {

bool isAbsorbed(OpKind k) {
  return k == OpKind::Zip || k == OpKind::Broadcast || k == OpKind::Promote || k == OpKind::Flatten ||
         k == OpKind::Streamify;
}

UnitKind unitFor(OpKind k) {
  switch (k) {
    case OpKind::LinearOffChipLoad:
    case OpKind::LinearOffChipStore:
    case OpKind::SelectGen: return UnitKind::AddressGen;  // SelectGen loads its routing rows
    case OpKind::Map:
    case OpKind::Accum:
    case OpKind::Scan:
    case OpKind::Expand:       // in0 = data, in1 = ref
    case OpKind::Parallelize:  // one compute unit per output
      return UnitKind::Compute;
    case OpKind::Bufferize:
    case OpKind::RepeatStatic: return UnitKind::Memory;
    default: return UnitKind::Empty;
  }
}

// Stop map of one absorbed shape operator (step.md section 1 rewrite rules).
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
 public:
  Mapper(const StepGraph& g, const ArchModel& a) : g_(g), a_(a), cl_(findClusters(g)) {}

  Mapping run() {
    m_.ops.assign(g_.ops.size(), {});
    std::vector<int> order = placedOrder();
    std::vector<bool> taken(a_.units.size(), false);
    for (int op : order) place(op, taken);
    for (int op : order) routeInputs(op);
    for (size_t op = 0; op < g_.ops.size(); ++op)
      if (cl_.isMember(int(op))) m_.ops[op].hostOp = cl_.host[op];
    std::sort(m_.routes.begin(), m_.routes.end(), [](const Route& x, const Route& y) {
      return std::tie(x.dstUnit, x.ctx, x.dstPort) < std::tie(y.dstUnit, y.ctx, y.dstPort);
    });
    m_.unitsUsed = int(std::count(taken.begin(), taken.end(), true));
    return m_;
  }

 private:
  const StepGraph& g_;
  const ArchModel& a_;
  const Clusters cl_;
  Mapping m_;

  bool isKind(int op, ClusterKind k) const { return cl_.isHost(op) && cl_.kind.at(op) == k; }
  // A route EagerMerge whose selector output is read: a second MU emits it (meta mode).
  bool hasMeta(int op) const { return isKind(op, ClusterKind::Route) && g_.ops[size_t(op)].outputs.size() == 2; }

  // The streams a placed op reads, port by port (a cluster host reads its cluster's inputs).
  std::vector<StreamId> inputStreams(int op) const {
    if (cl_.isHost(op)) return cl_.ports.at(op);
    return g_.ops[size_t(op)].inputs;
  }

  // Walks upstream from a stream through absorbed ops to the placed producer(s); a Zip
  // splits into one source per member, in order.
  void sources(StreamId sid, StopMap below, std::vector<Source>& out) const {
    const Stream& st = g_.stream(sid);
    const Op& p = g_.op(st.producer);
    if (!isAbsorbed(p.kind)) {
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

  std::vector<int> placedOrder() const {
    // Topological order over ops (Kahn, lowest OpId first), keeping placed ops only.
    std::vector<int> indeg(g_.ops.size(), 0), order;
    for (size_t i = 0; i < g_.ops.size(); ++i)
      for (StreamId in : g_.ops[i].inputs) indeg[i] += g_.stream(in).producer.valid() ? 1 : 0;
    std::vector<int> ready;
    for (size_t i = 0; i < g_.ops.size(); ++i)
      if (indeg[i] == 0) ready.push_back(int(i));
    while (!ready.empty()) {
      std::sort(ready.begin(), ready.end(), std::greater<int>());
      int op = ready.back();
      ready.pop_back();
      if (!isAbsorbed(g_.ops[op].kind) && !cl_.isMember(op)) order.push_back(op);
      for (StreamId o : g_.ops[op].outputs)
        for (OpId c : g_.stream(o).consumers)
          if (--indeg[c.v] == 0) ready.push_back(c.v);
    }
    return order;
  }

  int unitOf(const Source& s) const { return m_.ops[s.op].unitOfOutput(size_t(s.output)); }

  std::vector<int> placedNeighbours(int op) const {
    std::vector<int> n;
    std::vector<Source> src;
    for (StreamId in : inputStreams(op)) sources(in, identityStopMap(), src);
    for (const auto& s : src)
      if (unitOf(s) >= 0) n.push_back(unitOf(s));
    return n;
  }

  int distance(int u, int v) const {
    return std::abs(a_.units[u].x - a_.units[v].x) + std::abs(a_.units[u].y - a_.units[v].y);
  }

  bool reachable(int u, int v) const { return a_.link.topology == "crossbar" || distance(u, v) <= a_.link.reach; }

  UnitKind wantFor(int op) const {
    if (isKind(op, ClusterKind::Route) || isKind(op, ClusterKind::Combine)) return UnitKind::Memory;
    if (isKind(op, ClusterKind::WeightLoad)) return UnitKind::AddressGen;
    const OpKind k = g_.ops[size_t(op)].kind;
    return k == OpKind::RandomOffChipLoad || k == OpKind::EagerMerge || k == OpKind::Reassemble ? UnitKind::Empty
                                                                                               : unitFor(k);
  }

  void place(int op, std::vector<bool>& taken) {
    const Op& o = g_.ops[op];
    UnitKind want = wantFor(op);
    if ((isKind(op, ClusterKind::Route) || isKind(op, ClusterKind::Combine)) && !a_.mu.route)
      throw DiagError("M-304", o.loc,
                      fmt::format("operator '{}': {} needs a memory unit with route mode, and the memory units of '{}' "
                                  "have none (memory_unit.route: true)",
                                  o.name, isKind(op, ClusterKind::Route) ? "Partition + EagerMerge" : "Partition + Reassemble",
                                  a_.name));
    if (want == UnitKind::Empty)
      throw DiagError("M-306", o.loc, fmt::format("operator '{}' ({}) has no unit to run on", o.name, opKindName(o.kind)));
    checkFunction(o);
    m_.ops[op].unit = takeUnit(o, want, placedNeighbours(op), taken);
    m_.ops[op].ctx = 0;
    if (hasMeta(op)) m_.ops[op].auxUnit = takeUnit(o, want, placedNeighbours(op), taken);
    if (o.kind == OpKind::Parallelize)  // output k > 0 runs on a CU of its own
      for (size_t k = 1; k < o.outputs.size(); ++k)
        m_.ops[op].extraUnits.push_back(takeUnit(o, want, placedNeighbours(op), taken));
  }

  // The free unit of kind `want` nearest to the placed neighbours (ties: lowest grid index).
  int takeUnit(const Op& o, UnitKind want, const std::vector<int>& placedNbrs, std::vector<bool>& taken) {
    int best = -1;
    long bestScore = 0;
    for (size_t u = 0; u < a_.units.size(); ++u) {
      if (a_.units[u].kind != want || taken[u]) continue;
      long score = 0;
      for (int v : placedNbrs) score += distance(int(u), v) + (reachable(int(u), v) ? 0 : 1000);
      if (best < 0 || score < bestScore) best = int(u), bestScore = score;
    }
    if (best < 0) {
      int total = int(std::count_if(a_.units.begin(), a_.units.end(), [&](const UnitSite& s) { return s.kind == want; }));
      throw DiagError("M-301", o.loc,
                      fmt::format("graph too big for the fabric: operator '{}' ({}) needs a {} unit, and all {} of "
                                  "the fabric's {} units are taken",
                                  o.name, opKindName(o.kind), unitKindName(want), total, unitKindName(want)),
                      {{a_.loc, fmt::format("architecture '{}' declares {} {} unit(s)", a_.name, total, unitKindName(want))}});
    }
    taken[best] = true;
    return best;
  }

  void checkFunction(const Op& o) const {
    std::string fn;
    if (o.kind == OpKind::Map) fn = attrString(o, "fn") == "scale_rows" ? "rowscale" : attrString(o, "fn");
    if (o.kind == OpKind::Accum) fn = attrString(o, "fn") == "retile" ? "retile" : "accum";
    if (o.kind == OpKind::Scan)  // only Scan(add) has hardware
      fn = attrString(o, "fn") == "add" ? "scan" : "scan_" + attrString(o, "fn");
    if (o.kind == OpKind::Expand) fn = "expand";
    if (o.kind == OpKind::Parallelize) fn = "parallelize";
    if (fn.empty()) return;
    const auto& fs = a_.cu.functions;
    if (std::find(fs.begin(), fs.end(), fn) == fs.end())
      throw DiagError("M-304", o.attrs.count("fn") ? o.attrs.at("fn").loc : o.loc,
                      fmt::format("operator '{}': the compute units of '{}' have no function '{}'", o.name, a_.name, fn));
  }

  void routeInputs(int op) {
    std::vector<Source> src;
    for (StreamId in : inputStreams(op)) sources(in, identityStopMap(), src);
    if (isKind(op, ClusterKind::WeightLoad) && !(src.at(0).output == 1 && hasMeta(src[0].op)))
      throw DiagError("M-306", g_.ops[size_t(op)].loc,
                      fmt::format("operator '{}': on a fabric an AddrGen -> RandomOffChipLoad reads the selector output "
                                  "of a route EagerMerge (one group of meta beats per chunk); its selector comes from '{}'",
                                  g_.ops[size_t(op)].name, g_.ops[size_t(src[0].op)].name));
    for (size_t p = 0; p < src.size(); ++p) addRoute(op, m_.ops[op].unit, int(p), src[p]);
    for (int u : m_.ops[op].extraUnits) addRoute(op, u, 0, src.at(0));  // Parallelize: every output's CU reads the input
    if (hasMeta(op)) addRoute(op, m_.ops[op].auxUnit, 1, src.at(1));  // the meta unit reads the routing rows only
  }

  void addRoute(int op, int dstUnit, int port, const Source& s) {
    const Op& o = g_.ops[op];
    Route r;
    r.srcOp = s.op;
    r.dstOp = op;
    r.srcUnit = unitOf(s);
    r.dstUnit = dstUnit;
    r.dstPort = port;
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

Mapping mapGraph(const StepGraph& g, const ShapeResult& /*shapes: placement needs no sizes yet*/, const ArchModel& a) {
  return Mapper(g, a).run();
}

}  // namespace stepgen
