// planBuffers: reconvergent pairs, their holds and Z3's choice of buffers (map/buffering.hpp).
#include "map/buffering.hpp"

#include <fmt/format.h>
#include <z3++.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "ir/attrs.hpp"
#include "ir/op_table.hpp"
#include "map/clusters.hpp"
#include "map/mapping.hpp"
#include "passes/graph_order.hpp"

namespace stepgen {

namespace {

// A size that stands for "unbounded" (a dynamic stream's bytes), kept far from overflow.
constexpr int64_t kHuge = int64_t(1) << 40;

// Elements a stream carries (the product of its dims), nullopt when a dim is not static.
std::optional<int64_t> elements(const StepGraph& g, const ShapeResult& s, StreamId id) {
  int64_t n = 1;
  for (const SymExpr& d : s.types.at(size_t(id.v)).shape) {
    auto v = d.evaluate(g.symbols);
    if (!v) return std::nullopt;
    n *= *v;
  }
  return n;
}

// Bytes of one element of a tile stream, or of a zipped pair's first tile (a selector or
// reference element counts one beat).
int64_t elementBytes(const StepGraph& g, const ShapeResult& s, StreamId id, const ArchModel& a) {
  const ElemType* ep = &s.types.at(size_t(id.v)).elem;
  if (ep->kind == ElemType::Kind::Tuple && !ep->parts.empty()) ep = &ep->parts[0];
  const ElemType& e = *ep;
  if (e.kind != ElemType::Kind::Tile || e.tile.size() != 2) return a.linkBytes();
  auto r = e.tile[0].evaluate(g.symbols), c = e.tile[1].evaluate(g.symbols);
  return (r ? *r : 64) * (c ? *c : 1) * 4;  // a dynamic row count at its bound: 64 tokens (route unit)
}

class BufferFinder {
 public:
  BufferFinder(const StepGraph& g, const ShapeResult& s, const ArchModel& a) : g_(g), s_(s), a_(a), cl_(findClusters(g)) {
    const OpOrder o = orderOps(g);
    rank_.assign(g.ops.size(), int(g.ops.size()));
    for (size_t i = 0; i < o.order.size(); ++i) rank_[size_t(o.order[i])] = int(i);
    for (StreamId f : o.feedback) feedback_.insert(f.v);
  }

  std::vector<Reconvergence> run() {
    std::vector<Reconvergence> out;
    for (size_t f = 0; f < g_.ops.size(); ++f) {
      const Op& fork = g_.ops[f];
      // A Parallelize deals element k*n + i to output i: a join of outputs i < j takes their
      // k-th elements together, so output i's path holds its element while the fork moves
      // on to output j's (one element more on j's path). Each output runs on a unit whose
      // input FIFO, shared by the outputs, adds one link of room on the short path
      // (tests/data/graphs/parallelize_reconverge.yaml: a tile of B beats passes at FIFO
      // depth d when B <= 2d).
      const bool deal = fork.kind == OpKind::Parallelize;
      if (fork.kind != OpKind::Broadcast && !deal) continue;
      for (size_t i = 0; i < fork.outputs.size(); ++i)
        for (size_t j = i + 1; j < fork.outputs.size(); ++j)
          if (auto r = pair(OpId{int(f)}, fork.outputs[i], fork.outputs[j], deal)) out.push_back(*r);
    }
    // Pairs on one short stream share its buffer: sized for the largest need among them.
    std::map<int, int64_t> need;
    for (const Reconvergence& r : out)
      if (r.needBytes > r.fifoBytes) need[r.shortStream.v] = std::max(need[r.shortStream.v], r.needBytes);
    for (Reconvergence& r : out)
      if (r.needBytes > r.fifoBytes) sizeBuffer(r, need.at(r.shortStream.v));
    return out;
  }

 private:
  const StepGraph& g_;
  const ShapeResult& s_;
  const ArchModel& a_;
  const Clusters cl_;
  std::vector<int> rank_;  // dependency order
  std::set<int> feedback_;  // feedback streams: a path back through one is a cycle, not a reconvergence

  // Ops reachable from stream `from` up to dependency rank `bound`, each with the op before
  // it on a shortest path (-1: it reads `from` itself). Ranks rise along every path, so the
  // ops within the bound and their parents are those of the unbounded search. `complete`:
  // it found no op beyond the bound.
  std::map<int, int> reach(StreamId from, int bound, bool& complete) const {
    std::map<int, int> parent;
    std::vector<int> frontier;
    complete = true;
    for (OpId c : g_.stream(from).consumers) parent.emplace(c.v, -1), frontier.push_back(c.v);
    for (size_t k = 0; k < frontier.size(); ++k) {
      const int op = frontier[k];
      if (rank_[size_t(op)] > bound) {
        complete = false;
        continue;
      }
      for (StreamId o : g_.ops[size_t(op)].outputs)
        if (!feedback_.count(o.v))
          for (OpId c : g_.stream(o).consumers)
            if (parent.emplace(c.v, op).second) frontier.push_back(c.v);
    }
    return parent;
  }

  bool inCluster(int op, std::initializer_list<ClusterKind> kinds) const {
    const int h = cl_.host[size_t(op)];
    if (h < 0) return false;
    const ClusterKind k = cl_.kind.at(h);
    return std::find(kinds.begin(), kinds.end(), k) != kinds.end();
  }

  // An op that takes its inputs in lockstep: it waits on one while the other fills. Route
  // and combine units, Partition and EagerMerge take each input as it comes.
  bool blockingJoin(int op) const {
    const Op& o = g_.ops[size_t(op)];
    if (o.inputs.size() < 2) return false;
    if (inCluster(op, {ClusterKind::Route, ClusterKind::Combine, ClusterKind::WeightLoad, ClusterKind::RunLoad})) return false;
    return o.kind == OpKind::Zip || o.kind == OpKind::Map || o.kind == OpKind::Accum || o.kind == OpKind::Expand;
  }

  std::vector<OpId> pathTo(const std::map<int, int>& parent, int join) const {
    std::vector<OpId> p;
    for (int op = parent.at(join); op >= 0; op = parent.at(op)) p.push_back(OpId{op});
    std::reverse(p.begin(), p.end());
    return p;
  }

  // Input elements (tiles; a fraction for part of one) `op` takes before its first output
  // (map/buffering.hpp).
  double holdOf(int op, StreamId in) const {
    const Op& o = g_.ops[size_t(op)];
    const auto whole = elements(g_, s_, in);
    const double all = whole ? double(*whole) : double(int64_t(1) << 30);
    if (inCluster(op, {ClusterKind::Route, ClusterKind::Combine})) return all;
    if (opRow(o.kind).hardware == OpHardware::Absorbed) return 0;  // links and stop maps
    const ElemType& e = s_.types.at(size_t(in.v)).elem;
    const bool tile = e.kind == ElemType::Kind::Tile && e.tile.size() == 2;
    const double beat = std::min(1.0, double(a_.linkBytes()) / double(elementBytes(g_, s_, in, a_)));
    const std::string fn = o.kind == OpKind::Map && o.attrs.count("fn") ? o.attrs.at("fn").scalar : "";
    if (fn == "matmul" || fn == "matmul_t") return 1;  // its whole a tile first (a zipped pair's)
    if (tile) {
      if (fn == "rowmax" || fn == "rowsum") {  // a whole row first
        auto rows = e.tile[0].evaluate(g_.symbols);
        return std::max(beat, 1.0 / double(rows ? *rows : 1));
      }
    }
    if (o.kind != OpKind::Accum && o.kind != OpKind::Bufferize) return beat;
    const std::vector<SymExpr>& shape = s_.types.at(size_t(in.v)).shape;
    const int64_t b = o.attrs.count("b") ? attrInt(g_, o, "b") : 0;
    double n = 1;
    for (int64_t d = 0; d < b && d < int64_t(shape.size()); ++d) {
      auto v = shape[shape.size() - 1 - size_t(d)].evaluate(g_.symbols);
      if (!v) return all;
      n *= double(*v);
    }
    return n;
  }

  // A path's hold in elements of the fork's stream: the largest hold on it, scaled back by the
  // element counts between the fork and that op.
  std::pair<double, int> pathHold(StreamId start, const std::vector<OpId>& path) const {
    double f = 1;  // fork elements per element of the current stream
    double best = 0;
    int holder = -1;
    StreamId cur = start;
    const auto forkElems = elements(g_, s_, start);
    for (size_t k = 0; k < path.size(); ++k) {
      const int op = path[k].v;
      const double h = f * holdOf(op, cur);
      if (h > best || holder < 0) best = std::max(best, h), holder = op;
      // the stream to the next op on the path (or the join)
      StreamId next = g_.ops[size_t(op)].outputs.empty() ? cur : g_.ops[size_t(op)].outputs[0];
      const int nextOp = k + 1 < path.size() ? path[k + 1].v : -1;
      for (StreamId o : g_.ops[size_t(op)].outputs)
        for (OpId c : g_.stream(o).consumers)
          if (c.v == nextOp) next = o;
      const auto ein = elements(g_, s_, cur), eout = elements(g_, s_, next);
      if (ein && eout && *eout > 0) f *= double(*ein) / double(*eout);
      cur = next;
    }
    if (forkElems) best = std::min(best, double(*forkElems));
    return {best, holder};
  }

  // Links on a path: one into each op that sits on a unit, and one into the join's unit.
  int links(const std::vector<OpId>& path) const {
    int n = 1;
    for (OpId op : path)
      if (opRow(g_.op(op).kind).hardware != OpHardware::Absorbed && !cl_.isMember(op.v)) ++n;
    return n;
  }

  // The op on a unit that an absorbed join (a Zip) feeds.
  OpId unitOf(int op) const {
    for (int guard = 0; guard < 64; ++guard) {
      const Op& o = g_.ops[size_t(op)];
      if (opRow(o.kind).hardware != OpHardware::Absorbed || o.outputs.empty()) break;
      const auto& cs = g_.stream(o.outputs[0]).consumers;
      if (cs.empty()) break;
      op = cs[0].v;
    }
    return OpId{op};
  }

  // The pair of fork outputs a and b. `dealt` (a Parallelize): b, the later output, holds
  // one element more, and the units' shared input FIFO adds one link of room on the short path.
  std::optional<Reconvergence> pair(OpId fork, StreamId a, StreamId b, bool dealt) const {
    // The join is the first blocking op both reach, in rank order: searched within a rank
    // window that doubles until it holds one (a layer's forks join within the layer), or
    // until one output's whole reach is in it (a join would be there: the outputs never meet).
    std::map<int, int> ra, rb;
    int join = -1;
    const int last = int(g_.ops.size());
    for (int window = 64;; window *= 2) {
      const int bound = int(std::min<int64_t>(int64_t(rank_[size_t(fork.v)]) + window, last));
      bool wholeA = false, wholeB = false;
      ra = reach(a, bound, wholeA), rb = reach(b, bound, wholeB);
      for (const auto& [op, parent] : ra)
        if (rank_[size_t(op)] <= bound && rb.count(op) && blockingJoin(op) &&
            (join < 0 || rank_[size_t(op)] < rank_[size_t(join)]))
          join = op;
      if (join >= 0 || bound >= last || wholeA || wholeB) break;
    }
    if (join < 0) return std::nullopt;
    Reconvergence r;
    r.fork = fork, r.join = OpId{join}, r.joinUnit = unitOf(join);
    std::vector<OpId> pa = pathTo(ra, join), pb = pathTo(rb, join);
    auto [ha, holderA] = pathHold(a, pa);
    auto [hb, holderB] = pathHold(b, pb);
    if (dealt) {
      hb += 1;
      if (holderB < 0) holderB = fork.v;
    }
    const bool aLong = ha > hb;
    r.longPath = aLong ? pa : pb, r.shortPath = aLong ? pb : pa;
    r.shortStream = aLong ? b : a;
    r.holder = OpId{aLong ? holderA : holderB};
    const StreamId in = g_.op(fork).inputs.at(0);
    r.needBytes = int64_t(std::ceil((std::max(ha, hb) - std::min(ha, hb)) * double(elementBytes(g_, s_, in, a_))));
    r.fifoBytes = int64_t(links(r.shortPath) + (dealt ? 1 : 0)) * a_.link.fifoDepth * a_.linkBytes();
    r.longAbsorbBytes = int64_t(std::floor(std::max(ha, hb) * double(elementBytes(g_, s_, in, a_)))) +
                        int64_t(links(r.longPath)) * a_.link.fifoDepth * a_.linkBytes();
    const auto n = elements(g_, s_, r.shortStream);
    r.streamBytes = n ? *n * elementBytes(g_, s_, r.shortStream, a_) : kHuge;
    return r;
  }

  // A memory-unit buffer on r's short stream that holds `need` bytes: the fewest inner dims
  // whose elements cover it (k = 0: one element, Bufferize b = 0), else the whole stream.
  void sizeBuffer(Reconvergence& r, int64_t need) const {
    const int64_t eb = elementBytes(g_, s_, r.shortStream, a_);
    const std::vector<SymExpr>& shape = s_.types.at(size_t(r.shortStream.v)).shape;
    int64_t group = 1;
    for (int k = 0; k < int(shape.size()); ++k) {
      auto v = k == 0 ? std::optional<int64_t>(1) : shape[shape.size() - size_t(k)].evaluate(g_.symbols);
      if (!v) break;
      group *= *v;
      if (group * eb >= need) {
        r.bufferDims = k, r.bufferBytes = group * eb;
        return;
      }
    }
    r.bufferDims = int(shape.size()) - 1, r.bufferBytes = r.streamBytes;
  }
};

// decide() when every short stream can have its buffer: the cost is a sum over short
// streams, each the cheaper of its buffer and its pairs' cuts (or uncovered).
// `group`: per short stream its buffer's bytes; `fits`: whether that buffer is open.
void decideEach(std::vector<Reconvergence>& pairs, const std::map<int, int64_t>& group, const std::map<int, bool>& fits,
                bool cuts) {
  std::map<int, int64_t> without;  // per short stream: cost of its pairs without a buffer
  for (const Reconvergence& r : pairs)
    if (r.needBytes > r.fifoBytes) without[r.shortStream.v] += cuts ? 2 * std::min(r.streamBytes, kHuge) : kHuge * 1024;
  for (Reconvergence& r : pairs) {
    if (r.needBytes <= r.fifoBytes) continue;
    const int sid = r.shortStream.v;
    if (fits.at(sid) && group.at(sid) <= without.at(sid)) r.choice = BufferChoice::MemoryUnit;
    else if (cuts) r.choice = BufferChoice::SectionCut;
    else r.uncovered = true;
  }
}

// Z3 Optimize over the pairs whose need exceeds their FIFOs: per short stream a memory-unit
// buffer (bool, shared by the pairs on that stream), per pair a section cut (bool; none in a
// graph with feedback streams) or, failing both, leaving it uncovered at a price above any
// buffer; at most `freeMu` buffers; least memory-unit bytes + 2 x the cuts' DRAM bytes.
void decide(std::vector<Reconvergence>& pairs, int64_t freeMu, const ArchModel& a, bool cuts) {
  // A buffer on a short stream serves every pair on it: each long path must take in a group.
  std::map<int, int64_t> group;  // per short stream: its buffer's bytes
  for (const Reconvergence& r : pairs) group[r.shortStream.v] = std::max(group[r.shortStream.v], r.bufferBytes);
  std::map<int, bool> fits;
  for (const Reconvergence& r : pairs) {
    const int64_t bytes = group.at(r.shortStream.v);
    auto [it, fresh] = fits.emplace(r.shortStream.v, 2 * bytes <= a.mu.capacityBytes);
    it->second = it->second && bytes <= r.longAbsorbBytes;
  }
  std::set<int> open;  // short streams with a pair over its FIFOs that a buffer could cover
  for (const Reconvergence& r : pairs)
    if (r.needBytes > r.fifoBytes && fits.at(r.shortStream.v)) open.insert(r.shortStream.v);
  if (int64_t(open.size()) <= freeMu) return decideEach(pairs, group, fits, cuts);
  z3::context ctx;
  z3::optimize opt(ctx);
  std::map<int, z3::expr> mu;                 // per short stream
  std::map<size_t, z3::expr> cut, left;       // per pair over its FIFOs
  z3::expr cost = ctx.int_val(0), used = ctx.int_val(0);
  auto priced = [&](const z3::expr& b, int64_t bytes) { return z3::ite(b, ctx.int_val(bytes), ctx.int_val(0)); };
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Reconvergence& r = pairs[i];
    if (r.needBytes <= r.fifoBytes) continue;
    z3::expr c = ctx.bool_const(fmt::format("cut_{}", i).c_str()), l = ctx.bool_const(fmt::format("left_{}", i).c_str());
    if (!cuts) opt.add(!c);
    cost = cost + priced(c, 2 * std::min(r.streamBytes, kHuge)) + priced(l, kHuge * 1024);
    z3::expr cover = c || l;
    if (fits.at(r.shortStream.v)) {  // Bufferize double-buffers
      auto it = mu.find(r.shortStream.v);
      if (it == mu.end()) {
        it = mu.emplace(r.shortStream.v, ctx.bool_const(fmt::format("mu_{}", r.shortStream.v).c_str())).first;
        cost = cost + priced(it->second, r.bufferBytes);
        used = used + priced(it->second, 1);
      }
      cover = cover || it->second;
    }
    opt.add(cover);
    cut.emplace(i, c), left.emplace(i, l);
  }
  if (cut.empty()) return;
  opt.add(used <= ctx.int_val(int64_t(freeMu)));
  opt.minimize(cost);
  if (opt.check() != z3::sat) throw std::logic_error("internal error: buffer plan unsatisfiable");
  const z3::model m = opt.get_model();
  for (const auto& [i, c] : cut) {
    Reconvergence& r = pairs[i];
    auto it = mu.find(r.shortStream.v);
    if (it != mu.end() && m.eval(it->second, true).is_true()) r.choice = BufferChoice::MemoryUnit;
    else if (m.eval(c, true).is_true()) r.choice = BufferChoice::SectionCut;
    else r.uncovered = true;
  }
}

const char* choiceName(BufferChoice c) {
  return c == BufferChoice::Fifo ? "link FIFOs" : c == BufferChoice::MemoryUnit ? "memory-unit buffer" : "section cut";
}

}  // namespace

BufferPlan planBuffers(const StepGraph& g, const ShapeResult& s, const ArchModel& a) {
  BufferPlan p;
  p.pairs = BufferFinder(g, s, a).run();
  if (std::none_of(p.pairs.begin(), p.pairs.end(), [](const Reconvergence& r) { return r.needBytes > r.fifoBytes; }))
    return p;  // the common case: no memory units to count, no solver
  int64_t mus = 0;
  for (const UnitSite& u : a.units) mus += u.kind == UnitKind::Memory;
  const auto demand = unitDemand(g, a);
  p.freeMemoryUnits = a.unbounded ? int64_t(p.pairs.size())
                                  : std::max<int64_t>(0, mus - (demand.count(UnitKind::Memory) ? demand.at(UnitKind::Memory) : 0));
  decide(p.pairs, p.freeMemoryUnits, a, orderOps(g).feedback.empty());
  std::set<int> buffered;
  for (const Reconvergence& r : p.pairs) {
    if (r.choice == BufferChoice::MemoryUnit && buffered.insert(r.shortStream.v).second) p.bufferBytes += r.bufferBytes;
    if (r.choice == BufferChoice::SectionCut) p.bufferBytes += 2 * r.streamBytes;
  }
  return p;
}

StepGraph insertBuffers(const StepGraph& g, const BufferPlan& p) {
  StepGraph out = g;
  std::set<int> done;
  for (const Reconvergence& r : p.pairs) {
    if (r.choice != BufferChoice::MemoryUnit || !done.insert(r.shortStream.v).second) continue;
    const Stream old = out.stream(r.shortStream);
    const int k = r.bufferDims;
    auto attr = [&](const std::string& v) { return Attr{old.loc, v, false, {}}; };
    auto stream = [&](const std::string& name, OpId producer) {
      Stream st;
      st.name = name, st.loc = old.loc, st.producer = producer;
      out.streams.push_back(st);
      return StreamId{int(out.streams.size()) - 1};
    };
    const int base = int(out.ops.size());
    const StreamId ref = stream(old.name + ".kept", OpId{base});
    const StreamId rep = stream(old.name + ".replayed", OpId{base + 1});
    const StreamId flat = stream(old.name + ".buffered", OpId{base + 2});
    Op keep, replay, flatten;
    keep.name = "buffer_keep_" + old.name, keep.kind = OpKind::Bufferize, keep.loc = old.loc;
    keep.inputs = {r.shortStream}, keep.outputs = {ref}, keep.attrs["b"] = attr(std::to_string(k));
    replay.name = "buffer_replay_" + old.name, replay.kind = OpKind::Streamify, replay.loc = old.loc;
    replay.inputs = {ref}, replay.outputs = {rep}, replay.attrs["repeat"] = attr("1");
    flatten.name = "buffer_flatten_" + old.name, flatten.kind = OpKind::Flatten, flatten.loc = old.loc;
    flatten.inputs = {rep}, flatten.outputs = {flat};
    flatten.attrs["lo"] = attr(std::to_string(k)), flatten.attrs["hi"] = attr(std::to_string(k + 1));
    // The old stream's readers read the buffered one; the old stream feeds the buffer only.
    for (OpId c : old.consumers)
      for (StreamId& in : out.ops[size_t(c.v)].inputs)
        if (in == r.shortStream) in = flat;
    out.streams[size_t(flat.v)].consumers = old.consumers;
    out.streams[size_t(r.shortStream.v)].consumers = {OpId{base}};
    out.streams[size_t(ref.v)].consumers = {OpId{base + 1}};
    out.streams[size_t(rep.v)].consumers = {OpId{base + 2}};
    out.ops.push_back(std::move(keep));
    out.ops.push_back(std::move(replay));
    out.ops.push_back(std::move(flatten));
  }
  return out;
}

std::string bufferPlanText(const StepGraph& g, const BufferPlan& p) {
  std::string t = fmt::format("# buffers: {} reconvergent pair(s), {} free memory unit(s), cost {} bytes\n", p.pairs.size(),
                              p.freeMemoryUnits, p.bufferBytes);
  for (const Reconvergence& r : p.pairs) {
    t += fmt::format("buffer {} -> {} : {}; the long path ({}) holds {} B before the join, the short stream {} has "
                     "{} B of link FIFOs",
                     g.op(r.fork).name, g.op(r.join).name, choiceName(r.choice),
                     r.holder.valid() ? g.op(r.holder).name : std::string("-"), r.needBytes, g.stream(r.shortStream).name,
                     r.fifoBytes);
    if (r.choice == BufferChoice::MemoryUnit)
      t += fmt::format(" (Bufferize b = {}: {} B, double-buffered)", r.bufferDims, r.bufferBytes);
    if (r.uncovered) t += " (UNCOVERED: no memory unit free or big enough, and a graph with feedback streams is not cut)";
    if (r.choice == BufferChoice::SectionCut)
      t += fmt::format(" ('{}' after '{}', {} B through DRAM)", g.op(r.joinUnit).name,
                       r.holder.valid() ? g.op(r.holder).name : std::string("-"), r.streamBytes);
    t += "\n";
  }
  return t;
}

}  // namespace stepgen
