// onnxInputMatrices: each input tensor of an imported graph from its ONNX source, through
// its layout steps (numpy's transpose, reshape and broadcast_to, in order).
#include <fmt/format.h>

#include <optional>

#include "common/fp.hpp"
#include "onnx/onnx_lower.hpp"
#include "support/diag.hpp"

namespace stepgen {

namespace {

/// Row-major strides of `shape` (elements).
std::vector<int64_t> stridesOf(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) st[k - 1] = st[k] * shape[k];
  return st;
}

/// `src` (shape `from`) gathered into shape `to`: element idx of the result reads src at
/// sum_k idx_k * step[k] (step 0 for a broadcast dim).
std::vector<float> gather(const std::vector<float>& src, const std::vector<int64_t>& to, const std::vector<int64_t>& step) {
  int64_t n = 1;
  for (int64_t d : to) n *= d;
  std::vector<float> out(static_cast<size_t>(n));
  std::vector<int64_t> idx(to.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t at = 0;
    for (size_t k = 0; k < to.size(); ++k) at += idx[k] * step[k];
    out[size_t(e)] = src.at(size_t(at));
    for (size_t k = to.size(); k-- > 0;) {
      if (++idx[k] < to[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

void apply(const OnnxLayoutStep& s, std::vector<int64_t>& shape, std::vector<float>& v) {
  switch (s.kind) {
    case OnnxLayoutStep::Kind::Transpose: {
      const std::vector<int64_t> st = stridesOf(shape);
      std::vector<int64_t> to, step;
      for (int64_t p : s.ints) {
        to.push_back(shape.at(size_t(p)));
        step.push_back(st.at(size_t(p)));
      }
      v = gather(v, to, step);
      shape = to;
      return;
    }
    case OnnxLayoutStep::Kind::Reshape:
      shape = s.ints;
      return;
    case OnnxLayoutStep::Kind::Broadcast: {
      std::vector<int64_t> from(s.ints.size() - shape.size(), 1);  // right-aligned, as numpy
      from.insert(from.end(), shape.begin(), shape.end());
      const std::vector<int64_t> st = stridesOf(from);
      std::vector<int64_t> step(s.ints.size());
      for (size_t k = 0; k < step.size(); ++k) step[k] = from[k] == 1 ? 0 : st[k];
      v = gather(v, s.ints, step);
      shape = s.ints;
      return;
    }
    case OnnxLayoutStep::Kind::Slice: {  // count elements from start by step along axis
      const size_t axis = size_t(s.ints.at(0));
      const std::vector<int64_t> st = stridesOf(shape);
      std::vector<int64_t> to = shape, step = st;
      to[axis] = s.ints.at(3);
      step[axis] = st[axis] * s.ints.at(2);
      std::vector<float> base(v.begin() + st[axis] * s.ints.at(1), v.end());
      v = gather(base, to, step);
      shape = to;
      return;
    }
    case OnnxLayoutStep::Kind::Scale:
      for (float& x : v) x *= s.scale;
      return;
    case OnnxLayoutStep::Kind::IndexRows:
      throw std::logic_error("internal error: IndexRows applied to float data");
  }
}

/// A Gather's meta rows (OnnxLayoutStep::IndexRows {P, N}) from integer indices `src`: for
/// p < P and each index i (row-major), 16 words, word 0 = p N + i (i + N when negative).
std::vector<uint32_t> indexRows(const OnnxTensor& src, const OnnxLeafTensor& t) {
  const OnnxLayoutStep& s = t.steps.back();  // the steps before it are reshapes (Lowering::gather)
  const int64_t parts = s.ints.at(0), n = s.ints.at(1);
  std::vector<uint32_t> words(size_t(t.rows * t.cols), 0);
  size_t row = 0;
  for (int64_t p = 0; p < parts; ++p)
    for (int64_t i : src.i) {
      if (i < -n || i >= n)
        throw DiagError("R-411", SourceLoc{src.file},
                        fmt::format("index {} of '{}' is outside [-{}, {}) (Gather)", i, t.source, n, n));
      words.at(row++ * size_t(t.cols)) = uint32_t(p * n + (i < 0 ? i + n : i));
    }
  return words;
}

}  // namespace

namespace {

// One leaf's words [t.rows * t.cols], or nothing when it is a graph input not given and not
// required.
std::optional<std::vector<uint32_t>> leafWords(const OnnxLeafTensor& t, const OnnxImport& imp, const OnnxGraph& g,
                                               const std::map<std::string, OnnxTensor>& given, bool requireInputs) {
  std::vector<uint32_t> words;
  if (!t.stack.empty()) {
    for (const OnnxLeafTensor& part : t.stack) {
      auto w = leafWords(part, imp, g, given, requireInputs);
      if (!w) return std::nullopt;
      words.insert(words.end(), w->begin(), w->end());
    }
    return words;
  }
  if (t.fill) return std::vector<uint32_t>(size_t(t.rows * t.cols), floatToBits(*t.fill));
  const OnnxTensor* src = nullptr;
  if (auto c = g.initializers.find(t.source); c != g.initializers.end()) {
    src = &c->second;
  } else if (auto c = imp.constants.find(t.source); c != imp.constants.end()) {
    src = &c->second;
  } else if (auto gi = given.find(t.source); gi != given.end()) {
    src = &gi->second;
    auto want = g.shapes.find(t.source);
    if (want != g.shapes.end() && want->second != src->shape)
      throw DiagError("R-402", SourceLoc{src->file},
                      fmt::format("ONNX input '{}' has shape [{}], the model's is [{}]", t.source, fmt::join(src->shape, ", "),
                                  fmt::join(want->second, ", ")));
  } else if (requireInputs) {
    throw DiagError("R-401", SourceLoc{}, fmt::format("no value given for ONNX input '{}'", t.source));
  } else {
    return std::nullopt;
  }
  if (!t.steps.empty() && t.steps.back().kind == OnnxLayoutStep::Kind::IndexRows) {
    if (src->isFloat) throw DiagError("O-103", SourceLoc{g.path}, fmt::format("the indices '{}' of a Gather are not integers", t.source));
    return indexRows(*src, t);
  }
  if (!src->isFloat)
    throw DiagError("O-103", SourceLoc{g.path}, fmt::format("value '{}' is an integer tensor; the fabric computes in float32", t.source));
  std::vector<int64_t> shape = src->shape;
  std::vector<float> v = src->f;
  for (const auto& s : t.steps) apply(s, shape, v);
  if (int64_t(v.size()) != t.rows * t.cols)
    throw DiagError("O-204", SourceLoc{g.path},
                    fmt::format("internal: tensor {} has {} values for its {}x{} view", t.tensor, v.size(), t.rows, t.cols));
  for (float x : v) words.push_back(floatToBits(x));
  return words;
}

}  // namespace

std::map<std::string, Matrix> onnxInputMatrices(const OnnxImport& imp, const OnnxGraph& g,
                                                const std::map<std::string, OnnxTensor>& given, bool requireInputs) {
  std::map<std::string, Matrix> out;
  for (const OnnxLeafTensor& t : imp.leaves)
    if (auto w = leafWords(t, imp, g, given, requireInputs)) out[t.tensor] = Matrix{t.rows, t.cols, std::move(*w)};
  return out;
}

}  // namespace stepgen
