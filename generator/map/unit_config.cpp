// configureUnits: the configuration field values of a mapping, and with them every rule of
// what a unit can be configured to do (map/unit_config.hpp).
#include "map/unit_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "arch/unit_catalogue.hpp"
#include "ir/attrs.hpp"
#include "ir/op_table.hpp"

namespace stepgen {

namespace {

int64_t dimValue(const StepGraph& g, const SymExpr& e) {
  auto v = e.evaluate(g.symbols);
  if (!v)
    throw DiagError("M-308", g.loc,
                    fmt::format("dimension '{}' is not static, and this unit needs a fixed size (only the row count "
                                "of a tile on the MoE path may be dynamic)",
                                e.toString()));
  return *v;
}

struct TileDims {
  int64_t rows = 0, cols = 0;
  int64_t words() const { return rows * cols; }
};

TileDims tileOf(const StepGraph& g, const ElemType& e) {
  if (e.kind != ElemType::Kind::Tile || e.tile.size() != 2)
    throw std::logic_error("internal error: expected a tile element");
  return {dimValue(g, e.tile[0]), dimValue(g, e.tile[1])};
}

// Rows of a dynamically sized tile are tokens routed to one expert: at most the 64 tokens a
// route unit holds (docs/hardware.md section 7), which sizes the buffers.
constexpr int64_t kMaxDynamicRows = 64;

bool dynamicRows(const StepGraph& g, const ElemType& e) {
  return e.kind == ElemType::Kind::Tile && e.tile.size() == 2 && !e.tile[0].evaluate(g.symbols);
}

// A tile whose row count may be dynamic: the rows are bounded by kMaxDynamicRows.
TileDims tileBound(const StepGraph& g, const ElemType& e) {
  if (!dynamicRows(g, e)) return tileOf(g, e);
  return {kMaxDynamicRows, dimValue(g, e.tile.at(1))};
}

// The target of set() for one unit and context (a unit other than an op's own).
OpPlacement at(int unit, int ctx) {
  OpPlacement q;
  q.unit = unit, q.ctx = ctx;
  return q;
}

// Word of a route unit's meta beat that holds the expert id (sg_route.sv, meta mode).
constexpr int kMetaExpertWord = 3;

// Field names a graph attribute decides, for the location of M-311 (the op's own otherwise).
const char* attributeOf(const std::string& field) {
  if (field == "rows" || field == "ppr") return "tile";
  if (field.size() == 2 && (field[0] == 'n' || field[0] == 's') && field[1] >= '0' && field[1] <= '3')
    return field[0] == 'n' ? "iter" : "strides";
  if (field == "base") return "origin";
  if (field == "repeat") return "n";
  if (field == "accum_b" || field == "b") return "b";
  return nullptr;
}

class Configurer {
 public:
  Configurer(const StepGraph& g, const ShapeResult& s, const Mapping& m, const ArchModel& a)
      : g_(g), s_(s), m_(m), a_(a), l_(buildConfigLayout(a)), cat_(a) {}

  std::vector<FieldValue> run() {
    for (size_t op = 0; op < g_.ops.size(); ++op) {
      const OpPlacement& p = m_.ops[op];
      if (p.unit < 0) continue;
      const Op& o = g_.ops[op];
      cur_ = &o;
      set(p, "enable", 1);
      if (p.auxUnit >= 0) {  // the route unit's twin that emits EagerMerge's selector (meta mode)
        OpPlacement meta = at(p.auxUnit, p.ctx);
        set(meta, "enable", 1);
        configRoute(int(op), o, meta);
        set(meta, "out_meta", 1);
      }
      switch (a_.units[p.unit].kind) {
        case UnitKind::AddressGen: configAg(o, p); break;
        case UnitKind::Compute: configCu(int(op), o, p); break;
        case UnitKind::Memory: configMu(int(op), o, p); break;
        default: break;
      }
    }
    for (const Route& r : m_.routes) {
      cur_ = &g_.ops.at(size_t(r.dstOp));
      const int sel = cat_.sourceSelect({r.dstUnit}, {r.srcUnit});
      if (sel == 0) throw std::logic_error("internal error: route source is not a candidate");
      OpPlacement dst = at(r.dstUnit, r.ctx);
      set(dst, fmt::format("in{}_src", r.dstPort), uint64_t(sel));
      uint64_t map = 0;
      for (int s = 0; s < 8; ++s) map |= uint64_t(r.stopMap[s]) << (3 * s);
      set(dst, fmt::format("in{}_stopmap", r.dstPort), map);
    }
    return std::move(out_);
  }

 private:
  const StepGraph& g_;
  const ShapeResult& s_;
  const Mapping& m_;
  const ArchModel& a_;
  const ConfigLayout l_;
  UnitCatalogue cat_;
  const Op* cur_ = nullptr;  // the operator whose fields are being set (M-311 names it)
  std::vector<FieldValue> out_;

  // A value wider than its field is the graph's (a size the built unit cannot count), so it
  // is a located mapping error, not an internal one.
  void set(const OpPlacement& p, const std::string& field, uint64_t v) {
    const KindLayout& k = l_.kindLayout(a_.units[p.unit].kind);
    for (size_t f = 0; f < k.fields.size(); ++f) {
      if (k.fields[f].name != field) continue;
      if (k.fields[f].width < 64 && (v >> k.fields[f].width) != 0) {
        const char* attr = attributeOf(field);
        const bool located = attr && cur_->attrs.count(attr);
        throw DiagError("M-311", located ? cur_->attrs.at(attr).loc : cur_->loc,
                        fmt::format("operator '{}': {} = {} does not fit the {} unit's configuration field '{}' ({} bits){}",
                                    cur_->name, field, v, unitKindName(a_.units[p.unit].kind), field, k.fields[f].width,
                                    located ? fmt::format(" (from its `{}`)", attr) : std::string()));
      }
      out_.push_back({p.unit, p.ctx, int(f), v});
      return;
    }
    throw std::logic_error("internal error: unknown field " + field);
  }

  // A range fixed by the stream and address formats (stop levels, routing slots, DRAM
  // addresses): the same on every fabric.
  void limit(const Op& o, const char* what, int64_t v, int64_t max) {
    if (v > max || v < 0)
      throw DiagError("M-307", o.loc, fmt::format("operator '{}': {} = {} is outside the unit's range 0..{}", o.name, what, v, max));
  }
  // A range of the built units (a count field's width, a route unit's storage). An unbounded
  // fabric is never built: its counts have the 32-bit fields of its layout instead.
  void capacity(const Op& o, const char* what, int64_t v, int64_t max) {
    limit(o, what, v, a_.unbounded ? (int64_t(1) << 32) - 1 : max);
  }

  int64_t wordsPerBeat() const { return a_.wordsPerBeat(); }

  int64_t beats(const Op& o, const TileDims& t, const char* what) {
    if (t.words() % wordsPerBeat() != 0)
      throw DiagError("M-305", o.loc,
                      fmt::format("operator '{}': {} tile {}x{} = {} words is not a whole number of {}-word beats", o.name,
                                  what, t.rows, t.cols, t.words(), wordsPerBeat()));
    int64_t b = t.words() / wordsPerBeat();
    capacity(o, "beats per tile", b, 65535);
    return b;
  }

  // AddrGen(selector) -> RandomOffChipLoad (map/clusters.hpp WeightLoad): per group of the
  // route unit's meta beats (expert id in word 3) the AG walks that expert's `tiles` weight
  // tiles (docs/hardware.md section 7, sg_ag.sv per_group).
  void configWeightLoad(const Op& o, const OpPlacement& p) {
    const Op* addr = &g_.op(g_.stream(o.inputs.at(0)).producer);
    const Tensor& t = g_.tensors.at(*g_.findTensor(attrString(o, "tensor")));
    const int64_t cols = dimValue(g_, t.shape.at(1));
    const std::vector<int64_t> tile = attrIntList(g_, o, "tile");
    const int64_t T = attrInt(g_, *addr, "tiles");
    if (tile.at(1) != cols || (cols * 4) % 64 != 0)
      throw DiagError("M-305", o.loc, fmt::format("operator '{}': a weight tile on the fabric spans whole 64-byte rows of the "
                                                  "tensor ({} columns), got {} columns", o.name, cols, tile.at(1)));
    const int64_t ppr = cols * 4 / 64, tileBytes = tile[0] * cols * 4;
    if ((tile[0] * ppr) % (a_.linkBytes() / 64) != 0)
      throw DiagError("M-305", o.loc, fmt::format("operator '{}': a tile of {} pieces is not a whole number of beats", o.name,
                                                  tile[0] * ppr));
    capacity(o, "tiles per expert", T, 65535);
    set(p, "rank", 1);
    set(p, "base", uint64_t(t.baseAddress));
    set(p, "n0", uint64_t(T));
    for (int lv = 1; lv < 4; ++lv) set(p, fmt::format("n{}", lv), 1);
    set(p, "s0", uint64_t(tileBytes));
    set(p, "rows", uint64_t(tile[0]));
    set(p, "ppr", uint64_t(ppr));
    set(p, "row_stride", uint64_t(cols * 4));
    set(p, "random", 1);
    set(p, "per_group", 1);
    set(p, "idx_word", kMetaExpertWord);
    limit(o, "bytes per expert", T * tileBytes, (int64_t(1) << a_.offchip.addressBits) - 1);
    set(p, "idx_stride", uint64_t(T * tileBytes));
  }

  // RandomOffChipLoad with `count` (map/clusters.hpp RunLoad): per meta row on in0 the AG
  // walks `count` tiles from tile `index` on, `step` tiles apart (sg_ag.sv count mode); an
  // index load (no `count`) walks tile `index` alone, a walk of rank 0 that adds no stop
  // level (sg_ag.sv random mode, count = 0). Tile a must sit at base + a * idx_stride: tiles
  // spanning whole tensor rows, or one row of tiles.
  void configRunLoad(const Op& o, const OpPlacement& p) {
    const Tensor& t = g_.tensors.at(*g_.findTensor(attrString(o, "tensor")));
    const int64_t rows = dimValue(g_, t.shape.at(0)), cols = dimValue(g_, t.shape.at(1));
    const std::vector<int64_t> tile = attrIntList(g_, o, "tile");
    if ((tile.at(1) * 4) % 64 != 0)
      throw DiagError("M-305", o.loc, fmt::format("operator '{}': tile rows of {} bytes are not whole 64-byte DRAM pieces",
                                                  o.name, tile[1] * 4));
    int64_t stride = 0;
    if (tile[1] == cols) stride = tile[0] * cols * 4;
    else if (tile[0] == rows) stride = tile[1] * 4;
    else
      throw DiagError("M-305", o.loc, fmt::format("operator '{}': on a fabric a run load's tiles span whole rows of the "
                                                  "tensor or all its rows ({}x{} tiles of {}x{})", o.name, tile[0],
                                                  tile[1], rows, cols));
    const int64_t ppr = tile[1] * 4 / 64;
    if ((tile[0] * ppr) % (a_.linkBytes() / 64) != 0)
      throw DiagError("M-305", o.loc, fmt::format("operator '{}': a tile of {} pieces is not a whole number of beats", o.name,
                                                  tile[0] * ppr));
    const TileDims meta = tileOf(g_, s_.types.at(o.inputs.at(0).v).elem);
    if (meta.rows != 1 || meta.cols != wordsPerBeat())
      throw DiagError("M-305", o.loc, fmt::format("operator '{}': a run load's meta rows are one {}-word beat, got [{}, {}]",
                                                  o.name, wordsPerBeat(), meta.rows, meta.cols));
    const int64_t step = attrIntOr(g_, o, "step", 1);
    limit(o, "tile stride", stride, (int64_t(1) << a_.offchip.addressBits) - 1);
    limit(o, "step", step * stride, (int64_t(1) << a_.offchip.addressBits) - 1);
    const bool run = o.attrs.count("count") > 0;
    set(p, "rank", run ? 1 : 0);
    set(p, "base", uint64_t(t.baseAddress));
    for (int lv = 0; lv < 4; ++lv) set(p, fmt::format("n{}", lv), 1);  // n0: from each meta row
    set(p, "s0", uint64_t(step * stride));
    set(p, "rows", uint64_t(tile[0]));
    set(p, "ppr", uint64_t(ppr));
    set(p, "row_stride", uint64_t(cols * 4));
    set(p, "random", 1);
    set(p, "idx_word", uint64_t(attrIntOr(g_, o, "index", 0)));
    set(p, "idx_stride", uint64_t(stride));
    set(p, "count", run ? 1 : 0);
    set(p, "cnt_word", run ? uint64_t(attrInt(g_, o, "count")) : 0);
  }

  // RandomOffChipStore with `index` (map/clusters.hpp RandomStore): per meta row on in1 the
  // AG writes the next data tile (in0) at tile `index` (sg_ag.sv random store). Tile a sits
  // at base + a * idx_stride: tiles spanning whole rows of the tensor.
  void configRandomStore(const Op& o, const OpPlacement& p) {
    const Tensor& t = g_.tensors.at(*g_.findTensor(attrString(o, "tensor")));
    const int64_t cols = dimValue(g_, t.shape.at(1));
    const TileDims tile = tileOf(g_, s_.types.at(o.inputs.at(1).v).elem);
    if (tile.cols != cols || (cols * 4) % 64 != 0)
      throw DiagError("M-305", o.loc, fmt::format("operator '{}': on a fabric a random store's tiles span whole 64-byte rows "
                                                  "of the tensor ({} columns), got {}x{} tiles",
                                                  o.name, cols, tile.rows, tile.cols));
    const int64_t ppr = cols * 4 / 64;
    if ((tile.rows * ppr) % (a_.linkBytes() / 64) != 0)
      throw DiagError("M-305", o.loc, fmt::format("operator '{}': a tile of {} pieces is not a whole number of beats", o.name,
                                                  tile.rows * ppr));
    const TileDims meta = tileOf(g_, s_.types.at(o.inputs.at(0).v).elem);
    if (meta.rows != 1 || meta.cols != wordsPerBeat())
      throw DiagError("M-305", o.loc, fmt::format("operator '{}': a random store's meta rows are one {}-word beat, got [{}, {}]",
                                                  o.name, wordsPerBeat(), meta.rows, meta.cols));
    const int64_t stride = tile.rows * cols * 4;
    limit(o, "tile stride", stride, (int64_t(1) << a_.offchip.addressBits) - 1);
    set(p, "store", 1);
    set(p, "rank", 0);
    set(p, "base", uint64_t(t.baseAddress));
    for (int lv = 0; lv < 4; ++lv) set(p, fmt::format("n{}", lv), 1);  // one tile per meta row
    set(p, "s0", uint64_t(stride));
    set(p, "rows", uint64_t(tile.rows));
    set(p, "ppr", uint64_t(ppr));
    set(p, "row_stride", uint64_t(cols * 4));
    set(p, "random", 1);
    set(p, "idx_word", uint64_t(attrInt(g_, o, "index")));
    set(p, "idx_stride", uint64_t(stride));
  }

  void configAg(const Op& o, const OpPlacement& p) {
    if (o.kind == OpKind::RandomOffChipLoad)
      return o.attrs.count("count") || o.attrs.count("index") ? configRunLoad(o, p) : configWeightLoad(o, p);
    if (o.kind == OpKind::RandomOffChipStore) return configRandomStore(o, p);
    bool store = o.kind == OpKind::LinearOffChipStore;
    if (!o.attrs.count("tensor"))
      throw DiagError("M-306", o.loc, fmt::format("operator '{}': SelectGen runs on the fabric only with a routing "
                                                  "tensor (tensor: [rows, 16]) to load", o.name));
    auto ti = g_.findTensor(attrString(o, "tensor"));
    if (!ti) throw std::logic_error("internal error: unknown tensor survived loading");
    const Tensor& t = g_.tensors[*ti];
    int64_t cols = dimValue(g_, t.shape.at(1));
    std::vector<int64_t> tile;
    std::vector<std::vector<int64_t>> strides;
    auto iter = attrIntList(g_, o, "iter");
    int64_t originRow = 0, originCol = 0;  // the walk's first tile (tile units)
    if (o.kind == OpKind::SelectGen) {  // one 64-byte routing row per selector element, from row `skip`
      if (iter.size() != 1)
        throw DiagError("M-307", o.attrs.at("iter").loc, fmt::format("operator '{}': a SelectGen on the fabric walks one level", o.name));
      tile = {1, kRoutingRowWords};
      strides = {{1, 0}};
      originRow = attrIntOr(g_, o, "skip", 0);
    } else {
      if (o.attrs.count("origin")) {
        const std::vector<int64_t> og = attrIntList(g_, o, "origin");
        originRow = og.at(0), originCol = og.at(1);
      }
      if (store && !o.attrs.count("tile")) {
        TileDims td = tileOf(g_, s_.types.at(o.inputs.at(0).v).elem);
        tile = {td.rows, td.cols};
      } else {
        tile = attrIntList(g_, o, "tile");
      }
      strides = attrIntMatrix(g_, o, "strides");
    }
    if (iter.size() > 4 || iter.empty())
      throw DiagError("M-307", o.attrs.at("iter").loc, fmt::format("operator '{}': the address generator walks 1..4 levels, not {}", o.name, iter.size()));
    if ((tile.at(1) * 4) % 64 != 0)
      throw DiagError("M-305", o.loc,
                      fmt::format("operator '{}': tile rows of {} bytes are not whole 64-byte DRAM pieces", o.name, tile[1] * 4));
    int64_t ppr = tile[1] * 4 / 64;
    int64_t piecesPerBeat = a_.linkBytes() / 64;
    if ((tile[0] * ppr) % piecesPerBeat != 0)
      throw DiagError("M-305", o.loc,
                      fmt::format("operator '{}': a tile of {} pieces is not a whole number of {}-piece beats", o.name,
                                  tile[0] * ppr, piecesPerBeat));
    set(p, "store", store ? 1 : 0);
    set(p, "rank", iter.size() - 1);
    set(p, "base", uint64_t(t.baseAddress + (originRow * tile[0] * cols + originCol * tile[1]) * 4));
    for (size_t lv = 0; lv < 4; ++lv) {
      // Level 0 is the innermost iter entry.
      int64_t n = lv < iter.size() ? iter[iter.size() - 1 - lv] : 1;
      capacity(o, "iteration count", n, 65535);
      set(p, fmt::format("n{}", lv), uint64_t(n));
      int64_t stride = 0;
      if (lv < iter.size()) {
        const auto& st = strides.at(iter.size() - 1 - lv);
        stride = (st.at(0) * tile[0] * cols + st.at(1) * tile[1]) * 4;
      }
      limit(o, "stride", stride, (int64_t(1) << a_.offchip.addressBits) - 1);
      set(p, fmt::format("s{}", lv), uint64_t(stride));
    }
    set(p, "rows", uint64_t(tile[0]));
    set(p, "ppr", uint64_t(ppr));
    set(p, "row_stride", uint64_t(cols * 4));
  }

  // Elements a stream of static shape carries (the product of its dims).
  int64_t elements(StreamId id) const {
    int64_t n = 1;
    for (const SymExpr& d : s_.types.at(id.v).shape) n *= dimValue(g_, d);
    return n;
  }

  // Element type of the stream entering input `port` of op's unit.
  const ElemType& inputElem(int op, int port) const {
    for (const Route& r : m_.routes)
      if (r.dstOp == op && r.dstPort == port) return s_.types.at(r.stream.v).elem;
    throw std::logic_error("internal error: unrouted input port");
  }
  TileDims inputTile(int op, int port) const { return tileOf(g_, inputElem(op, port)); }
  TileDims inputBound(int op, int port) const { return tileBound(g_, inputElem(op, port)); }
  bool inputDynamic(int op, int port) const { return dynamicRows(g_, inputElem(op, port)); }

  void checkBuffer(const Op& o, int64_t words, int64_t capWords, const char* unit) {
    if (words > capWords)
      throw DiagError("M-302", o.loc,
                      fmt::format("graph too big for the fabric: operator '{}' needs {} bytes of {} memory (double-buffered "
                                  "tiles), the unit has {} bytes",
                                  o.name, words * 4, unit, capWords * 4));
  }

  // Map(matmul) and Map(matmul_t) (sg_cu.sv header): a is M x K, b is K x N (matmul) or
  // N x K (matmul_t, bt = 1). A dynamic a (tokens of one expert) sets dyn_m: the unit counts
  // M from the tile's beats, which needs K >= W.
  void configMatmul(int op, const Op& o, const OpPlacement& p, bool bt) {
    const int64_t bufWords = a_.cu.bufferBytes / 4;
    TileDims ta = inputBound(op, 0), tb = inputTile(op, 1);
    const bool dyn = inputDynamic(op, 0);
    int64_t M = ta.rows, K = ta.cols, N = bt ? tb.rows : tb.cols;
    if (!bt && (N & (N - 1)))
      throw DiagError("M-305", o.loc, fmt::format("operator '{}': matmul output columns {} must be a power of two", o.name, N));
    if (dyn && K < wordsPerBeat())
      throw DiagError("M-305", o.loc, fmt::format("operator '{}': a dynamic-row matmul needs K >= {} (one beat), got {}",
                                                  o.name, wordsPerBeat(), K));
    if (!a_.cu.matmulRowsFit(K, wordsPerBeat(), bt))
      throw DiagError("M-305", o.loc,
                      fmt::format("operator '{}': matmul rows of K = {} words are not whole {}-word beats (the compute "
                                  "unit's banked memory rotates whole rows; compute_unit.memory: banked_ragged takes "
                                  "an even K above one beat without a transposed b, flat takes any K)",
                                  o.name, K, wordsPerBeat()));
    checkBuffer(o, ComputeUnitParams::matmulBufferWords(M, K, N), bufWords, "compute-unit");
    const int log2n = ceilLog2(N);
    set(p, "dyn_m", dyn ? 1 : 0);
    set(p, "bt", bt ? 1 : 0);
    if (bt) set(p, "n", uint64_t(N));
    capacity(o, "K", K, 65535);
    set(p, "k", uint64_t(K));
    if (!bt) set(p, "log2n", uint64_t(log2n));
    set(p, "b_beats", uint64_t(beats(o, {tb.rows, tb.cols}, "right operand")));
    if (!dyn) {
      int64_t passes = (M * N + a_.cu.lanes - 1) / a_.cu.lanes;
      capacity(o, "passes", passes, 65535);
      set(p, "mn", uint64_t(M * N));
      set(p, "passes", uint64_t(passes));
      set(p, "a_beats", uint64_t(beats(o, ta, "left operand")));
      set(p, "o_beats", uint64_t(bt ? (M * N + wordsPerBeat() - 1) / wordsPerBeat() : beats(o, {M, N}, "output")));
    }
    set(p, "a_base0", 0);
    set(p, "a_base1", uint64_t(M * K));
    set(p, "b_base0", uint64_t(2 * M * K));
    set(p, "b_base1", uint64_t(2 * M * K + K * N));
    set(p, "o_base0", uint64_t(2 * M * K + 2 * K * N));
    set(p, "o_base1", uint64_t(2 * M * K + 2 * K * N + M * N));
  }

  // Scan(add, b) (sg_cu.sv func 8): the running tile lives in bank o_base0; a tile of
  // dynamic row count ends with its `last` beat (dyn_m), a static one is o_beats beats.
  void configScan(int op, const Op& o, const OpPlacement& p) {
    const TileDims t = inputBound(op, 0);
    const bool dyn = inputDynamic(op, 0);
    if (!dyn) set(p, "o_beats", uint64_t(beats(o, t, "input")));
    checkBuffer(o, t.words(), a_.cu.bufferBytes / 4, "compute-unit");
    const int64_t b = attrInt(g_, o, "b");
    limit(o, "b", b, 7);
    set(p, "accum_b", uint64_t(b));
    set(p, "dyn_m", dyn ? 1 : 0);
    set(p, "o_base0", 0);
  }

  // Expand(b) (sg_cu.sv func 9): in0 = data, each element held whole in bank a_base0 while
  // the ref's group lasts; in1 = ref, whose stops (after in1_stopmap) are the output's. Tiles
  // of any length pass, so no beat count is configured.
  void configExpand(int op, const Op& o, const OpPlacement& p) {
    checkBuffer(o, inputBound(op, 0).words(), a_.cu.bufferBytes / 4, "compute-unit");
    const int64_t b = attrInt(g_, o, "b");
    limit(o, "b", b, 7);
    set(p, "accum_b", uint64_t(b));
    set(p, "a_base0", 0);
  }

  // Parallelize (sg_cu.sv func 10): one CU per output; output k's unit passes the outermost
  // elements e with e mod n = k (idx_word = k). An element closes at a stop >= the input
  // stream's rank (accum_b), so rank 0 makes every tile an element.
  void configParallelize(const Op& o, const OpPlacement& p) {
    const int64_t n = int64_t(o.outputs.size());
    const int64_t rank = int64_t(s_.types.at(o.inputs.at(0).v).shape.size()) - 1;
    capacity(o, "outputs", n, 64);  // idx_word is 6 bits
    limit(o, "rank", rank, 7);
    for (int64_t k = 0; k < n; ++k) {
      const OpPlacement q = at(p.unitOfOutput(size_t(k)), p.ctx);
      set(q, "enable", 1);
      set(q, "func", int(cuFunctionOf(o)->func));
      set(q, "n", uint64_t(n));
      set(q, "idx_word", uint64_t(k));
      set(q, "accum_b", uint64_t(rank));
    }
  }

  // Partition(b 0) of its own (map/clusters.hpp Dispatch; sg_cu.sv func partition): one CU
  // per output, output k's unit passes the data elements whose one-hot selector (a routing
  // row, the output in word 0) names k.
  void configPartition(const Op& o, const OpPlacement& p) {
    const int64_t n = int64_t(o.outputs.size());
    if (attrInt(g_, o, "b") != 0)
      throw DiagError("M-306", o.attrs.at("b").loc, fmt::format("operator '{}': a Partition of its own runs on the fabric "
                                                                "with b = 0 only", o.name));
    const ElemType& sel = s_.types.at(o.inputs.at(1).v).elem;
    if (sel.tile.size() != 2 || sel.tile[1].evaluate(g_.symbols) != std::optional<int64_t>(1))
      throw DiagError("M-306", o.loc, fmt::format("operator '{}': a Partition of its own runs on the fabric with a one-hot "
                                                  "selector (k = 1)", o.name));
    if (wordsPerBeat() < kRoutingRowWords)
      throw DiagError("M-305", o.loc, fmt::format("operator '{}': the partition unit reads a selector routing row of {} "
                                                  "words as one beat; the links carry {}", o.name, kRoutingRowWords,
                                                  wordsPerBeat()));
    capacity(o, "outputs", n, 64);  // idx_word is 6 bits
    for (int64_t k = 0; k < n; ++k) {
      const OpPlacement q = at(p.unitOfOutput(size_t(k)), p.ctx);
      set(q, "enable", 1);
      set(q, "func", int(CuFunc::Partition));
      set(q, "n", uint64_t(n));
      set(q, "idx_word", uint64_t(k));
    }
  }

  // EagerMerge of its own (map/clusters.hpp Merge; sg_cu.sv func merge): b 0, two inputs,
  // the data output only.
  void configMerge(const Op& o, const OpPlacement& p) {
    if (attrInt(g_, o, "b") != 0 || o.inputs.size() != 2 || o.outputs.size() != 1)
      throw DiagError("M-306", o.loc, fmt::format("operator '{}': an EagerMerge outside a route cluster runs on a compute "
                                                  "unit with b = 0, two inputs and no selector output", o.name));
    set(p, "func", int(CuFunc::Merge));
  }

  // Map(fn: select) (sg_cu.sv func select): the region-free signal of a feedback cycle, a
  // routing row with `value` in word 0 per input tile, after `initial` such rows.
  void configSelect(const Op& o, const OpPlacement& p) {
    const int64_t v = attrInt(g_, o, "value"), c = attrIntOr(g_, o, "initial", 0);
    if (wordsPerBeat() < kRoutingRowWords)
      throw DiagError("M-305", o.loc, fmt::format("operator '{}': select sends a routing row of {} words as one beat; "
                                                  "the links carry {}", o.name, kRoutingRowWords, wordsPerBeat()));
    capacity(o, "value", v, 63);  // idx_word is 6 bits
    capacity(o, "initial tokens", c, 65535);
    set(p, "func", int(CuFunc::Select));
    set(p, "idx_word", uint64_t(v));
    set(p, "n", uint64_t(c));
  }

  // Map(topk) (sg_cu.sv topk): a row of k = E gate logits in one beat (a partial one when E <
  // W, as matmul_t leaves it) becomes a routing row of the n = K chosen experts, which the
  // route unit reads as sg_route's routing rows: kRoutingRowWords-word links. Map(topk_logits)
  // takes the same row and fields and leaves the chosen logits in slot order.
  void configTopk(int op, const Op& o, const OpPlacement& p) {
    const TileDims t = inputTile(op, 0);
    const int64_t W = wordsPerBeat();
    if (t.rows != 1 || t.cols > W || W != kRoutingRowWords)
      throw DiagError("M-305", o.loc, fmt::format("operator '{}': topk on the fabric takes one row of at most {} logits, one "
                                                  "beat of a {}-word link (a routing row); got [{}, {}] on {}-word links",
                                                  o.name, kRoutingRowWords, kRoutingRowWords, t.rows, t.cols, W));
    set(p, "o_beats", 1);
    set(p, "k", uint64_t(t.cols));
    set(p, "n", uint64_t(attrInt(g_, o, "k")));
  }

  // The function comes from the operator table (ir/op_table.hpp), as the mapper's check does.
  void configCu(int op, const Op& o, const OpPlacement& p) {
    const int64_t bufWords = a_.cu.bufferBytes / 4;
    const CuFunctionRow* f = cuFunctionOf(o);
    if (!f)
      throw DiagError("M-304", o.loc, fmt::format("operator '{}' ({}): function '{}' has no hardware", o.name,
                                                  opKindName(o.kind), attrString(o, "fn")));
    if (f->func == CuFunc::Parallelize) return configParallelize(o, p);
    if (f->func == CuFunc::Partition) return configPartition(o, p);
    if (f->func == CuFunc::Merge) return configMerge(o, p);
    if (f->func == CuFunc::Select) return configSelect(o, p);
    set(p, "func", int(f->func));
    if (f->func == CuFunc::Scan || f->func == CuFunc::ScanMax || f->func == CuFunc::ScanMaxExcl)
      return configScan(op, o, p);
    if (f->func == CuFunc::Expand) return configExpand(op, o, p);
    if (f->func == CuFunc::Matmul) return configMatmul(op, o, p, f->transposedB);
    if (f->func == CuFunc::TopK || f->func == CuFunc::TopKLogits) return configTopk(op, o, p);
    TileDims t = inputBound(op, 0);
    const bool dyn = inputDynamic(op, 0);
    if (!dyn) set(p, "o_beats", uint64_t(beats(o, t, "input")));
    if (f->func == CuFunc::RowScale) {  // row r of in0 times word 0 of in1's row r (n beats)
      // b's rows: one beat (C2 <= W, e.g. the MoE router weights' 64-byte pieces) or whole beats
      const TileDims b = inputTile(op, 1);
      const int64_t W = wordsPerBeat();
      if (dyn || t.cols % W != 0 || (b.cols > W && b.cols % W != 0))
        throw DiagError("M-305", o.loc, fmt::format("operator '{}': scale_rows on the fabric takes static tiles of whole-beat "
                                                    "rows ({} words; b may also have one beat or less per row), got {} and {} "
                                                    "columns",
                                                    o.name, W, t.cols, b.cols));
      set(p, "k", uint64_t(t.cols));
      set(p, "n", uint64_t((b.cols + W - 1) / W));
      set(p, "idx_word", 0);
      return;
    }
    if (f->func == CuFunc::RowMax || f->func == CuFunc::RowSum) {  // a row of k words is n whole beats
      const int64_t W = wordsPerBeat();
      if (t.cols % W != 0 || (W & (W - 1)) != 0)
        throw DiagError("M-305", o.loc, fmt::format("operator '{}': {} on the fabric takes rows of whole beats ({} words) "
                                                    "on links of a power-of-two number of words; the rows have {}",
                                                    o.name, attrString(o, "fn"), W, t.cols));
      capacity(o, "row words", t.cols, 65535);
      set(p, "k", uint64_t(t.cols));
      set(p, "n", uint64_t(t.cols / W));
      return;
    }
    if (o.kind == OpKind::Map) return;  // silu, mul, add: one beat per cycle, no parameters
    set(p, "accum_b", uint64_t(attrInt(g_, o, "b")));
    set(p, "dyn_m", dyn ? 1 : 0);  // accum: a tile ends with its `last` beat
    // The two banks start on beat boundaries: sg_cu_mem's Accum port takes whole beats, so
    // no word rotation sits in the read-add-write loop (a dynamic tile's bound may end mid-beat).
    const int64_t bank = (t.words() + wordsPerBeat() - 1) / wordsPerBeat() * wordsPerBeat();
    checkBuffer(o, 2 * bank, bufWords, "compute-unit");
    set(p, "o_base0", 0);
    set(p, "o_base1", uint64_t(bank));
  }

  // Route mode (sg_route): the EagerMerge host of a Partition -> Reshape|Promote -> retile
  // -> EagerMerge cluster (map/mapper.cpp); docs/hardware.md section 7.
  void configRoute(int op, const Op& o, const OpPlacement& p) {
    // The cluster's members carry hostOp = the EagerMerge: its Partition, and per expert a
    // Reshape (static token tile) or a Promote (dynamic tiling) and a retile.
    const Op* part = nullptr;
    const Op* shape = nullptr;
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      if (m_.ops[i].hostOp != op) continue;
      if (g_.ops[i].kind == OpKind::Partition) part = &g_.ops[i];
      if (!shape && (g_.ops[i].kind == OpKind::Reshape || g_.ops[i].kind == OpKind::Promote)) shape = &g_.ops[i];
    }
    if (!part || !shape) throw std::logic_error("internal error: route EagerMerge without its cluster");
    const ElemType& rows = s_.types.at(part->inputs.at(0).v).elem;
    const ElemType& sel = s_.types.at(part->inputs.at(1).v).elem;
    TileDims row = tileOf(g_, rows);
    const int64_t E = int64_t(o.inputs.size()), k = dimValue(g_, sel.tile.at(1));
    const int64_t tb = shape->kind == OpKind::Reshape ? attrInt(g_, *shape, "chunk") : 0;
    if (wordsPerBeat() != kRoutingRowWords)  // sg_route reads the weights at word W/2
      throw DiagError("M-305", o.loc, fmt::format("operator '{}': route mode reads one {}-word routing row per beat; the "
                                                  "links carry {} words", o.name, kRoutingRowWords, wordsPerBeat()));
    if (row.rows != 1)
      throw DiagError("M-305", o.loc, fmt::format("operator '{}': route mode partitions token rows (tiles 1 x D), got {}x{}",
                                                  o.name, row.rows, row.cols));
    capacity(o, "tokens", elements(part->inputs.at(0)), kMaxDynamicRows);  // sg_route holds MAXT = 64
    capacity(o, "experts", E, 128);
    limit(o, "k", k, kRoutingWeightWord);
    capacity(o, "token tile", tb, 64);
    capacity(o, "row words", row.cols, 64);
    set(p, "route", 1);
    set(p, "n_exp", uint64_t(E));
    set(p, "k", uint64_t(k));
    set(p, "tile_rows", uint64_t(tb));
    set(p, "row_beats", uint64_t(beats(o, row, "token row")));
  }

  // Combine mode (sg_combine): the Reassemble host of a Partition -> FlatMap -> Flatten ->
  // Reassemble cluster (map/clusters.hpp); port 0 = the expert output rows, port 1 = the
  // route unit's meta beats. docs/hardware.md section 7.
  void configCombine(const Op& o, const OpPlacement& p) {
    const ElemType& sel = s_.types.at(o.inputs.back().v).elem;
    const int64_t k = dimValue(g_, sel.tile.at(1));
    const int64_t D = dimValue(g_, s_.types.at(o.outputs.at(0).v).elem.tile.at(1));
    capacity(o, "tokens", elements(o.inputs.back()), kMaxDynamicRows);  // one selector element per token; MAXT = 64
    limit(o, "k", k, kRoutingWeightWord);
    capacity(o, "row words", D, 64);
    set(p, "combine", 1);
    set(p, "k", uint64_t(k));
    set(p, "row_beats", uint64_t(beats(o, {1, D}, "output row")));
  }

  // A stream carried to a later section in this unit (map/sections.hpp): the Bufferize keeps
  // the whole stream, its Streamify, placed on the same unit in the later section, replays it
  // (sg_mu keep / replay). The hardware replays the stream once as it came, which is
  // Streamify(repeat 1) of Bufferize(b = rank) followed by the Flatten the cut adds.
  void configCarry(const Op& o, const OpPlacement& p, bool keep) {
    const Op& buf = keep ? o : g_.op(g_.stream(o.inputs.at(0)).producer);
    const Op& sfy = keep ? g_.op(g_.stream(o.outputs.at(0)).consumers.at(0)) : o;
    const StreamType& in = s_.types.at(buf.inputs.at(0).v);
    if (attrInt(g_, sfy, "repeat") != 1 || attrInt(g_, buf, "b") != in.rank())
      throw DiagError("M-306", o.loc,
                      fmt::format("operator '{}': a buffer kept for a later section is replayed once and whole "
                                  "(Bufferize b = {}, the input's rank; Streamify repeat 1)",
                                  o.name, in.rank()));
    if (keep) {
      int64_t words = tileOf(g_, in.elem).words();
      for (const SymExpr& d : in.shape) words *= dimValue(g_, d);
      beats(o, tileOf(g_, in.elem), "kept");
      if (words > a_.mu.capacityBytes / 4)
        throw DiagError("M-302", o.loc,
                        fmt::format("operator '{}' keeps {} bytes for a later section, the memory unit has {} bytes",
                                    o.name, words * 4, a_.mu.capacityBytes));
    }
    set(p, keep ? "keep" : "replay", 1);
  }

  void configMu(int op, const Op& o, const OpPlacement& p) {
    if (o.kind == OpKind::EagerMerge) return configRoute(op, o, p);
    if (o.kind == OpKind::Reassemble) return configCombine(o, p);
    if (o.kind == OpKind::Streamify) return configCarry(o, p, false);
    const StreamType& in = s_.types.at(o.inputs.at(0).v);
    TileDims t = tileBound(g_, in.elem);
    int64_t b = 0, repeat = 1, words = t.words();
    if (o.kind == OpKind::RepeatStatic) {
      repeat = attrInt(g_, o, "n");
    } else {
      b = attrInt(g_, o, "b");
      for (int64_t d = 0; d < b; ++d) words *= dimValue(g_, in.shape.at(in.shape.size() - 1 - d));
      const Stream& ref = g_.stream(o.outputs.at(0));
      if (ref.consumers.size() != 1 || g_.op(ref.consumers[0]).kind != OpKind::Streamify)
        throw DiagError("M-306", o.loc, fmt::format("operator '{}': a Bufferize must feed exactly one Streamify", o.name));
      if (m_.ops[size_t(ref.consumers[0].v)].unit >= 0) return configCarry(o, p, true);
      repeat = attrInt(g_, g_.op(ref.consumers[0]), "repeat");
    }
    capacity(o, "repeat", repeat, 65535);
    checkBuffer(o, 2 * words, a_.mu.capacityBytes / 4, "memory-unit");
    beats(o, t, "buffered");
    set(p, "b", uint64_t(b));
    set(p, "repeat", uint64_t(repeat));
    set(p, "half_words", uint64_t(words));
  }
};

}  // namespace

std::vector<FieldValue> configureUnits(const StepGraph& g, const ShapeResult& s, const Mapping& m, const ArchModel& a) {
  return Configurer(g, s, m, a).run();
}

}  // namespace stepgen
