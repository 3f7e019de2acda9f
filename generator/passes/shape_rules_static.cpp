// Shape rules of the static operators: linear loads and stores (with the tensor-walk check),
// Bufferize, Streamify, RepeatStatic, Broadcast, Zip, Map, Accum, Promote, Flatten, and the
// head Accum shares with Scan.
#include "passes/shape_rules.hpp"

#include <algorithm>

namespace stepgen::shape_detail {

/// Checks that the tensor is divisible by the tile and that the walk stays inside it.
void Checker::checkTensorWalk(const Op& op, const Tensor& t, const std::vector<SymExpr>& tile, const WalkSpec& w) {
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
  auto o0 = w.origin.first.evaluate(g_.symbols), o1 = w.origin.second.evaluate(g_.symbols);
  if (!o0 || !o1) return;
  int64_t maxR = *o0, minR = *o0, maxC = *o1, minC = *o1;
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
          opLabel(op) + ": the walk iter " + formatShape(w.iter) + " strides [" + walk + "] from tile (" +
              w.origin.first.toString() + ", " + w.origin.second.toString() + ") leaves tensor '" +
              t.name + "' " + formatShape(t.shape) + ": it reaches tile (" + std::to_string(r) + ", " +
              std::to_string(c) + ") but the tensor has " + std::to_string(nTileRows) + " x " +
              std::to_string(nTileCols) + " tiles of " + formatShape(tile),
          {DiagNote{t.loc, "tensor '" + t.name + "' is declared here"}});
  }
}

/// Checks that all inputs have the same shape (Zip, and a Map given several inputs).
bool Checker::sameShapes(const Op& op, const std::vector<StreamType>& in) {
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

// The common head of Accum and Scan: one input stream of tiles, `fn` one of fns, and `b`
// within the input's rank. Accum(rescale_add) takes a zipped pair of equal tiles (x, a)
// instead; `in` is then given with the element of x. Reports what is wrong and returns
// nullopt then.
std::optional<TileReduce> Checker::tileReduceHead(const Op& op, const std::vector<std::string>& fns) {
  if (!arity(op)) return std::nullopt;
  auto fn = stringAttr(op, "fn");
  if (fn && std::find(fns.begin(), fns.end(), *fn) == fns.end()) {
    std::string known;
    for (const std::string& f : fns) known += (known.empty() ? "" : ", ") + f;
    error("S-203", attrLoc(op, "fn"), opLabel(op) + ": unknown function '" + *fn + "' (" + known + ")");
    fn.reset();
  }
  auto b = intAttr(op, "b");
  auto in = inputTypes(op);
  if (!fn || !b || !in) return std::nullopt;
  StreamType it = (*in)[0];
  if (!checkRankParam(op, "b", *b, it.rank(), op.inputs[0])) return std::nullopt;
  if (*fn == "rescale_add") {
    const ElemType& e = it.elem;
    if (e.kind != ElemType::Kind::Tuple || e.parts.size() != 2 || !isTile2(e.parts[0]) || !isTile2(e.parts[1])) {
      error("S-211", attrLoc(op, "in"),
            opLabel(op) + ": rescale_add takes a zipped pair of tiles (x, a), got " + streamDesc(op.inputs[0]));
      return std::nullopt;
    }
    const Proof p = combine(dimsEq(e.parts[0].tile, e.parts[1].tile), e.parts[0].dtype == e.parts[1].dtype ? Proof::Yes : Proof::No);
    if (p != Proof::Yes) {
      error("S-213", attrLoc(op, "in"),
            opLabel(op) + ": rescale_add of different tiles: " + formatElemType(e.parts[0]) + " vs " +
                formatElemType(e.parts[1]) + " (" + differWord(p) + "); input " + streamDesc(op.inputs[0]));
      return std::nullopt;
    }
    ElemType x = e.parts[0];
    it.elem = x;
    return TileReduce{*fn, *b, it};
  }
  if (!isTile2(it.elem)) {
    error("S-211", attrLoc(op, "in"), opLabel(op) + ": takes a stream of tiles, got " + streamDesc(op.inputs[0]));
    return std::nullopt;
  }
  return TileReduce{*fn, *b, it};
}

void Checker::inferLoad(const Op& op) {
  if (!arity(op)) return;
  const Tensor* t = tensorAttr(op);
  auto tile = exprListAttr(op, "tile", 2);
  auto walk = walkAttrs(op);
  if (!t || !tile || !walk) return;
  checkTensorWalk(op, *t, *tile, *walk);
  setOutput(op, op.outputs[0], StreamType{walk->iter, tileElem(t->dtype, *tile)});
}

void Checker::inferStore(const Op& op) {
  if (!arity(op)) return;
  const Tensor* t = tensorAttr(op);
  auto walk = walkAttrs(op);
  const bool hasTile = attr(op, "tile") != nullptr;
  std::optional<std::vector<SymExpr>> tileAttr;
  if (hasTile) tileAttr = exprListAttr(op, "tile", 2);
  auto in = inputTypes(op);
  if (!t || !walk || !in || (hasTile && !tileAttr)) return;
  const StreamType& it = (*in)[0];
  if (!isTile2(it.elem)) {
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

void Checker::inferBufferize(const Op& op) {
  if (!arity(op)) return;
  auto b = intAttr(op, "b");
  auto in = inputTypes(op);
  if (!b || !in) return;
  const StreamType& it = (*in)[0];
  if (!checkRankParam(op, "b", *b, it.rank(), op.inputs[0])) return;
  StreamType out;
  out.shape = outerDims(it, *b);
  out.elem.kind = ElemType::Kind::Reference;
  out.elem.dtype = it.elem.dtype;
  out.elem.tile = innerDims(it, *b);
  out.elem.parts = {it.elem};
  setOutput(op, op.outputs[0], std::move(out));
}

void Checker::inferStreamify(const Op& op) {
  if (!arity(op)) return;
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

void Checker::inferRepeat(const Op& op) {
  if (!arity(op)) return;
  auto n = exprAttr(op, "n");
  auto in = inputTypes(op);
  if (!n || !in) return;
  StreamType out = (*in)[0];
  out.shape.push_back(*n);
  setOutput(op, op.outputs[0], std::move(out));
}

void Checker::inferBroadcast(const Op& op) {
  if (!arity(op)) return;
  auto in = inputTypes(op);
  if (!in) return;
  for (StreamId s : op.outputs) setOutput(op, s, (*in)[0]);
}

void Checker::inferZip(const Op& op) {
  if (!arity(op)) return;
  auto in = inputTypes(op);
  if (!in || !sameShapes(op, *in)) return;
  setOutput(op, op.outputs[0], StreamType{(*in)[0].shape, tupleElem((*in)[0].elem, (*in)[1].elem)});
}

std::optional<StreamType> Checker::selectType(const Op& op) {
  auto n = intAttr(op, "n");
  auto v = intAttr(op, "value");
  std::optional<int64_t> c = op.attrs.count("initial") ? intAttr(op, "initial") : std::optional<int64_t>(0);
  if (!n || !v || !c) return std::nullopt;
  if (*n < 1 || *v < 0 || *v >= *n || *c < 0) {
    error("S-251", attrLoc(op, *n < 1 ? "n" : *c < 0 ? "initial" : "value"),
          opLabel(op) + ": select needs n >= 1, 0 <= value < n and initial >= 0; got n = " + std::to_string(*n) +
              ", value = " + std::to_string(*v) + ", initial = " + std::to_string(*c));
    return std::nullopt;
  }
  StreamType t;
  t.shape = {freshDim("F_" + op.name)};
  t.elem = selectorElem(SymExpr::constant(*n), SymExpr::constant(1));
  return t;
}

// Map(fn: topk | topk_weights | topk_logits, k): one row of E gate logits per element ([1, E],
// E static); topk names the k chosen of E (a selector), topk_weights gives their weights as k
// rows of kRoutingRowWords words, the weight in word 0 (what a routing-weight tensor holds),
// topk_logits one row of kRoutingRowWords words, the chosen logits first and -inf after them.
void Checker::inferTopk(const Op& op, const std::string& fn) {
  if (!arity(op)) return;
  auto k = intAttr(op, "k");
  auto in = inputTypes(op);
  if (!k || !in) return;
  const StreamType& t = (*in)[0];
  const auto rows = isTile2(t.elem) ? t.elem.tile[0].evaluate(g_.symbols) : std::nullopt;
  const auto e = isTile2(t.elem) ? t.elem.tile[1].evaluate(g_.symbols) : std::nullopt;
  if (!rows || !e || *rows != 1) {
    error("S-211", attrLoc(op, "in"), opLabel(op) + ": " + fn + " takes one row of gate logits per element (tile [1, E], E static), got " +
                                          streamDesc(op.inputs[0]));
    return;
  }
  if (*k < 1 || *k > *e || *k > kRoutingWeightWord) {
    error("S-203", attrLoc(op, "k"),
          opLabel(op) + ": needs 1 <= k <= E and k <= " + std::to_string(kRoutingWeightWord) + ", got k = " + std::to_string(*k) +
              ", E = " + std::to_string(*e));
    return;
  }
  StreamType out;
  out.shape = t.shape;
  out.elem = fn == "topk"          ? selectorElem(SymExpr::constant(*e), SymExpr::constant(*k))
             : fn == "topk_logits" ? tileElem(t.elem.dtype, {SymExpr::constant(1), SymExpr::constant(kRoutingRowWords)})
                                   : tileElem(t.elem.dtype, {SymExpr::constant(*k), SymExpr::constant(kRoutingRowWords)});
  setOutput(op, op.outputs[0], std::move(out));
}

void Checker::inferMap(const Op& op) {
  auto fn = stringAttr(op, "fn");
  if (fn && *fn == "select") {  // one selector element per input element, whatever its type
    if (!arity(op)) return;
    if (!inputTypes(op)) return;
    if (types_[size_t(op.outputs[0].v)]) return;  // a feedback stream, typed before its consumers
    if (auto t = selectType(op)) setOutput(op, op.outputs[0], std::move(*t));
    return;
  }
  if (fn && (*fn == "topk" || *fn == "topk_weights" || *fn == "topk_logits")) return inferTopk(op, *fn);
  if (op.attrs.count("k"))
    error("S-203", attrLoc(op, "k"), opLabel(op) + ": `k` belongs to fn topk and topk_weights only");
  if (op.attrs.count("value") || op.attrs.count("initial"))
    error("S-251", attrLoc(op, op.attrs.count("value") ? "value" : "initial"),
          opLabel(op) + ": `value` and `initial` belong to fn select only");
  if (fn && *fn != "matmul" && *fn != "matmul_t" && *fn != "silu" && *fn != "exp" && *fn != "recip" && *fn != "rsqrt" && *fn != "mul" &&
      *fn != "add" && *fn != "sub" && *fn != "scale_rows" && *fn != "rowmax" && *fn != "rowsum") {
    error("S-203", attrLoc(op, "fn"),
          opLabel(op) + ": unknown function '" + *fn +
              "' (matmul, matmul_t, silu, exp, recip, rsqrt, mul, add, sub, scale_rows, rowmax, rowsum, select, topk, "
              "topk_weights, topk_logits)");
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
    e = tupleElem((*in)[0].elem, (*in)[1].elem);
    inDesc += " zipped with " + streamDesc(op.inputs[1]);
  }
  StreamType out;
  out.shape = (*in)[0].shape;
  if (*fn == "silu" || *fn == "exp" || *fn == "recip" || *fn == "rsqrt" || *fn == "rowmax" || *fn == "rowsum") {
    if (!isTile2(e)) {
      error("S-211", attrLoc(op, "in"), opLabel(op) + ": " + *fn + " takes a stream of tiles, got " + inDesc);
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
      out.elem = tileElem(a.dtype, {a.tile[0], mt ? b.tile[0] : a.tile[1]});
    } else if (*fn == "matmul") {
      Proof p = dimEq(a.tile[1], b.tile[0]);
      if (p != Proof::Yes) {
        error("S-212", attrLoc(op, "in"),
              opLabel(op) + ": inner dimensions " + differWord(p) + ": a is tile " + formatShape(a.tile) + " (K = " +
                  a.tile[1].toString() + "), b is tile " + formatShape(b.tile) + " (rows = " + b.tile[0].toString() +
                  "); input " + inDesc);
        return;
      }
      out.elem = tileElem(a.dtype, {a.tile[0], b.tile[1]});
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

void Checker::inferAccum(const Op& op) {
  auto h = tileReduceHead(op, {"add", "max", "retile", "rescale_add"});
  if (!h) return;
  const StreamType& it = h->in;
  StreamType out{outerDims(it, h->b), it.elem};
  if (h->fn == "retile")  // the reduced dims' tiles stacked into one: rows times each dim
    for (const SymExpr& d : innerDims(it, h->b)) out.elem.tile[0] = out.elem.tile[0] * d;
  setOutput(op, op.outputs[0], std::move(out));
}

void Checker::inferPromote(const Op& op) {
  if (!arity(op)) return;
  auto b = intAttr(op, "b");
  auto in = inputTypes(op);
  if (!b || !in) return;
  const StreamType& it = (*in)[0];
  // b = rank + 1 inserts a new outermost dim: the whole stream becomes one group (dynamic
  // tiling, docs/step_semantics.md#dynamic-tiling); over a dynamic count its size is 1 if that count > 0, else 0.
  if (!checkRankParam(op, "b", *b, it.rank() + 1, op.inputs[0])) return;
  StreamType out = it;
  const bool overDynamic = size_t(*b) == it.shape.size() && !it.shape[0].evaluate(g_.symbols);
  out.shape.insert(out.shape.end() - long(*b), overDynamic ? freshDim("P_" + op.name) : SymExpr::constant(1));
  setOutput(op, op.outputs[0], std::move(out));
}

void Checker::inferFlatten(const Op& op) {
  if (!arity(op)) return;
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

}  // namespace stepgen::shape_detail
