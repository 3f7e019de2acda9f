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
    case OpKind::Accum: return UnitKind::Compute;
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
  StreamId stream;  // stream leaving the absorbed chain into the consumer
  StopMap map = identityStopMap();
};

class Mapper {
 public:
  Mapper(const StepGraph& g, const ArchModel& a) : g_(g), a_(a) {}

  Mapping run() {
    m_.ops.assign(g_.ops.size(), {});
    findRouteClusters();
    std::vector<int> order = placedOrder();
    std::vector<bool> taken(a_.units.size(), false);
    for (int op : order) place(op, taken);
    for (int op : order) routeInputs(op);
    for (size_t op = 0; op < g_.ops.size(); ++op)
      if (routeHost_[op] >= 0) m_.ops[op].hostOp = routeHost_[op];
    std::sort(m_.routes.begin(), m_.routes.end(), [](const Route& x, const Route& y) {
      return std::tie(x.dstUnit, x.ctx, x.dstPort) < std::tie(y.dstUnit, y.ctx, y.dstPort);
    });
    m_.unitsUsed = int(std::count(taken.begin(), taken.end(), true));
    return m_;
  }

 private:
  const StepGraph& g_;
  const ArchModel& a_;
  Mapping m_;
  std::vector<int> routeHost_;       // per op: the EagerMerge whose route unit realises it, or -1
  std::map<int, int> routePartition_;  // route EagerMerge -> its Partition

  const Op* producerOf(StreamId s) const {
    const Stream& st = g_.stream(s);
    return st.producer.valid() ? &g_.op(st.producer) : nullptr;
  }

  // The front of an MoE layer, Partition(rows, selector) -> per output [Reshape(chunk, b 0)
  // | Promote over the outermost dim] -> Accum(retile, 1) -> EagerMerge(b 0), all outputs in
  // order, runs as one memory unit in route mode (docs/hardware.md section 7); the members
  // are absorbed into the EagerMerge, which is placed.
  void findRouteClusters() {
    routeHost_.assign(g_.ops.size(), -1);
    for (size_t mi = 0; mi < g_.ops.size(); ++mi) {
      const Op& m = g_.ops[mi];
      if (m.kind != OpKind::EagerMerge || attrInt(g_, m, "b") != 0) continue;
      std::vector<int> members;
      int part = -1;
      bool ok = true;
      for (size_t i = 0; i < m.inputs.size() && ok; ++i) {
        const Op* rt = producerOf(m.inputs[i]);
        ok = rt && rt->kind == OpKind::Accum && attrString(*rt, "fn") == "retile" && attrInt(g_, *rt, "b") == 1;
        const Op* sh = ok ? producerOf(rt->inputs[0]) : nullptr;
        // Reshape(chunk, b 0, pad) of the expert's rows, or dynamic tiling's Promote over
        // the outermost dim (b 1 on the rank-0 Partition output).
        ok = ok && sh && sh->outputs.size() == 1 &&
             ((sh->kind == OpKind::Reshape && attrInt(g_, *sh, "b") == 0 && sh->attrs.count("pad") &&
               attrString(*sh, "pad") == "true") ||
              (sh->kind == OpKind::Promote && attrInt(g_, *sh, "b") == 1));
        const Op* pa = ok ? producerOf(sh->inputs[0]) : nullptr;
        ok = ok && pa && pa->kind == OpKind::Partition && pa->outputs.size() == m.inputs.size() &&
             pa->outputs[i].v == sh->inputs[0].v && attrInt(g_, *pa, "b") == 0;
        if (!ok) break;
        const int pi = int(g_.stream(sh->inputs[0]).producer.v);
        ok = part < 0 || part == pi;
        part = pi;
        members.push_back(int(g_.stream(m.inputs[i]).producer.v));
        members.push_back(int(g_.stream(rt->inputs[0]).producer.v));
      }
      if (!ok || part < 0) continue;
      if (m.outputs.size() == 2)
        throw DiagError("M-306", m.loc,
                        fmt::format("operator '{}': route mode emits EagerMerge's data only; its selector output '{}' "
                                    "has no unit to come from yet",
                                    m.name, g_.stream(m.outputs[1]).name));
      members.push_back(part);
      for (int op : members) routeHost_[op] = int(mi);
      routePartition_[int(mi)] = part;
    }
  }

  bool isRoute(int op) const { return routePartition_.count(op) > 0; }

  // The streams a placed op reads, port by port: a route EagerMerge reads its Partition's
  // rows (port 0) and selector (port 1).
  std::vector<StreamId> inputStreams(int op) const {
    if (isRoute(op)) return g_.ops[routePartition_.at(op)].inputs;
    return g_.ops[op].inputs;
  }

  // Walks upstream from a stream through absorbed ops to the placed producer(s); a Zip
  // splits into one source per member, in order.
  void sources(StreamId sid, StopMap below, std::vector<Source>& out) const {
    const Stream& st = g_.stream(sid);
    const Op& p = g_.op(st.producer);
    if (!isAbsorbed(p.kind)) {
      out.push_back({st.producer.v, sid, below});
      return;
    }
    if (p.kind == OpKind::Zip) {
      for (StreamId in : p.inputs) sources(in, below, out);
      return;
    }
    if (p.kind == OpKind::Streamify) {  // realised by the MU holding the buffer
      out.push_back({g_.stream(p.inputs.at(0)).producer.v, sid, below});
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
      if (!isAbsorbed(g_.ops[op].kind) && routeHost_[op] < 0) order.push_back(op);
      for (StreamId o : g_.ops[op].outputs)
        for (OpId c : g_.stream(o).consumers)
          if (--indeg[c.v] == 0) ready.push_back(c.v);
    }
    return order;
  }

  std::vector<int> neighbours(int op) const {
    std::vector<int> n;
    std::vector<Source> src;
    for (StreamId in : inputStreams(op)) sources(in, identityStopMap(), src);
    for (const auto& s : src) n.push_back(s.op);
    return n;
  }

  int distance(int u, int v) const {
    return std::abs(a_.units[u].x - a_.units[v].x) + std::abs(a_.units[u].y - a_.units[v].y);
  }

  bool reachable(int u, int v) const { return a_.link.topology == "crossbar" || distance(u, v) <= a_.link.reach; }

  void place(int op, std::vector<bool>& taken) {
    const Op& o = g_.ops[op];
    UnitKind want = isRoute(op) ? UnitKind::Memory : unitFor(o.kind);
    if (isRoute(op) && !a_.mu.route)
      throw DiagError("M-304", o.loc,
                      fmt::format("operator '{}': Partition + EagerMerge need a memory unit with route mode, and the "
                                  "memory units of '{}' have none (memory_unit.route: true)",
                                  o.name, a_.name));
    if (want == UnitKind::Empty)
      throw DiagError("M-306", o.loc, fmt::format("operator '{}' ({}) has no unit to run on", o.name, opKindName(o.kind)));
    checkFunction(o);
    std::vector<int> placedNbrs;
    for (int n : neighbours(op))
      if (m_.ops[n].unit >= 0) placedNbrs.push_back(m_.ops[n].unit);
    int best = -1;
    long bestScore = 0;
    int free = 0;
    for (size_t u = 0; u < a_.units.size(); ++u) {
      if (a_.units[u].kind != want || taken[u]) continue;
      ++free;
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
    m_.ops[op].unit = best;
    m_.ops[op].ctx = 0;
  }

  void checkFunction(const Op& o) const {
    std::string fn;
    if (o.kind == OpKind::Map) fn = attrString(o, "fn");
    if (o.kind == OpKind::Accum) fn = attrString(o, "fn") == "retile" ? "retile" : "accum";
    if (fn.empty()) return;
    const auto& fs = a_.cu.functions;
    if (std::find(fs.begin(), fs.end(), fn) == fs.end())
      throw DiagError("M-304", o.attrs.count("fn") ? o.attrs.at("fn").loc : o.loc,
                      fmt::format("operator '{}': the compute units of '{}' have no function '{}'", o.name, a_.name, fn));
  }

  void routeInputs(int op) {
    const Op& o = g_.ops[op];
    std::vector<Source> src;
    for (StreamId in : inputStreams(op)) sources(in, identityStopMap(), src);
    for (size_t p = 0; p < src.size(); ++p) {
      Route r;
      r.srcOp = src[p].op;
      r.dstOp = op;
      r.srcUnit = m_.ops[src[p].op].unit;
      r.dstUnit = m_.ops[op].unit;
      r.dstPort = int(p);
      r.ctx = m_.ops[op].ctx;
      r.stream = src[p].stream;
      r.stopMap = src[p].map;
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
  }
};

}  // namespace

Mapping mapGraph(const StepGraph& g, const ShapeResult& /*shapes: placement needs no sizes yet*/, const ArchModel& a) {
  return Mapper(g, a).run();
}

}  // namespace stepgen
