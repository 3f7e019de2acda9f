#include "support/routing_trace.hpp"

#include "support/csv.hpp"
#include "support/diag.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

namespace stepgen {

std::vector<int> RoutingTrace::tokensPerExpert() const {
  std::vector<int> n(size_t(numExperts), 0);
  for (const auto& row : experts)
    for (int e : row) ++n[size_t(e)];
  return n;
}

RoutingTrace readRoutingTrace(const std::string& path, int numExperts) {
  auto fail = [&](int line, int col, const std::string& msg) -> DiagError {
    return DiagError("R-409", SourceLoc{path, line, col}, msg);
  };
  std::ifstream in(path);
  if (!in) throw fail(0, 0, "cannot read the routing trace");
  RoutingTrace t;
  t.numExperts = numExperts;
  std::string line;
  if (!std::getline(in, line)) throw fail(1, 1, "empty file (header token,expert_0,... expected)");
  const std::vector<CsvField> head = splitCsvLine(line);
  if (head.size() < 2 || head[0].text != "token") throw fail(1, 1, "header must be token,expert_0,...");
  for (size_t k = 1; k < head.size(); ++k)
    if (head[k].text != fmt::format("expert_{}", k - 1))
      throw fail(1, head[k].col, fmt::format("column {} is '{}', expected 'expert_{}'", k + 1, head[k].text, k - 1));
  t.topK = int(head.size()) - 1;
  for (int ln = 2; std::getline(in, line); ++ln) {
    if (line.empty() || line == "\r") continue;
    const std::vector<CsvField> f = splitCsvLine(line);
    if (int(f.size()) != t.topK + 1) throw fail(ln, 1, fmt::format("{} fields, the header has {}", f.size(), t.topK + 1));
    auto whole = [&](const CsvField& x, const char* name) {
      const std::optional<int64_t> v = parseWholeNumber(x.text);
      if (!v || *v < INT32_MIN || *v > INT32_MAX) throw fail(ln, x.col, fmt::format("{} '{}' is not an integer", name, x.text));
      return int(*v);
    };
    if (whole(f[0], "token") != int(t.experts.size()))
      throw fail(ln, f[0].col, fmt::format("token id {} out of order (expected {})", f[0].text, t.experts.size()));
    std::vector<int> row;
    for (int k = 0; k < t.topK; ++k) {
      const CsvField& x = f[size_t(k) + 1];
      const int e = whole(x, "expert");
      if (e < 0 || e >= numExperts)
        throw fail(ln, x.col, fmt::format("expert_{} = {} is outside 0..{}", k, e, numExperts - 1));
      if (std::find(row.begin(), row.end(), e) != row.end()) throw fail(ln, x.col, fmt::format("expert {} listed twice", e));
      row.push_back(e);
    }
    t.experts.push_back(row);
  }
  return t;
}

std::string routingTraceCsv(const RoutingTrace& t) {
  std::string s = "token";
  for (int j = 0; j < t.topK; ++j) s += fmt::format(",expert_{}", j);
  s += "\n";
  for (size_t i = 0; i < t.experts.size(); ++i) {
    s += std::to_string(i);
    for (int e : t.experts[i]) s += fmt::format(",{}", e);
    s += "\n";
  }
  return s;
}

RoutingTrace syntheticRoutingTrace(const RoutingTrace& like, int64_t tokens, uint32_t seed) {
  RoutingTrace t;
  t.numExperts = like.numExperts, t.topK = like.topK;
  const std::vector<int> counts = like.tokensPerExpert();
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < tokens; ++i) {
    std::vector<double> w(counts.size());
    for (size_t e = 0; e < w.size(); ++e) w[e] = counts[e] + 1.0;
    std::vector<int> pick;
    for (int j = 0; j < t.topK; ++j) {
      // Weighted draw by a uniform in [0, sum): distributions differ between standard
      // libraries, the mt19937 stream does not.
      double sum = 0;
      for (double x : w) sum += x;
      double u = double(rng()) / 4294967296.0 * sum;
      size_t e = 0;
      while (e + 1 < w.size() && (u -= w[e]) >= 0) ++e;
      while (w[e] == 0) --e;  // rounding past the last expert still drawable
      pick.push_back(int(e));
      w[e] = 0;
    }
    t.experts.push_back(std::move(pick));
  }
  return t;
}

std::vector<int> localExperts(const std::vector<int>& experts, int first, int n) {
  std::vector<int> local;
  for (int e : experts)
    if (e >= first && e < first + n) local.push_back(e - first);
  std::sort(local.begin(), local.end());
  return local;
}

std::vector<uint32_t> routingIdWords(const std::vector<int>& local, int64_t k) {
  std::vector<uint32_t> w(size_t(k), 0xFFFFFFFFu);
  for (size_t j = 0; j < local.size() && j < w.size(); ++j) w[j] = uint32_t(local[j]);
  return w;
}

std::string tracePathFrom(const std::string& trace, const std::string& graphFile) {
  std::filesystem::path p(trace);
  if (p.is_relative() && !graphFile.empty()) p = std::filesystem::path(graphFile).parent_path() / p;
  return p.string();
}

}  // namespace stepgen
