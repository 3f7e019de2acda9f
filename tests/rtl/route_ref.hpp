#pragma once
// Shared by the route-mode RTL tests (test_rtl_route.cpp: sg_route alone; test_rtl_mu.cpp:
// sg_mu in route mode; test_rtl_combine.cpp for its routings): one run's routing, its x rows,
// the routing traces, and the expected output as a plain loop.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "rtl_unit_util.hpp"

namespace rtlu {

constexpr uint32_t PAD = 0xFFFFFFFFu;

/// One run's configuration and routing: ids[t][j] for j < k (the expert of slot j).
struct RouteCase {
  int E = 4;
  int k = 2;
  int tb = 0;  ///< 0 = dynamic tiling
  int rb = 1;  ///< row beats (D = rb * W)
  bool meta = false;
  std::vector<std::vector<uint32_t>> ids;
  int B() const { return int(ids.size()); }
};

/// The small routing of the route and combine tests: E=4, k=2, B=6, tb=2, rb=2; expert 2
/// receives no token. Expert 0: tokens 0 1 3, expert 1: 0 2 4 5, expert 3: 1 2 3 4 5.
inline RouteCase smallRoute() {
  RouteCase c;
  c.E = 4;
  c.k = 2;
  c.tb = 2;
  c.rb = 2;
  c.ids = {{0, 1}, {3, 0}, {1, 3}, {0, 3}, {3, 1}, {1, 3}};
  return c;
}

inline uint32_t weightOf(int t, int j) { return 0x3F800000u + uint32_t(t) * 8u + uint32_t(j); }
inline uint32_t xWord(int t, int i) { return 0x10000u * uint32_t(t + 1) + uint32_t(i); }

/// x rows on in0: row t = rb beats, word i of the row = xWord(t, i).
inline std::vector<Beat> xBeats(const RouteCase& c, int W) {
  std::vector<Beat> r;
  for (int t = 0; t < c.B(); ++t) {
    std::vector<uint32_t> words;
    for (int i = 0; i < c.rb * W; ++i) words.push_back(xWord(t, i));
    for (const Beat& b : tileBeats(words, W, 0)) r.push_back(b);
  }
  r.push_back(doneBeat(W));
  return r;
}

/// The first `tokens` rows of a routing trace in examples/moe/data (`token,expert_0,...`,
/// CRLF line ends).
inline std::vector<std::vector<uint32_t>> readRoutingCsv(const std::string& name, int tokens) {
  const std::string path = std::string(STEPGEN_ROOT) + "/examples/moe/data/" + name;
  std::ifstream f(path);
  REQUIRE(f.good());
  std::string line;
  std::getline(f, line);  // header
  REQUIRE(line.rfind("token,expert_0", 0) == 0);
  std::vector<std::vector<uint32_t>> rows;
  while (int(rows.size()) < tokens && std::getline(f, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::stringstream ss(line);
    std::string field;
    std::getline(ss, field, ',');
    REQUIRE(std::stoi(field) == int(rows.size()));
    std::vector<uint32_t> r;
    while (std::getline(ss, field, ',')) r.push_back(uint32_t(std::stoul(field)));
    rows.push_back(r);
  }
  REQUIRE(int(rows.size()) == tokens);
  return rows;
}

/// The specification as a plain loop: experts ascending, their tokens ascending, groups of
/// tb entries padded (static) or one group of all of them (dynamic), then DONE.
inline std::vector<Beat> refRoute(const RouteCase& c, int W) {
  std::vector<Beat> out;
  for (int e = 0; e < c.E; ++e) {
    std::vector<std::pair<int, int>> ent;  // (t, j)
    for (int t = 0; t < c.B(); ++t)
      for (int j = 0; j < c.k; ++j)
        if (c.ids[size_t(t)][size_t(j)] == uint32_t(e)) {
          ent.push_back({t, j});
          break;
        }
    const int T = int(ent.size());
    if (T == 0) continue;
    const int gs = c.tb > 0 ? c.tb : T;
    const int n = (T + gs - 1) / gs * gs;
    for (int i = 0; i < n; ++i) {
      const bool pad = i >= T;
      const bool grpEnd = i % gs == gs - 1;
      const int t = pad ? -1 : ent[size_t(i)].first;
      const int j = pad ? -1 : ent[size_t(i)].second;
      if (c.meta) {
        std::vector<uint32_t> d(size_t(W), 0u);
        d[0] = pad ? PAD : uint32_t(t);
        d[1] = pad ? PAD : uint32_t(t * c.k + j);
        d[2] = pad ? 0u : weightOf(t, j);
        d[3] = uint32_t(e);
        out.push_back(dataBeat(d, true, grpEnd ? 1 : 0));
      } else {
        for (int b = 0; b < c.rb; ++b) {
          std::vector<uint32_t> d(size_t(W), 0u);
          if (!pad)
            for (int i2 = 0; i2 < W; ++i2) d[size_t(i2)] = xWord(t, b * W + i2);
          out.push_back(dataBeat(d, grpEnd && b + 1 == c.rb, 0));
        }
      }
    }
  }
  out.push_back(doneBeat(W));
  return out;
}

}  // namespace rtlu
