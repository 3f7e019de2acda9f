// planSections: cuts a graph into sections that fit the fabric, carrying the streams that
// cross a cut through DRAM scratch tensors (map/sections.hpp).
#include "map/sections.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "ir/op_table.hpp"
#include "map/clusters.hpp"
#include "map/mapping.hpp"
#include "passes/graph_order.hpp"

namespace stepgen {

int64_t SectionPlan::carriedDramBytes() const {
  int64_t b = 0;
  for (const auto& c : carried) b += c.onChip ? 0 : c.bytes;
  return b;
}

int64_t SectionPlan::carriedOnchipBytes() const {
  int64_t b = 0;
  for (const auto& c : carried) b += c.onChip ? c.bytes : 0;
  return b;
}

namespace {

enum class Role { Core, Free, Absorbed };

// Core ops occupy a unit and get a section; loads of input tensors are free (repeated in
// every section that reads them), and so is a SelectGen (it reads its routing tensor from
// the start in each: a selector stream is not tiles and cannot be carried through DRAM);
// absorbed ops (links, stop maps) follow their consumers.
// Per op its role; a load's tensor looked up by name once per graph, not per op and cut.
std::vector<Role> rolesOf(const StepGraph& g) {
  std::unordered_map<std::string, size_t> tensor;
  for (size_t t = 0; t < g.tensors.size(); ++t) tensor.emplace(g.tensors[t].name, t);
  std::vector<Role> role;
  role.reserve(g.ops.size());
  for (const Op& o : g.ops) {
    Role r = opRow(o.kind).hardware == OpHardware::Absorbed ? Role::Absorbed : Role::Core;
    if ((o.kind == OpKind::LinearOffChipLoad || o.kind == OpKind::SelectGen) && o.attrs.count("tensor")) {
      auto t = tensor.find(o.attrs.at("tensor").scalar);
      if (t != tensor.end() && !g.tensors[t->second].isScratch) r = Role::Free;
    }
    role.push_back(r);
  }
  return role;
}

// What the cuts of one graph share: each op's role, its clusters and each host's members.
struct Facts {
  std::vector<Role> role;
  Clusters cl;
  std::vector<std::vector<int>> members;  ///< per host op: the members of its cluster
  explicit Facts(const StepGraph& g) : role(rolesOf(g)), cl(findClusters(g)), members(g.ops.size()) {
    for (size_t m = 0; m < g.ops.size(); ++m)
      if (cl.isMember(int(m))) members[size_t(cl.host[m])].push_back(int(m));
  }
};

Attr scalarAttr(const SourceLoc& loc, const std::string& v) { return Attr{loc, v, false, {}}; }
Attr listAttr(const SourceLoc& loc, const std::vector<int64_t>& v) {
  Attr a{loc, "", true, {}};
  for (int64_t x : v) a.list.push_back(scalarAttr(loc, std::to_string(x)));
  return a;
}

// The static layout of a carried stream: its tiles, one after the other, as rows of a
// [tiles * rows, cols] tensor. Throws M-309 when the stream is not a static stream of 2-D tiles.
struct CarryShape {
  std::vector<int64_t> iter;  // the stream's shape, outermost first
  int64_t rows = 0, cols = 0, tiles = 1;
};

CarryShape carryShape(const StepGraph& g, const ShapeResult& s, StreamId sid) {
  const Stream& st = g.stream(sid);
  const StreamType& t = s.types.at(size_t(sid.v));
  auto fail = [&](const std::string& why) {
    return DiagError("M-309", st.loc,
                     fmt::format("stream '{}' from '{}' would cross a section boundary, but {}: it cannot be carried "
                                 "through DRAM",
                                 st.name, g.op(st.producer).name, why));
  };
  if (t.elem.kind != ElemType::Kind::Tile || t.elem.tile.size() != 2) throw fail("its elements are not 2-D tiles");
  CarryShape c;
  for (const SymExpr& d : t.shape) {
    auto v = d.evaluate(g.symbols);
    if (!v || *v < 1) throw fail("its shape is not static");
    c.iter.push_back(*v);
    c.tiles *= *v;
  }
  auto r = t.elem.tile[0].evaluate(g.symbols), k = t.elem.tile[1].evaluate(g.symbols);
  if (!r || !k) throw fail("its tiles are not static");
  c.rows = *r, c.cols = *k;
  return c;
}

// One cut of the graph: `sec` gives the section of every core op (-1: not yet assigned,
// i.e. in a later section that is not built). Builds the sectioned graph.
class Cutter {
 public:
  /// `closing`: also store what the ops without a section read (they come later), and fail
  /// (M-309) if such a stream cannot be carried; otherwise store only what built sections read.
  /// `onchip`: the carried streams (old stream ids) kept in a memory unit instead of DRAM.
  Cutter(const StepGraph& g, const ShapeResult& s, const Facts& f, const std::vector<int>& sec, int nsec, bool closing,
         const std::set<int>& onchip = {})
      : g_(g), s_(s), sec_(sec), n_(nsec), closing_(closing), onchip_(onchip), role_(f.role), need_(size_t(nsec) + 1) {}

  /// True if every stream a closing cut stores can be carried: what run() would check
  /// (M-309) without building the graph.
  bool carries() {
    markAll();
    for (const auto& [sid, to] : carriedTo_) {
      if (secOf(g_.streams[size_t(sid)].producer.v) >= n_) continue;
      try {
        carryShape(g_, s_, {sid});
      } catch (const DiagError&) {
        return false;
      }
    }
    return true;
  }

  SectionedGraph run() {
    markAll();
    out_.graph.name = g_.name;
    out_.graph.loc = g_.loc;
    out_.graph.symbols = g_.symbols;
    out_.graph.symbolLocs = g_.symbolLocs;
    out_.graph.tensors = g_.tensors;
    scratchEnd_ = tensorsEndPage(g_);
    // Per section the ops it emits, in dependency order: its core ops and the producers of
    // what it reads that are not core (a section visits only its own ops).
    const std::vector<int> order = orderOps(g_).order;
    std::vector<int> pos(g_.ops.size(), 0);
    for (size_t k = 0; k < order.size(); ++k) pos[size_t(order[k])] = int(k);
    std::vector<std::vector<int>> emitted(static_cast<size_t>(n_));
    for (int op : order)
      if (role_[size_t(op)] == Role::Core && sec_[size_t(op)] >= 0 && sec_[size_t(op)] < n_)
        emitted[size_t(sec_[size_t(op)])].push_back(op);
    for (int s = 0; s < n_; ++s) {
      std::vector<int>& list = emitted[size_t(s)];
      for (int sid : need_[size_t(s)]) {
        const int p = g_.streams[size_t(sid)].producer.v;
        if (role_[size_t(p)] != Role::Core) list.push_back(p);
      }
      std::sort(list.begin(), list.end(), [&](int x, int y) { return pos[size_t(x)] < pos[size_t(y)]; });
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
    for (int s = 0; s < n_; ++s) {
      for (const auto& [sid, to] : carriedTo_)
        if (to.count(s)) carryLoad(s, sid);
      for (int op : emitted[size_t(s)]) emit(s, op);
    }
    out_.plan.sections = n_;
    return std::move(out_);
  }

 private:
  const StepGraph& g_;
  const ShapeResult& s_;
  const std::vector<int>& sec_;
  const int n_;
  const bool closing_;
  const std::set<int> onchip_;
  const std::vector<Role>& role_;           // per old op
  std::map<int, int> kept_;                 // on-chip carried old stream -> its Bufferize's reference stream
  std::vector<std::set<int>> need_;        // per section: old streams read there
  std::map<int, std::set<int>> carriedTo_;  // old stream -> later sections that read it
  std::map<std::pair<int, int>, int> sm_;   // (section, old stream) -> new stream
  std::map<int, std::string> scratchOf_;    // old stream -> scratch tensor
  std::map<int, int> uses_;                 // old op -> copies emitted so far
  std::set<int> named_;                     // old streams whose first copy kept the name
  std::map<int, int> pendingStore_;         // carried old stream -> the new stream its producer writes
  std::map<int, bool> localUse_;            // carried old stream -> also read in its own section
  SectionedGraph out_;
  int64_t scratchEnd_ = 0;
  bool marked_ = false;

  int secOf(int op) const { return sec_[size_t(op)] < 0 ? n_ : sec_[size_t(op)]; }

  void markAll() {
    if (marked_) return;
    marked_ = true;
    for (size_t op = 0; op < g_.ops.size(); ++op) {
      if (role_[op] != Role::Core) continue;
      const int s = sec_[op] < 0 ? n_ : sec_[op];  // unassigned: the virtual section n_
      for (StreamId in : g_.ops[op].inputs) mark(s, in.v);
    }
  }

  // A built section reads the stream (not only the ops not yet given a section).
  bool realTarget(int sid) const {
    auto it = carriedTo_.find(sid);
    return it != carriedTo_.end() && !it->second.empty() && *it->second.begin() < n_;
  }

  void mark(int s, int sid) {
    if (!need_[size_t(s)].insert(sid).second) return;
    const int p = g_.streams[size_t(sid)].producer.v;
    const Op& o = g_.ops[size_t(p)];
    switch (role_[size_t(p)]) {
      case Role::Core:
        if (secOf(p) != s) carriedTo_[sid].insert(s);
        return;
      case Role::Free: return;
      case Role::Absorbed:
        for (StreamId in : o.inputs) mark(s, in.v);
        return;
    }
  }

  int newStream(const std::string& name, int old) {
    Stream st;
    st.name = name;
    st.loc = g_.streams[size_t(old)].loc;
    out_.graph.streams.push_back(std::move(st));
    return int(out_.graph.streams.size()) - 1;
  }

  int addOp(Op o, int s) {
    const int id = int(out_.graph.ops.size());
    for (StreamId in : o.inputs) out_.graph.streams[size_t(in.v)].consumers.push_back({id});
    for (StreamId ot : o.outputs) out_.graph.streams[size_t(ot.v)].producer = {id};
    out_.graph.ops.push_back(std::move(o));
    out_.plan.sectionOf.push_back(s);
    return id;
  }

  std::string suffix(int s) const { return fmt::format(".s{}", s); }

  void carryLoad(int s, int sid) {
    const CarryShape c = carryShape(g_, s_, {sid});
    const Stream& st = g_.streams[size_t(sid)];
    if (onchip_.count(sid)) return carryReplay(s, sid, c);
    const int ns = newStream(st.name + suffix(s), sid);
    Op o;
    o.name = "carry_load_" + st.name + suffix(s);
    o.kind = OpKind::LinearOffChipLoad;
    o.loc = st.loc;
    o.outputs = {{ns}};
    o.attrs["tensor"] = scalarAttr(st.loc, scratchTensor(sid, c));
    o.attrs["tile"] = listAttr(st.loc, {c.rows, c.cols});
    walkAttrs(o, c);
    addOp(std::move(o), s);
    sm_[{s, sid}] = ns;
    for (auto& cs : out_.plan.carried)
      if (cs.stream == st.name) cs.to.push_back(s);
  }

  // iter = the stream's shape; tile i of the walk is row block i of the scratch tensor.
  void walkAttrs(Op& o, const CarryShape& c) const {
    o.attrs["iter"] = listAttr(o.loc, c.iter);
    Attr strides{o.loc, "", true, {}};
    int64_t inner = c.tiles;
    for (int64_t n : c.iter) {
      inner /= n;
      strides.list.push_back(listAttr(o.loc, {inner, 0}));
    }
    o.attrs["strides"] = strides;
  }

  // Section s replays the stream its producing section kept in a memory unit: Streamify(1)
  // of the kept reference, then a Flatten that merges the repeat dimension of 1 into the
  // outermost one, so the consumers see the stream's own shape and stops.
  void carryReplay(int s, int sid, const CarryShape& c) {
    const Stream& st = g_.streams[size_t(sid)];
    const int n = int(c.iter.size());  // the stream's dims; Streamify adds one after the outermost
    Op r;
    r.name = "carry_replay_" + st.name;
    r.kind = OpKind::Streamify;
    r.loc = st.loc;
    r.inputs = {{kept_.at(sid)}};
    const int replayed = newStream(st.name + ".replayed", sid);
    r.outputs = {{replayed}};
    r.attrs["repeat"] = scalarAttr(st.loc, "1");
    addOp(std::move(r), s);
    Op f;
    f.name = "carry_flatten_" + st.name;
    f.kind = OpKind::Flatten;
    f.loc = st.loc;
    f.inputs = {{replayed}};
    const int ns = newStream(st.name + suffix(s), sid);
    out_.graph.streams[size_t(ns)].declared = st.declared;
    f.outputs = {{ns}};
    f.attrs["lo"] = scalarAttr(st.loc, std::to_string(n - 1));
    f.attrs["hi"] = scalarAttr(st.loc, std::to_string(n));
    addOp(std::move(f), s);
    sm_[{s, sid}] = ns;
    for (auto& cs : out_.plan.carried)
      if (cs.stream == st.name) cs.to.push_back(s);
  }

  std::string scratchTensor(int sid, const CarryShape& c) {
    auto it = scratchOf_.find(sid);
    if (it != scratchOf_.end()) return it->second;
    const Stream& st = g_.streams[size_t(sid)];
    Tensor t;
    t.name = "scratch_" + st.name;
    t.loc = st.loc;
    t.shape = {SymExpr::constant(c.tiles * c.rows), SymExpr::constant(c.cols)};
    t.isScratch = true;
    t.baseAddress = scratchEnd_;
    const int64_t bytes = c.tiles * c.rows * c.cols * 4;
    scratchEnd_ = (scratchEnd_ + bytes + 4095) / 4096 * 4096;
    out_.graph.tensors.push_back(t);
    out_.plan.carried.push_back({st.name, secOf(st.producer.v), {}, t.name, t.baseAddress, bytes});
    scratchOf_[sid] = t.name;
    return t.name;
  }

  void emit(int s, int op) {
    const Op& o = g_.ops[size_t(op)];
    const Role r = role_[size_t(op)];
    if (r == Role::Core && secOf(op) != s) return;
    if (r != Role::Core && std::none_of(o.outputs.begin(), o.outputs.end(),
                                        [&](StreamId x) { return need_[size_t(s)].count(x.v) > 0; }))
      return;
    Op c = o;
    c.name = uses_[op]++ == 0 ? o.name : o.name + suffix(s);
    c.inputs.clear();
    for (StreamId in : o.inputs) c.inputs.push_back({sm_.at({s, in.v})});
    c.outputs.clear();
    if (o.kind == OpKind::Broadcast) {  // only the outputs read in this section
      std::vector<StreamId> live;
      for (StreamId x : o.outputs)
        if (need_[size_t(s)].count(x.v)) live.push_back(x);
      if (live.size() == 1) {  // a one-way Broadcast is the stream itself
        sm_[{s, live[0].v}] = c.inputs[0].v;
        return;
      }
      for (StreamId x : live) c.outputs.push_back({declareStream(s, x.v)});
      addOp(std::move(c), s);
      return;
    }
    std::vector<int> stores;  // outputs that later sections read
    for (StreamId x : o.outputs) {
      const bool later = r == Role::Core && carriedTo_.count(x.v) && (closing_ || realTarget(x.v));
      const bool local = need_[size_t(s)].count(x.v) > 0;
      if (!later) {
        c.outputs.push_back({declareStream(s, x.v)});
        continue;
      }
      const int produced = newStream(g_.streams[size_t(x.v)].name, x.v);
      c.outputs.push_back({produced});
      stores.push_back(x.v);
      pendingStore_[x.v] = produced;
      if (local) localUse_[x.v] = true;
    }
    addOp(std::move(c), s);
    for (int x : stores) carryStore(s, x);
  }

  // A stream read in section s keeps its name (and declared type) in its first section.
  int declareStream(int s, int old) {
    const Stream& st = g_.streams[size_t(old)];
    const bool first = named_.insert(old).second;
    const int ns = newStream(first ? st.name : st.name + suffix(s), old);
    out_.graph.streams[size_t(ns)].declared = st.declared;
    sm_[{s, old}] = ns;
    return ns;
  }

  // Section s stores stream `old` to its scratch tensor; when the section also reads it, a
  // Broadcast feeds both the local consumer and the store.
  void carryStore(int s, int old) {
    const Stream& st = g_.streams[size_t(old)];
    const CarryShape c = carryShape(g_, s_, {old});
    int toStore = pendingStore_.at(old);
    if (localUse_.count(old)) {
      Op b;
      b.name = "carry_bcast_" + st.name;
      b.kind = OpKind::Broadcast;
      b.loc = st.loc;
      b.inputs = {{toStore}};
      const int local = newStream(st.name + ".local", old);
      out_.graph.streams[size_t(local)].declared = st.declared;
      sm_[{s, old}] = local;
      toStore = newStream(st.name + ".store", old);
      b.outputs = {{local}, {toStore}};
      addOp(std::move(b), s);
    }
    if (onchip_.count(old)) {  // Bufferize(b = the stream's rank): the whole stream stays in the unit
      Op k;
      k.name = "carry_keep_" + st.name;
      k.kind = OpKind::Bufferize;
      k.loc = st.loc;
      k.inputs = {{toStore}};
      const int ref = newStream(st.name + ".kept", old);
      k.outputs = {{ref}};
      k.attrs["b"] = scalarAttr(st.loc, std::to_string(c.iter.size() - 1));
      addOp(std::move(k), s);
      kept_[old] = ref;
      out_.plan.carried.push_back({st.name, s, {}, "", 0, c.tiles * c.rows * c.cols * 4, true});
      return;
    }
    Op o;
    o.name = "carry_store_" + st.name;
    o.kind = OpKind::LinearOffChipStore;
    o.loc = st.loc;
    o.inputs = {{toStore}};
    o.attrs["tensor"] = scalarAttr(st.loc, scratchTensor(old, c));
    walkAttrs(o, c);
    addOp(std::move(o), s);
  }
};

// Every tensor, the scratch ones included, must lie inside the arch's DRAM address space.
void checkAddressSpace(const SectionedGraph& sg, const ArchModel& a) {
  const StepGraph& g = sg.graph;
  const int64_t limit = a.offchip.addressBits >= 63 ? INT64_MAX : (int64_t(1) << a.offchip.addressBits);
  for (const Tensor& t : g.tensors) {
    const int64_t end = tensorEndByte(g, t);
    if (end <= limit) continue;
    if (!t.isScratch)
      throw DiagError("M-310", t.loc,
                      fmt::format("tensor '{}' ends at byte {}, beyond the {}-bit DRAM address space of '{}'", t.name,
                                  end, a.offchip.addressBits, a.name));
    for (const CarriedStream& c : sg.plan.carried)
      if (c.tensor == t.name)
        throw DiagError("M-310", t.loc,
                        fmt::format("carried stream '{}' needs scratch up to byte {}, beyond the {}-bit DRAM address "
                                    "space of '{}'",
                                    c.stream, end, a.offchip.addressBits, a.name));
  }
}

bool fabricTooSmall(const DiagError& e) {
  const std::string& id = e.diags.at(0).id;
  return id == "M-301" || id == "M-303";
}

// A trial cut that fails here may work elsewhere: the fabric is too small for it, it cuts a
// stream that cannot be carried (M-309), or it holds a Bufferize whose Streamify's reader
// has no section yet (M-306).
bool cutFails(const DiagError& e) {
  const std::string& id = e.diags.at(0).id;
  return fabricTooSmall(e) || id == "M-309" || id == "M-306";
}

// Maps (and so configures: map/unit_config.hpp) a sectioned graph on `a` with enough contexts
// for its sections; throws the mapper's DiagError when a section does not fit. Checks only
// the shapes on an unbounded fabric, which the pipeline sizes for the cut (fabricForGraph).
void checkFits(SectionedGraph& sg, const ArchModel& a) {
  ArchModel wide = a;
  wide.contexts = std::max(a.contexts, sg.plan.sections);
  // Addresses are checked once the cut is final (checkAddressSpace): a trial also stores
  // streams that later ops read, which may not fit where the final cut does.
  wide.offchip.addressBits = 48;
  sg.shapes = checkShapes(sg.graph);
  // An unbounded fabric (fabricForGraph) has a unit for every operator: every cut fits.
  if (!a.unbounded) mapGraph(sg.graph, sg.shapes, wide, sg.plan.sectionOf);
}

// The operators that get a section, in dependency order: core ops, a cluster by its host.
std::vector<int> coreOps(const StepGraph& g, const Facts& f) {
  std::vector<int> core;
  for (int op : orderOps(g).order)
    if (f.role[size_t(op)] == Role::Core && !f.cl.isMember(op)) core.push_back(op);
  return core;
}

// The ops whose sections decide where `op` runs: itself if it is core, else (a repeated
// load, an absorbed op) the core readers of its outputs, through absorbed ops; a cluster
// member counts as its host.
std::vector<int> sectionedReaders(const StepGraph& g, const Facts& f, int op) {
  const Clusters& cl = f.cl;
  std::vector<int> out, todo = {op};
  std::set<int> seen;
  while (!todo.empty()) {
    const int o = todo.back();
    todo.pop_back();
    if (!seen.insert(o).second) continue;
    if (cl.isMember(o)) {
      todo.push_back(cl.host[size_t(o)]);
      continue;
    }
    if (f.role[size_t(o)] == Role::Core) {
      out.push_back(o);
      continue;
    }
    for (StreamId s : g.ops[size_t(o)].outputs)
      for (OpId c : g.stream(s).consumers) todo.push_back(c.v);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Puts `op` and the members of the cluster it hosts into section k (-1: none).
void place(std::vector<int>& sec, const Facts& f, int op, int k) {
  sec[size_t(op)] = k;
  for (int m : f.members[size_t(op)]) sec[size_t(m)] = k;
}

// Per op, the group of operators joined by streams that cannot be carried between sections
// (carryShape's M-309), -1 for an op in none: union-find over each such stream's producer and
// readers (a repeated load or SelectGen joins nothing).
std::vector<int> uncarriableGroups(const StepGraph& g, const ShapeResult& s, const Facts& f) {
  std::vector<int> up(g.ops.size());
  for (size_t i = 0; i < up.size(); ++i) up[i] = int(i);
  std::function<int(int)> root = [&](int x) { return up[size_t(x)] == x ? x : up[size_t(x)] = root(up[size_t(x)]); };
  std::vector<bool> joined(g.ops.size(), false);
  for (size_t sid = 0; sid < g.streams.size(); ++sid) {
    const Stream& st = g.streams[sid];
    if (!st.producer.valid() || f.role[size_t(st.producer.v)] == Role::Free) continue;
    try {
      carryShape(g, s, StreamId{int(sid)});
      continue;
    } catch (const DiagError&) {
    }
    for (OpId c : st.consumers) {
      up[size_t(root(c.v))] = root(st.producer.v);
      joined[size_t(c.v)] = joined[size_t(st.producer.v)] = true;
    }
  }
  std::vector<int> group(g.ops.size(), -1);
  for (size_t i = 0; i < group.size(); ++i)
    if (joined[i]) group[i] = root(int(i));
  return group;
}

// The greedy cut: the placed operators in dependency order fill section 0 until the next
// one does not fit, then section 1, ... (planSections). With `grouped`, operators joined by a
// stream that cannot be carried (a Partition and the readers of its ragged outputs, M-309)
// are placed and moved as one, in the section of the first of them in order.
struct GreedyCut {
  std::vector<int> sec;  ///< per op: its section
  int last = 0;          ///< the last section
  SectionedGraph sg;
};
GreedyCut greedyCut(const StepGraph& g, const ShapeResult& s, const ArchModel& a, const Facts& f, int minSections,
                    bool grouped, const std::vector<std::pair<int, int>>& after) {
  // A cluster of dynamic operators (map/clusters.hpp) runs on one unit: its members go
  // into their host's section.
  const std::vector<int> core = coreOps(g, f);
  std::vector<int> sec(g.ops.size(), -1);
  const std::vector<int> group = grouped ? uncarriableGroups(g, s, f) : std::vector<int>(g.ops.size(), -1);
  // A Bufferize's buffer is replayed by its Streamify, which runs in the section of its
  // reader (it is absorbed) and cannot be carried from another (M-309). Inserted buffers
  // also come late in dependency order (their op indices are the graph's last), so placed
  // on its own turn a Bufferize fails every trial until the reader comes (M-306), and each
  // failure closed a section. It is placed with its Streamify's first core reader instead.
  std::vector<int> pos(g.ops.size(), -1);
  for (size_t k = 0; k < core.size(); ++k) pos[size_t(core[k])] = int(k);
  std::vector<std::vector<int>> buffersOf(g.ops.size());  // per core reader: the Bufferizes it places
  std::vector<bool> deferred(g.ops.size(), false);
  for (int b : core) {
    const Op& o = g.ops[size_t(b)];
    if (o.kind != OpKind::Bufferize || o.outputs.size() != 1) continue;
    const Stream& ref = g.stream(o.outputs[0]);
    if (ref.consumers.size() != 1 || g.op(ref.consumers[0]).kind != OpKind::Streamify) continue;
    int first = -1;
    for (int r : sectionedReaders(g, f, ref.consumers[0].v))
      if (pos[size_t(r)] > pos[size_t(b)] && (first < 0 || pos[size_t(r)] < pos[size_t(first)])) first = r;
    if (first < 0) continue;
    buffersOf[size_t(first)].push_back(b);
    deferred[size_t(b)] = true;
  }
  auto assign = [&](int op, int k) {
    place(sec, f, op, k);
    for (int b : buffersOf[size_t(op)]) place(sec, f, b, k);
    if (group[size_t(op)] < 0) return;
    for (int m : core)
      if (group[size_t(m)] == group[size_t(op)]) place(sec, f, m, k);
  };
  const int cap = minSections > 1 ? int((core.size() + size_t(minSections) - 1) / size_t(minSections)) : int(core.size());
  // Fill a section while its ops fit (trials store only what built sections read); then
  // close it with the stores every later op needs, moving its last ops on to the next
  // section while that does not fit or cuts a stream that cannot be carried.
  int cur = 0;
  std::vector<int> inSection;  // indices into `core` of the open section's ops
  // On an unbounded fabric every section fits (checkFits): a cut is checked only for the
  // streams it carries (Cutter::carries), when the section closes; the graph is built only
  // for the error when one cannot be carried.
  auto trial = [&](bool closing) -> std::optional<DiagError> {
    if (a.unbounded && (!closing || Cutter(g, s, f, sec, cur + 1, true).carries())) return std::nullopt;
    try {
      SectionedGraph t = Cutter(g, s, f, sec, cur + 1, closing).run();
      if (!a.unbounded) checkFits(t, a);
    } catch (const DiagError& e) {
      if (!cutFails(e)) throw;
      return e;
    }
    return std::nullopt;
  };
  auto alone = [&](DiagError e, int op) {
    e.diags.at(0).notes.push_back(
        {g.ops[size_t(op)].loc, fmt::format("operator '{}' does not fit the fabric even alone in a section", g.ops[size_t(op)].name)});
    return e;
  };
  size_t i = 0;
  // `atCap`: closing because of --sections; a cut that cannot be carried there lets the
  // section grow past the cap instead (returns false). Not once the section has shrunk
  // because it did not fit: growing again would loop between the two failures, so it
  // shrinks on (and the ungrouped cut may end in M-309, which planSections retries grouped).
  auto close = [&](bool atCap) {
    for (bool shrunk = false;; shrunk = true) {
      std::optional<DiagError> err = trial(true);
      if (!err) break;
      if (atCap && !shrunk && err->diags.at(0).id == "M-309") return false;
      if (inSection.size() <= 1) throw alone(*err, core[size_t(inSection.at(0))]);
      const int back = inSection.back();
      inSection.pop_back();
      assign(core[size_t(back)], -1);
      i = std::min(i, size_t(back));
    }
    ++cur;
    inSection.clear();
    return true;
  };
  while (i < core.size()) {
    if (sec[size_t(core[i])] >= 0 || deferred[size_t(core[i])]) {  // placed with its group or reader
      ++i;
      continue;
    }
    if (int(inSection.size()) >= cap) close(true);
    const int op = core[i];
    // A join that must wait for an op of the open section (planBuffers' cut, a state
    // tensor's load) starts the next, and so does a group holding one.
    const bool waits = std::any_of(after.begin(), after.end(), [&](const std::pair<int, int>& hj) {
      const bool member = hj.second == op || (group[size_t(op)] >= 0 && group[size_t(hj.second)] == group[size_t(op)]);
      return member && sec[size_t(hj.first)] == cur;
    });
    if (waits && !inSection.empty()) {
      close(false);
      continue;
    }
    assign(op, cur);
    // An op that does not fit an empty section stays: closing the section decides (it may
    // need the next op with it, e.g. a Bufferize and its Streamify's reader).
    if (!trial(false) || inSection.empty()) {
      inSection.push_back(int(i++));
      continue;
    }
    assign(op, -1);
    close(false);
  }
  if (!inSection.empty()) close(false);
  --cur;  // the last section closed
  for (auto [h, j] : after)
    if (sec[size_t(h)] >= sec[size_t(j)])
      throw std::logic_error(fmt::format("internal error: section cut runs '{}' (section {}) before or with '{}' (section {})",
                                         g.ops[size_t(j)].name, sec[size_t(j)], g.ops[size_t(h)].name, sec[size_t(h)]));
  SectionedGraph sg = Cutter(g, s, f, sec, cur + 1, true).run();
  checkFits(sg, a);
  return {sec, cur, std::move(sg)};
}

}  // namespace

SectionedGraph planSections(const StepGraph& g, const ShapeResult& s, const ArchModel& a, int minSections,
                            bool onChipCarry, const std::vector<std::pair<int, int>>& afterCuts) {
  // A state tensor's loads run in a later section than its stores: within one section
  // nothing orders a load's DRAM reads after a store's writes.
  std::vector<std::pair<int, int>> after = afterCuts;
  const Facts f(g);
  for (auto [st, ld] : stateOrder(g))
    for (int r : sectionedReaders(g, f, ld)) after.push_back({st, r});
  SectionedGraph whole{g, s, {}};
  whole.plan.sectionOf.assign(g.ops.size(), 0);
  if (minSections <= 1 && after.empty()) {
    try {
      checkFits(whole, a);
      checkAddressSpace(whole, a);
      return whole;
    } catch (const DiagError& e) {
      if (!fabricTooSmall(e)) throw;
      // A feedback cycle runs in one section: cutting it would need the cycle's tokens to
      // wait in DRAM for a section that runs after the one that reads them.
      if (!orderOps(g).feedback.empty()) {
        DiagError whole = e;
        whole.diags.at(0).notes.push_back(
            {g.loc, "a graph with feedback streams is not cut into sections: it must fit the fabric whole"});
        throw whole;
      }
    }
  }
  GreedyCut gc;
  try {
    gc = greedyCut(g, s, a, f, minSections, false, after);
  } catch (const DiagError& e) {
    if (e.diags.at(0).id != "M-309") throw;
    try {
      gc = greedyCut(g, s, a, f, minSections, true, after);
    } catch (const DiagError& grouped) {
      // The grouped cut got past the uncarriable streams: what stopped it is the real
      // blocker (e.g. an operator too big for its unit, M-302), unless it is M-309 again.
      if (grouped.diags.at(0).id != "M-309") throw;
      throw e;
    }
  }
  std::vector<int>& sec = gc.sec;
  const int cur = gc.last;
  SectionedGraph sg = std::move(gc.sg);
  const std::vector<int> core = coreOps(g, f);
  auto assign = [&](int op, int k) { place(sec, f, op, k); };
  // Fewer spilled bytes: move the last op of a section into the next one while that fits
  // and carries fewer bytes (e.g. a RepeatStatic at a cut: carry its input, not its n-fold
  // output).
  for (int k = 0; k < cur; ++k)
    for (;;) {
      auto last = std::find_if(core.rbegin(), core.rend(), [&](int op) { return sec[size_t(op)] == k; });
      if (std::count_if(core.begin(), core.end(), [&](int op) { return sec[size_t(op)] == k; }) < 2) break;
      assign(*last, k + 1);
      SectionedGraph moved;
      bool better = false;
      const bool keepsOrder = std::none_of(after.begin(), after.end(), [&](const std::pair<int, int>& hj) {
        return sec[size_t(hj.first)] >= sec[size_t(hj.second)];
      });
      if (keepsOrder) {
        try {
          moved = Cutter(g, s, f, sec, cur + 1, true).run();
          better = moved.plan.carriedDramBytes() < sg.plan.carriedDramBytes();
          if (better) checkFits(moved, a);
        } catch (const DiagError& e) {
          if (!cutFails(e)) throw;
          better = false;
        }
      }
      if (!better) {
        assign(*last, k);
        break;
      }
      sg = std::move(moved);
    }
  // Keep carried streams in memory units where the cut still maps, largest first: a stream
  // read in one later section, whose whole stream fits one unit's buffer, with a memory unit
  // free from its producing section to its reading one (the mapper reserves it).
  if (onChipCarry) {
    std::unordered_map<std::string, int> streamId;
    for (size_t i = 0; i < g.streams.size(); ++i) streamId.emplace(g.streams[i].name, int(i));
    std::vector<std::pair<int64_t, int>> cand;  // (-bytes, old stream id): largest first, then graph order
    for (const CarriedStream& c : sg.plan.carried) {
      if (c.to.size() != 1 || c.bytes > a.mu.capacityBytes) continue;
      cand.push_back({-c.bytes, streamId.at(c.stream)});
    }
    std::sort(cand.begin(), cand.end());
    std::set<int> onchip;
    auto tryCut = [&](const std::set<int>& kept) {
      try {
        SectionedGraph t = Cutter(g, s, f, sec, cur + 1, true, kept).run();
        checkFits(t, a);
        sg = std::move(t);
        return true;
      } catch (const DiagError& e) {
        if (!cutFails(e) && e.diags.at(0).id != "M-302") throw;
        return false;
      }
    };
    // On an unbounded fabric every cut maps: all of them at once, one by one only if that fails.
    std::set<int> all;
    for (const auto& [negBytes, sid] : cand) all.insert(sid);
    const bool allKept = a.unbounded && !all.empty() && tryCut(all);
    if (!allKept)
      for (const auto& [negBytes, sid] : cand) {
        onchip.insert(sid);
        if (!tryCut(onchip)) onchip.erase(sid);
      }
  }
  checkAddressSpace(sg, a);
  return sg;
}

std::string sectionsText(const StepGraph& g, const SectionPlan& p, int contexts) {
  std::string s = fmt::format("# sections: {}\n", p.sections);
  for (int k = 0; k < p.sections; ++k) {
    std::string ops;
    for (size_t i = 0; i < g.ops.size(); ++i)
      if (p.sectionOf[i] == k) ops += " " + g.ops[i].name;
    s += fmt::format("section {} (context {}{}):{}\n", k, k % contexts, k >= contexts ? ", reloaded" : "", ops);
  }
  for (const CarriedStream& c : p.carried) {
    std::string to;
    for (int t : c.to) to += fmt::format("{}{}", to.empty() ? "" : ",", t);
    if (c.onChip)
      s += fmt::format("carried {} : section {} -> {} in a memory unit (carry_keep_{} / carry_replay_{}), {} bytes\n",
                       c.stream, c.from, to, c.stream, c.stream, c.bytes);
    else
      s += fmt::format("carried {} : section {} -> {} via DRAM, {} bytes, scratch {} at 0x{:x}\n", c.stream, c.from, to,
                       c.bytes, c.tensor, c.base);
  }
  s += fmt::format("carried bytes: {} in memory units, {} through DRAM\n", p.carriedOnchipBytes(), p.carriedDramBytes());
  return s;
}

}  // namespace stepgen
