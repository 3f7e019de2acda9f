#pragma once
// A double-precision decoder layer written as plain loops from the layer's definition
// (builders/decoder_layer.hpp), independent of the model's code (it reads only the input
// tensors): tests/unit/test_decoder_layer.cpp and `stepgen study decoder-layer` compare the
// model's and the RTL's outputs with it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "builders/decoder_layer.hpp"
#include "common/fp.hpp"

namespace stepgen::decref {


/// The layer's output [B][D] and the appended cache rows (roped k) [B][Hkv][Dh], in double.
/// alt[b]: token b's output under the other choice of experts when its k-th and (k+1)-th
/// logits nearly tie (empty otherwise); either output is a correct answer.
struct LayerRef {
  std::vector<std::vector<double>> out, alt;
  int nearTies = 0;
  std::vector<std::vector<std::vector<double>>> kNew;
};

inline double word(const Matrix& m, int64_t r, int64_t c) { return bitsToFloat(m.data[size_t(r * m.cols + c)]); }

/// Largest |m[row] - ref| over the row, relative to the row's largest |ref| (a normwise
/// error: an element near zero is judged against its row's scale, as a bf16 product's error
/// is); a NaN counts as an infinite error. The measure of the decoder-layer tests and study.
inline double rowError(const Matrix& m, int64_t row, const std::vector<double>& ref) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double e = std::fabs(double(bitsToFloat(m.data[size_t(row * m.cols) + i])) - ref[i]);
    err = std::isnan(e) ? HUGE_VAL : std::max(err, e);
    scale = std::max(scale, std::fabs(ref[i]));
  }
  return err / scale;
}

/// rowError of every row of `out` against the nearer of its reference outputs (`alt` where
/// the router's choice nearly ties), the largest over the rows.
inline double maxRowError(const Matrix& out, const LayerRef& ref) {
  double worst = 0;
  for (size_t b = 0; b < ref.out.size(); ++b)
    worst = std::max(worst, std::min(rowError(out, int64_t(b), ref.out[b]),
                                     ref.alt[b].empty() ? HUGE_VAL : rowError(out, int64_t(b), ref.alt[b])));
  return worst;
}

/// The layer of `p` on the input tensors `in` (decoderLayerInputs' names), every operation in double.
inline LayerRef layerReference(const DecoderLayerParams& p, const std::map<std::string, Matrix>& in) {
  const DecoderDims d = layerDims(p);
  const int64_t B = int64_t(p.kvLengths.size()), D = d.hidden, Dh = d.headDim, Hq = d.heads, Hkv = d.kvHeads,
                G = Hq / Hkv, H = Dh / 2, T = p.kvTile ? p.kvTile : std::min<int64_t>(Dh, 32);
  auto rms = [&](std::vector<double> v, const Matrix& w) {
    double s = 0;
    for (double e : v) s += e * e;
    const double r = 1.0 / std::sqrt(s / double(v.size()) + double(d.eps));
    for (size_t i = 0; i < v.size(); ++i) v[i] = v[i] * r * word(w, 0, int64_t(i));
    return v;
  };
  auto dot = [&](const std::vector<double>& a, const Matrix& w, int64_t row, int64_t col0) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * word(w, row, col0 + int64_t(i));
    return s;
  };
  auto rope = [&](std::vector<double> v, int64_t pos) {
    std::vector<double> o(v.size());
    for (int64_t i = 0; i < H; ++i) {
      const double a = double(pos) * std::pow(d.theta, -2.0 * double(i) / double(Dh));
      o[size_t(i)] = v[size_t(i)] * std::cos(a) - v[size_t(i + H)] * std::sin(a);
      o[size_t(i + H)] = v[size_t(i + H)] * std::cos(a) + v[size_t(i)] * std::sin(a);
    }
    return o;
  };
  // First cache row of each request: its tiles follow the earlier requests' (L + 1 tokens each).
  std::vector<int64_t> start;
  for (int64_t b = 0, row = 0; b < B; ++b) start.push_back(row), row += (p.kvLengths[size_t(b)] + 1 + T - 1) / T * T;

  LayerRef ref;
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> x(static_cast<size_t>(D));
    for (int64_t i = 0; i < D; ++i) x[size_t(i)] = word(in.at("x"), b, i);
    const std::vector<double> h1 = rms(x, in.at("w_n1"));
    const int64_t L = p.kvLengths[size_t(b)];
    std::vector<double> attn(static_cast<size_t>(Hq * Dh));
    ref.kNew.emplace_back();
    for (int64_t kh = 0; kh < Hkv; ++kh) {
      std::vector<double> k(static_cast<size_t>(Dh)), v(static_cast<size_t>(Dh));
      for (int64_t e = 0; e < Dh; ++e) k[size_t(e)] = dot(h1, in.at("wk"), kh * Dh + e, 0), v[size_t(e)] = dot(h1, in.at("wv"), kh * Dh + e, 0);
      if (d.qkNorm) k = rms(k, in.at("w_kn"));
      k = rope(k, L);
      ref.kNew.back().push_back(k);
      const Matrix &kc = in.at("kc" + std::to_string(kh)), &vc = in.at("vc" + std::to_string(kh));
      for (int64_t g = 0; g < G; ++g) {
        const int64_t qh = kh * G + g;
        std::vector<double> q(static_cast<size_t>(Dh));
        for (int64_t e = 0; e < Dh; ++e) q[size_t(e)] = dot(h1, in.at("wq"), qh * Dh + e, 0);
        if (d.qkNorm) q = rms(q, in.at("w_qn"));
        q = rope(q, L);
        for (double& e : q) e /= std::sqrt(double(Dh));
        std::vector<double> s(size_t(L + 1));  // the cached tokens, then the new one
        for (int64_t t = 0; t <= L; ++t)
          for (int64_t e = 0; e < Dh; ++e) s[size_t(t)] += q[size_t(e)] * (t < L ? word(kc, start[size_t(b)] + t, e) : k[size_t(e)]);
        const double mx = *std::max_element(s.begin(), s.end());
        double z = 0;
        for (double& e : s) e = std::exp(e - mx), z += e;
        for (int64_t e = 0; e < Dh; ++e) {
          double o = 0;
          for (int64_t t = 0; t <= L; ++t) o += s[size_t(t)] / z * (t < L ? word(vc, start[size_t(b)] + t, e) : v[size_t(e)]);
          attn[size_t(qh * Dh + e)] = o;
        }
      }
    }
    std::vector<double> r1(static_cast<size_t>(D));
    for (int64_t i = 0; i < D; ++i) r1[size_t(i)] = x[size_t(i)] + dot(attn, in.at("wo"), i, 0);
    const std::vector<double> h2 = rms(r1, in.at("w_n2"));
    auto expert = [&](std::vector<double>& y, const Matrix& wg, const Matrix& wu, const Matrix& wd, int64_t e, double w,
                      bool dense) {
      for (int64_t f = 0; f < d.ffn; ++f) {
        double g = 0, u = 0;
        for (int64_t i = 0; i < D; ++i) {
          g += h2[size_t(i)] * (dense ? word(wg, i, f) : word(wg, e * d.ffn + f, i));
          u += h2[size_t(i)] * (dense ? word(wu, i, f) : word(wu, e * d.ffn + f, i));
        }
        const double h = g / (1 + std::exp(-g)) * u;
        for (int64_t i = 0; i < D; ++i) y[size_t(i)] += w * h * word(wd, dense ? f : e * d.ffn + f, i);
      }
    };
    // out = r1 + the FFN of the chosen experts with their weights (all of them for a dense FFN).
    auto layerOut = [&](const std::vector<int64_t>& chosen, const std::vector<double>& weight) {
      std::vector<double> y(static_cast<size_t>(D), 0.0);
      if (chosen.empty()) expert(y, in.at("wg"), in.at("wu"), in.at("wd"), 0, 1.0, true);
      for (size_t j = 0; j < chosen.size(); ++j) expert(y, in.at("wg"), in.at("wu"), in.at("wd"), chosen[j], weight[j], false);
      for (int64_t i = 0; i < D; ++i) y[size_t(i)] += r1[size_t(i)];
      return y;
    };
    // The router's weights: the softmax over the chosen logits.
    auto softmax = [&](const std::vector<int64_t>& chosen, const std::vector<double>& logit) {
      double mx = -HUGE_VAL, z = 0;
      for (int64_t e : chosen) mx = std::max(mx, logit[size_t(e)]);
      for (int64_t e : chosen) z += std::exp(logit[size_t(e)] - mx);
      std::vector<double> w;
      for (int64_t e : chosen) w.push_back(std::exp(logit[size_t(e)] - mx) / z);
      return w;
    };
    std::vector<int64_t> chosen;
    std::vector<double> logit, mag, weight;
    if (d.experts && p.traceRouting) {  // replayed: the routing rows' experts, rw's weights
      for (int64_t j = 0; j < d.topK; ++j) {
        chosen.push_back(int64_t(in.at("moe_routing").data[size_t(b * 16 + j)]));
        weight.push_back(word(in.at("moe_rw"), b * d.topK + j, 0));
      }
    } else if (d.experts) {
      for (int64_t e = 0; e < d.experts; ++e) {
        logit.push_back(dot(h2, in.at("wr"), e, 0));
        double m = 0;
        for (int64_t i = 0; i < D; ++i) m += std::fabs(h2[size_t(i)] * word(in.at("wr"), e, i));
        mag.push_back(m);
      }
      std::vector<int64_t> order(static_cast<size_t>(d.experts));
      for (int64_t e = 0; e < d.experts; ++e) order[size_t(e)] = e;
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t c) { return logit[size_t(a)] > logit[size_t(c)]; });
      chosen.assign(order.begin(), order.begin() + d.topK);
      weight = softmax(chosen, logit);
      // The choice is discontinuous: where the k-th and (k+1)-th logits are closer than the
      // fabric's logits can be trusted (2^-5 of their terms' magnitudes: bf16 operands, 2^-6,
      // on an h2 that carries the attention's error), the swapped choice is also correct.
      if (d.topK < d.experts) {
        const int64_t a = order[size_t(d.topK - 1)], c = order[size_t(d.topK)];
        if (logit[size_t(a)] - logit[size_t(c)] < std::ldexp(std::max(mag[size_t(a)], mag[size_t(c)]), -5)) {
          std::vector<int64_t> alt = chosen;
          alt.back() = c;
          ref.alt.push_back(layerOut(alt, softmax(alt, logit)));
          ref.nearTies++;
        }
      }
    }
    if (ref.alt.size() == ref.out.size()) ref.alt.emplace_back();  // no near tie
    ref.out.push_back(layerOut(chosen, weight));
  }
  return ref;
}

}  // namespace stepgen::decref
