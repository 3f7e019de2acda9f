// estimateTiming: builds the timing model from what the bitstream configures. Every enabled
// (unit, context) of the ConfigImage becomes the unit model its configuration fields select
// (AG: store, random, per_group, count; CU: func, dyn_m, bt; MU: route, combine, out_meta, keep,
// replay, b, repeat), with the numbers the RTL reads from the same fields (passes, k, n, log2n,
// accum_b, idx_word, the AG walk). The functional model's token streams give what the
// configuration cannot: tile sizes, data-dependent groups and random addresses.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include "arch/unit_catalogue.hpp"
#include "bitstream/reload.hpp"
#include "model/timing.hpp"
#include "model/timing/units.hpp"

namespace stepgen {

namespace {

using namespace timing;

/// The configuration fields of one unit in one context, by name (KindLayout::field; read
/// them once per unit, not per tile).
struct Fields {
  const KindLayout* kind = nullptr;
  const std::vector<uint64_t>* values = nullptr;
  int64_t operator()(const char* name) const {
    return int64_t((*values)[size_t(&kind->field(name) - kind->fields.data())]);
  }
};

// The route unit's meta beats (sg_route.sv meta mode) as link tiles: one tile per group
// (tile of the EagerMerge data output) with one beat per entry, then DONE.
TokenStream metaTokens(const TokenStream& merged, int64_t wpb) {
  TokenStream meta;
  for (const Token& t : merged) {
    if (t.kind == Kind::Data) meta.push_back(Token::tile(t.rows, wpb, {}, 1));
    if (t.kind == Kind::Done) meta.push_back(t);
  }
  return meta;
}

// An AG's walk as its fields configure it (sg_ag.sv).
AgWalk walkOf(const Fields& f) {
  AgWalk w;
  for (int l = 0; l < 4; ++l) w.n[l] = f(fmt::format("n{}", l).c_str()), w.s[l] = f(fmt::format("s{}", l).c_str());
  w.base = f("base"), w.rows = f("rows"), w.ppr = f("ppr"), w.rowStride = f("row_stride");
  return w;
}

// Pieces of every Data tile of a linear AG's stream: each takes the next ceil(words*4/64)
// pieces of the walk, as the AG moves beats (one walk tile per tile, or a run of rows for a
// dynamic stream stored into a walk of rows).
void linearPieces(AgUnit& u, const Fields& f, const TokenStream& toks) {
  u.walk = walkOf(f);
  const int64_t total = u.walk.pieces();
  int64_t next = 0;
  for (const Token& tok : toks) {
    const int64_t n = tok.kind == Kind::Data ? std::min((tok.words() * 4 + 63) / 64, total - next) : 0;
    u.tileStart.push_back(next), u.tilePieces.push_back(n);
    next += n;
  }
}

// Pieces of a random load's out tile j: the walk tile named by address tile j (AddrGen: tile
// a of the tensor in row-major tile order, s0 bytes apart).
void randomPieces(AgUnit& u, const Fields& f, const TokenStream& addr) {
  u.walk = walkOf(f);
  u.random = true;
  for (const Token& a : addr) {
    const bool data = a.kind == Kind::Data;
    u.tileStart.push_back(data ? u.walk.base + int64_t(a.sel.at(0)) * u.walk.s[0] : 0);
    u.tilePieces.push_back(data ? u.walk.piecesPerTile() : 0);
  }
}

// A run load (sg_ag.sv count = 1): per meta row on in0, cnt_word's count of tiles (an index
// load, count = 0: one tile) from
// base + index * idx_stride, s0 apart; each out tile's group is the meta token that made it.
// A STOP on in0 would be a STOP job, which AgRandomLoad's hold rule does not model.
void runPieces(AgRandomLoad& u, const Fields& f, const TokenStream& meta) {
  u.walk = walkOf(f);
  u.random = true;
  const size_t iw = size_t(f("idx_word")), cw = size_t(f("cnt_word"));
  const int64_t stride = f("idx_stride");
  for (size_t k = 0; k < meta.size(); ++k) {
    const Token& a = meta[k];
    if (a.kind == Kind::Stop) throw std::logic_error("internal error: the timing model has no STOP job of a run load");
    const int64_t n = a.kind == Kind::Data && f("count") ? int64_t(a.data->at(cw)) : 1;
    for (int64_t j = 0; j < n; ++j) {
      const bool data = a.kind == Kind::Data;
      u.tileStart.push_back(data ? u.walk.base + int64_t(a.data->at(iw)) * stride + j * u.walk.s[0] : 0);
      u.tilePieces.push_back(data ? u.walk.piecesPerTile() : 0);
      u.groupOf.push_back(k);
    }
  }
  u.groupFirst.assign(meta.size(), SIZE_MAX);
  for (size_t j = u.groupOf.size(); j-- > 0;) u.groupFirst[u.groupOf[j]] = j;
}

// A random store (sg_ag.sv store = 1, random = 1): data tile d on in0 goes to
// base + index * idx_stride, index = word idx_word of meta row d on in1.
void storePieces(AgStore& u, const Fields& f, const TokenStream& data, const TokenStream& meta) {
  u.walk = walkOf(f);
  u.random = true;
  const size_t iw = size_t(f("idx_word"));
  for (const Token& a : meta) {
    u.metaData.push_back(a.kind == Kind::Data ? u.metaTile.size() : SIZE_MAX);
    if (a.kind == Kind::Data) u.metaTile.push_back(u.metaData.size() - 1);
  }
  for (const Token& t : data) {
    const bool d = t.kind == Kind::Data;
    const size_t ord = u.dataTile.size();
    if (d && ord >= u.metaTile.size()) throw std::logic_error("internal error: a random store has more data tiles than meta rows");
    u.dataOf.push_back(d ? ord : SIZE_MAX);
    if (d) u.dataTile.push_back(u.dataOf.size() - 1);
    const Token* row = d ? &meta.at(u.metaTile[ord]) : nullptr;
    u.tileStart.push_back(d ? u.walk.base + int64_t(row->data ? row->data->at(iw) : 0) * f("idx_stride") : 0);
    u.tilePieces.push_back(d ? u.walk.piecesPerTile() : 0);
  }
}

// Groups of a banked unit from its input and output token sequences.
void buildGroups(Banked& u, const TokenStream& in, const TokenStream& out, int b, bool accum) {
  int k = 0;
  size_t outPos = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    u.group.push_back(k);
    const Token& t = in[i];
    if (t.kind != Kind::Done && t.stop < b) continue;
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

// Data element of every ref tile of an Expand(b) (a tile with stop >= b uses it up; the ref
// DONE pairs with the data DONE), and the ref tile that uses each element up.
void buildExpandGroups(CuExpand& u, const TokenStream& ref, int b, size_t dataTokens) {
  size_t k = 0;
  for (size_t j = 0; j < ref.size(); ++j) {
    u.groupOf.push_back(k);
    if (ref[j].kind == Kind::Done || ref[j].stop >= b) u.closer.push_back(j), ++k;
  }
  if (k != dataTokens) throw std::logic_error("internal error: Expand data and ref groups disagree");
}

// Which input tiles output `index` of Parallelize(n) passes: the outermost elements (closed
// by a stop >= `rank`, field accum_b) e with e mod n = index, and DONE.
void buildParallelOutput(CuParallelize& u, const TokenStream& in, size_t n, int rank, size_t outTokens) {
  size_t e = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool pass = in[i].kind == Kind::Done || e % n == size_t(u.index);
    u.outOf.push_back(pass ? int64_t(u.inOf.size()) : -1);
    if (pass) u.inOf.push_back(i);
    if (in[i].kind != Kind::Done && in[i].stop >= rank) ++e;
  }
  if (u.inOf.size() != outTokens) throw std::logic_error("internal error: Parallelize output tokens disagree");
}

// Output `index` of a Partition(b 0): data element j (a DATA tile) passes iff selector
// element j names it; data STOPs are dropped; DONE passes. A selector STOP would be dropped
// by the unit, which this model does not follow. A fed-back selector may have spare
// elements after the data's: the first is taken like an element's selector, the others are
// drained after the data DONE (drainFrom).
void buildPartitionOutput(CuParallelize& u, const TokenStream& data, const TokenStream& sel, size_t outTokens) {
  std::vector<size_t> selTile;  // selector DATA tiles in order
  for (size_t j = 0; j < sel.size(); ++j) {
    if (sel[j].kind == Kind::Stop) throw std::logic_error("internal error: the timing model has no selector STOP of a partition");
    if (sel[j].kind == Kind::Data) selTile.push_back(j);
  }
  size_t e = 0;
  u.afterData.assign(sel.size(), SIZE_MAX);
  for (size_t i = 0; i < data.size(); ++i) {
    const bool isData = data[i].kind == Kind::Data;
    if (isData && e >= selTile.size()) throw std::logic_error("internal error: partition data without a selector");
    const bool pass = data[i].kind == Kind::Done || (isData && sel[selTile[e]].sel.size() == 1 && sel[selTile[e]].sel[0] == u.index);
    u.selOf.push_back(isData ? selTile[e] : SIZE_MAX);
    if (isData && e + 1 < selTile.size()) u.afterData[selTile[e + 1]] = i;
    u.outOf.push_back(pass ? int64_t(u.inOf.size()) : -1);
    if (pass) u.inOf.push_back(i);
    if (isData) ++e;
  }
  if (e + 1 < selTile.size()) u.drainFrom = selTile[e + 1];
  if (u.inOf.size() != outTokens) throw std::logic_error("internal error: Partition output tokens disagree");
}

// The out tile of every input tile of a Map(select) with `initial` initial tokens: its
// DATA tiles and DONE in order after the initial ones; STOPs are dropped.
void buildSelectOutput(CuSelect& u, const TokenStream& in, size_t outTokens) {
  u.inOf.assign(size_t(u.initial), SIZE_MAX);
  for (size_t i = 0; i < in.size(); ++i) {
    const bool emits = in[i].kind != Kind::Stop;
    u.outOf.push_back(emits ? int64_t(u.inOf.size()) : -1);
    if (emits) u.inOf.push_back(i);
  }
  if (u.inOf.size() != outTokens) throw std::logic_error("internal error: select output tokens disagree");
}

// The input tile of every out tile of an EagerMerge on a CU, from the order the functional
// streams were merged in: `order` (which may name only the first decisions, after a
// deadlock), then every chunk left of input 0, then of input 1 (eagerMergeOp fits it so).
void buildMergeSources(CuMerge& u, const TokenStream& in0, const TokenStream& in1, const std::vector<int>* order) {
  const TokenStream* in[2] = {&in0, &in1};
  std::vector<int> def;
  if (!order) {
    for (int p = 0; p < 2; ++p)
      for (const Token& t : *in[p])
        if (t.kind == Kind::Data) def.push_back(p);
    order = &def;
  }
  size_t next[2] = {0, 0};
  for (int p : *order) {
    if (p < 0 || p > 1) throw std::logic_error("internal error: an EagerMerge's arrival order names no input");
    while (next[p] < in[p]->size() && (*in[p])[next[p]].kind != Kind::Data) ++next[p];
    if (next[p] >= in[p]->size())
      throw std::logic_error("internal error: an EagerMerge's arrival order does not fit its input streams");
    u.from.push_back({p, next[p]++});
  }
  for (int p = 0; p < 2; ++p)
    for (; next[p] < in[p]->size(); ++next[p])
      if ((*in[p])[next[p]].kind == Kind::Data) u.from.push_back({p, next[p]});
  u.from.push_back({0, in0.size() - 1});
}

// Meta group of every out tile of a weight load: T tiles per group, DONE with the input's
// DONE (meta tile `groups`).
void buildWalkGroups(AgRandomLoad& u, const TokenStream& out, int64_t T, size_t groups) {
  size_t data = 0;
  for (const Token& t : out) {
    if (t.kind == Kind::Done) u.groupOf.push_back(groups);
    else u.groupOf.push_back(t.kind == Kind::Data ? size_t(int64_t(data++) / T) : (data ? size_t(int64_t(data - 1) / T) : 0));
  }
  u.groupFirst.assign(groups + 1, SIZE_MAX);
  for (size_t j = out.size(); j-- > 0;) u.groupFirst[u.groupOf[j]] = j;
}

// The unit model a configured (unit, context) runs, chosen from its fields only.
std::unique_ptr<Unit> unitFor(UnitKind kind, const Fields& f, const ArchModel& a) {
  switch (kind) {
    case UnitKind::AddressGen: {
      std::unique_ptr<AgUnit> x;
      if (f("store")) {
        x = std::make_unique<AgStore>();
      } else {
        std::unique_ptr<AgLoad> ld;
        if (f("random")) ld = std::make_unique<AgRandomLoad>();
        else ld = std::make_unique<AgLoad>();
        ld->outstanding = a.offchip.outstanding;
        x = std::move(ld);
      }
      x->piecesPerBeat = a.linkBytes() / 64;
      return x;
    }
    case UnitKind::Compute:
      switch (CuFunc(f("func"))) {
        case CuFunc::Matmul: return std::make_unique<CuMatmul>();
        case CuFunc::RowScale: {
          auto x = std::make_unique<CuStream>();
          x->rowscaleDrops = std::max<int64_t>(f("n"), 1) - 1;
          x->rowscaleRowBeats = std::max<int64_t>(f("k") / a.wordsPerBeat(), 1);
          return x;
        }
        case CuFunc::Silu: case CuFunc::Mul: case CuFunc::Add: case CuFunc::Scan: case CuFunc::ScanMax:
        case CuFunc::ScanMaxExcl: case CuFunc::Sub: case CuFunc::Exp: case CuFunc::Recip:
        case CuFunc::Rsqrt: case CuFunc::TopK: case CuFunc::TopKLogits:
          return std::make_unique<CuStream>();
        case CuFunc::RowMax: case CuFunc::RowSum: {
          auto x = std::make_unique<CuStream>();
          x->rowBeats = f("n");
          x->treeStages = a.rowTreeStages();
          return x;
        }
        case CuFunc::Accum: case CuFunc::AccumMax: case CuFunc::Retile:
          return std::make_unique<Banked>();
        case CuFunc::AccumRescale: {
          // Its add is a second stage: a beat that reads what the beat before it wrote (tiles
          // of one beat) waits a cycle for it (docs/hardware.md, timing table). Keyed on the
          // configured tile length: dynamic tiles (dyn_m) cut to one beat are not charged.
          auto x = std::make_unique<Banked>();
          x->inRateExtra = f("o_beats") == 1 ? 1 : 0;
          return x;
        }
        case CuFunc::Expand: return std::make_unique<CuExpand>();
        case CuFunc::Merge: return std::make_unique<CuMerge>();
        case CuFunc::Select: {
          auto x = std::make_unique<CuSelect>();
          x->initial = f("n");
          return x;
        }
        case CuFunc::Parallelize: case CuFunc::Partition: {
          auto x = std::make_unique<CuParallelize>();
          x->index = int(f("idx_word"));
          x->partition = CuFunc(f("func")) == CuFunc::Partition;
          return x;
        }
        default: throw std::logic_error(fmt::format("internal error: CU func {} has no timing model", f("func")));
      }
    case UnitKind::Memory: {
      if (f("route")) return std::make_unique<MuRoute>();
      if (f("combine")) return std::make_unique<MuCombine>();
      if (f("keep")) {
        auto x = std::make_unique<MuKeep>();
        x->rate = muCyclesPerBeat(a);
        return x;
      }
      if (f("replay")) {
        auto x = std::make_unique<MuReplay>();
        x->rate = muCyclesPerBeat(a);
        return x;
      }
      auto x = std::make_unique<Banked>();  // buffer mode: a beat per CPB cycles on both sides
      x->rate = muCyclesPerBeat(a);
      return x;
    }
    default: throw std::logic_error("internal error: an empty site is configured");
  }
}

}  // namespace

namespace {

// The units configured in context `ctx` (one section), timed from that section's start.
TimingResult estimateSection(const StepGraph& g, const Mapping& mp, const ArchModel& a, const ConfigLayout& layout,
                             const MergeOrders& orders,
                             const ConfigImage& img, const std::vector<TokenStream>& streams, int ctx) {
  TimingModel m(a);
  if (ctx > 0) m.startup = 0;
  const int64_t wpb = a.wordsPerBeat();

  // Which op each (unit, context) runs, for its token streams and its name in reports.
  std::map<std::pair<int, int>, int> opAt;
  for (size_t op = 0; op < g.ops.size(); ++op) {
    const OpPlacement& pl = mp.ops[op];
    if (pl.unit < 0) continue;
    opAt[{pl.unit, pl.ctx}] = int(op);
    if (pl.auxUnit >= 0) opAt[{pl.auxUnit, pl.ctx}] = int(op);
    for (int u : pl.extraUnits) opAt[{u, pl.ctx}] = int(op);
  }

  // Unit models of every enabled (unit, context). They are created in op order (a route
  // EagerMerge's meta twin and Parallelize's further outputs right after their op), since
  // the order in which loads claim DRAM slots is part of the schedule.
  struct Site {
    int op, unit, ctx;
    Fields f;
    UnitKind kind;
  };
  std::vector<Site> sites;
  for (const UnitConfigSlot& s : layout.slots) {
    const size_t si = size_t(&s - layout.slots.data());
    Fields f{&layout.kindLayout(s.kind), &img.values.at(si).at(size_t(ctx))};
    if (!f("enable")) continue;
    auto it = opAt.find({s.unit, ctx});
    if (it == opAt.end()) throw std::logic_error("internal error: a configured unit runs no op");
    sites.push_back({it->second, s.unit, ctx, f, s.kind});
  }
  std::stable_sort(sites.begin(), sites.end(), [&](const Site& x, const Site& y) {
    auto rank = [&](const Site& z) {
      const OpPlacement& pl = mp.ops[size_t(z.op)];
      if (z.unit == pl.unit) return 0;
      if (z.unit == pl.auxUnit) return 1;
      return 2 + int(std::find(pl.extraUnits.begin(), pl.extraUnits.end(), z.unit) - pl.extraUnits.begin());
    };
    return std::make_pair(x.op, rank(x)) < std::make_pair(y.op, rank(y));
  });
  std::map<std::pair<int, int>, int> unitOf, linkOf;  // (unit, ctx) -> timing unit (= index in sites) / its output link
  for (const Site& s : sites) {
    std::unique_ptr<Unit> u = unitFor(s.kind, s.f, a);
    const Op& o = g.ops[size_t(s.op)];
    const OpPlacement& pl = mp.ops[size_t(s.op)];
    u->name = o.name;
    u->fabricUnit = s.unit;
    if (s.unit == pl.auxUnit) u->name += " (selector)";
    for (size_t k = 0; k < pl.extraUnits.size(); ++k)
      if (s.unit == pl.extraUnits[k]) u->name += fmt::format(" (output {})", k + 1);
    unitOf[{s.unit, s.ctx}] = int(m.units.size());
    m.units.push_back(std::move(u));
  }

  // One output link per producing (unit, context), carrying the stream its consumers read
  // (a route unit with out_meta: its meta beats, one tile per group).
  auto timingUnit = [&](int unit, int ctx) {
    auto it = unitOf.find({unit, ctx});
    if (it == unitOf.end()) throw std::logic_error("internal error: a route from or to an unconfigured unit");
    return it->second;
  };
  for (const Route& r : mp.routes) {
    const int srcCtx = mp.ops[size_t(r.srcOp)].ctx;
    if (r.ctx != ctx || linkOf.count({r.srcUnit, srcCtx})) continue;
    Link l;
    l.name = g.stream(r.stream).name;
    l.producer = timingUnit(r.srcUnit, srcCtx);
    const Site& s = sites[size_t(l.producer)];
    if (s.kind == UnitKind::Memory && s.f("route") && s.f("out_meta"))
      l.init(metaTokens(streams.at(g.ops[size_t(s.op)].outputs[0].v), wpb), wpb);
    else
      l.init(streams.at(r.stream.v), wpb);
    linkOf[{r.srcUnit, srcCtx}] = int(m.links.size());
    m.units[size_t(l.producer)]->out = int(m.links.size());
    m.links.push_back(std::move(l));
  }
  for (const Route& r : mp.routes) {
    if (r.ctx != ctx) continue;
    const int srcCtx = mp.ops[size_t(r.srcOp)].ctx;
    Link& l = m.links[size_t(linkOf.at({r.srcUnit, srcCtx}))];
    const int ui = timingUnit(r.dstUnit, r.ctx);
    Unit& u = *m.units[size_t(ui)];
    const int c = l.addConsumer(ui, r.dstPort, u.streams(r.dstPort), u.inRate(), r.fifoDepth, u.dropsBeforeLast(r.dstPort));
    if (int(u.in.size()) <= r.dstPort) u.in.resize(size_t(r.dstPort) + 1, {-1, -1});
    u.in[size_t(r.dstPort)] = {linkOf.at({r.srcUnit, srcCtx}), c};
    l.name += fmt::format(" ({} -> {})", m.units[size_t(l.producer)]->name, u.name);
  }

  // Unit parameters: the configuration's numbers, the functional model's tiles.
  for (size_t ui = 0; ui < sites.size(); ++ui) {
    const Site& s = sites[ui];
    const Op& o = g.ops[size_t(s.op)];
    const Fields& f = s.f;
    Unit* u = m.units[ui].get();
    if (auto* mm = dynamic_cast<CuMatmul*>(u)) {
      const int64_t K = f("k"), N = f("bt") ? f("n") : int64_t(1) << f("log2n"), passes = f("passes");
      const bool dynM = f("dyn_m") != 0;
      for (const Token& x : streams.at(o.inputs[0].v)) {
        int64_t c = 0;
        if (x.kind == Kind::Data) {
          const int64_t M = (x.parts.empty() ? x : x.parts[0]).rows;
          c = dynM ? (M * N + a.cu.lanes - 1) / a.cu.lanes * K : passes * K;
        }
        mm->computeCycles.push_back(c);
      }
      mm->computeEnd.assign(m.links[size_t(mm->in[0].first)].size(), kUnknown);
    } else if (auto* ag = dynamic_cast<AgLoad*>(u)) {
      const Link& l = m.links[size_t(ag->out)];
      ag->pop.reset(ag->outstanding + 2);
      ag->firstIssue.assign(l.size(), 0), ag->lastPop.assign(l.size(), 0);
      if (auto* rl = dynamic_cast<AgRandomLoad*>(u); rl && !f("per_group")) {
        runPieces(*rl, f, streams.at(o.inputs[0].v));
      } else if (rl) {
        randomPieces(*rl, f, streams.at(o.inputs[0].v));
        buildWalkGroups(*rl, streams.at(o.outputs[0].v), f("n0"), m.links[size_t(rl->in[0].first)].size() - 1);
      } else {
        linearPieces(*ag, f, streams.at(o.outputs[0].v));
      }
    } else if (auto* st = dynamic_cast<AgStore*>(u); st && f("random")) {
      storePieces(*st, f, streams.at(o.inputs[1].v), streams.at(o.inputs[0].v));  // inputs [addresses, data]
    } else if (st) {
      linearPieces(*st, f, streams.at(o.inputs[0].v));
    } else if (auto* ex = dynamic_cast<CuExpand*>(u)) {
      buildExpandGroups(*ex, streams.at(o.inputs[1].v), int(f("accum_b")), m.links[size_t(ex->in[0].first)].size());
    } else if (auto* mg = dynamic_cast<CuMerge*>(u)) {
      const auto it = orders.find(s.op);
      buildMergeSources(*mg, streams.at(o.inputs[0].v), streams.at(o.inputs[1].v), it == orders.end() ? nullptr : &it->second);
    } else if (auto* pz = dynamic_cast<CuParallelize*>(u); pz && pz->partition) {
      buildPartitionOutput(*pz, streams.at(o.inputs[0].v), streams.at(o.inputs[1].v), m.links[size_t(pz->out)].size());
    } else if (pz) {
      buildParallelOutput(*pz, streams.at(o.inputs[0].v), size_t(f("n")), int(f("accum_b")), m.links[size_t(pz->out)].size());
    } else if (auto* sl = dynamic_cast<CuSelect*>(u)) {
      buildSelectOutput(*sl, streams.at(o.inputs[0].v), m.links[size_t(sl->out)].size());
    } else if (auto* cb = dynamic_cast<MuCombine*>(u)) {
      const Link &rows = m.links[size_t(cb->in[0].first)], &meta = m.links[size_t(cb->in[1].first)];
      std::vector<size_t> metaData;
      for (size_t k = 0; k < meta.size(); ++k)
        if (meta.kinds[k] == Kind::Data) metaData.push_back(k);
      size_t n = 0;
      for (size_t i = 0; i < rows.size(); ++i)
        cb->metaOf.push_back(rows.kinds[i] == Kind::Data && n < metaData.size() ? metaData[n++] : SIZE_MAX);
    } else if (auto* bk = dynamic_cast<Banked*>(u)) {
      const bool mu = s.kind == UnitKind::Memory;
      // The tiles the bank drains: an MU's Streamify output (before any Flatten after it).
      StreamId outS = o.outputs[0];
      if (o.kind == OpKind::Bufferize) outS = g.op(g.stream(o.outputs[0]).consumers.at(0)).outputs.at(0);
      buildGroups(*bk, streams.at(o.inputs[0].v), streams.at(outS.v), int(mu ? f("b") : f("accum_b")),
                  !mu && (CuFunc(f("func")) == CuFunc::Accum || CuFunc(f("func")) == CuFunc::AccumMax ||
                          CuFunc(f("func")) == CuFunc::AccumRescale));
    }
  }

  m.computeChains();
  m.run();

  if (const char* dbg = std::getenv("STEPGEN_MODEL_TRACE")) {  // calibration aid: every transfer
    const std::string path = ctx == 0 ? std::string(dbg) : fmt::format("{}.s{}", dbg, ctx);  // one file per section
    if (std::FILE* fp = std::fopen(path.c_str(), "w")) {
      for (auto& l : m.links)
        for (size_t i = 0; i < l.size(); ++i) {
          std::fprintf(fp, "%s tile %zu beats %lld offer %lld start %lld end %lld", l.name.c_str(), i, (long long)l.beats[i],
                       (long long)l.offer[i], (long long)l.start[i], (long long)l.end[i]);
          for (size_t c = 0; c < l.cons.size(); ++c)
            std::fprintf(fp, " | %s %lld..%lld", m.units[size_t(l.cons[c])]->name.c_str(), (long long)l.cstart[c][i],
                         (long long)l.cend[c][i]);
          std::fprintf(fp, "\n");
        }
      std::fclose(fp);
    }
  }
  TimingResult r;
  for (auto& u : m.units)
    if (const auto* mm = dynamic_cast<const CuMatmul*>(u.get()))
      for (int64_t c : mm->computeCycles) r.longestCompute = std::max(r.longestCompute, c);
  for (const DramChannel& ch : m.channels) r.dramLate += ch.late;
  r.offchipReadBytes = m.readBytes;
  r.offchipWriteBytes = m.writeBytes;
  // Stuck streams: first those whose producer offers a tile that a consumer's FIFO does
  // not take (full), then those still waiting for data.
  std::vector<std::string> waiting;
  for (auto& l : m.links) {
    if (l.finished()) continue;
    r.deadlock = true;
    // A consumer refuses when it does not take (or let go of) a tile the producer pushed
    // into its FIFO.
    std::string refusing;
    for (size_t c = 0; c < l.cons.size(); ++c) {
      const size_t j = l.nextCEnd[c];
      if (j < l.nextStart && (l.accept[c][j] == kUnknown || l.hold[c][j] == kUnknown))
        refusing += (refusing.empty() ? "" : ", ") + m.units[size_t(l.cons[c])]->name;
    }
    const size_t i = l.nextEnd;
    std::string s = fmt::format("{} at tile {} of {}", l.name, i, l.size());
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
  for (size_t ui = 0; ui < sites.size(); ++ui) {
    const auto* mg = dynamic_cast<const CuMerge*>(m.units[ui].get());
    if (!mg) continue;
    if (!r.deadlock) {
      r.mergeOrders[sites[ui].op] = mg->arrivalOrder(m);
    } else if (std::vector<int> d = mg->arrivalOrder(m, true); mg->contradicts(d)) {
      // The order the streams assumed (at first: all of in0, then in1) can itself be what
      // stops the unit, e.g. a Partition feeding both inputs waits for in1 to be taken.
      r.mergeOrders[sites[ui].op] = std::move(d);
      r.mergeOrderRevised = true;
    }
  }
  return r;
}

}  // namespace

TimingResult estimateTiming(const StepGraph& g, const Mapping& mp, const ArchModel& a, const ConfigLayout& layout,
                            const ConfigImage& img, const std::vector<TokenStream>& streams, const MergeOrders& orders) {
  TimingResult total;
  // Sections beyond the contexts are written by the host while the fabric runs
  // (foldSections; sim/harness): one word per cycle, from 2 cycles after section k - C + 1
  // started (C >= 2), or from the cycle after section k - 1 ended (C = 1, nothing runs).
  const int C = a.contexts;
  std::vector<int64_t> words(size_t(mp.sections), 0);
  if (mp.sections > C)
    for (const SectionReload& r : foldSections(img, layout, buildConfigLayout(a)).reloads)
      words[size_t(r.section)] = int64_t(r.writes.size());
  for (int s = 0; s < mp.sections; ++s) {
    TimingResult r = estimateSection(g, mp, a, layout, orders, img, streams, s);
    // Section s+1 starts kSectionSwitch cycles after section s has finished everywhere
    // (every unit idle, every DRAM write complete): sg_sec_seq.sv.
    int64_t origin = s == 0 ? 0 : total.cycles + kSectionSwitch;
    if (s >= C && C >= 2) {
      const int64_t loaded = total.sectionStart[size_t(s - C + 1)] + 2 + words[size_t(s)];
      total.reloadExposedCycles += std::max<int64_t>(0, loaded - origin);
      origin = std::max(origin, loaded);
    } else if (s >= C) {
      total.reloadExposedCycles += 1 + words[size_t(s)];
      origin += 1 + words[size_t(s)];
    }
    total.reloadWords += words[size_t(s)];
    total.sectionStart.push_back(origin);
    total.cycles = origin + r.cycles;
    total.offchipReadBytes += r.offchipReadBytes;
    total.dramLate += r.dramLate;
    total.offchipWriteBytes += r.offchipWriteBytes;
    total.mergeOrders.insert(r.mergeOrders.begin(), r.mergeOrders.end());
    total.mergeOrderRevised = total.mergeOrderRevised || r.mergeOrderRevised;
    total.longestCompute = std::max(total.longestCompute, r.longestCompute);
    for (auto& x : r.stuck) total.stuck.push_back(s == 0 && mp.sections == 1 ? x : fmt::format("section {}: {}", s, x));
    if (r.deadlock) {
      total.deadlock = true;
      break;
    }
  }
  return total;
}

}  // namespace stepgen
