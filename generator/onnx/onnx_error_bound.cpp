#include "onnx/onnx_error_bound.hpp"

#include <cmath>
#include <limits>

#include "common/fp.hpp"
#include "ir/attrs.hpp"
#include "ir/tile_walk.hpp"
#include "passes/graph_order.hpp"
#include "passes/shape_check.hpp"
#include "support/diag.hpp"

namespace stepgen {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A tile in double with a bound on each element's error; a Zip's output has two parts.
struct Bounded {
  int64_t rows = 0, cols = 0;
  std::vector<double> v, e;
  std::vector<Bounded> parts;
};

Bounded sized(int64_t rows, int64_t cols) {
  Bounded t;
  t.rows = rows;
  t.cols = cols;
  t.v.assign(size_t(rows * cols), 0.0);
  t.e.assign(size_t(rows * cols), 0.0);
  return t;
}

/// A bound stays finite only where the value is: inf - inf and inf x 0 have no bound.
double clean(double v, double e) { return std::isfinite(v) && !std::isnan(e) ? e : kInf; }

/// |(a+da)(b+db) - ab| <= |a| db + |b| da + da db: the error a product inherits.
double productError(double a, double ea, double b, double eb) { return std::fabs(a) * eb + std::fabs(b) * ea + ea * eb; }

/// matmul (b is [K, N]) or matmul_t (b is [N, K]). Each product inherits its operands'
/// errors; rounding the operands (bf16) costs (1 + r)^2 - 1 of each product, and summing K
/// products in fp32 at most K x 2^-24 of the sum of their magnitudes (Higham, Accuracy and
/// Stability of Numerical Algorithms, 2nd ed., eq. 3.5: gamma_K).
Bounded matmul(const Bounded& a, const Bounded& b, bool transposed, const FunctionErrors& fe) {
  const int64_t K = a.cols, N = transposed ? b.rows : b.cols;
  const double operand = (1 + fe.operand) * (1 + fe.operand) - 1;
  Bounded out = sized(a.rows, N);
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t n = 0; n < N; ++n) {
      double sum = 0, err = 0, mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        const size_t ia = size_t(r * K + k), ib = size_t(transposed ? n * K + k : k * N + n);
        const double p = a.v[ia] * b.v[ib], ep = productError(a.v[ia], a.e[ia], b.v[ib], b.e[ib]);
        sum += p;
        err += ep;
        mag += std::fabs(p) + ep;
      }
      const size_t i = size_t(r * N + n);
      out.v[i] = sum;
      out.e[i] = clean(sum, err + (operand + double(K) * fe.round) * mag);
    }
  return out;
}

/// Elementwise add, sub, mul: one fp32 rounding of the result on top of what it inherits.
Bounded binary(const std::string& fn, const Bounded& a, const Bounded& b, const FunctionErrors& fe) {
  Bounded out = sized(a.rows, a.cols);
  for (size_t i = 0; i < out.v.size(); ++i) {
    double v, e;
    if (fn == "mul") {
      v = a.v[i] * b.v[i];
      e = productError(a.v[i], a.e[i], b.v[i], b.e[i]);
    } else {
      v = fn == "add" ? a.v[i] + b.v[i] : a.v[i] - b.v[i];
      e = a.e[i] + b.e[i];
      // An exact infinity (a -inf mask) plus a finite value is that infinity exactly,
      // whatever the finite value's error.
      const bool aInf = std::isinf(a.v[i]) && a.e[i] == 0, bInf = std::isinf(b.v[i]) && b.e[i] == 0;
      if (std::isinf(v) && (aInf != bInf) && std::isfinite(aInf ? b.v[i] : a.v[i])) {
        out.v[i] = v;
        out.e[i] = 0;
        continue;
      }
    }
    out.v[i] = v;
    out.e[i] = clean(v, e + fe.round * (std::fabs(v) + e));
  }
  return out;
}

/// exp, recip, rsqrt: the error inherited through the function's slope over the input's
/// error interval, plus the function's own relative error at the far end of it.
Bounded unary(const std::string& fn, const Bounded& a, const FunctionErrors& fe) {
  Bounded out = sized(a.rows, a.cols);
  for (size_t i = 0; i < out.v.size(); ++i) {
    const double x = a.v[i], ex = a.e[i];
    double v, e;
    if (fn == "exp") {
      v = std::exp(x);
      e = x == -INFINITY && ex == 0 ? 0.0 : v * std::expm1(ex) + fe.exp * v * std::exp(ex);  // exp(-inf) = 0 exactly
    } else if (fn == "recip") {
      v = 1 / x;
      const double far = std::fabs(x) - ex;  // the smallest |input| within its error
      e = far > 0 ? ex / (std::fabs(x) * far) + fe.recip / far : kInf;
    } else {  // rsqrt
      v = 1 / std::sqrt(x);
      const double far = x - ex;
      e = far > 0 ? 1 / std::sqrt(far) - v + fe.rsqrt / std::sqrt(far) : kInf;
    }
    out.v[i] = v;
    out.e[i] = clean(v, e);
  }
  return out;
}

/// rowsum / rowmax: each row's sum (gamma_K of its magnitudes) or max (max is 1-Lipschitz
/// in the largest error) in every word of the row, as the fabric fills it.
Bounded rowReduce(const std::string& fn, const Bounded& a, const FunctionErrors& fe) {
  Bounded out = sized(a.rows, a.cols);
  for (int64_t r = 0; r < a.rows; ++r) {
    double v = fn == "rowsum" ? 0.0 : -kInf, e = 0, mag = 0;
    for (int64_t c = 0; c < a.cols; ++c) {
      const size_t i = size_t(r * a.cols + c);
      if (fn == "rowsum") {
        v += a.v[i];
        e += a.e[i];
        mag += std::fabs(a.v[i]) + a.e[i];
      } else {
        v = std::max(v, a.v[i]);
        e = std::max(e, a.e[i]);
      }
    }
    if (fn == "rowsum") e += double(a.cols) * fe.round * mag;
    for (int64_t c = 0; c < a.cols; ++c) {
      out.v[size_t(r * a.cols + c)] = v;
      out.e[size_t(r * a.cols + c)] = clean(v, e);
    }
  }
  return out;
}

/// silu = x * sigmoid(x): the fabric's sigmoid is a table within FunctionErrors::sigmoid of it
/// (sim/common/fp.hpp sigmoidTable), so |x| times that, plus the input's error through the
/// slope (|silu'| <= 1.1) and the product's rounding.
Bounded silu(const Bounded& a, const FunctionErrors& fe) {
  Bounded out = sized(a.rows, a.cols);
  for (size_t i = 0; i < out.v.size(); ++i) {
    const double x = a.v[i], v = x / (1 + std::exp(-x));
    const double e = 1.1 * a.e[i] + (std::fabs(x) + a.e[i]) * fe.sigmoid + fe.round * (std::fabs(v) + 1.1 * a.e[i]);
    out.v[i] = v;
    out.e[i] = clean(v, e);
  }
  return out;
}

std::optional<Bounded> applyFunction(const std::string& fn, const Bounded& in, const FunctionErrors& fe) {
  if (fn == "matmul" || fn == "matmul_t") {
    if (in.parts.size() != 2) return std::nullopt;
    return matmul(in.parts[0], in.parts[1], fn == "matmul_t", fe);
  }
  if (fn == "add" || fn == "sub" || fn == "mul") {
    if (in.parts.size() != 2 || in.parts[0].v.size() != in.parts[1].v.size()) return std::nullopt;
    return binary(fn, in.parts[0], in.parts[1], fe);
  }
  if (!in.parts.empty()) return std::nullopt;
  if (fn == "exp" || fn == "recip" || fn == "rsqrt") return unary(fn, in, fe);
  if (fn == "rowsum" || fn == "rowmax") return rowReduce(fn, in, fe);
  if (fn == "silu") return silu(in, fe);
  return std::nullopt;  // the MoE block's routing functions: no running bound
}

/// The elementwise sum of `n` tiles in order (Accum add): each partial sum rounded once.
Bounded accumulate(const std::vector<Bounded>& tiles, size_t from, size_t n, const FunctionErrors& fe) {
  Bounded out = sized(tiles[from].rows, tiles[from].cols);
  for (size_t i = 0; i < out.v.size(); ++i) {
    double v = 0, e = 0, mag = 0;
    for (size_t k = from; k < from + n; ++k) v += tiles[k].v[i], e += tiles[k].e[i], mag += std::fabs(tiles[k].v[i]) + tiles[k].e[i];
    out.v[i] = v;
    out.e[i] = clean(v, e + double(n - 1) * fe.round * mag);
  }
  return out;
}

/// Copies the [rows, cols] block at element (fr, fc) of `from` to (tr, tc) of `to`, values
/// and bounds; false when either block leaves its matrix.
bool copyBlock(const Bounded& from, int64_t fr, int64_t fc, Bounded& to, int64_t tr, int64_t tc, int64_t rows, int64_t cols) {
  if (fr + rows > from.rows || fc + cols > from.cols || tr + rows > to.rows || tc + cols > to.cols) return false;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      to.v[size_t((tr + r) * to.cols + tc + c)] = from.v[size_t((fr + r) * from.cols + fc + c)];
      to.e[size_t((tr + r) * to.cols + tc + c)] = from.e[size_t((fr + r) * from.cols + fc + c)];
    }
  return true;
}

}  // namespace

FunctionErrors FunctionErrors::fabric(bool bf16Operands) {
  FunctionErrors fe;
  fe.operand = bf16Operands ? 0x1p-8 : 0.0;
  return fe;
}

FunctionErrors FunctionErrors::fp32Reference() {
  FunctionErrors fe;
  fe.exp = fe.recip = fe.rsqrt = fe.sigmoid = fe.round;
  return fe;
}

std::optional<std::map<std::string, std::vector<double>>> runningErrorBounds(const StepGraph& g,
                                                                            const std::map<std::string, Matrix>& inputs,
                                                                            const FunctionErrors& fe) {
  // Tensors as the run leaves them: the inputs, then what the stores write (orderOps puts a
  // state tensor's loads after its stores: a stage's input and output).
  std::map<std::string, Bounded> tensors;
  for (const Tensor& t : g.tensors) {
    const auto rows = t.shape.at(0).evaluate(g.symbols), cols = t.shape.at(1).evaluate(g.symbols);
    if (!rows || !cols) return std::nullopt;
    Bounded b = sized(*rows, *cols);
    if (auto it = inputs.find(t.name); it != inputs.end()) {
      if (int64_t(it->second.data.size()) != *rows * *cols) return std::nullopt;
      for (size_t i = 0; i < b.v.size(); ++i) b.v[i] = bitsToFloat(it->second.data[i]);
    } else if (t.isInput() && !t.isState) {
      return std::nullopt;  // an input the caller did not give
    }
    tensors[t.name] = std::move(b);
  }
  const OpOrder order = orderOps(g);
  if (order.order.size() != g.ops.size()) return std::nullopt;  // a cycle or an unproduced stream
  ShapeResult shapes;
  try {
    shapes = checkShapes(g);
  } catch (const DiagError&) {
    return std::nullopt;
  }
  std::vector<std::vector<Bounded>> value(g.streams.size());
  for (int k : order.order) {
    const Op& op = g.ops[size_t(k)];
    auto in = [&](size_t i) -> const std::vector<Bounded>& { return value[size_t(op.inputs.at(i).v)]; };
    auto out = [&]() -> std::vector<Bounded>& { return value[size_t(op.outputs.at(0).v)]; };
    switch (op.kind) {
      case OpKind::LinearOffChipLoad: {
        const Bounded& t = tensors.at(attrString(op, "tensor"));
        const std::vector<int64_t> tile = attrIntList(g, op, "tile");
        bool inside = true;
        forEachTile(tileWalkOf(g, op), [&](int64_t tr, int64_t tc, const std::vector<int64_t>&) {
          Bounded b = sized(tile.at(0), tile.at(1));
          inside = inside && copyBlock(t, tr * b.rows, tc * b.cols, b, 0, 0, b.rows, b.cols);
          out().push_back(std::move(b));
        });
        if (!inside) return std::nullopt;
        break;
      }
      case OpKind::RandomOffChipLoad: {  // an index load (ONNX Gather): tile word[index] of each meta row
        if (op.attrs.count("count") || !op.attrs.count("index")) return std::nullopt;
        const Bounded& t = tensors.at(attrString(op, "tensor"));
        const std::vector<int64_t> tile = attrIntList(g, op, "tile");
        const size_t word = size_t(attrInt(g, op, "index"));
        for (const Bounded& row : in(0)) {
          if (word >= row.v.size() || tile.at(1) <= 0 || t.cols % tile[1] != 0) return std::nullopt;
          // The word's uint32 bits, held as the float they spell (double keeps it exactly).
          const int64_t a = int64_t(floatToBits(float(row.v[word]))), per = t.cols / tile[1];
          Bounded b = sized(tile.at(0), tile[1]);
          if (!copyBlock(t, a / per * b.rows, a % per * b.cols, b, 0, 0, b.rows, b.cols)) return std::nullopt;
          out().push_back(std::move(b));
        }
        break;
      }
      case OpKind::Zip:
        for (size_t i = 0; i < in(0).size(); ++i) {
          Bounded z;
          for (size_t p = 0; p < op.inputs.size(); ++p) {
            if (in(p).size() != in(0).size()) return std::nullopt;
            z.parts.push_back(in(p)[i]);
          }
          out().push_back(std::move(z));
        }
        break;
      case OpKind::Broadcast:
        for (StreamId s : op.outputs) value[size_t(s.v)] = in(0);
        break;
      case OpKind::Map:
        for (const Bounded& t : in(0)) {
          std::optional<Bounded> r = applyFunction(attrString(op, "fn"), t, fe);
          if (!r) return std::nullopt;
          out().push_back(std::move(*r));
        }
        break;
      case OpKind::Accum: {  // add over the innermost b dims of the input stream
        if (attrString(op, "fn") != "add") return std::nullopt;
        const StreamType& st = shapes.types.at(size_t(op.inputs.at(0).v));
        size_t group = 1;
        for (int64_t d = 0; d < attrInt(g, op, "b"); ++d) {
          const auto n = st.shape.at(st.shape.size() - 1 - size_t(d)).evaluate(g.symbols);
          if (!n) return std::nullopt;
          group *= size_t(*n);
        }
        for (size_t i = 0; i + group <= in(0).size(); i += group) out().push_back(accumulate(in(0), i, group, fe));
        break;
      }
      case OpKind::LinearOffChipStore: {
        Bounded& t = tensors.at(attrString(op, "tensor"));
        size_t i = 0;
        bool inside = true;
        forEachTile(tileWalkOf(g, op), [&](int64_t tr, int64_t tc, const std::vector<int64_t>&) {
          if (i >= in(0).size()) return void(inside = false);
          const Bounded& b = in(0)[i++];
          inside = inside && copyBlock(b, 0, 0, t, tr * b.rows, tc * b.cols, b.rows, b.cols);
        });
        if (!inside || i != in(0).size()) return std::nullopt;
        break;
      }
      default:
        return std::nullopt;
    }
  }
  std::map<std::string, std::vector<double>> bounds;
  for (const Tensor& t : g.tensors)
    if (t.isOutput) bounds[t.name] = tensors.at(t.name).e;
  return bounds;
}

std::optional<std::map<std::string, std::vector<double>>> referenceErrorBounds(const StepGraph& g,
                                                                              const std::map<std::string, Matrix>& inputs,
                                                                              bool bf16Operands) {
  auto fabric = runningErrorBounds(g, inputs, FunctionErrors::fabric(bf16Operands));
  const auto reference = runningErrorBounds(g, inputs, FunctionErrors::fp32Reference());
  if (!fabric || !reference) return std::nullopt;
  for (auto& [tensor, b] : *fabric)
    for (size_t i = 0; i < b.size(); ++i) b[i] += reference->at(tensor)[i];
  return fabric;
}

}  // namespace stepgen
