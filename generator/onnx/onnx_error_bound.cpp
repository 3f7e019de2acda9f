#include "onnx/onnx_error_bound.hpp"

#include <cmath>
#include <limits>

#include "common/fp.hpp"

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
      e = v * std::expm1(ex) + fe.exp * v * std::exp(ex);
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
  return std::nullopt;  // silu and the MoE block's functions: no running bound
}

std::string scalarAttr(const Op& op, const char* key) {
  auto it = op.attrs.find(key);
  return it == op.attrs.end() ? "" : it->second.scalar;
}

}  // namespace

FunctionErrors FunctionErrors::fabric(bool bf16Operands) {
  FunctionErrors fe;
  fe.operand = bf16Operands ? 0x1p-8 : 0.0;
  return fe;
}

FunctionErrors FunctionErrors::fp32Reference() {
  FunctionErrors fe;
  fe.exp = fe.recip = fe.rsqrt = fe.round;
  return fe;
}

std::optional<std::map<std::string, std::vector<double>>> runningErrorBounds(const StepGraph& g,
                                                                            const std::map<std::string, Matrix>& inputs,
                                                                            const FunctionErrors& fe) {
  std::vector<std::optional<Bounded>> value(g.streams.size());
  std::map<std::string, std::vector<double>> bounds;
  std::vector<bool> done(g.ops.size(), false);
  // The lowering writes each Broadcast after its stream's last use: evaluate in passes until
  // every op has run (each pass runs at least one op of a valid graph).
  for (size_t left = g.ops.size(); left > 0;) {
    const size_t before = left;
    for (size_t k = 0; k < g.ops.size(); ++k) {
      const Op& op = g.ops[k];
      if (done[k]) continue;
      bool ready = true;
      for (StreamId s : op.inputs) ready = ready && value[size_t(s.v)].has_value();
      if (!ready) continue;
      switch (op.kind) {
        case OpKind::LinearOffChipLoad: {
          auto it = inputs.find(scalarAttr(op, "tensor"));
          if (it == inputs.end() || op.outputs.size() != 1) return std::nullopt;
          Bounded t = sized(it->second.rows, it->second.cols);
          for (size_t i = 0; i < t.v.size(); ++i) t.v[i] = bitsToFloat(it->second.data.at(i));
          value[size_t(op.outputs[0].v)] = std::move(t);
          break;
        }
        case OpKind::Zip: {
          Bounded t;
          for (StreamId s : op.inputs) t.parts.push_back(*value[size_t(s.v)]);
          value[size_t(op.outputs.at(0).v)] = std::move(t);
          break;
        }
        case OpKind::Broadcast:
          for (StreamId s : op.outputs) value[size_t(s.v)] = value[size_t(op.inputs.at(0).v)];
          break;
        case OpKind::Map: {
          std::optional<Bounded> t = applyFunction(scalarAttr(op, "fn"), *value[size_t(op.inputs.at(0).v)], fe);
          if (!t) return std::nullopt;
          value[size_t(op.outputs.at(0).v)] = std::move(t);
          break;
        }
        case OpKind::LinearOffChipStore:
          bounds[scalarAttr(op, "tensor")] = value[size_t(op.inputs.at(0).v)]->e;
          break;
        default:
          return std::nullopt;
      }
      done[k] = true;
      --left;
    }
    if (left == before) return std::nullopt;  // a cycle or an unproduced stream
  }
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
