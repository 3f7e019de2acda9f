// Shape check: infers the type of every stream of a StepGraph from its operators and
// reports shape errors (step.md sections 1-2; operator table in docs/graph_format.md).
//
// Ops are visited in dependency order (Kahn's algorithm, lowest op index first among the
// ready ones, so the order is deterministic); an op whose input types are unknown because
// of an earlier error is skipped silently, so one mistake gives one diagnostic.
//
// Diagnostic ids (all collected, then thrown together as one DiagError):
//   S-201 wrong number of input or output streams for the operator
//   S-202 missing attribute
//   S-203 malformed attribute (not an integer / list / expression, unknown fn, bad tensor)
//   S-204 unknown tensor
//   S-205 dependency cycle between operators
//   S-206 stream without producer
//   S-207 operator not supported by the shape check
//   S-210 Map/Zip input shapes differ
//   S-211 element type not accepted by the operator
//   S-212 matmul inner dimensions differ
//   S-213 mul/add tiles differ
//   S-215 Streamify input is not a reference stream
//   S-220 declared stream type differs from the inferred one
//   S-221 b / lo / hi negative or above the stream rank (or lo > hi)
//   S-230 tensor shape not divisible by the tile
//   S-231 load/store walk leaves the tensor
//   S-232 strides do not match iter
//   S-233 store input shape differs from iter
//   S-234 store input tile differs from the store's tile
//   S-240 selector/address stream not of selector elements, or over another number of outputs
//   S-241 Partition selector shape differs from the data's outer dims
//   S-242 Reassemble/EagerMerge inputs of different rank, chunk dims or element type
//   S-243 Reshape of a dim the chunk does not (provably) divide, without padding
//   S-244 Reshape with pad on a split that is not innermost (b > 0)
//   S-245 Expand of a dim that is not 1
//   S-246 Expand: data and reference ranks or outer dims differ
//   S-247 RandomOffChipStore: address and data stream shapes differ
//   S-250 dimension not static (evalDim)
//   S-299 internal error
#include "passes/shape_check.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <queue>
#include <set>
#include <stdexcept>

namespace stepgen {

namespace {

const char* kindName(OpKind k) {
  switch (k) {
    case OpKind::LinearOffChipLoad: return "LinearOffChipLoad";
    case OpKind::LinearOffChipStore: return "LinearOffChipStore";
    case OpKind::RandomOffChipLoad: return "RandomOffChipLoad";
    case OpKind::RandomOffChipStore: return "RandomOffChipStore";
    case OpKind::Bufferize: return "Bufferize";
    case OpKind::Streamify: return "Streamify";
    case OpKind::RepeatStatic: return "RepeatStatic";
    case OpKind::Broadcast: return "Broadcast";
    case OpKind::Map: return "Map";
    case OpKind::Accum: return "Accum";
    case OpKind::Scan: return "Scan";
    case OpKind::FlatMap: return "FlatMap";
    case OpKind::Promote: return "Promote";
    case OpKind::AddrGen: return "AddrGen";
    case OpKind::Flatten: return "Flatten";
    case OpKind::Reshape: return "Reshape";
    case OpKind::Expand: return "Expand";
    case OpKind::Zip: return "Zip";
    case OpKind::Partition: return "Partition";
    case OpKind::Reassemble: return "Reassemble";
    case OpKind::EagerMerge: return "EagerMerge";
    case OpKind::Parallelize: return "Parallelize";
    case OpKind::SelectGen: return "SelectGen";
  }
  return "?";
}

std::string joinDims(const std::vector<SymExpr>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += v[i].toString();
  }
  return s;
}

Proof combine(Proof a, Proof b) {
  if (a == Proof::No || b == Proof::No) return Proof::No;
  if (a == Proof::Unknown || b == Proof::Unknown) return Proof::Unknown;
  return Proof::Yes;
}

const char* differWord(Proof p) { return p == Proof::No ? "differ" : "cannot be proven equal"; }

struct WalkSpec {
  std::vector<SymExpr> iter;
  std::vector<std::pair<SymExpr, SymExpr>> strides;  // (tile-row step, tile-col step) per level
};

class Checker {
 public:
  explicit Checker(const StepGraph& g) : g_(g) {
    cons_.values = g.symbols;
    types_.resize(g.streams.size());
    producerOf_.assign(g.streams.size(), -1);
    for (size_t i = 0; i < g.ops.size(); ++i)
      for (StreamId s : g.ops[i].outputs)
        if (validStream(s) && producerOf_[size_t(s.v)] < 0) producerOf_[size_t(s.v)] = int(i);
  }

  ShapeResult run() {
    visitInDependencyOrder();
    // Streams that nothing produces and nobody reported yet.
    for (size_t s = 0; s < g_.streams.size(); ++s) {
      if (producerOf_[s] < 0 && !reportedNoProducer_.count(int(s)))
        error("S-206", g_.streams[s].loc, "stream '" + g_.streams[s].name + "' has no producer");
    }
    if (!diags_.empty()) throw DiagError(diags_);
    ShapeResult r;
    r.types.reserve(types_.size());
    for (size_t s = 0; s < types_.size(); ++s) {
      if (!types_[s])
        throw DiagError("S-299", g_.streams[s].loc,
                        "internal error: no type inferred for stream '" + g_.streams[s].name + "'");
      r.types.push_back(*types_[s]);
    }
    return r;
  }

 private:
  const StepGraph& g_;
  SymConstraints cons_;
  std::vector<Diagnostic> diags_;
  std::vector<std::optional<StreamType>> types_;
  std::vector<int> producerOf_;
  std::set<int> reportedNoProducer_;

  // ------------------------------------------------------------------ helpers
  bool validStream(StreamId s) const { return s.v >= 0 && size_t(s.v) < g_.streams.size(); }

  void error(const std::string& id, const SourceLoc& loc, const std::string& msg, std::vector<DiagNote> notes = {}) {
    diags_.push_back(Diagnostic{id, loc, msg, std::move(notes)});
  }

  std::string opLabel(const Op& op) const {
    std::string k = kindName(op.kind);
    if (op.kind == OpKind::Map || op.kind == OpKind::Accum || op.kind == OpKind::Scan || op.kind == OpKind::FlatMap) {
      auto it = op.attrs.find("fn");
      if (it != op.attrs.end() && !it->second.isList && !it->second.scalar.empty())
        k += "(" + it->second.scalar + ")";
    }
    return k + " '" + op.name + "'";
  }
  std::string streamName(StreamId s) const {
    return validStream(s) ? "'" + g_.streams[size_t(s.v)].name + "'" : "<invalid stream>";
  }
  std::string streamDesc(StreamId s) const {
    std::string d = "stream " + streamName(s);
    if (validStream(s) && types_[size_t(s.v)]) d += " " + formatStreamType(*types_[size_t(s.v)]);
    return d;
  }

  const Attr* attr(const Op& op, const std::string& key) const {
    auto it = op.attrs.find(key);
    return it == op.attrs.end() ? nullptr : &it->second;
  }
  SourceLoc attrLoc(const Op& op, const std::string& key) const {
    const Attr* a = attr(op, key);
    return (a && (a->loc.line > 0 || !a->loc.file.empty())) ? a->loc : op.loc;
  }

  const Attr* requireAttr(const Op& op, const std::string& key) {
    const Attr* a = attr(op, key);
    if (!a) error("S-202", op.loc, opLabel(op) + ": missing attribute '" + key + "'");
    return a;
  }

  std::optional<SymExpr> parseExpr(const Op& op, const std::string& key, const Attr& a) {
    if (a.isList) {
      error("S-203", a.loc.line > 0 ? a.loc : op.loc,
            opLabel(op) + ": attribute '" + key + "' must be a scalar expression, not a list");
      return std::nullopt;
    }
    try {
      return SymExpr::parse(a.scalar);
    } catch (const std::invalid_argument& e) {
      error("S-203", a.loc.line > 0 ? a.loc : op.loc, opLabel(op) + ": attribute '" + key + "': " + e.what());
      return std::nullopt;
    }
  }

  std::optional<std::string> stringAttr(const Op& op, const std::string& key) {
    const Attr* a = requireAttr(op, key);
    if (!a) return std::nullopt;
    if (a->isList || a->scalar.empty()) {
      error("S-203", attrLoc(op, key), opLabel(op) + ": attribute '" + key + "' must be a name");
      return std::nullopt;
    }
    return a->scalar;
  }

  std::optional<SymExpr> exprAttr(const Op& op, const std::string& key) {
    const Attr* a = requireAttr(op, key);
    if (!a) return std::nullopt;
    return parseExpr(op, key, *a);
  }

  /// An integer attribute (b, lo, hi); expressions of bound symbols are accepted.
  std::optional<int64_t> intAttr(const Op& op, const std::string& key) {
    auto e = exprAttr(op, key);
    if (!e) return std::nullopt;
    auto v = e->evaluate(g_.symbols);
    if (!v) {
      error("S-203", attrLoc(op, key),
            opLabel(op) + ": attribute '" + key + "' must be an integer, got '" + e->toString() + "'");
      return std::nullopt;
    }
    return v;
  }

  std::optional<std::vector<SymExpr>> exprListAttr(const Op& op, const std::string& key, size_t wantSize = 0) {
    const Attr* a = requireAttr(op, key);
    if (!a) return std::nullopt;
    if (!a->isList) {
      error("S-203", attrLoc(op, key), opLabel(op) + ": attribute '" + key + "' must be a list");
      return std::nullopt;
    }
    std::vector<SymExpr> out;
    bool ok = true;
    for (const Attr& x : a->list) {
      auto e = parseExpr(op, key, x);
      if (!e) {
        ok = false;
        continue;
      }
      out.push_back(*e);
    }
    if (!ok) return std::nullopt;
    if (wantSize && out.size() != wantSize) {
      error("S-203", attrLoc(op, key),
            opLabel(op) + ": attribute '" + key + "' must have " + std::to_string(wantSize) + " entries, has " +
                std::to_string(out.size()));
      return std::nullopt;
    }
    if (!wantSize && out.empty()) {
      error("S-203", attrLoc(op, key), opLabel(op) + ": attribute '" + key + "' must not be empty");
      return std::nullopt;
    }
    return out;
  }

  /// A stream rank parameter (b, lo, hi) in [0, maxValue]; reports S-221 otherwise.
  bool checkRankParam(const Op& op, const std::string& key, int64_t v, int64_t maxValue, StreamId in) {
    if (v < 0) {
      error("S-221", attrLoc(op, key), opLabel(op) + ": " + key + " = " + std::to_string(v) + " is negative");
      return false;
    }
    if (v > maxValue) {
      error("S-221", attrLoc(op, key),
            opLabel(op) + ": " + key + " = " + std::to_string(v) + " exceeds the rank " + std::to_string(maxValue) +
                " of input " + streamDesc(in));
      return false;
    }
    return true;
  }

  bool arity(const Op& op, size_t nin, size_t noutMin, size_t noutMax) {
    bool ok = true;
    if (op.inputs.size() != nin) {
      error("S-201", attrLoc(op, "in"),
            opLabel(op) + ": takes " + std::to_string(nin) + " input stream(s), has " + std::to_string(op.inputs.size()));
      ok = false;
    }
    if (op.outputs.size() < noutMin || op.outputs.size() > noutMax) {
      std::string want = noutMin == noutMax ? std::to_string(noutMin) : "at least " + std::to_string(noutMin);
      error("S-201", attrLoc(op, "out"),
            opLabel(op) + ": produces " + want + " output stream(s), has " + std::to_string(op.outputs.size()));
      ok = false;
    }
    for (StreamId s : op.inputs)
      if (!validStream(s)) {
        error("S-201", attrLoc(op, "in"), opLabel(op) + ": input stream id " + std::to_string(s.v) + " is invalid");
        ok = false;
      }
    for (StreamId s : op.outputs)
      if (!validStream(s)) {
        error("S-201", attrLoc(op, "out"), opLabel(op) + ": output stream id " + std::to_string(s.v) + " is invalid");
        ok = false;
      }
    return ok;
  }

  /// Types of all inputs, or nullopt if one is unknown (an earlier error; stay silent).
  std::optional<std::vector<StreamType>> inputTypes(const Op& op) {
    std::vector<StreamType> v;
    for (StreamId s : op.inputs) {
      if (!types_[size_t(s.v)]) return std::nullopt;
      v.push_back(*types_[size_t(s.v)]);
    }
    return v;
  }

  Proof dimEq(const SymExpr& a, const SymExpr& b) const { return provablyEqual(a, b, cons_); }
  Proof dimsEq(const std::vector<SymExpr>& a, const std::vector<SymExpr>& b) const {
    if (a.size() != b.size()) return Proof::No;
    Proof p = Proof::Yes;
    for (size_t i = 0; i < a.size() && p != Proof::No; ++i) p = combine(p, dimEq(a[i], b[i]));
    return p;
  }
  Proof elemEq(const ElemType& a, const ElemType& b) const {
    if (a.kind != b.kind) return Proof::No;
    Proof p = Proof::Yes;
    if (a.kind == ElemType::Kind::Tile && a.dtype != b.dtype) return Proof::No;
    if (a.kind == ElemType::Kind::Tile || a.kind == ElemType::Kind::Reference) p = dimsEq(a.tile, b.tile);
    if (a.kind == ElemType::Kind::Tuple || a.kind == ElemType::Kind::Reference) {
      if (a.parts.size() != b.parts.size()) return Proof::No;
      for (size_t i = 0; i < a.parts.size() && p != Proof::No; ++i) p = combine(p, elemEq(a.parts[i], b.parts[i]));
    }
    return p;
  }
  Proof typeEq(const StreamType& a, const StreamType& b) const { return combine(dimsEq(a.shape, b.shape), elemEq(a.elem, b.elem)); }

  std::optional<int> findTensor(const std::string& name) const {
    for (size_t i = 0; i < g_.tensors.size(); ++i)
      if (g_.tensors[i].name == name) return int(i);
    return std::nullopt;
  }

  void setOutput(const Op& op, StreamId s, StreamType t) {
    const Stream& st = g_.streams[size_t(s.v)];
    if (st.declared) {
      Proof p = typeEq(*st.declared, t);
      if (p != Proof::Yes) {
        error("S-220", st.loc,
              "stream '" + st.name + "' is declared as " + formatStreamType(*st.declared) + " but " + opLabel(op) +
                  " produces " + formatStreamType(t) + (p == Proof::No ? "" : " (cannot prove them equal)"),
              {DiagNote{op.loc, "the producer of stream '" + st.name + "', " + opLabel(op) + ", is here"}});
      }
    }
    types_[size_t(s.v)] = std::move(t);
  }

  // ------------------------------------------------------------------ dependency order
  void visitInDependencyOrder() {
    const size_t n = g_.ops.size();
    std::vector<int> indeg(n, 0);
    std::vector<std::vector<int>> succ(n);
    for (size_t i = 0; i < n; ++i) {
      for (StreamId s : g_.ops[i].inputs) {
        if (!validStream(s)) continue;
        int p = producerOf_[size_t(s.v)];
        if (p < 0) {
          if (reportedNoProducer_.insert(s.v).second)
            error("S-206", attrLoc(g_.ops[i], "in"),
                  "stream '" + g_.streams[size_t(s.v)].name + "' read by " + opLabel(g_.ops[i]) + " has no producer");
          continue;
        }
        ++indeg[i];
        succ[size_t(p)].push_back(int(i));
      }
    }
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (size_t i = 0; i < n; ++i)
      if (indeg[i] == 0) ready.push(int(i));
    std::vector<bool> done(n, false);
    while (!ready.empty()) {
      int i = ready.top();
      ready.pop();
      done[size_t(i)] = true;
      inferOp(g_.ops[size_t(i)]);
      for (int j : succ[size_t(i)])
        if (--indeg[size_t(j)] == 0) ready.push(j);
    }
    reportCycles(done);
  }

  void reportCycles(const std::vector<bool>& done) {
    const size_t n = g_.ops.size();
    std::vector<bool> inReported(n, false);
    for (size_t start = 0; start < n; ++start) {
      if (done[start] || inReported[start]) continue;
      // Walk backwards through not-done producers until a node repeats.
      std::vector<int> path;
      std::vector<StreamId> via;  // via[k]: stream from path[k+1] (producer) into path[k]
      std::vector<int> pos(n, -1);
      int v = int(start);
      bool found = false;
      while (true) {
        if (inReported[size_t(v)]) break;
        if (pos[size_t(v)] >= 0) {
          found = true;
          break;
        }
        pos[size_t(v)] = int(path.size());
        path.push_back(v);
        int next = -1;
        StreamId through;
        for (StreamId s : g_.ops[size_t(v)].inputs) {
          if (!validStream(s)) continue;
          int p = producerOf_[size_t(s.v)];
          if (p >= 0 && !done[size_t(p)]) {
            next = p;
            through = s;
            break;
          }
        }
        if (next < 0) break;  // cannot happen for a not-done op; be safe
        via.push_back(through);
        v = next;
      }
      if (!found) {
        for (int x : path) inReported[size_t(x)] = true;  // downstream of a reported cycle
        continue;
      }
      // Cycle: bp = path[pos[v]..], each bp[j] consuming stream bvia[j] made by bp[j+1]
      // (the last one by bp[0]). Print it forwards: producer -(stream)-> consumer.
      const size_t p0 = size_t(pos[size_t(v)]);
      std::vector<int> bp(path.begin() + long(p0), path.end());
      std::vector<StreamId> bvia(via.begin() + long(p0), via.end());
      const size_t L = bp.size();
      std::string msg = "operators form a dependency cycle: ";
      std::vector<DiagNote> notes;
      for (size_t k = 0; k < L; ++k) {
        const Op& o = g_.ops[size_t(bp[L - 1 - k])];
        // cyc[k] = bp[L-1-k] feeds cyc[k+1] = bp[L-2-k] (cyc[L-1] = bp[0] feeds bp[L-1]).
        StreamId edge = bvia[(L - 2 - k + 2 * L) % L];
        msg += opLabel(o) + " -(" + streamName(edge) + ")-> ";
        notes.push_back(DiagNote{o.loc, opLabel(o) + " is part of the cycle"});
      }
      std::vector<int> cyc(bp.rbegin(), bp.rend());
      msg += opLabel(g_.ops[size_t(cyc[0])]);
      error("S-205", g_.ops[size_t(cyc[0])].loc, msg, notes);
      for (int x : path) inReported[size_t(x)] = true;
    }
  }

  // ------------------------------------------------------------------ operators
  void inferOp(const Op& op) {
    switch (op.kind) {
      case OpKind::LinearOffChipLoad: return inferLoad(op);
      case OpKind::LinearOffChipStore: return inferStore(op);
      case OpKind::Bufferize: return inferBufferize(op);
      case OpKind::Streamify: return inferStreamify(op);
      case OpKind::RepeatStatic: return inferRepeat(op);
      case OpKind::Broadcast: return inferBroadcast(op);
      case OpKind::Zip: return inferZip(op);
      case OpKind::Map: return inferMap(op);
      case OpKind::Accum: return inferAccum(op);
      case OpKind::Promote: return inferPromote(op);
      case OpKind::Flatten: return inferFlatten(op);
      case OpKind::SelectGen: return inferSelectGen(op);
      case OpKind::AddrGen: return inferAddrGen(op);
      case OpKind::Partition: return inferPartition(op);
      case OpKind::Reassemble: return inferReassemble(op);
      case OpKind::EagerMerge: return inferEagerMerge(op);
      case OpKind::Reshape: return inferReshape(op);
      case OpKind::Expand: return inferExpand(op);
      case OpKind::Scan: return inferScan(op);
      case OpKind::FlatMap: return inferFlatMap(op);
      case OpKind::Parallelize: return inferParallelize(op);
      case OpKind::RandomOffChipLoad: return inferRandomLoad(op);
      case OpKind::RandomOffChipStore: return inferRandomStore(op);
      default:
        error("S-207", op.loc, opLabel(op) + ": operator not supported by the shape check yet");
        return;
    }
  }

  /// The strides attribute: one [dr, dc] pair per iter level.
  std::optional<std::vector<std::pair<SymExpr, SymExpr>>> stridesAttr(const Op& op, size_t levels) {
    const Attr* a = requireAttr(op, "strides");
    if (!a) return std::nullopt;
    if (!a->isList) {
      error("S-203", attrLoc(op, "strides"), opLabel(op) + ": attribute 'strides' must be a list of [dr, dc] pairs");
      return std::nullopt;
    }
    std::vector<std::pair<SymExpr, SymExpr>> out;
    for (const Attr& pair : a->list) {
      if (!pair.isList || pair.list.size() != 2) {
        error("S-203", pair.loc.line > 0 ? pair.loc : attrLoc(op, "strides"),
              opLabel(op) + ": each entry of 'strides' must be a pair [tile-row step, tile-col step]");
        return std::nullopt;
      }
      auto r = parseExpr(op, "strides", pair.list[0]);
      auto c = parseExpr(op, "strides", pair.list[1]);
      if (!r || !c) return std::nullopt;
      out.emplace_back(*r, *c);
    }
    if (out.size() != levels) {
      error("S-232", attrLoc(op, "strides"),
            opLabel(op) + ": 'strides' has " + std::to_string(out.size()) + " entries but 'iter' has " +
                std::to_string(levels) + " levels");
      return std::nullopt;
    }
    return out;
  }

  /// Checks that the tensor is divisible by the tile and that the walk stays inside it.
  void checkTensorWalk(const Op& op, const Tensor& t, const std::vector<SymExpr>& tile, const WalkSpec& w) {
    if (t.shape.size() != 2 || tile.size() != 2) {
      error("S-203", attrLoc(op, "tensor"),
            opLabel(op) + ": tensor '" + t.name + "' " + formatShape(t.shape) + " and tile " + formatShape(tile) +
                " must both be 2-D");
      return;
    }
    bool divisible = true;
    static const char* const kDimName[2] = {"rows", "columns"};
    for (int i = 0; i < 2; ++i) {
      Proof p = provablyDivides(tile[size_t(i)], t.shape[size_t(i)], cons_);
      if (p != Proof::Yes) {
        divisible = false;
        std::string why = p == Proof::No ? "is not divisible by" : "cannot be proven divisible by";
        std::string vals;
        auto tv = t.shape[size_t(i)].evaluate(g_.symbols);
        auto dv = tile[size_t(i)].evaluate(g_.symbols);
        if (tv && dv) vals = " (" + std::to_string(*tv) + " % " + std::to_string(*dv) + " != 0)";
        error("S-230", attrLoc(op, "tile"),
              opLabel(op) + ": tensor '" + t.name + "' of shape " + formatShape(t.shape) + " " + why + " tile " +
                  formatShape(tile) + ": " + kDimName[i] + " " + t.shape[size_t(i)].toString() + " vs " +
                  tile[size_t(i)].toString() + vals,
              {DiagNote{t.loc, "tensor '" + t.name + "' is declared here"}});
      }
    }
    if (!divisible) return;
    // The walk: evaluate with the symbol values; skip when not static (later stages report).
    auto rows = t.shape[0].evaluate(g_.symbols), cols = t.shape[1].evaluate(g_.symbols);
    auto tr = tile[0].evaluate(g_.symbols), tc = tile[1].evaluate(g_.symbols);
    if (!rows || !cols || !tr || !tc || *tr <= 0 || *tc <= 0) return;
    int64_t nTileRows = *rows / *tr, nTileCols = *cols / *tc;
    int64_t maxR = 0, minR = 0, maxC = 0, minC = 0;
    for (size_t k = 0; k < w.iter.size(); ++k) {
      auto n = w.iter[k].evaluate(g_.symbols);
      auto dr = w.strides[k].first.evaluate(g_.symbols);
      auto dc = w.strides[k].second.evaluate(g_.symbols);
      if (!n || !dr || !dc) return;
      if (*n <= 0) return;  // empty walk
      int64_t er = (*n - 1) * *dr, ec = (*n - 1) * *dc;
      (er > 0 ? maxR : minR) += er;
      (ec > 0 ? maxC : minC) += ec;
    }
    if (maxR >= nTileRows || maxC >= nTileCols || minR < 0 || minC < 0) {
      bool low = minR < 0 || minC < 0;
      int64_t r = low ? minR : maxR, c = low ? minC : maxC;
      std::string walk;
      for (size_t k = 0; k < w.iter.size(); ++k) {
        if (k) walk += ", ";
        walk += "[" + w.strides[k].first.toString() + ", " + w.strides[k].second.toString() + "]";
      }
      error("S-231", attrLoc(op, "strides"),
            opLabel(op) + ": the walk iter " + formatShape(w.iter) + " strides [" + walk + "] leaves tensor '" +
                t.name + "' " + formatShape(t.shape) + ": it reaches tile (" + std::to_string(r) + ", " +
                std::to_string(c) + ") but the tensor has " + std::to_string(nTileRows) + " x " +
                std::to_string(nTileCols) + " tiles of " + formatShape(tile),
            {DiagNote{t.loc, "tensor '" + t.name + "' is declared here"}});
    }
  }

  std::optional<WalkSpec> walkAttrs(const Op& op) {
    auto iter = exprListAttr(op, "iter");
    if (!iter) return std::nullopt;
    auto strides = stridesAttr(op, iter->size());
    if (!strides) return std::nullopt;
    return WalkSpec{*iter, *strides};
  }

  const Tensor* tensorAttr(const Op& op) {
    auto name = stringAttr(op, "tensor");
    if (!name) return nullptr;
    auto t = findTensor(*name);
    if (!t) {
      error("S-204", attrLoc(op, "tensor"), opLabel(op) + ": unknown tensor '" + *name + "'");
      return nullptr;
    }
    return &g_.tensors[size_t(*t)];
  }

  void inferLoad(const Op& op) {
    if (!arity(op, 0, 1, 1)) return;
    const Tensor* t = tensorAttr(op);
    auto tile = exprListAttr(op, "tile", 2);
    auto walk = walkAttrs(op);
    if (!t || !tile || !walk) return;
    checkTensorWalk(op, *t, *tile, *walk);
    StreamType out;
    out.shape = walk->iter;
    out.elem.kind = ElemType::Kind::Tile;
    out.elem.dtype = t->dtype;
    out.elem.tile = *tile;
    setOutput(op, op.outputs[0], std::move(out));
  }

  void inferStore(const Op& op) {
    if (!arity(op, 1, 0, 0)) return;
    const Tensor* t = tensorAttr(op);
    auto walk = walkAttrs(op);
    std::optional<std::vector<SymExpr>> tileAttr;
    if (attr(op, "tile")) tileAttr = exprListAttr(op, "tile", 2);
    auto in = inputTypes(op);
    if (!t || !walk || !in || (attr(op, "tile") && !tileAttr)) return;
    const StreamType& it = (*in)[0];
    if (it.elem.kind != ElemType::Kind::Tile || it.elem.tile.size() != 2) {
      error("S-211", attrLoc(op, "in"), opLabel(op) + ": input " + streamDesc(op.inputs[0]) + " must carry 2-D tiles");
      return;
    }
    // A stream of dynamic shape (routed tokens) is written word by word into a static walk
    // of `tile`s, as the AG does for every store; it must fit, which only the run can tell.
    bool dynamicIn = false;
    for (const auto& d : it.shape) dynamicIn = dynamicIn || !d.evaluate(g_.symbols);
    for (const auto& d : it.elem.tile) dynamicIn = dynamicIn || !d.evaluate(g_.symbols);
    if (dynamicIn) {
      if (!tileAttr)
        error("S-234", attrLoc(op, "in"),
              opLabel(op) + ": input " + streamDesc(op.inputs[0]) + " has a dynamic shape: the store needs a static tile:");
      else
        checkTensorWalk(op, *t, *tileAttr, *walk);
      return;
    }
    bool ok = true;
    Proof ps = dimsEq(it.shape, walk->iter);
    if (ps != Proof::Yes) {
      error("S-233", attrLoc(op, "iter"),
            opLabel(op) + ": input " + streamDesc(op.inputs[0]) + " and iter " + formatShape(walk->iter) +
                " (shape " + formatShape(it.shape) + " vs " + formatShape(walk->iter) + ") " + differWord(ps));
      ok = false;
    }
    std::vector<SymExpr> tile = it.elem.tile;
    if (tileAttr) {
      Proof pt = dimsEq(it.elem.tile, *tileAttr);
      if (pt != Proof::Yes) {
        error("S-234", attrLoc(op, "tile"),
              opLabel(op) + ": input " + streamDesc(op.inputs[0]) + " has tile " + formatShape(it.elem.tile) +
                  " but the store writes tile " + formatShape(*tileAttr) + " (tiles " + differWord(pt) + ")");
        ok = false;
      }
      tile = *tileAttr;
    }
    if (!ok) return;
    checkTensorWalk(op, *t, tile, *walk);
  }

  void inferBufferize(const Op& op) {
    if (!arity(op, 1, 1, 1)) return;
    auto b = intAttr(op, "b");
    auto in = inputTypes(op);
    if (!b || !in) return;
    const StreamType& it = (*in)[0];
    if (!checkRankParam(op, "b", *b, it.rank(), op.inputs[0])) return;
    size_t keep = it.shape.size() - size_t(*b);
    StreamType out;
    out.shape.assign(it.shape.begin(), it.shape.begin() + long(keep));
    out.elem.kind = ElemType::Kind::Reference;
    out.elem.dtype = it.elem.dtype;
    out.elem.tile.assign(it.shape.begin() + long(keep), it.shape.end());
    out.elem.parts = {it.elem};
    setOutput(op, op.outputs[0], std::move(out));
  }

  void inferStreamify(const Op& op) {
    if (!arity(op, 1, 1, 1)) return;
    auto n = exprAttr(op, "repeat");
    auto in = inputTypes(op);
    if (!n || !in) return;
    const StreamType& it = (*in)[0];
    if (it.elem.kind != ElemType::Kind::Reference || it.elem.parts.size() != 1) {
      error("S-215", attrLoc(op, "in"),
            opLabel(op) + ": input " + streamDesc(op.inputs[0]) + " is not a reference stream (made by Bufferize)");
      return;
    }
    StreamType out;
    out.shape = it.shape;
    out.shape.push_back(*n);
    out.shape.insert(out.shape.end(), it.elem.tile.begin(), it.elem.tile.end());
    out.elem = it.elem.parts[0];
    setOutput(op, op.outputs[0], std::move(out));
  }

  void inferRepeat(const Op& op) {
    if (!arity(op, 1, 1, 1)) return;
    auto n = exprAttr(op, "n");
    auto in = inputTypes(op);
    if (!n || !in) return;
    StreamType out = (*in)[0];
    out.shape.push_back(*n);
    setOutput(op, op.outputs[0], std::move(out));
  }

  void inferBroadcast(const Op& op) {
    if (!arity(op, 1, 1, SIZE_MAX)) return;
    auto in = inputTypes(op);
    if (!in) return;
    for (StreamId s : op.outputs) setOutput(op, s, (*in)[0]);
  }

  /// Checks that all inputs have the same shape (Zip, and a Map given several inputs).
  bool sameShapes(const Op& op, const std::vector<StreamType>& in) {
    for (size_t i = 1; i < in.size(); ++i) {
      Proof p = dimsEq(in[0].shape, in[i].shape);
      if (p != Proof::Yes) {
        error("S-210", attrLoc(op, "in"),
              opLabel(op) + ": input shapes " + differWord(p) + ": " + streamDesc(op.inputs[0]) + " vs " +
                  streamDesc(op.inputs[i]));
        return false;
      }
    }
    return true;
  }

  void inferZip(const Op& op) {
    if (!arity(op, 2, 1, 1)) return;
    auto in = inputTypes(op);
    if (!in || !sameShapes(op, *in)) return;
    StreamType out;
    out.shape = (*in)[0].shape;
    out.elem.kind = ElemType::Kind::Tuple;
    out.elem.parts = {(*in)[0].elem, (*in)[1].elem};
    setOutput(op, op.outputs[0], std::move(out));
  }

  static bool isTile2(const ElemType& e) { return e.kind == ElemType::Kind::Tile && e.tile.size() == 2; }

  void inferMap(const Op& op) {
    auto fn = stringAttr(op, "fn");
    if (fn && *fn != "matmul" && *fn != "matmul_t" && *fn != "silu" && *fn != "mul" && *fn != "add" &&
        *fn != "scale_rows") {
      error("S-203", attrLoc(op, "fn"),
            opLabel(op) + ": unknown function '" + *fn + "' (matmul, matmul_t, silu, mul, add, scale_rows)");
      fn.reset();
    }
    if (op.inputs.empty() || op.inputs.size() > 2) {
      error("S-201", attrLoc(op, "in"),
            opLabel(op) + ": takes 1 input stream (or 2, zipped), has " + std::to_string(op.inputs.size()));
      return;
    }
    if (!arity(op, op.inputs.size(), 1, 1) || !fn) return;
    auto in = inputTypes(op);
    if (!in || !sameShapes(op, *in)) return;
    // The element the function sees: the input's, or the implicit tuple of two inputs.
    ElemType e = (*in)[0].elem;
    std::string inDesc = streamDesc(op.inputs[0]);
    if (in->size() == 2) {
      e = ElemType{};
      e.kind = ElemType::Kind::Tuple;
      e.parts = {(*in)[0].elem, (*in)[1].elem};
      inDesc += " zipped with " + streamDesc(op.inputs[1]);
    }
    StreamType out;
    out.shape = (*in)[0].shape;
    if (*fn == "silu") {
      if (!isTile2(e)) {
        error("S-211", attrLoc(op, "in"), opLabel(op) + ": silu takes a stream of tiles, got " + inDesc);
        return;
      }
      out.elem = e;
    } else {
      if (e.kind != ElemType::Kind::Tuple || e.parts.size() != 2 || !isTile2(e.parts[0]) || !isTile2(e.parts[1])) {
        error("S-211", attrLoc(op, "in"),
              opLabel(op) + ": " + *fn + " takes a zipped pair of tiles, got " + inDesc);
        return;
      }
      const ElemType& a = e.parts[0];
      const ElemType& b = e.parts[1];
      if (*fn == "matmul_t" || *fn == "scale_rows") {
        // matmul_t: a (M x K) times b^T, b given as N x K (weights stored [out, in]).
        // scale_rows: row r of a (R x C) times the scalar b[r][0] (b is R x C2; a C2 of 16
        // is one 64-byte piece per scalar, what an address generator loads).
        const bool mt = *fn == "matmul_t";
        Proof p = mt ? dimEq(a.tile[1], b.tile[1]) : dimEq(a.tile[0], b.tile[0]);
        if (p == Proof::No) {
          error("S-212", attrLoc(op, "in"),
                opLabel(op) + ": " + *fn + (mt ? " needs a M x K and b N x K" : " needs a R x C and b R x C2") +
                    ", got " + formatShape(a.tile) + " and " + formatShape(b.tile) + "; input " + inDesc);
          return;
        }
        out.elem.kind = ElemType::Kind::Tile;
        out.elem.dtype = a.dtype;
        out.elem.tile = {a.tile[0], mt ? b.tile[0] : a.tile[1]};
      } else if (*fn == "matmul") {
        Proof p = dimEq(a.tile[1], b.tile[0]);
        if (p != Proof::Yes) {
          error("S-212", attrLoc(op, "in"),
                opLabel(op) + ": inner dimensions " + differWord(p) + ": a is tile " + formatShape(a.tile) + " (K = " +
                    a.tile[1].toString() + "), b is tile " + formatShape(b.tile) + " (rows = " + b.tile[0].toString() +
                    "); input " + inDesc);
          return;
        }
        out.elem.kind = ElemType::Kind::Tile;
        out.elem.dtype = a.dtype;
        out.elem.tile = {a.tile[0], b.tile[1]};
      } else {
        Proof p = combine(dimsEq(a.tile, b.tile), a.dtype == b.dtype ? Proof::Yes : Proof::No);
        if (p != Proof::Yes) {
          error("S-213", attrLoc(op, "in"),
                opLabel(op) + ": " + *fn + " of different tiles: " + formatElemType(a) + " vs " + formatElemType(b) +
                    " (" + differWord(p) + "); input " + inDesc);
          return;
        }
        out.elem = a;
      }
    }
    setOutput(op, op.outputs[0], std::move(out));
  }

  // The common head of Accum and Scan: one input stream of tiles, `fn` one of fn1/fn2, and
  // `b` within the input's rank. Reports what is wrong and returns nullopt then.
  struct TileReduce {
    std::string fn;
    int64_t b;
    StreamType in;
  };
  std::optional<TileReduce> tileReduceHead(const Op& op, const std::string& fn1, const std::string& fn2) {
    if (!arity(op, 1, 1, 1)) return std::nullopt;
    auto fn = stringAttr(op, "fn");
    if (fn && *fn != fn1 && *fn != fn2) {
      error("S-203", attrLoc(op, "fn"), opLabel(op) + ": unknown function '" + *fn + "' (" + fn1 + ", " + fn2 + ")");
      fn.reset();
    }
    auto b = intAttr(op, "b");
    auto in = inputTypes(op);
    if (!fn || !b || !in) return std::nullopt;
    const StreamType& it = (*in)[0];
    if (!checkRankParam(op, "b", *b, it.rank(), op.inputs[0])) return std::nullopt;
    if (!isTile2(it.elem)) {
      error("S-211", attrLoc(op, "in"), opLabel(op) + ": takes a stream of tiles, got " + streamDesc(op.inputs[0]));
      return std::nullopt;
    }
    return TileReduce{*fn, *b, it};
  }

  void inferAccum(const Op& op) {
    auto h = tileReduceHead(op, "add", "retile");
    if (!h) return;
    const StreamType& it = h->in;
    size_t keep = it.shape.size() - size_t(h->b);
    StreamType out;
    out.shape.assign(it.shape.begin(), it.shape.begin() + long(keep));
    out.elem = it.elem;
    if (h->fn == "retile") {
      SymExpr rows = it.elem.tile[0];
      for (size_t k = keep; k < it.shape.size(); ++k) rows = rows * it.shape[k];
      out.elem.tile[0] = rows;
    }
    setOutput(op, op.outputs[0], std::move(out));
  }

  void inferPromote(const Op& op) {
    if (!arity(op, 1, 1, 1)) return;
    auto b = intAttr(op, "b");
    auto in = inputTypes(op);
    if (!b || !in) return;
    const StreamType& it = (*in)[0];
    // b = rank + 1 inserts a new outermost dim: the whole stream becomes one group (dynamic
    // tiling, step.md section 5); over a dynamic count its size is 1 if that count > 0, else 0.
    if (!checkRankParam(op, "b", *b, it.rank() + 1, op.inputs[0])) return;
    StreamType out = it;
    const bool overDynamic = size_t(*b) == it.shape.size() && !it.shape[0].evaluate(g_.symbols);
    out.shape.insert(out.shape.end() - long(*b), overDynamic ? freshDim("P_" + op.name) : SymExpr::constant(1));
    setOutput(op, op.outputs[0], std::move(out));
  }

  void inferFlatten(const Op& op) {
    if (!arity(op, 1, 1, 1)) return;
    auto lo = intAttr(op, "lo");
    auto hi = intAttr(op, "hi");
    auto in = inputTypes(op);
    if (!lo || !hi || !in) return;
    const StreamType& it = (*in)[0];
    bool ok = checkRankParam(op, "lo", *lo, it.rank(), op.inputs[0]);
    ok = checkRankParam(op, "hi", *hi, it.rank(), op.inputs[0]) && ok;
    if (!ok) return;
    if (*lo > *hi) {
      error("S-221", attrLoc(op, "lo"),
            opLabel(op) + ": lo = " + std::to_string(*lo) + " is above hi = " + std::to_string(*hi) + " for input " +
                streamDesc(op.inputs[0]));
      return;
    }
    // Dims lo..hi counted from the inner end are vector indices [size-1-hi, size-1-lo].
    const long n = long(it.shape.size());
    const long first = n - 1 - long(*hi), last = n - 1 - long(*lo);
    SymExpr prod = it.shape[size_t(first)];
    for (long k = first + 1; k <= last; ++k) prod = prod * it.shape[size_t(k)];
    StreamType out = it;
    out.shape.clear();
    out.shape.insert(out.shape.end(), it.shape.begin(), it.shape.begin() + first);
    out.shape.push_back(prod);
    out.shape.insert(out.shape.end(), it.shape.begin() + last + 1, it.shape.end());
    setOutput(op, op.outputs[0], std::move(out));
  }

  // ------------------------------------------------------------------ dynamic path
  // Operators of step.md section 2 "routing and merging" and the dynamic shape operators.
  // Routing makes fresh dynamic-regular symbols (lower bound 0, e.g. T_<op>_<i>); data-
  // dependent counts that differ per outer index are SymExpr::ragged dims.

  SymExpr freshDim(const std::string& name) {
    cons_.lower[name] = 0;
    return SymExpr::symbol(name);
  }

  static ElemType selectorElem(const SymExpr& n, const SymExpr& k) {
    ElemType e;
    e.kind = ElemType::Kind::Selector;
    e.tile = {n, k};
    return e;
  }
  static ElemType boolElem() {
    ElemType e;
    e.kind = ElemType::Kind::Tile;
    e.dtype = "bool";
    e.tile = {SymExpr::constant(1), SymExpr::constant(1)};
    return e;
  }

  /// An optional true/false attribute.
  std::optional<bool> boolAttr(const Op& op, const std::string& key, bool dflt) {
    const Attr* a = attr(op, key);
    if (!a) return dflt;
    if (!a->isList && (a->scalar == "true" || a->scalar == "false")) return a->scalar == "true";
    error("S-203", attrLoc(op, key), opLabel(op) + ": attribute '" + key + "' must be true or false");
    return std::nullopt;
  }

  /// The number of routed streams `n`: a static integer >= 1 that must equal `have`.
  std::optional<int64_t> countAttr(const Op& op, const std::string& what, size_t have) {
    auto n = intAttr(op, "n");
    if (!n) return std::nullopt;
    if (*n < 1) {
      error("S-203", attrLoc(op, "n"), opLabel(op) + ": n = " + std::to_string(*n) + " must be at least 1");
      return std::nullopt;
    }
    if (size_t(*n) != have) {
      error("S-201", attrLoc(op, "n"),
            opLabel(op) + ": n = " + std::to_string(*n) + " but the operator has " + std::to_string(have) + " " + what);
      return std::nullopt;
    }
    return n;
  }

  /// The selector (or address) input `s` must carry selectors; over n outputs when known.
  bool checkSelector(const Op& op, StreamId s, const StreamType& t, std::optional<int64_t> n, const char* role) {
    if (t.elem.kind != ElemType::Kind::Selector) {
      error("S-240", attrLoc(op, "in"),
            opLabel(op) + ": " + role + " " + streamDesc(s) + " must carry selector elements, not " +
                formatElemType(t.elem));
      return false;
    }
    if (n && t.elem.tile.size() == 2) {
      Proof p = dimEq(t.elem.tile[0], SymExpr::constant(*n));
      if (p != Proof::Yes) {
        error("S-240", attrLoc(op, "in"),
              opLabel(op) + ": " + role + " " + streamDesc(s) + " selects among " + t.elem.tile[0].toString() +
                  " outputs but the operator has n = " + std::to_string(*n));
        return false;
      }
    }
    return true;
  }

  static std::vector<SymExpr> innerDims(const StreamType& t, int64_t b) {
    return std::vector<SymExpr>(t.shape.end() - long(b), t.shape.end());
  }
  static std::vector<SymExpr> outerDims(const StreamType& t, int64_t b) {
    return std::vector<SymExpr>(t.shape.begin(), t.shape.end() - long(b));
  }

  /// Tiles whose row counts are dynamic and not provably equal (one expert's T_e rows vs
  /// another's): the same element for an EagerMerge, whose output rows are then ragged.
  bool dynamicRowsOnly(const ElemType& a, const ElemType& x) {
    return a.kind == ElemType::Kind::Tile && x.kind == ElemType::Kind::Tile && a.dtype == x.dtype &&
           a.tile.size() == 2 && x.tile.size() == 2 && dimEq(a.tile[1], x.tile[1]) == Proof::Yes &&
           (!a.tile[0].evaluate(g_.symbols) || !x.tile[0].evaluate(g_.symbols));
  }

  /// Inputs 0..count-1 of a Reassemble/EagerMerge: same rank, same inner-b chunk, same element
  /// (with `raggedRows`, tiles may differ in a dynamic row count; it is set when they do).
  bool sameChunks(const Op& op, const std::vector<StreamType>& in, size_t count, int64_t b,
                  bool* raggedRows = nullptr) {
    for (size_t i = 1; i < count; ++i) {
      const StreamType& a = in[0];
      const StreamType& x = in[i];
      std::string why;
      Proof p = Proof::Yes;
      if (a.shape.size() != x.shape.size()) {
        p = Proof::No;
        why = "ranks " + std::to_string(a.rank()) + " vs " + std::to_string(x.rank());
      } else if ((p = dimsEq(innerDims(a, b), innerDims(x, b))) != Proof::Yes) {
        why = "chunk dims " + formatShape(innerDims(a, b)) + " vs " + formatShape(innerDims(x, b)) + " " + differWord(p);
      } else if (raggedRows && dynamicRowsOnly(a.elem, x.elem)) {
        *raggedRows = true;
      } else if ((p = elemEq(a.elem, x.elem)) != Proof::Yes) {
        why = "elements " + formatElemType(a.elem) + " vs " + formatElemType(x.elem) + " " + differWord(p);
      }
      if (p != Proof::Yes) {
        error("S-242", attrLoc(op, "in"),
              opLabel(op) + ": inputs must have the same shape (b = " + std::to_string(b) + "): " +
                  streamDesc(op.inputs[0]) + " vs " + streamDesc(op.inputs[i]) + " (" + why + ")");
        return false;
      }
    }
    return true;
  }

  void inferSelectGen(const Op& op) {
    if (!arity(op, 0, 1, 1)) return;
    auto trace = stringAttr(op, "trace");
    auto n = intAttr(op, "n");
    std::optional<int64_t> k = int64_t(1);
    if (attr(op, "k")) k = intAttr(op, "k");
    auto iter = exprListAttr(op, "iter");
    if (!trace || !n || !k || !iter) return;
    if (*n < 1 || *k < 1 || *k > *n) {
      error("S-203", attrLoc(op, *n < 1 ? "n" : "k"),
            opLabel(op) + ": needs 1 <= k <= n, got n = " + std::to_string(*n) + ", k = " + std::to_string(*k));
      return;
    }
    if (attr(op, "tensor")) {  // the fabric reads the decisions from this [rows, 16] tensor
      const Tensor* t = tensorAttr(op);
      if (!t) return;
      if (provablyEqual(t->shape.at(1), SymExpr::constant(kRoutingRowWords), cons_) != Proof::Yes)
        error("S-230", attrLoc(op, "tensor"),
              opLabel(op) + ": routing tensor '" + t->name + "' must have " + std::to_string(kRoutingRowWords) +
                  " columns (one 64-byte row per token: k expert ids, then k router weights from word " +
                  std::to_string(kRoutingWeightWord) + ")");
    }
    StreamType out;
    out.shape = *iter;
    out.elem = selectorElem(SymExpr::constant(*n), SymExpr::constant(*k));
    setOutput(op, op.outputs[0], std::move(out));
  }

  /// AddrGen(tiles): per 1-of-n selector element (an expert e), the addresses e*tiles + f of
  /// its `tiles` weight tiles, f = 0..tiles-1 (an address stream for RandomOffChipLoad).
  void inferAddrGen(const Op& op) {
    auto tiles = intAttr(op, "tiles");
    auto in = inputTypes(op);
    if (!tiles || !in) return;
    const StreamType& sel = (*in)[0];
    if (!checkSelector(op, op.inputs[0], sel, std::nullopt, "selector")) return;
    if (*tiles < 1) {
      error("S-203", attrLoc(op, "tiles"), opLabel(op) + ": tiles must be at least 1");
      return;
    }
    StreamType out;
    out.shape = sel.shape;
    out.shape.push_back(SymExpr::constant(*tiles));
    out.elem = selectorElem(sel.elem.tile.at(0) * SymExpr::constant(*tiles), SymExpr::constant(1));
    setOutput(op, op.outputs[0], std::move(out));
  }

  void inferPartition(const Op& op) {
    if (!arity(op, 2, 1, SIZE_MAX)) return;
    auto n = countAttr(op, "output streams", op.outputs.size());
    auto b = intAttr(op, "b");
    auto in = inputTypes(op);
    if (!n || !b || !in) return;
    const StreamType& data = (*in)[0];
    const StreamType& sel = (*in)[1];
    if (!checkRankParam(op, "b", *b, data.rank(), op.inputs[0])) return;
    if (!checkSelector(op, op.inputs[1], sel, n, "selector")) return;
    std::vector<SymExpr> outer = outerDims(data, *b);
    Proof p = dimsEq(sel.shape, outer);
    if (p != Proof::Yes) {
      error("S-241", attrLoc(op, "in"),
            opLabel(op) + ": selector " + streamDesc(op.inputs[1]) + " must have one element per chunk of data " +
                streamDesc(op.inputs[0]) + ": shape " + formatShape(sel.shape) + " vs the data's outer dims " +
                formatShape(outer) + " (" + differWord(p) + ")");
      return;
    }
    std::vector<SymExpr> chunk = innerDims(data, *b);
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      StreamType out;
      out.shape.push_back(freshDim("T_" + op.name + "_" + std::to_string(i)));
      out.shape.insert(out.shape.end(), chunk.begin(), chunk.end());
      out.elem = data.elem;
      setOutput(op, op.outputs[i], std::move(out));
    }
  }

  void inferReassemble(const Op& op) {
    if (op.inputs.size() < 2) {
      error("S-201", attrLoc(op, "in"),
            opLabel(op) + ": takes n data streams and a selector stream, has " + std::to_string(op.inputs.size()) +
                " input stream(s)");
      return;
    }
    if (!arity(op, op.inputs.size(), 1, 1)) return;
    const size_t nd = op.inputs.size() - 1;
    auto n = countAttr(op, "data input streams", nd);
    auto b = intAttr(op, "b");
    auto in = inputTypes(op);
    if (!n || !b || !in) return;
    const StreamType& sel = in->back();
    if (!checkRankParam(op, "b", *b, (*in)[0].rank(), op.inputs[0])) return;
    if (!checkSelector(op, op.inputs.back(), sel, n, "selector")) return;
    if (!sameChunks(op, *in, nd, *b)) return;
    StreamType out;
    out.shape = sel.shape;
    // A k-of-n selector names exactly k outputs (top-k routing), so each group has k chunks.
    out.shape.push_back(sel.elem.tile.size() == 2 ? sel.elem.tile[1] : SymExpr::ragged("R_" + op.name));
    std::vector<SymExpr> chunk = innerDims((*in)[0], *b);
    out.shape.insert(out.shape.end(), chunk.begin(), chunk.end());
    out.elem = (*in)[0].elem;
    setOutput(op, op.outputs[0], std::move(out));
  }

  void inferEagerMerge(const Op& op) {
    if (op.inputs.empty()) {
      error("S-201", attrLoc(op, "in"), opLabel(op) + ": takes one or more input streams, has none");
      return;
    }
    if (!arity(op, op.inputs.size(), 1, 2)) return;  // the selector output is optional
    auto b = intAttr(op, "b");
    auto in = inputTypes(op);
    if (!b || !in) return;
    if (!checkRankParam(op, "b", *b, (*in)[0].rank(), op.inputs[0])) return;
    bool raggedRows = false;
    if (!sameChunks(op, *in, in->size(), *b, &raggedRows)) return;
    // Chunks merged: the sum of every input's chunk count when regular, else a fresh symbol.
    std::optional<SymExpr> total;
    for (const StreamType& t : *in) {
      std::vector<SymExpr> outer = outerDims(t, *b);
      SymExpr count = outer[0];
      for (size_t k = 1; k < outer.size(); ++k) count = count * outer[k];
      total = total ? *total + count : count;
    }
    if (total->isRagged()) total = freshDim("T_" + op.name);
    StreamType data;
    data.shape.push_back(*total);
    std::vector<SymExpr> chunk = innerDims((*in)[0], *b);
    data.shape.insert(data.shape.end(), chunk.begin(), chunk.end());
    data.elem = (*in)[0].elem;
    if (raggedRows) data.elem.tile[0] = SymExpr::ragged("R_" + op.name);
    StreamType sel;
    sel.shape = {*total};
    sel.elem = selectorElem(SymExpr::constant(int64_t(in->size())), SymExpr::constant(1));
    setOutput(op, op.outputs[0], std::move(data));
    if (op.outputs.size() == 2) setOutput(op, op.outputs[1], std::move(sel));
  }

  void inferReshape(const Op& op) {
    if (!arity(op, 1, 1, 2)) return;
    auto chunk = exprAttr(op, "chunk");
    auto b = intAttr(op, "b");
    auto pad = boolAttr(op, "pad", false);
    auto in = inputTypes(op);
    if (!chunk || !b || !pad || !in) return;
    const StreamType& it = (*in)[0];
    if (!checkRankParam(op, "b", *b, it.rank(), op.inputs[0])) return;
    if (*pad && *b != 0) {
      error("S-244", attrLoc(op, "pad"),
            opLabel(op) + ": only an innermost split (b = 0) may pad, got b = " + std::to_string(*b) + " on input " +
                streamDesc(op.inputs[0]));
      return;
    }
    if (op.outputs.size() == 2 && !*pad) {
      error("S-201", attrLoc(op, "out"),
            opLabel(op) + ": the second output (the \"is padding\" stream) needs pad: true");
      return;
    }
    const size_t idx = it.shape.size() - 1 - size_t(*b);
    const SymExpr& d = it.shape[idx];
    Proof p = provablyDivides(*chunk, d, cons_);
    if (!*pad && p != Proof::Yes) {
      std::vector<SymExpr> split{SymExpr::ceilDiv(d, *chunk), *chunk};
      error("S-243", attrLoc(op, "chunk"),
            opLabel(op) + ": dim D_" + std::to_string(*b) + " = " + d.toString() + " of input " +
                streamDesc(op.inputs[0]) + (p == Proof::No ? " is not divisible by" : " cannot be proven divisible by") +
                " the chunk " + chunk->toString() + " (shape " + formatShape(it.shape) + " would become " +
                formatShape(split) + " in place of D_" + std::to_string(*b) + "; only b = 0 with pad: true may pad)");
      return;
    }
    StreamType out = it;
    out.shape.clear();
    out.shape.insert(out.shape.end(), it.shape.begin(), it.shape.begin() + long(idx));
    out.shape.push_back(p == Proof::Yes ? SymExpr::div(d, *chunk) : SymExpr::ceilDiv(d, *chunk));
    out.shape.push_back(*chunk);
    out.shape.insert(out.shape.end(), it.shape.begin() + long(idx) + 1, it.shape.end());
    if (op.outputs.size() == 2) {
      StreamType padding;
      padding.shape = out.shape;
      padding.elem = boolElem();
      setOutput(op, op.outputs[1], std::move(padding));
    }
    setOutput(op, op.outputs[0], std::move(out));
  }

  void inferExpand(const Op& op) {
    if (!arity(op, 2, 1, 1)) return;
    auto b = intAttr(op, "b");
    auto in = inputTypes(op);
    if (!b || !in) return;
    const StreamType& data = (*in)[0];
    const StreamType& ref = (*in)[1];
    // b may cover every dim, D_N included (re-emit the whole stream per reference tensor).
    if (*b < 0 || size_t(*b) > data.shape.size()) {
      error("S-221", attrLoc(op, "b"),
            opLabel(op) + ": b = " + std::to_string(*b) + (*b < 0 ? " is negative" : " exceeds the " +
                std::to_string(data.shape.size()) + " dims of input " + streamDesc(op.inputs[0])));
      return;
    }
    if (ref.shape.size() != data.shape.size()) {
      error("S-246", attrLoc(op, "in"),
            opLabel(op) + ": reference " + streamDesc(op.inputs[1]) + " must have the rank of data " +
                streamDesc(op.inputs[0]) + ": shape " + formatShape(ref.shape) + " vs " + formatShape(data.shape));
      return;
    }
    Proof po = dimsEq(outerDims(data, *b), outerDims(ref, *b));
    if (po != Proof::Yes) {
      error("S-246", attrLoc(op, "in"),
            opLabel(op) + ": outer dims " + differWord(po) + ": data " + streamDesc(op.inputs[0]) + " has " +
                formatShape(outerDims(data, *b)) + ", reference " + streamDesc(op.inputs[1]) + " has " +
                formatShape(outerDims(ref, *b)) + " (shapes " + formatShape(data.shape) + " vs " +
                formatShape(ref.shape) + ")");
      return;
    }
    for (int64_t k = 0; k < *b; ++k) {
      const SymExpr& d = data.shape[data.shape.size() - 1 - size_t(k)];
      Proof p = dimEq(d, SymExpr::constant(1));
      if (p != Proof::Yes) {
        error("S-245", attrLoc(op, "b"),
              opLabel(op) + ": dim D_" + std::to_string(k) + " = " + d.toString() + " of data " +
                  streamDesc(op.inputs[0]) + (p == Proof::No ? " is not 1" : " cannot be proven to be 1") +
                  "; only size-1 dims expand (data shape " + formatShape(data.shape) + ", reference shape " +
                  formatShape(ref.shape) + ")");
        return;
      }
    }
    StreamType out;
    out.shape = outerDims(data, *b);
    std::vector<SymExpr> inner = innerDims(ref, *b);
    out.shape.insert(out.shape.end(), inner.begin(), inner.end());
    out.elem = data.elem;
    setOutput(op, op.outputs[0], std::move(out));
  }

  void inferScan(const Op& op) {
    auto h = tileReduceHead(op, "add", "max");
    if (h) setOutput(op, op.outputs[0], h->in);  // one running result per input element
  }

  void inferFlatMap(const Op& op) {
    auto fn = stringAttr(op, "fn");
    if (!arity(op, fn && *fn == "filter_rows" ? 2 : 1, 1, 1)) return;
    if (fn && *fn != "rows" && *fn != "filter_rows") {
      error("S-203", attrLoc(op, "fn"), opLabel(op) + ": unknown function '" + *fn + "' (rows, filter_rows)");
      fn.reset();
    }
    auto b = intAttr(op, "b");
    auto in = inputTypes(op);
    if (!fn || !b || !in) return;
    if (*b != 1) {
      error("S-203", attrLoc(op, "b"),
            opLabel(op) + ": " + *fn + " turns each tile into a rank-1 stream of rows: b must be 1, got " +
                std::to_string(*b));
      return;
    }
    const StreamType& it = (*in)[0];
    if (!isTile2(it.elem)) {
      error("S-211", attrLoc(op, "in"), opLabel(op) + ": takes a stream of tiles, got " + streamDesc(op.inputs[0]));
      return;
    }
    if (in->size() == 2) {
      // The "is padding" flags: one R x 1 (or 1 x 1) bool tile per tile. Only the ranks are
      // compared: after routing, the two counts are equal through the data (the same
      // selector made both), which no symbolic proof can see.
      const StreamType& pt = (*in)[1];
      if (pt.shape.size() != it.shape.size() || pt.elem.dtype != "bool") {
        error("S-246", attrLoc(op, "in"),
              opLabel(op) + ": the is-padding input " + streamDesc(op.inputs[1]) +
                  " must carry one bool tile per tile of " + streamDesc(op.inputs[0]));
        return;
      }
    }
    StreamType out = it;
    // rows: one row per tile row (ragged if the tile rows are); filter_rows: data-dependent.
    out.shape.push_back(*fn == "rows" ? it.elem.tile[0] : SymExpr::ragged("R_" + op.name));
    out.elem.tile = {SymExpr::constant(1), it.elem.tile[1]};
    setOutput(op, op.outputs[0], std::move(out));
  }

  void inferParallelize(const Op& op) {
    if (!arity(op, 1, 1, SIZE_MAX)) return;
    auto in = inputTypes(op);
    if (!in) return;
    const StreamType& it = (*in)[0];
    const int64_t n = int64_t(op.outputs.size());
    const SymExpr d = it.shape[0];
    const SymExpr nn = SymExpr::constant(n);
    const bool even = n == 1 || provablyDivides(nn, d, cons_) == Proof::Yes;
    for (int64_t i = 0; i < n; ++i) {
      // Round robin: output i gets outer indices i, i+n, ...: ceil((D - i) / n) of them.
      SymExpr cnt = n == 1 ? d : even ? SymExpr::div(d, nn) : SymExpr::ceilDiv(i ? d - SymExpr::constant(i) : d, nn);
      StreamType out = it;
      out.shape[0] = cnt;
      setOutput(op, op.outputs[size_t(i)], std::move(out));
    }
  }

  void inferRandomLoad(const Op& op) {
    if (!arity(op, 1, 1, 1)) return;
    const Tensor* t = tensorAttr(op);
    auto tile = exprListAttr(op, "tile", 2);
    auto in = inputTypes(op);
    if (!t || !tile || !in) return;
    const StreamType& addr = (*in)[0];
    if (!checkSelector(op, op.inputs[0], addr, std::nullopt, "address")) return;
    checkTensorWalk(op, *t, *tile, WalkSpec{});
    StreamType out;
    out.shape = addr.shape;
    out.elem.kind = ElemType::Kind::Tile;
    out.elem.dtype = t->dtype;
    out.elem.tile = *tile;
    setOutput(op, op.outputs[0], std::move(out));
  }

  void inferRandomStore(const Op& op) {
    if (!arity(op, 2, 0, 1)) return;
    const Tensor* t = tensorAttr(op);
    auto in = inputTypes(op);
    if (!t || !in) return;
    const StreamType& addr = (*in)[0];
    const StreamType& data = (*in)[1];
    if (!checkSelector(op, op.inputs[0], addr, std::nullopt, "address")) return;
    if (!isTile2(data.elem)) {
      error("S-211", attrLoc(op, "in"), opLabel(op) + ": data " + streamDesc(op.inputs[1]) + " must carry 2-D tiles");
      return;
    }
    Proof p = dimsEq(addr.shape, data.shape);
    if (p != Proof::Yes) {
      error("S-247", attrLoc(op, "in"),
            opLabel(op) + ": one address per data tile: address stream " + streamDesc(op.inputs[0]) + " vs data " +
                streamDesc(op.inputs[1]) + " (shapes " + formatShape(addr.shape) + " vs " + formatShape(data.shape) +
                " " + differWord(p) + ")");
      return;
    }
    checkTensorWalk(op, *t, data.elem.tile, WalkSpec{});
    if (op.outputs.size() == 1) {
      StreamType ack;
      ack.shape = addr.shape;
      ack.elem = boolElem();
      setOutput(op, op.outputs[0], std::move(ack));
    }
  }
};

}  // namespace

ShapeResult checkShapes(const StepGraph& g) { return Checker(g).run(); }

std::string formatShape(const std::vector<SymExpr>& shape) { return "[" + joinDims(shape) + "]"; }

std::string formatElemType(const ElemType& e) {
  switch (e.kind) {
    case ElemType::Kind::Tile:
      return std::string("tile") + (e.dtype == "fp32" || e.dtype.empty() ? "" : "<" + e.dtype + ">") + " " +
             formatShape(e.tile);
    case ElemType::Kind::Selector:
      // Selectors made by SelectGen/EagerMerge record k-of-n: "selector 1-of-4".
      return e.tile.size() == 2 ? "selector " + e.tile[1].toString() + "-of-" + e.tile[0].toString() : "selector";
    case ElemType::Kind::Reference:
      return "ref " + formatShape(e.tile) + (e.parts.empty() ? "" : " of " + formatElemType(e.parts[0]));
    case ElemType::Kind::Tuple: {
      std::string s = "(";
      for (size_t i = 0; i < e.parts.size(); ++i) {
        if (i) s += ", ";
        s += formatElemType(e.parts[i]);
      }
      return s + ")";
    }
  }
  return "?";
}

std::string formatStreamType(const StreamType& t) { return formatShape(t.shape) + " x " + formatElemType(t.elem); }

int64_t evalDim(const SymExpr& e, const SymEnv& env) {
  if (auto v = e.evaluate(env)) return *v;
  std::string why;
  if (e.isRagged()) {
    why = "it is ragged";
  } else {
    std::string unbound;
    for (const auto& s : e.symbols())
      if (!env.count(s)) unbound += (unbound.empty() ? "" : ", ") + s;
    why = unbound.empty() ? "a division is not exact (or overflows) under the symbol values"
                          : "symbol(s) " + unbound + " have no value";
  }
  throw DiagError("S-250", SourceLoc{}, "dimension '" + e.toString() + "' is not static: " + why);
}

}  // namespace stepgen
