// Shape check driver: infers the type of every stream of a StepGraph from its operators and
// reports shape errors (docs/step_semantics.md#operators; operator table in docs/graph_format.md).
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
//   S-248 RandomOffChipLoad with `count` or `index` (or RandomOffChipStore with `index`): address elements not meta rows [1, c], index/count
//         not a word of them, or a negative step
//   S-250 dimension not static (evalDim)
//   S-251 Map(select): n, value or initial out of range, or value/initial on another fn
//   S-252 a store into a state tensor depends on a load of it
//   S-299 internal error
//
// This file: checkShapes (walk the ops in dependency order, run each op's rule, collect the
// diagnostics), the checker's shared checks, and the public helpers of shape_check.hpp.
// The rules and attribute readers: shape_rules.hpp lists which file holds what.
#include "passes/shape_check.hpp"

#include <algorithm>
#include <cstdint>
#include <set>

#include "ir/op_table.hpp"
#include "passes/graph_order.hpp"
#include "passes/shape_rules.hpp"

namespace stepgen {

namespace shape_detail {

Checker::Checker(const StepGraph& g) : g_(g) {
  cons_.values = g.symbols;
  types_.resize(g.streams.size());
  fedBack_.assign(g.streams.size(), false);
}

ShapeResult Checker::run() {
  const OpOrder order = orderOps(g_);
  std::set<int> reportedNoProducer;
  for (const UnproducedRead& u : order.unproduced) {
    const Op& op = g_.ops[size_t(u.op)];
    reportedNoProducer.insert(u.stream.v);
    error("S-206", attrLoc(op, "in"),
          "stream '" + g_.streams[size_t(u.stream.v)].name + "' read by " + opLabel(op) + " has no producer");
  }
  for (StreamId fb : order.feedback) {  // read before it is produced: its type comes from the producer's attributes
    fedBack_[size_t(fb.v)] = true;
    if (auto t = selectType(g_.op(g_.stream(fb).producer))) setOutput(g_.op(g_.stream(fb).producer), fb, *t);
  }
  for (int i : order.order) inferOp(g_.ops[size_t(i)]);
  for (const OpCycle& c : order.cycles) reportCycle(c);
  for (auto [st, ld] : order.stateConflicts)
    error("S-252", g_.ops[size_t(st)].loc,
          opLabel(g_.ops[size_t(st)]) + " writes state tensor '" + g_.ops[size_t(st)].attrs.at("tensor").scalar +
              "' from a stream that depends on " + opLabel(g_.ops[size_t(ld)]) +
              ", which reads it: a state tensor is read after it is written (docs/graph_format.md#state-tensors)",
          {DiagNote{g_.ops[size_t(ld)].loc, opLabel(g_.ops[size_t(ld)]) + " reads it here"}});
  // Streams that nothing produces and nobody reported yet.
  for (size_t s = 0; s < g_.streams.size(); ++s) {
    if (order.producerOf[s] < 0 && !reportedNoProducer.count(int(s)))
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

void Checker::inferOp(const Op& op) {
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

void Checker::reportCycle(const OpCycle& c) {
  // Printed forwards from the first op: producer -(stream)-> consumer ... -> the first op.
  std::string msg = "operators form a dependency cycle without initial tokens: ";
  std::vector<DiagNote> notes;
  for (size_t k = 0; k < c.ops.size(); ++k) {
    const Op& o = g_.ops[size_t(c.ops[k])];
    msg += opLabel(o) + " -(" + streamName(c.streams[k]) + ")-> ";
    notes.push_back(DiagNote{o.loc, opLabel(o) + " is part of the cycle"});
  }
  const Op& first = g_.ops[size_t(c.ops[0])];
  msg += opLabel(first) +
         " (a cycle must pass through a feedback stream: a Map with fn select and initial >= 1, "
         "docs/graph_format.md#feedback-streams)";
  error("S-205", first.loc, msg, notes);
}

void Checker::error(const std::string& id, const SourceLoc& loc, const std::string& msg, std::vector<DiagNote> notes) {
  diags_.push_back(Diagnostic{id, loc, msg, std::move(notes)});
}

std::string Checker::opLabel(const Op& op) const {
  std::string k = opKindName(op.kind);
  const std::vector<std::string>& keys = opRow(op.kind).keys;
  if (std::find(keys.begin(), keys.end(), "fn") != keys.end()) {
    auto it = op.attrs.find("fn");
    if (it != op.attrs.end() && !it->second.isList && !it->second.scalar.empty())
      k += "(" + it->second.scalar + ")";
  }
  return k + " '" + op.name + "'";
}

std::string Checker::streamName(StreamId s) const {
  return validStream(s) ? "'" + g_.streams[size_t(s.v)].name + "'" : "<invalid stream>";
}

std::string Checker::streamDesc(StreamId s) const {
  std::string d = "stream " + streamName(s);
  if (validStream(s) && types_[size_t(s.v)]) d += " " + formatStreamType(*types_[size_t(s.v)]);
  return d;
}

bool Checker::arity(const Op& op, size_t nin, size_t noutMin, size_t noutMax) {
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

bool Checker::arity(const Op& op) {
  const OpArity& a = opRow(op.kind).arity;
  return arity(op, size_t(a.inMin), size_t(a.outMin), a.outMax < 0 ? SIZE_MAX : size_t(a.outMax));
}

bool Checker::checkRankParam(const Op& op, const std::string& key, int64_t v, int64_t maxValue, StreamId in) {
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

std::optional<std::vector<StreamType>> Checker::inputTypes(const Op& op) {
  std::vector<StreamType> v;
  for (StreamId s : op.inputs) {
    if (!types_[size_t(s.v)]) return std::nullopt;
    v.push_back(*types_[size_t(s.v)]);
  }
  return v;
}

Proof Checker::dimsEq(const std::vector<SymExpr>& a, const std::vector<SymExpr>& b) const {
  if (a.size() != b.size()) return Proof::No;
  Proof p = Proof::Yes;
  for (size_t i = 0; i < a.size() && p != Proof::No; ++i) p = combine(p, dimEq(a[i], b[i]));
  return p;
}

Proof Checker::elemEq(const ElemType& a, const ElemType& b) const {
  if (a.kind != b.kind) return Proof::No;
  Proof p = Proof::Yes;
  if (a.kind == ElemType::Kind::Tile && a.dtype != b.dtype) return Proof::No;
  // a Selector's tile is [n, k]: selectors among different numbers of outputs differ
  if (a.kind != ElemType::Kind::Tuple) p = dimsEq(a.tile, b.tile);
  if (a.kind == ElemType::Kind::Tuple || a.kind == ElemType::Kind::Reference) {
    if (a.parts.size() != b.parts.size()) return Proof::No;
    for (size_t i = 0; i < a.parts.size() && p != Proof::No; ++i) p = combine(p, elemEq(a.parts[i], b.parts[i]));
  }
  return p;
}

SymExpr Checker::freshDim(const std::string& name) {
  cons_.lower[name] = 0;
  return SymExpr::symbol(name);
}

void Checker::setOutput(const Op& op, StreamId s, StreamType t) {
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
  for (StreamId in : op.inputs)
    if (validStream(in) && fedBack_[size_t(in.v)]) fedBack_[size_t(s.v)] = true;
  types_[size_t(s.v)] = std::move(t);
}

}  // namespace shape_detail

ShapeResult checkShapes(const StepGraph& g) { return shape_detail::Checker(g).run(); }

std::string formatShape(const std::vector<SymExpr>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i].toString();
  }
  return s + "]";
}

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

int64_t tensorEndByte(const StepGraph& g, const Tensor& t) {
  return t.baseAddress + evalDim(t.shape.at(0), g.symbols) * evalDim(t.shape.at(1), g.symbols) * 4;
}

int64_t tensorsEndPage(const StepGraph& g) {
  int64_t end = 0;
  for (const Tensor& t : g.tensors) end = std::max(end, tensorEndByte(g, t));
  return (end + 4095) / 4096 * 4096;
}

}  // namespace stepgen
