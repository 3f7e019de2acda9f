// buildRandomArch: every draw comes from one std::mt19937 in a fixed order.
#include "builders/random_arch.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <random>
#include <vector>

#include "builders/random_graph.hpp"

namespace stepgen {

std::string buildRandomArch(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  auto oneOf = [&](std::vector<int64_t> v) { return v[size_t(pick(0, int64_t(v.size()) - 1))]; };
  const int64_t cols = pick(3, 6), rows = pick(2, 4);
  const int64_t inner = (cols - 2) * rows;
  std::vector<std::string> site(size_t(cols * rows), "cu");
  for (int64_t y = 0; y < rows; ++y) site[size_t(y * cols)] = site[size_t(y * cols + cols - 1)] = "ag";
  // Memory units replace inner sites, never the last compute unit.
  for (int64_t k = std::min<int64_t>(pick(0, 2), inner - 1); k > 0; --k) {
    int64_t y = pick(0, rows - 1), x = pick(1, cols - 2);
    site[size_t(y * cols + x)] = "mu";
  }
  const int64_t contexts = oneOf({1, 2, 4}), reach = pick(2, 4), lanes = oneOf({4, 8, 16});
  const int64_t channels = oneOf({1, 2, 4}), latency = pick(20, 80), ii = pick(1, 2), startup = oneOf({0, 100}),
                outstanding = oneOf({8, 16, 32});
  // An even seed's memory units, if it has one, are made three, drawn last so that every
  // other draw stays as it was: the combine cluster needs a route-mode unit besides the
  // route cluster's two (its data and its selector twin).
  if (seed % 2 == 0 && std::count(site.begin(), site.end(), "mu") >= 1 && inner >= 4)
    while (std::count(site.begin(), site.end(), "mu") < 3) {
      const int64_t y = pick(0, rows - 1), x = pick(1, cols - 2);
      if (site[size_t(y * cols + x)] == "cu") site[size_t(y * cols + x)] = "mu";
    }
  std::string units;
  int cu = 0, ag = 0, mu = 0;
  for (int64_t y = 0; y < rows; ++y) {
    units += "  - [";
    for (int64_t x = 0; x < cols; ++x) {
      const std::string& s = site[size_t(y * cols + x)];
      cu += s == "cu", ag += s == "ag", mu += s == "mu";
      units += (x ? ", " : "") + s;
    }
    units += "]\n";
  }
  return fmt::format(
      "# random fabric (buildRandomArch) of seed {0}: {1} cu, {2} ag, {3} mu\n"
      "name: random_a{0}\n"
      "grid: {{cols: {4}, rows: {5}}}\n"
      "contexts: {6}\n"
      "link: {{topology: neighborhood, reach: {7}, width_bits: 512, fifo_depth: 2}}\n"
      "compute_unit:\n"
      "  lanes: {8}\n"
      "  flops_per_cycle: {9}\n"
      "  functions: [matmul, silu, mul, add, accum, retile{16}{18}]\n"
      "  number_format: bf16_fp32\n"
      "  buffer_bytes: 65536\n"
      "memory_unit: {{capacity_bytes: 65536, banks: 4, bytes_per_cycle: 64{17}}}\n"
      "offchip:\n"
      "  channels: {10}\n"
      "  bytes_per_request: 64\n"
      "  latency: {11}\n"
      "  initiation_interval: {12}\n"
      "  startup: {13}\n"
      "  outstanding: {14}\n"
      "  address_bits: 32\n"
      "units:\n{15}",
      seed, cu, ag, mu, cols, rows, contexts, reach, lanes, 2 * lanes, channels, latency, ii, startup, outstanding, units,
      seed % 2 == 0 ? fmt::format(", partition, merge, select, {}", fmt::join(kDynamicStepFunctions, ", ")) : "",
      seed % 2 == 0 && mu > 0 ? ", route: true" : "",
      seed % 4 == 2 ? fmt::format(", {}", fmt::join(kAttentionStepFunctions, ", ")) : "");
}

}  // namespace stepgen
