// Shape rules of the dynamic path: the routing operators (SelectGen, AddrGen, Partition,
// Reassemble, EagerMerge), the dynamic shape operators (Reshape, Expand, Scan, FlatMap,
// Parallelize) and the random off-chip loads and stores. Routing makes fresh
// dynamic-regular symbols (lower bound 0, e.g. T_<op>_<i>); data-dependent counts that
// differ per outer index are SymExpr::ragged dims (docs/step_semantics.md#operators).
#include "passes/shape_rules.hpp"

namespace stepgen::shape_detail {

/// The selector (or address) input `s` must carry selectors; over n outputs when known.
bool Checker::checkSelector(const Op& op, StreamId s, const StreamType& t, std::optional<int64_t> n, const char* role) {
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

/// Tiles whose row counts are dynamic and not provably equal (one expert's T_e rows vs
/// another's): the same element for an EagerMerge, whose output rows are then ragged.
bool Checker::dynamicRowsOnly(const ElemType& a, const ElemType& x) {
  return a.kind == ElemType::Kind::Tile && x.kind == ElemType::Kind::Tile && a.dtype == x.dtype &&
         a.tile.size() == 2 && x.tile.size() == 2 && dimEq(a.tile[1], x.tile[1]) == Proof::Yes &&
         (!a.tile[0].evaluate(g_.symbols) || !x.tile[0].evaluate(g_.symbols));
}

/// Inputs 0..count-1 of a Reassemble/EagerMerge: same rank, same inner-b chunk, same element
/// (with `raggedRows`, tiles may differ in a dynamic row count; it is set when they do).
bool Checker::sameChunks(const Op& op, const std::vector<StreamType>& in, size_t count, int64_t b,
                         bool* raggedRows) {
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

void Checker::inferSelectGen(const Op& op) {
  if (!arity(op)) return;
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
  // A region's selector: the trace's experts first .. first+n-1 of `of`, renumbered from 0.
  std::optional<int64_t> first = int64_t(0), of = *n;
  if (attr(op, "first")) first = intAttr(op, "first");
  if (attr(op, "of")) of = intAttr(op, "of");
  if (!first || !of) return;
  if (*first < 0 || *first + *n > *of) {
    error("S-203", attrLoc(op, attr(op, "first") ? "first" : "of"),
          opLabel(op) + ": needs 0 <= first and first + n <= of, got first = " + std::to_string(*first) +
              ", n = " + std::to_string(*n) + ", of = " + std::to_string(*of));
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
void Checker::inferAddrGen(const Op& op) {
  if (!arity(op)) return;
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

void Checker::inferPartition(const Op& op) {
  if (!arity(op)) return;
  auto n = countAttr(op, "output streams", op.outputs.size());
  auto b = intAttr(op, "b");
  auto in = inputTypes(op);
  if (!n || !b || !in) return;
  const StreamType& data = (*in)[0];
  const StreamType& sel = (*in)[1];
  if (!checkRankParam(op, "b", *b, data.rank(), op.inputs[0])) return;
  if (!checkSelector(op, op.inputs[1], sel, n, "selector")) return;
  std::vector<SymExpr> outer = outerDims(data, *b);
  // A fed-back selector's length is decided at run time: spare elements are drained, too
  // few deadlock (the model reports that, naming the streams).
  Proof p = fedBack_[size_t(op.inputs[1].v)] ? Proof::Yes : dimsEq(sel.shape, outer);
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

void Checker::inferReassemble(const Op& op) {
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

void Checker::inferEagerMerge(const Op& op) {
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

void Checker::inferReshape(const Op& op) {
  if (!arity(op)) return;
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

void Checker::inferExpand(const Op& op) {
  if (!arity(op)) return;
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

void Checker::inferScan(const Op& op) {
  auto h = tileReduceHead(op, {"add", "max", "max_exclusive"});
  if (h) setOutput(op, op.outputs[0], h->in);  // one running result per input element
}

void Checker::inferFlatMap(const Op& op) {
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

void Checker::inferParallelize(const Op& op) {
  if (!arity(op)) return;
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

void Checker::inferRandomLoad(const Op& op) {
  if (!arity(op)) return;
  const Tensor* t = tensorAttr(op);
  auto tile = exprListAttr(op, "tile", 2);
  auto in = inputTypes(op);
  if (!t || !tile || !in) return;
  const StreamType& addr = (*in)[0];
  if (op.attrs.count("count")) return inferRunLoad(op, *t, *tile, addr);
  if (op.attrs.count("index")) {  // an index load: one tile per meta row, the row's shape kept
    const int64_t index = intAttr(op, "index").value_or(-1);
    if (!checkMetaRows(op, addr, "index", {{"index", index}})) return;
  } else if (!checkSelector(op, op.inputs[0], addr, std::nullopt, "address")) {
    return;
  }
  checkTensorWalk(op, *t, *tile, WalkSpec{});
  setOutput(op, op.outputs[0], StreamType{addr.shape, tileElem(t->dtype, *tile)});
}

/// RandomOffChipLoad with `count`: each address element is a meta row [1, c] (uint32 words:
/// the first tile in word `index`, the run length in word `count`); the output adds one
/// ragged dim, the run (docs/step_semantics.md#randomoffchipload).
bool Checker::checkMetaRows(const Op& op, const StreamType& addr, const char* with,
                            const std::vector<std::pair<const char*, int64_t>>& words) {
  if (!isTile2(addr.elem) || dimEq(addr.elem.tile[0], SymExpr::constant(1)) != Proof::Yes) {
    error("S-248", attrLoc(op, "in"),
          opLabel(op) + ": with `" + with + "` the address stream " + streamDesc(op.inputs[0]) +
              " must carry meta rows (tiles [1, c] of uint32 words), not " + formatElemType(addr.elem));
    return false;
  }
  const auto n = addr.elem.tile[1].evaluate(g_.symbols);
  for (auto [key, w] : words)
    if (w < 0 || (n && w >= *n)) {
      error("S-248", attrLoc(op, key),
            opLabel(op) + ": `" + key + "` = " + std::to_string(w) + " is not a word of the meta rows [1, " +
                addr.elem.tile[1].toString() + "]");
      return false;
    }
  return true;
}

void Checker::inferRunLoad(const Op& op, const Tensor& t, const std::vector<SymExpr>& tile, const StreamType& addr) {
  auto count = intAttr(op, "count");
  const int64_t index = op.attrs.count("index") ? intAttr(op, "index").value_or(-1) : 0;
  const int64_t step = op.attrs.count("step") ? intAttr(op, "step").value_or(-1) : 1;
  if (!count) return;
  if (!checkMetaRows(op, addr, "count", {{"index", index}, {"count", *count}})) return;
  if (step < 0) {
    error("S-248", attrLoc(op, "step"), opLabel(op) + ": `step` (tiles between a run's tiles) must be >= 0");
    return;
  }
  checkTensorWalk(op, t, tile, WalkSpec{});
  // Runs read from the same meta rows (through Broadcasts) by the same count word have the
  // same lengths: one tag, so that their streams Zip.
  StreamId root = op.inputs[0];
  for (const Stream* st = &g_.stream(root); st->producer.valid() && g_.op(st->producer).kind == OpKind::Broadcast;
       st = &g_.stream(root))
    root = g_.op(st->producer).inputs.at(0);
  StreamType out{addr.shape, tileElem(t.dtype, tile)};
  out.shape.push_back(SymExpr::ragged("run_" + g_.stream(root).name + "_w" + std::to_string(*count)));
  setOutput(op, op.outputs[0], std::move(out));
}

void Checker::inferRandomStore(const Op& op) {
  if (!arity(op)) return;
  const Tensor* t = tensorAttr(op);
  auto in = inputTypes(op);
  if (!t || !in) return;
  const StreamType& addr = (*in)[0];
  const StreamType& data = (*in)[1];
  if (op.attrs.count("index")) {  // meta rows: the tile index in word `index`
    if (!checkMetaRows(op, addr, "index", {{"index", intAttr(op, "index").value_or(-1)}})) return;
  } else if (!checkSelector(op, op.inputs[0], addr, std::nullopt, "address")) {
    return;
  }
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

}  // namespace stepgen::shape_detail
