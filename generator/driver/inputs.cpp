#include "driver/inputs.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <random>

#include "common/fp.hpp"
#include "common/npy.hpp"
#include "passes/shape_check.hpp"
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

std::map<std::string, Matrix> loadInputs(const StepGraph& g, const std::string& dir, uint32_t seed) {
  std::map<std::string, Matrix> in;
  std::mt19937 rng(seed);
  for (const Tensor& t : g.tensors) {
    if (t.isOutput || t.isScratch) continue;
    int64_t rows = evalDim(t.shape.at(0), g.symbols), cols = evalDim(t.shape.at(1), g.symbols);
    Matrix m;
    if (!dir.empty()) {
      fs::path p = fs::path(dir) / (t.name + ".npy");
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
    } else {
      std::uniform_real_distribution<float> u(-1.0f, 1.0f);
      float scale = t.name == "x" ? 1.0f : 1.0f / std::sqrt(float(rows));
      m.rows = rows, m.cols = cols;
      for (int64_t i = 0; i < rows * cols; ++i) m.data.push_back(floatToBits(u(rng) * scale));
    }
    in[t.name] = std::move(m);
  }
  return in;
}

}  // namespace stepgen
