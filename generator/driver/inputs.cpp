#include "driver/inputs.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <string>

#include "common/fp.hpp"
#include "common/npy.hpp"
#include "ir/attrs.hpp"
#include "passes/shape_check.hpp"
#include "support/routing_trace.hpp"
#include "support/diag.hpp"

namespace fs = std::filesystem;

namespace stepgen {

Matrix fromNpy(const fs::path& p) {
  const NpyArray a = readNpy(p.string());
  Matrix m;
  m.rows = int64_t(a.rows()), m.cols = int64_t(a.cols());
  m.data.resize(a.data.size());
  std::memcpy(m.data.data(), a.data.data(), a.data.size() * 4);
  return m;
}

void toNpy(const fs::path& p, const Matrix& m) {
  std::vector<float> f(m.data.size());
  std::memcpy(f.data(), m.data.data(), f.size() * 4);
  fs::create_directories(p.parent_path());
  writeNpy(p.string(), {size_t(m.rows), size_t(m.cols)}, f.data());
}

namespace {

// MemAvailable of /proc/meminfo in bytes, or the physical memory when it cannot be read.
uint64_t availableBytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGE_SIZE));
}

}  // namespace

void checkTensorMemory(const StepGraph& g) {
  // The functional model holds every tensor (4-byte words) and the streams that carry them,
  // so it needs at least twice the tensors' bytes; counted in long double so that huge
  // symbols cannot overflow the sum.
  long double total = 0, biggest = -1;
  const Tensor* big = nullptr;
  for (const Tensor& t : g.tensors) {
    long double words = 1;
    for (const SymExpr& d : t.shape) words *= (long double)evalDim(d, g.symbols);
    total += 4 * words;
    if (4 * words > biggest) biggest = 4 * words, big = &t;
  }
  const long double avail = (long double)availableBytes();
  if (big && 2 * total > avail)
    throw DiagError("R-406", big->loc,
                    fmt::format("the graph's tensors need {:.3g} bytes at these symbol values (the largest, '{}', "
                                "{:.3g} bytes), and the model needs at least twice that; {:.3g} bytes of memory are "
                                "available here: use smaller symbols",
                                double(total), big->name, double(biggest), double(avail)));
}

void checkStreamMemory(const StepGraph& g, const ShapeResult& s) {
  long double total = 0, biggest = -1;
  const Stream* big = nullptr;
  for (size_t i = 0; i < g.streams.size() && i < s.types.size(); ++i) {
    long double n = 1;
    for (const SymExpr& d : s.types[i].shape)
      if (auto v = d.evaluate(g.symbols)) n *= (long double)*v;
    total += n * kStreamElementBytes;
    if (n > biggest) biggest = n, big = &g.streams[i];
  }
  const long double avail = (long double)availableBytes();
  if (big && total > avail)
    throw DiagError("R-406", big->loc,
                    fmt::format("the graph's streams carry {:.3g} elements at these symbol values (the largest, '{}', "
                                "{:.3g}), about {:.3g} bytes for the timing model; {:.3g} bytes of memory are available "
                                "here: use smaller symbols or larger tiles",
                                double(total / kStreamElementBytes), big->name, double(biggest), double(total),
                                double(avail)));
}

namespace {

// Random routing rows would disagree with the trace the model's SelectGen replays: each
// SelectGen's `tensor` gets the trace's decisions instead (rows from `skip`, per token its
// experts in first .. first+n-1 ascending as local ids in words 0.., 0xFFFFFFFF up to word
// k-1, the rest 0), as the MoE builders write it.
void fillRoutingTensors(const StepGraph& g, std::map<std::string, Matrix>& in) {
  for (const Op& o : g.ops) {
    if (o.kind != OpKind::SelectGen || !o.attrs.count("tensor")) continue;
    auto it = in.find(attrString(o, "tensor"));
    if (it == in.end()) continue;
    const int n = int(attrInt(g, o, "n")), first = int(attrIntOr(g, o, "first", 0));
    const int of = int(attrIntOr(g, o, "of", n));
    const int64_t k = attrIntOr(g, o, "k", 1), skip = attrIntOr(g, o, "skip", 0);
    const RoutingTrace tr = readRoutingTrace(tracePathFrom(attrString(o, "trace"), o.loc.file), of);
    Matrix& m = it->second;
    std::fill(m.data.begin(), m.data.end(), 0u);
    for (int64_t r = 0; r < m.rows && skip + r < int64_t(tr.experts.size()); ++r) {
      const std::vector<uint32_t> w = routingIdWords(localExperts(tr.experts[size_t(skip + r)], first, n), std::min(k, m.cols));
      std::copy(w.begin(), w.end(), m.data.begin() + r * m.cols);
    }
  }
}

}  // namespace

namespace {

// `<dir>/<t>.npy`, checked against the tensor's declared shape.
Matrix readInputTensor(const StepGraph& g, const Tensor& t, const std::string& dir) {
  const int64_t rows = evalDim(t.shape.at(0), g.symbols), cols = evalDim(t.shape.at(1), g.symbols);
  const fs::path p = fs::path(dir) / (t.name + ".npy");
  Matrix m;
  try {
    m = fromNpy(p);
  } catch (const std::exception& e) {
    throw DiagError("R-401", {p.string()}, fmt::format("cannot read input tensor '{}': {}", t.name, e.what()),
                    {{t.loc, "tensor declared here"}});
  }
  if (m.rows != rows || m.cols != cols)
    throw DiagError("R-402", {p.string()},
                    fmt::format("input tensor '{}' is {}x{}, the graph declares {}x{}", t.name, m.rows, m.cols, rows, cols),
                    {{t.loc, "tensor declared here"}});
  return m;
}

}  // namespace

std::map<std::string, Matrix> loadInputs(const StepGraph& g, const std::string& dir, uint32_t seed) {
  checkTensorMemory(g);
  std::map<std::string, Matrix> in;
  std::mt19937 rng(seed);
  for (const Tensor& t : g.tensors) {
    if (!t.isInput()) continue;
    Matrix m;
    if (!dir.empty()) {
      m = readInputTensor(g, t, dir);
    } else {
      const int64_t rows = evalDim(t.shape.at(0), g.symbols), cols = evalDim(t.shape.at(1), g.symbols);
      std::uniform_real_distribution<float> u(-1.0f, 1.0f);
      float scale = t.name == "x" ? 1.0f : 1.0f / std::sqrt(float(rows));
      m.rows = rows, m.cols = cols;
      for (int64_t i = 0; i < rows * cols; ++i) m.data.push_back(floatToBits(u(rng) * scale));
    }
    in[t.name] = std::move(m);
  }
  if (dir.empty()) fillRoutingTensors(g, in);
  return in;
}

std::map<std::string, OpId> metaTensors(const StepGraph& g) {
  std::map<std::string, OpId> out;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& run = g.ops[i];
    if (run.kind != OpKind::RandomOffChipLoad || !(run.attrs.count("count") || run.attrs.count("index"))) continue;
    // Back from the meta input through the ops that pass meta rows on unchanged.
    StreamId s = run.inputs.at(0);
    for (;;) {
      const Op& p = g.op(g.stream(s).producer);
      if (p.kind == OpKind::LinearOffChipLoad) {
        out.emplace(attrString(p, "tensor"), OpId{int(i)});
        break;
      }
      if (p.kind != OpKind::Broadcast && p.kind != OpKind::Partition && p.kind != OpKind::Flatten && p.kind != OpKind::Promote)
        break;  // computed on the fabric: the timing-only model has no values for it
      s = p.inputs.at(0);
    }
  }
  return out;
}

std::map<std::string, Matrix> loadInputsNamed(const StepGraph& g, const std::string& dir, const std::set<std::string>& names) {
  std::map<std::string, Matrix> in;
  for (const Tensor& t : g.tensors)
    if (names.count(t.name) && t.isInput()) in[t.name] = readInputTensor(g, t, dir);
  return in;
}

}  // namespace stepgen
