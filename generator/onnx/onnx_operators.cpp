// The ONNX operators of lowerOnnx (lowering.hpp), one method each: elementwise arithmetic,
// products, softmax and reductions, and the layouts, which on a computed value are formed by
// products with 0/1 matrices.
#include <cmath>

#include "onnx/lowering.hpp"

namespace stepgen::onnx_lowering {

void Lowering::lowerNode(const OnnxNode& n) {
  const std::string& op = n.op;
  if (op == "Constant") return lowerConstant(n);
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") return binary(n);
  if (op == "Neg" || op == "Exp" || op == "Sigmoid" || op == "Sqrt" || op == "Reciprocal" || op == "Identity")
    return unary(n);
  if (op == "Pow") return power(n);
  if (op == "MatMul") return matmul(n);
  if (op == "Gemm") return gemm(n);
  if (op == "Softmax") return softmax(n);
  if (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax" || op == "ReduceSumSquare") return reduce(n);
  if (op == "Transpose" || op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") return layout(n);
  if (op == "Slice") return slice(n);
  if (op == "Concat") return concat(n);
  if (op == "Gather") return gather(n);
  fail("O-201", fmt::format("operator {} is not supported; supported: {}", op, onnxSupportedOps()));
}

void Lowering::lowerConstant(const OnnxNode& n) {
  auto it = n.attrs.find("value");
  if (it == n.attrs.end() || !it->second.t)
    fail("O-202", "a Constant is read from its 'value' tensor attribute only (not value_float, value_ints, sparse_value)");
  imp_.constants[n.outputs.at(0)] = *it->second.t;
  Val v;
  v.leaf = true;
  v.source = n.outputs.at(0);
  v.shape = it->second.t->shape;
  vals_[n.outputs.at(0)] = v;
}

void Lowering::binary(const OnnxNode& n) {
  if (g_.opset < 7 && intAttr(n, "broadcast").value_or(0))
    fail("O-202", "the legacy broadcast attribute (before opset 7: broadcast along 'axis') is not supported");
  const std::vector<int64_t> out = shapeOf(n.outputs.at(0));
  const View w = viewFor(n.inputs, out);
  Opnd a = operand(n.inputs.at(0), w.target, w.rows, w.cols);
  Opnd b = operand(n.inputs.at(1), w.target, w.rows, w.cols, n.op != "Div");
  // a / b = a * recip(b) (docs/hardware.md section 3); a / sqrt(y) = a * rsqrt(y).
  if (n.op == "Div") b = widen(map1(sqrtDivisors_.count(n.inputs[1]) ? "rsqrt" : "recip", b), w.rows, w.cols);
  const char* fn = n.op == "Add" ? "add" : n.op == "Sub" ? "sub" : "mul";
  define(n.outputs.at(0), map2(fn, a, b), out, w.repl);
}

Lowering::View Lowering::viewFor(const std::vector<std::string>& ins, const std::vector<int64_t>& out) {
  for (const auto& i : ins) {
    if (i.empty()) continue;
    const Val& v = val(i);
    if (v.leaf || v.shape != out) continue;
    std::vector<int64_t> target = out;
    if (v.repl) target.back() = v.cols;
    return {v.rows, v.cols, target, v.repl};
  }
  const auto [r, c] = canonicalView(out);
  return {r, c, out, false};
}

void Lowering::silu(const OnnxNode& n, const std::string& x) {
  const std::vector<int64_t> out = shapeOf(n.outputs.at(0));
  if (val(x).shape != out) fail("O-202", "a SiLU product whose two operands differ in shape (broadcast)");
  const View w = viewFor({x}, out);
  define(n.outputs.at(0), map1("silu", operand(x, w.target, w.rows, w.cols)), out, w.repl);
}

void Lowering::unary(const OnnxNode& n) {
  const std::vector<int64_t> out = shapeOf(n.outputs.at(0));
  const View w = viewFor(n.inputs, out);
  const int64_t rows = w.rows, cols = w.cols;
  // Identity, and a Sqrt whose Div takes rsqrt of its input, are the input itself.
  if (n.op == "Identity" || (n.op == "Sqrt" && sqrtDivisors_.count(n.outputs.at(0)))) {
    vals_[n.outputs.at(0)] = vals_.at(n.inputs.at(0));
    return;
  }
  Opnd x = operand(n.inputs.at(0), w.target, rows, cols);
  if (n.op == "Neg") {
    x = map2("mul", x, fillTable(-1.0f, rows, cols));
  } else if (n.op == "Exp") {
    x = map1("exp", x);
  } else if (n.op == "Reciprocal") {
    x = map1("recip", x);
  } else if (n.op == "Sqrt") {
    x = map1("recip", map1("rsqrt", x));  // sqrt(x) = 1 / rsqrt(x); sqrt(0) = 1 / inf = 0
  } else if (n.op == "Sigmoid") {
    // 1 / (1 + exp(-x)): exp of large -x is +inf, whose reciprocal is 0 (the exact limit).
    const Opnd e = map1("exp", map2("mul", x, fillTable(-1.0f, rows, cols)));
    x = map1("recip", map2("add", e, fillTable(1.0f, rows, cols)));
  }
  define(n.outputs.at(0), x, out, w.repl);
}

void Lowering::power(const OnnxNode& n) {
  const OnnxTensor* e = constant(n.inputs.at(1));
  const double p = e && e->count() == 1 ? (e->isFloat ? double(e->f.at(0)) : double(e->i.at(0))) : NAN;
  if (!(p == 2 || p == 1 || p == 0.5 || p == -1 || p == -0.5))
    fail("O-202", "Pow is supported with a constant scalar exponent of 2, 1, 0.5, -1 or -0.5 only (x*x, x, sqrt, "
                  "recip, rsqrt)");
  const std::vector<int64_t> out = shapeOf(n.outputs.at(0));
  if (out != val(n.inputs.at(0)).shape) fail("O-202", "Pow broadcasting its base is not supported");
  const View w = viewFor({n.inputs.at(0)}, out);
  Opnd x = operand(n.inputs.at(0), w.target, w.rows, w.cols);
  if (p == 2) x = map2("mul", x, again(x));
  if (p == 0.5) x = map1("recip", map1("rsqrt", x));
  if (p == -1) x = map1("recip", x);
  if (p == -0.5) x = map1("rsqrt", x);
  define(n.outputs.at(0), x, out, w.repl);
}

Opnd Lowering::matrixOperand(const std::string& name, const std::vector<int64_t>& shape2) {
  const Val& v = formed(name);
  requireFloat(name);
  if (v.leaf) {
    Val w = v;
    if (w.shape != shape2) w.steps.push_back({OnnxLayoutStep::Kind::Reshape, shape2});
    w.shape = shape2;
    return leafOperand(w, shape2, shape2[0], shape2[1]);
  }
  return canonicalOperand(name);  // shape2 is its canonical view: [leading dims, last dim]
}

void Lowering::matmul(const OnnxNode& n) {
  const std::vector<int64_t> a = val(n.inputs.at(0)).shape, b = val(n.inputs.at(1)).shape;
  const std::vector<int64_t> out = shapeOf(n.outputs.at(0));
  if (a.empty() || b.size() < 2 || (b.size() > 2 && a.size() != b.size()))
    fail("O-202", fmt::format("MatMul of [{}] by [{}]: the second operand must be 2-D, or both of one rank (a batch of "
                              "products)", fmt::join(a, ", "), fmt::join(b, ", ")));
  const Val& bv = val(n.inputs.at(1));
  const char* fn = bv.tlast ? "matmul_t" : "matmul";  // B^T of a computed B: its rows are B's columns
  if (b.size() == 2) {
    const int64_t m = product(a, 0, a.size() - 1), k = a.back();
    const Opnd x = matrixOperand(n.inputs.at(0), {m, k});
    if (const std::optional<Opnd> y = bv.leaf ? linearStage(x, bv, false, b[1]) : std::nullopt)
      return define(n.outputs.at(0), *y, out);
    const Opnd w = bv.tlast ? use(bv.stream, bv.rows, bv.cols) : matrixOperand(n.inputs.at(1), b);
    define(n.outputs.at(0), map(fn, x, &w, m, b[1]), out);
    return;
  }
  // A batch of products (attention's heads): product i of rows i*M.. of A and i*K.. of B,
  // each selected (a 0/1 product, or folded into an input's data) and placed at rows i*M..
  const int64_t batch = product(a, 0, a.size() - 2), m = a[a.size() - 2], k = a.back(), nn = b.back();
  if (product(b, 0, b.size() - 2) != batch) fail("O-202", "a batched MatMul with broadcast batch dims is not supported");
  auto part = [&](const std::string& name, int64_t i, int64_t rows, int64_t cols) {
    const Val& v = val(name);
    if (v.tlast) {  // rows i*cols.. of the stream before the transpose: [cols, rows] for matmul_t
      const Opnd x = use(v.stream, v.rows, v.cols);
      const Opnd sel = placement(cols, batch * cols, 0, i * cols, cols);
      return map("matmul", sel, &x, cols, rows);
    }
    if (v.leaf) {
      Val w = v;
      w.steps.push_back({OnnxLayoutStep::Kind::Reshape, {batch * rows, cols}});
      w.steps.push_back({OnnxLayoutStep::Kind::Slice, {0, i * rows, 1, rows}});
      w.shape = {rows, cols};
      return leafOperand(w, w.shape, rows, cols);
    }
    Opnd x = canonicalOperand(name);
    if (batch == 1) return x;
    const Opnd sel = placement(rows, batch * rows, 0, i * rows, rows);
    return map("matmul", sel, &x, rows, cols);
  };
  Opnd sum;
  for (int64_t i = 0; i < batch; ++i) {
    const Opnd x = part(n.inputs.at(0), i, m, k), w = part(n.inputs.at(1), i, k, nn);
    Opnd c = map(fn, x, &w, m, nn);
    if (batch > 1) {
      const Opnd put = placement(batch * m, m, i * m, 0, m);
      c = map("matmul", put, &c, batch * m, nn);
    }
    sum = i == 0 ? c : map2("add", sum, c);
  }
  define(n.outputs.at(0), sum, out);
}

void Lowering::gemm(const OnnxNode& n) {
  const bool transA = intAttr(n, "transA").value_or(0) != 0, transB = intAttr(n, "transB").value_or(0) != 0;
  const float alpha = floatAttr(n, "alpha").value_or(1.0f), beta = floatAttr(n, "beta").value_or(1.0f);
  const std::vector<int64_t> out = shapeOf(n.outputs.at(0));
  const Val& av = val(n.inputs.at(0));
  const Val& bv = val(n.inputs.at(1));
  if (av.shape.size() != 2 || bv.shape.size() != 2) fail("O-202", "Gemm needs 2-D A and B");
  auto transposed = [&](const std::string& name, const Val& v, bool t) {
    if (!t) return matrixOperand(name, v.shape);
    if (!v.leaf) fail("O-204", fmt::format("Gemm transposes computed value '{}' (only inputs and constants can be)", name));
    Val w = v;
    w.steps.push_back({OnnxLayoutStep::Kind::Transpose, {1, 0}});
    w.shape = {v.shape[1], v.shape[0]};
    return leafOperand(w, w.shape, w.shape[0], w.shape[1]);
  };
  const Opnd x = transposed(n.inputs.at(0), av, transA);
  const int64_t rows = out.at(0), cols = out.at(1);
  std::optional<Opnd> r = bv.leaf ? linearStage(x, bv, transB, cols) : std::nullopt;
  if (!r) {
    const bool bt = transB && !bv.leaf;  // a computed [N, K]: matmul_t takes B as PyTorch stores weights
    const Opnd y = bt ? matrixOperand(n.inputs.at(1), bv.shape) : transposed(n.inputs.at(1), bv, transB);
    r = map(bt ? "matmul_t" : "matmul", x, &y, rows, cols);
  }
  if (alpha != 1.0f) r = map2("mul", *r, fillTable(alpha, rows, cols));
  if (n.inputs.size() > 2 && !n.inputs[2].empty() && beta != 0.0f) {
    const Val& cv = val(n.inputs[2]);
    Opnd c;
    if (cv.leaf) {
      Val w = cv;
      if (beta != 1.0f) w.steps.push_back({OnnxLayoutStep::Kind::Scale, {}, beta});
      c = leafOperand(w, out, rows, cols);
    } else {
      c = operand(n.inputs[2], out, rows, cols);
      if (beta != 1.0f) c = map2("mul", c, fillTable(beta, rows, cols));
    }
    r = map2("add", *r, c);
  }
  define(n.outputs.at(0), *r, out);
}

Opnd Lowering::rowOperand(const std::string& name, const std::vector<size_t>& reduced) {
  const Val& v = formed(name);
  requireFloat(name);
  std::vector<int64_t> perm;
  for (size_t a = 0; a < v.shape.size(); ++a)
    if (!std::count(reduced.begin(), reduced.end(), a)) perm.push_back(int64_t(a));
  for (size_t a : reduced) perm.push_back(int64_t(a));
  int64_t cols = 1;
  for (size_t a : reduced) cols *= v.shape.at(a);
  const int64_t rows = product(v.shape) / std::max<int64_t>(cols, 1);
  const bool trailing = std::is_sorted(perm.begin(), perm.end());
  if (v.leaf) {
    Val w = v;
    if (!trailing) w.steps.push_back({OnnxLayoutStep::Kind::Transpose, perm});
    w.steps.push_back({OnnxLayoutStep::Kind::Reshape, {rows, cols}});
    w.shape = {rows, cols};
    return leafOperand(w, w.shape, rows, cols);
  }
  Opnd o = use(v.stream, v.rows, v.cols);
  if (v.repl) o = extractColumn(o);
  if (!trailing || o.rows != rows || o.cols != cols)
    fail("O-204", fmt::format("computed value '{}' (shape [{}], seen as {}x{}) would need a relayout to rows over axes "
                              "[{}]: only the trailing axes of a computed value form rows",
                              name, fmt::join(v.shape, ", "), v.rows, v.cols, fmt::join(reduced, ", ")));
  return o;
}

size_t Lowering::axisOf(int64_t axis, size_t rank) {
  const int64_t a = axis < 0 ? axis + int64_t(rank) : axis;
  if (a < 0 || a >= int64_t(std::max<size_t>(rank, 1))) fail("O-202", fmt::format("axis {} is outside rank {}", axis, rank));
  return size_t(a);
}

void Lowering::softmax(const OnnxNode& n) {
  const std::vector<int64_t> s = val(n.inputs.at(0)).shape;
  const bool old = g_.opset < 13;  // before 13: coerced to 2-D at axis (default 1); from 13: one axis (default -1)
  const size_t axis = axisOf(intAttr(n, "axis").value_or(old ? 1 : -1), s.size());
  if (!old && axis + 1 != s.size())
    fail("O-202", fmt::format("Softmax over axis {} of rank {}: the fabric reduces rows, so only the last axis", axis, s.size()));
  std::vector<size_t> trailing;
  for (size_t a = axis; a < s.size(); ++a) trailing.push_back(a);
  Opnd x = rowOperand(n.inputs.at(0), trailing);
  // softmax(x) = exp(x - rowmax) * recip(rowsum(exp(x - rowmax))); rowmax and rowsum put a row's
  // result in every word of the row.
  const Opnd e = map1("exp", map2("sub", x, map1("rowmax", again(x))));
  define(n.outputs.at(0), map2("mul", e, map1("recip", map1("rowsum", again(e)))), s);
}

void Lowering::reduce(const OnnxNode& n) {
  const std::vector<int64_t> s = val(n.inputs.at(0)).shape;
  std::vector<int64_t> axes;
  auto it = n.attrs.find("axes");
  if (it != n.attrs.end()) axes = it->second.ints;
  if (n.inputs.size() > 1 && !n.inputs[1].empty()) {  // ReduceSum from opset 13: axes as an input
    const OnnxTensor* t = constant(n.inputs[1]);
    if (!t) fail("O-202", "the axes input must be a constant");
    axes = t->i;
  }
  if (axes.empty() && intAttr(n, "noop_with_empty_axes").value_or(0))
    fail("O-202", "noop_with_empty_axes = 1 is not supported");
  std::vector<size_t> ax;
  for (int64_t a : axes) ax.push_back(axisOf(a, s.size()));
  if (ax.empty())
    for (size_t a = 0; a < s.size(); ++a) ax.push_back(a);
  std::sort(ax.begin(), ax.end());
  ax.erase(std::unique(ax.begin(), ax.end()), ax.end());
  Opnd x = rowOperand(n.inputs.at(0), ax);
  const int64_t rows = x.rows, cols = x.cols;
  if (n.op == "ReduceSumSquare") x = map2("mul", x, again(x));
  Opnd r;
  if (n.op == "ReduceMax") {
    // rowmax fills the row with its max; a matmul with e0 = [1, 0, ...]^T keeps column 0.
    r = map1("rowmax", x);
  } else {
    r = map1("rowsum", x);
    if (n.op == "ReduceMean") r = map2("mul", r, fillTable(float(1.0 / double(cols)), rows, cols));
  }
  // rowmax and rowsum fill each row with its result: the value is column-replicated, and a
  // consumer that needs [rows, 1] extracts column 0 (extractColumn).
  define(n.outputs.at(0), r, shapeOf(n.outputs.at(0)), true);
}

void Lowering::layout(const OnnxNode& n) {
  const Val& v = formed(n.inputs.at(0));
  const std::vector<int64_t> out = shapeOf(n.outputs.at(0));
  Val w = v;
  w.shape = out;
  std::vector<int64_t> perm;  // Transpose's (default: the axes reversed)
  if (n.op == "Transpose") {
    auto it = n.attrs.find("perm");
    if (it != n.attrs.end()) perm = it->second.ints;
    if (perm.empty())
      for (int64_t k = int64_t(v.shape.size()) - 1; k >= 0; --k) perm.push_back(k);
  }
  if (v.leaf) {
    if (n.op == "Transpose") {
      w.steps.push_back({OnnxLayoutStep::Kind::Transpose, perm});
    } else {
      w.steps.push_back({OnnxLayoutStep::Kind::Reshape, out});
    }
    vals_[n.outputs.at(0)] = w;
    return;
  }
  // A computed value: a regrouping that leaves its view is free; another regroups its
  // data by 0/1 products; a transpose that keeps the last axis permutes rows.
  if (n.op == "Transpose") {
    std::vector<int64_t> nonUnit;
    for (int64_t p : perm)
      if (v.shape.at(size_t(p)) != 1) nonUnit.push_back(p);
    if (std::is_sorted(nonUnit.begin(), nonUnit.end()) && canonicalView(out) == std::make_pair(v.rows, v.cols)) {
      vals_[n.outputs.at(0)] = w;
      return;
    }
    // The last axis moved to second-to-last: a row permutation of the leading axes (if
    // any) then the swap of the last two, which the MatMul reading it forms (tlast).
    const int64_t r = int64_t(v.shape.size());
    if (r >= 2 && perm[size_t(r - 2)] == r - 1) {
      std::vector<int64_t> q = perm;
      std::swap(q[size_t(r - 2)], q[size_t(r - 1)]);
      std::vector<int64_t> qShape;
      for (int64_t a : q) qShape.push_back(v.shape.at(size_t(a)));
      bool identity = true;
      for (int64_t k = 0; k < r; ++k) identity = identity && q[size_t(k)] == k;
      const Opnd x = canonicalOperand(n.inputs.at(0));
      define(n.outputs.at(0), identity ? x : rowPermutation(x, v.shape, q), qShape);
      vals_[n.outputs.at(0)].shape = out;
      vals_[n.outputs.at(0)].tlast = true;
      return;
    }
    if (perm.back() != int64_t(v.shape.size()) - 1)
      fail("O-204", fmt::format("Transpose of computed value '{}' moves its last axis: the fabric has no transpose of a "
                                "tile (transpose inputs and constants instead)", n.inputs.at(0)));
    const Opnd x = canonicalOperand(n.inputs.at(0));
    define(n.outputs.at(0), rowPermutation(x, v.shape, perm), out);
    return;
  }
  const auto [r2, c2] = canonicalView(out);
  if (std::make_pair(r2, c2) == std::make_pair(v.rows, v.cols) || (v.repl && c2 == 1 && r2 == v.rows)) {
    vals_[n.outputs.at(0)] = w;
    return;
  }
  const Opnd x = canonicalOperand(n.inputs.at(0));
  define(n.outputs.at(0), regroup(n.inputs.at(0), x, r2, c2), out);
}

Opnd Lowering::rowPermutation(const Opnd& x, const std::vector<int64_t>& in, const std::vector<int64_t>& perm) {
  const size_t lead = in.size() - 1;
  std::vector<int64_t> outDims, inStride(lead, 1);
  for (size_t k = lead; k-- > 1;) inStride[k - 1] = inStride[k] * in[k];
  for (size_t k = 0; k < lead; ++k) outDims.push_back(in.at(size_t(perm[k])));
  std::vector<std::pair<int64_t, int64_t>> ones;
  std::vector<int64_t> idx(lead, 0);
  for (int64_t r = 0; r < x.rows; ++r) {
    int64_t src = 0;
    for (size_t k = 0; k < lead; ++k) src += idx[k] * inStride[size_t(perm[k])];
    ones.emplace_back(r, src);
    for (size_t k = lead; k-- > 0;) {
      if (++idx[k] < outDims[k]) break;
      idx[k] = 0;
    }
  }
  const Opnd p = zeroOne(x.rows, x.rows, ones);
  return map("matmul", p, &x, x.rows, x.cols);
}

std::vector<int64_t> Lowering::intsOf(const OnnxNode& n, size_t input, const std::string& attr, bool required) {
  if (n.inputs.size() > input && !n.inputs[input].empty()) {
    const OnnxTensor* t = constant(n.inputs[input]);
    if (!t || t->isFloat) fail("O-202", fmt::format("input {} ('{}') must be an integer constant", input, n.inputs[input]));
    return t->i;
  }
  auto it = n.attrs.find(attr);
  if (it != n.attrs.end()) return it->second.ints;
  if (required) fail("O-202", fmt::format("no '{}' given", attr));
  return {};
}

Opnd Lowering::placement(int64_t rows, int64_t cols, int64_t r0, int64_t c0, int64_t count) {
  std::vector<std::pair<int64_t, int64_t>> ones;
  for (int64_t k = 0; k < count; ++k) ones.emplace_back(r0 + k, c0 + k);
  return zeroOne(rows, cols, ones);
}

Opnd Lowering::zeroOne(int64_t rows, int64_t cols, const std::vector<std::pair<int64_t, int64_t>>& ones) {
  OnnxTensor t;
  t.shape = {rows, cols};
  t.f.assign(size_t(rows * cols), 0.0f);
  for (const auto& [r, c] : ones) t.f[size_t(r * cols + c)] = 1.0f;
  const std::string name = fmt::format("place{}", imp_.constants.size());
  imp_.constants[name] = t;
  Val v;
  v.leaf = true;
  v.source = name;
  v.shape = t.shape;
  return leafOperand(v, t.shape, rows, cols);
}

Opnd Lowering::canonicalOperand(const std::string& name) {
  const Val& v = formed(name);
  Opnd o = use(v.stream, v.rows, v.cols);
  if (v.repl) o = extractColumn(o);
  if (std::make_pair(o.rows, o.cols) != canonicalView(v.shape))
    fail("O-204", fmt::format("computed value '{}' is seen as {}x{}, not as rows of its last axis", name, o.rows, o.cols));
  return o;
}

Opnd Lowering::regroup(const std::string& name, const Opnd& x, int64_t r2, int64_t c2) {
  const bool split = x.cols % c2 == 0, merge = c2 % x.cols == 0;
  if (!split && !merge)
    fail("O-204", fmt::format("computed value '{}' regrouped from rows of {} to rows of {}: neither divides the other", name,
                              x.cols, c2));
  const int64_t k = split ? x.cols / c2 : c2 / x.cols;
  Opnd sum;
  for (int64_t j = 0; j < k; ++j) {
    const Opnd xj = j == 0 ? x : again(x);
    std::vector<std::pair<int64_t, int64_t>> ones;
    Opnd placed;
    if (split) {  // columns j*c2.. of row r go to row r*k + j
      const Opnd sel = placement(x.cols, c2, j * c2, 0, c2);
      for (int64_t r = 0; r < x.rows; ++r) ones.emplace_back(r * k + j, r);
      const Opnd put = zeroOne(r2, x.rows, ones);
      const Opnd part = map("matmul", xj, &sel, x.rows, c2);
      placed = map("matmul", put, &part, r2, c2);
    } else {  // row r*k + j goes to columns j*C.. of row r
      for (int64_t r = 0; r < r2; ++r) ones.emplace_back(r, r * k + j);
      const Opnd sel = zeroOne(r2, x.rows, ones);
      const Opnd put = placement(x.cols, c2, 0, j * x.cols, x.cols);
      const Opnd part = map("matmul", sel, &xj, r2, x.cols);
      placed = map("matmul", part, &put, r2, c2);
    }
    sum = j == 0 ? placed : map2("add", sum, placed);
  }
  return sum;
}

void Lowering::slice(const OnnxNode& n) {
  const bool old = g_.opset < 10;  // before 10: starts, ends, axes attributes; no steps
  const std::vector<int64_t> starts = intsOf(n, old ? 99 : 1, "starts", true), ends = intsOf(n, old ? 99 : 2, "ends", true);
  std::vector<int64_t> axes = intsOf(n, old ? 99 : 3, "axes", false), steps = old ? std::vector<int64_t>{} : intsOf(n, 4, "", false);
  const Val& v = val(n.inputs.at(0));
  const std::vector<int64_t> out = shapeOf(n.outputs.at(0));
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(int64_t(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (v.leaf) {
    Val w = v;
    for (size_t k = 0; k < axes.size(); ++k) {
      const size_t a = axisOf(axes[k], v.shape.size());
      const int64_t dim = v.shape[a], st = steps.at(k);
      if (st == 0) fail("O-202", "a Slice step of 0");
      int64_t b = starts[k] < 0 ? starts[k] + dim : starts[k];
      b = st > 0 ? std::clamp<int64_t>(b, 0, dim) : std::clamp<int64_t>(b, 0, dim - 1);
      w.steps.push_back({OnnxLayoutStep::Kind::Slice, {int64_t(a), b, st, out[a]}});
    }
    w.shape = out;
    vals_[n.outputs.at(0)] = w;
    return;
  }
  size_t changed = SIZE_MAX;
  for (size_t a = 0; a < out.size(); ++a)
    if (out[a] != v.shape[a]) {
      if (changed != SIZE_MAX) fail("O-204", "a Slice of a computed value along more than one axis");
      changed = a;
    }
  if (changed == SIZE_MAX) {  // nothing removed
    vals_[n.outputs.at(0)] = v;
    return;
  }
  size_t k = 0;
  while (k < axes.size() && axisOf(axes[k], v.shape.size()) != changed) ++k;
  const int64_t dim = v.shape[changed];
  const int64_t b = std::clamp<int64_t>(starts.at(k) < 0 ? starts[k] + dim : starts[k], 0, dim);
  if (steps.at(k) != 1) fail("O-204", "a Slice of a computed value with a step other than 1");
  const Opnd x = canonicalOperand(n.inputs.at(0));
  if (changed + 1 == v.shape.size()) {
    const Opnd sel = placement(x.cols, out[changed], b, 0, out[changed]);
    define(n.outputs.at(0), map("matmul", x, &sel, x.rows, out[changed]), out);
  } else if (changed == 0) {
    const int64_t rows = product(out, 0, out.size() - 1), per = x.rows / v.shape[0];
    const Opnd sel = placement(rows, x.rows, 0, b * per, rows);
    define(n.outputs.at(0), map("matmul", sel, &x, rows, x.cols), out);
  } else {
    fail("O-204", fmt::format("a Slice of computed value '{}' along axis {}: only the last axis (columns) or the first "
                              "(rows) of a computed value", n.inputs.at(0), changed));
  }
}

void Lowering::concat(const OnnxNode& n) {
  const std::vector<int64_t> out = shapeOf(n.outputs.at(0));
  const size_t axis = axisOf(intAttr(n, "axis").value_or(0), out.size());
  const bool last = axis + 1 == out.size();
  if (!last && axis != 0)
    fail("O-204", fmt::format("Concat along axis {} of rank {}: only the last axis (columns) or the first (rows)", axis,
                              out.size()));
  const auto [rows, cols] = canonicalView(out);
  Opnd sum;
  int64_t at = 0;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Val& v = val(n.inputs[i]);
    const auto [r, c] = canonicalView(v.shape);
    Opnd x = operand(n.inputs[i], v.shape, r, c);
    Opnd placed;
    if (last) {
      const Opnd p = placement(c, cols, 0, at, c);
      placed = map("matmul", x, &p, rows, cols);
      at += c;
    } else {
      const Opnd p = placement(rows, r, at, 0, r);
      placed = map("matmul", p, &x, rows, cols);
      at += r;
    }
    sum = i == 0 ? placed : map2("add", sum, placed);
  }
  define(n.outputs.at(0), sum, out);
}

void Lowering::gather(const OnnxNode& n) {
  const Val& data = formed(n.inputs.at(0));
  requireFloat(n.inputs.at(0));
  if (!data.leaf)
    fail("O-204", fmt::format("a Gather of computed value '{}': the fabric gathers rows of an input or constant tensor, "
                              "which it reads from DRAM by index", n.inputs.at(0)));
  const std::string& indices = n.inputs.at(1);
  const Val& iv = val(indices);
  const OnnxTensor* c = constant(indices);
  if (!iv.leaf || (c ? c->isFloat : !g_.isInteger(indices)))
    fail("O-103", fmt::format("the indices '{}' of a Gather must be an integer input or constant", indices));
  for (const OnnxLayoutStep& s : iv.steps)
    if (s.kind != OnnxLayoutStep::Kind::Reshape)
      fail("O-204", fmt::format("the indices '{}' of a Gather are laid out by more than a reshape", indices));
  const size_t axis = axisOf(intAttr(n, "axis").value_or(0), data.shape.size());
  const int64_t p = product(data.shape, 0, axis), rows = data.shape[axis], r = product(data.shape, axis + 1);
  const int64_t k = product(iv.shape), meta = 16;  // one 64-byte DRAM piece per meta row
  OnnxLeafTensor table;
  table.source = data.source;
  table.steps = data.steps;
  table.steps.push_back({OnnxLayoutStep::Kind::Reshape, {p * rows, r}});
  table.rows = p * rows;
  table.cols = r;
  OnnxLeafTensor idx;
  idx.source = indices;
  idx.steps = iv.steps;
  idx.steps.push_back({OnnxLayoutStep::Kind::IndexRows, {p, rows}});
  idx.rows = p * k;
  idx.cols = meta;
  const int m = newStream(), s = newStream();
  ops_.push_back(fmt::format("  - {{name: {}, op: LinearOffChipLoad, tensor: {}, tile: [1, {}], iter: [{}], strides: [[1, 0]], "
                             "out: s{}}}", opName("load"), leafTensor(idx), meta, p * k, m));
  ops_.push_back(fmt::format("  - {{name: {}, op: RandomOffChipLoad, in: {}, tensor: {}, tile: [1, {}], index: 0, out: s{}}}",
                             opName("gather"), take(m), leafTensor(table), r, s));
  streamTiles_[size_t(s)] = p * k;
  define(n.outputs.at(0), use(s, p * k, r), shapeOf(n.outputs.at(0)));
}

}  // namespace stepgen::onnx_lowering
