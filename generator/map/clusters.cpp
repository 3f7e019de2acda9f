// findClusters: the fixed operator patterns that one fabric unit runs (map/clusters.hpp).
#include "map/clusters.hpp"

#include "ir/attrs.hpp"

namespace stepgen {

namespace {

class ClusterFinder {
 public:
  explicit ClusterFinder(const StepGraph& g) : g_(g) { c_.host.assign(g.ops.size(), -1); }

  Clusters run() {
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const Op& o = g_.ops[i];
      if (o.kind == OpKind::EagerMerge) route(int(i));
      if (o.kind == OpKind::Reassemble) combine(int(i));
      if (o.kind == OpKind::RandomOffChipLoad) weightLoad(int(i));
      // The AG's random store reads its data on in0 and its addresses on in1.
      if (o.kind == OpKind::RandomOffChipStore && o.attrs.count("index") && o.outputs.empty())
        add(int(i), ClusterKind::RandomStore, {}, {o.inputs.at(1), o.inputs.at(0)});
    }
    // A Partition that no route or combine cluster took runs on CUs of its own.
    for (size_t i = 0; i < g_.ops.size(); ++i)
      if (g_.ops[i].kind == OpKind::Partition && c_.host[i] < 0) add(int(i), ClusterKind::Dispatch, {}, g_.ops[i].inputs);
    // So does an EagerMerge that no route cluster took.
    for (size_t i = 0; i < g_.ops.size(); ++i)
      if (g_.ops[i].kind == OpKind::EagerMerge && c_.host[i] < 0) add(int(i), ClusterKind::Merge, {}, g_.ops[i].inputs);
    return c_;
  }

 private:
  const StepGraph& g_;
  Clusters c_;

  const Op* producer(StreamId s) const {
    const Stream& st = g_.stream(s);
    return st.producer.valid() ? &g_.op(st.producer) : nullptr;
  }
  int id(const Op* o) const { return int(o - g_.ops.data()); }
  bool is(const Op* o, OpKind k) const { return o && o->kind == k; }
  bool retile1(const Op* o) const {
    return is(o, OpKind::Accum) && attrString(*o, "fn") == "retile" && attrInt(g_, *o, "b") == 1;
  }
  // Output i of a Partition(b 0) with n outputs, or nullptr.
  const Op* partitionOf(StreamId s, size_t i, size_t n) const {
    const Op* p = producer(s);
    bool ok = is(p, OpKind::Partition) && p->outputs.size() == n && p->outputs[i].v == s.v && attrInt(g_, *p, "b") == 0;
    return ok ? p : nullptr;
  }

  void add(int host, ClusterKind k, const std::vector<int>& members, std::vector<StreamId> ports) {
    c_.kind[host] = k;
    c_.ports[host] = std::move(ports);
    c_.host[size_t(host)] = host;
    for (int m : members) c_.host[size_t(m)] = host;
  }

  // Partition(rows, selector) -> per output [Reshape(chunk, b 0, pad) | Promote over the
  // outermost dim] -> Accum(retile, 1) -> EagerMerge(b 0), outputs in order.
  void route(int mi) {
    const Op& m = g_.ops[size_t(mi)];
    if (attrInt(g_, m, "b") != 0) return;
    std::vector<int> members;
    const Op* part = nullptr;
    for (size_t i = 0; i < m.inputs.size(); ++i) {
      const Op* rt = producer(m.inputs[i]);
      if (!retile1(rt)) return;
      const Op* sh = producer(rt->inputs[0]);
      bool reshape = is(sh, OpKind::Reshape) && attrInt(g_, *sh, "b") == 0 && sh->attrs.count("pad") &&
                     attrString(*sh, "pad") == "true" && sh->outputs[0].v == rt->inputs[0].v;
      bool promote = is(sh, OpKind::Promote) && attrInt(g_, *sh, "b") == 1;
      if (!reshape && !promote) return;
      const Op* pa = partitionOf(sh->inputs[0], i, m.inputs.size());
      if (!pa || (part && pa != part)) return;
      part = pa;
      members.push_back(id(rt)), members.push_back(id(sh));
      if (reshape && sh->outputs.size() == 2) {  // "is padding": retiled, read by the Combine side
        const Stream& pad = g_.stream(sh->outputs[1]);
        if (pad.consumers.size() != 1 || !retile1(&g_.op(pad.consumers[0]))) return;
        members.push_back(int(pad.consumers[0].v));
      }
    }
    if (!part) return;
    members.push_back(id(part));
    add(mi, ClusterKind::Route, members, part->inputs);
  }

  // Partition(o, selector) -> per output FlatMap(rows | filter_rows, 1) -> Flatten(0, 1) ->
  // Reassemble(b 0) over the same outputs in order; Reassemble's own selector is not read
  // (the route unit's meta beats say where every row goes).
  void combine(int ri) {
    const Op& r = g_.ops[size_t(ri)];
    if (attrInt(g_, r, "b") != 0 || r.inputs.size() < 2) return;
    const size_t n = r.inputs.size() - 1;
    std::vector<int> members;
    const Op* part = nullptr;
    for (size_t i = 0; i < n; ++i) {
      const Op* fl = producer(r.inputs[i]);
      if (!is(fl, OpKind::Flatten) || attrInt(g_, *fl, "lo") != 0 || attrInt(g_, *fl, "hi") != 1) return;
      const Op* fm = producer(fl->inputs[0]);
      if (!is(fm, OpKind::FlatMap) || attrInt(g_, *fm, "b") != 1) return;
      const Op* pa = partitionOf(fm->inputs[0], i, n);
      if (!pa || (part && pa != part)) return;
      part = pa;
      members.push_back(id(fl)), members.push_back(id(fm));
    }
    if (!part) return;
    members.push_back(id(part));
    add(ri, ClusterKind::Combine, members, part->inputs);
  }

  // AddrGen(selector) -> RandomOffChipLoad: the AG walks one expert's weight tiles per group.
  // RandomOffChipLoad with `count` or `index` alone: the AG walks a run of tiles (one tile)
  // per meta row.
  void weightLoad(int li) {
    const Op& l = g_.ops[size_t(li)];
    if (l.attrs.count("count") || l.attrs.count("index")) return add(li, ClusterKind::RunLoad, {}, l.inputs);
    const Op* ag = producer(l.inputs.at(0));
    if (!is(ag, OpKind::AddrGen)) return;
    add(li, ClusterKind::WeightLoad, {id(ag)}, ag->inputs);
  }
};

}  // namespace

Clusters findClusters(const StepGraph& g) { return ClusterFinder(g).run(); }

UnitKind clusterUnit(ClusterKind k) {
  switch (k) {
    case ClusterKind::Route: case ClusterKind::Combine: return UnitKind::Memory;
    case ClusterKind::WeightLoad: case ClusterKind::RunLoad: case ClusterKind::RandomStore: return UnitKind::AddressGen;
    case ClusterKind::Dispatch: case ClusterKind::Merge: return UnitKind::Compute;
  }
  return UnitKind::Empty;
}

}  // namespace stepgen
