#include "support/routing_trace.hpp"

#include "support/csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

namespace stepgen {

namespace {
int parseInt(const std::string& path, int line, int field, const std::string& s) {
  const std::optional<int64_t> v = parseWholeNumber(s);
  if (!v || *v < INT32_MIN || *v > INT32_MAX)
    throw std::runtime_error(fmt::format("{}:{}: field {} '{}' is not an integer", path, line, field + 1, s));
  return int(*v);
}

std::vector<std::string> fieldTexts(const std::string& line) {
  std::vector<std::string> t;
  for (CsvField& f : splitCsvLine(line)) t.push_back(std::move(f.text));
  return t;
}
}  // namespace

std::vector<int> RoutingTrace::tokensPerExpert() const {
  std::vector<int> n(size_t(numExperts), 0);
  for (const auto& row : experts)
    for (int e : row) ++n[size_t(e)];
  return n;
}

RoutingTrace readRoutingTrace(const std::string& path, int numExperts) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read the routing trace", path));
  RoutingTrace t;
  t.numExperts = numExperts;
  std::string line;
  if (!std::getline(in, line)) throw std::runtime_error(fmt::format("{}:1: empty file", path));
  auto head = fieldTexts(line);
  if (head.size() < 2 || head[0] != "token")
    throw std::runtime_error(fmt::format("{}:1: header must be token,expert_0,...", path));
  for (size_t k = 1; k < head.size(); ++k)
    if (head[k] != fmt::format("expert_{}", k - 1))
      throw std::runtime_error(fmt::format("{}:1: column {} is '{}', expected 'expert_{}'", path, k + 1, head[k], k - 1));
  t.topK = int(head.size()) - 1;
  for (int ln = 2; std::getline(in, line); ++ln) {
    if (line.empty() || line == "\r") continue;
    auto f = fieldTexts(line);
    if (int(f.size()) != t.topK + 1)
      throw std::runtime_error(fmt::format("{}:{}: {} fields, the header has {}", path, ln, f.size(), t.topK + 1));
    if (parseInt(path, ln, 0, f[0]) != int(t.experts.size()))
      throw std::runtime_error(fmt::format("{}:{}: token id {} out of order (expected {})", path, ln, f[0], t.experts.size()));
    std::vector<int> row;
    for (int k = 0; k < t.topK; ++k) {
      int e = parseInt(path, ln, k + 1, f[size_t(k) + 1]);
      if (e < 0 || e >= numExperts)
        throw std::runtime_error(fmt::format("{}:{}: expert_{} = {} is outside 0..{}", path, ln, k, e, numExperts - 1));
      if (std::find(row.begin(), row.end(), e) != row.end())
        throw std::runtime_error(fmt::format("{}:{}: expert {} listed twice", path, ln, e));
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
