// compareWithReference: element-wise error against a reference folder.
#include "driver/reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>

#include "common/fp.hpp"
#include "driver/inputs.hpp"
#include "support/diag.hpp"

namespace stepgen {

RunningBounds onFirstCall(std::function<Bounds()> compute) {
  auto memo = std::make_shared<std::optional<Bounds>>();
  return [memo, compute = std::move(compute)]() -> const Bounds& {
    if (!*memo) *memo = compute();
    return **memo;
  };
}

void checkElements(const Matrix& got, const Matrix& want, double tolerance, const std::string& tensor,
                   const RunningBounds& running, ElementCheck& c) {
  double scale = 0;
  for (uint32_t w : want.data) scale = std::max(scale, std::fabs(double(bitsToFloat(w))));
  for (size_t i = 0; i < want.data.size() && i < got.data.size(); ++i) {
    const double a = bitsToFloat(got.data[i]), e = bitsToFloat(want.data[i]);
    if (a == e || (std::isnan(a) && std::isnan(e))) continue;
    const double err = std::fabs(a - e), floor = std::max({std::fabs(e), 1e-3 * scale, 1e-30});
    if (std::isnan(err)) {  // NaN in one of them only, or infinities of opposite signs
      c.maxRelErr = INFINITY;
      c.outside++;
      continue;
    }
    c.maxAbsErr = std::max(c.maxAbsErr, err);
    c.maxRelErr = std::max(c.maxRelErr, err / floor);
    if (err <= tolerance * floor) continue;
    const auto& bounds = running();
    const double bound = bounds && bounds->count(tensor) ? bounds->at(tensor).at(i) : INFINITY;
    if (std::isfinite(bound) && err <= bound) {
      c.byRunning++;
      c.runningShare = std::max(c.runningShare, err / bound);
    } else {
      c.outside++;
    }
  }
}

ReferenceCheck compareWithReference(const std::map<std::string, Matrix>& outputs, const std::filesystem::path& dir,
                                    const std::string& format, const RunningBounds& running) {
  ReferenceCheck r;
  std::ifstream tol(dir / "tolerance.txt");
  std::string f;
  double v = 0;
  bool found = false;
  while (tol >> f >> v)
    if (f == format) found = true, r.tolerance = v;
  if (!found)
    throw DiagError("R-401", SourceLoc{(dir / "tolerance.txt").string()},
                    fmt::format("no '{} <tolerance>' line (stepgen import onnx --data writes it)", format));
  for (const auto& [name, m] : outputs) {
    const auto p = dir / (name + ".npy");
    if (!std::filesystem::exists(p)) continue;
    const Matrix want = fromNpy(p);
    if (want.data.size() != m.data.size())
      throw DiagError("R-402", SourceLoc{p.string()},
                      fmt::format("{} values, output {} has {}", want.data.size(), name, m.data.size()));
    checkElements(m, want, r.tolerance, name, running, r.elements);
    ++r.outputs;
  }
  if (r.outputs == 0) throw DiagError("R-401", SourceLoc{dir.string()}, "no <output tensor>.npy of this graph here");
  return r;
}

}  // namespace stepgen
