#pragma once
// Mixture-of-Experts routing traces: the CSV format of examples/moe/data
// (`token,expert_0..expert_{k-1}`, one row per token, expert ids 0-based).
#include <cstdint>
#include <string>
#include <vector>

namespace stepgen {

/// A routing trace: experts[t] lists the k experts token t is sent to, in rank order.
struct RoutingTrace {
  int numExperts = 0;                    ///< experts in the layer (ids 0..numExperts-1)
  int topK = 0;                          ///< experts per token
  std::vector<std::vector<int>> experts; ///< [token][k]

  /// Tokens routed to each expert (size numExperts; sums to tokens * topK).
  std::vector<int> tokensPerExpert() const;
};

/// Reads a routing CSV. Errors (DiagError R-409 at the file, line and column): a missing file, a header that is not `token,expert_0..`, a row with the wrong number of
/// fields, a token id out of order, an expert id outside 0..numExperts-1, or an expert
/// listed twice for one token.
RoutingTrace readRoutingTrace(const std::string& path, int numExperts);

/// The CSV text of `t` (the format readRoutingTrace reads; experts in the trace's order).
std::string routingTraceCsv(const RoutingTrace& t);

/// A seeded synthetic trace of `tokens` tokens shaped like `like`: each token draws topK
/// distinct experts, one after the other without replacement, with probability
/// proportional to (tokens `like` routes to the expert + 1), so popular experts stay
/// popular and no expert is impossible. std::mt19937(seed); deterministic. For batches
/// larger than any real trace the project has (docs/results/moe_tiling_full.md).
RoutingTrace syntheticRoutingTrace(const RoutingTrace& like, int64_t tokens, uint32_t seed);

/// A token's experts among first .. first+n-1, renumbered from 0, ascending: the selector a
/// region's SelectGen (`first`, n) emits for it.
std::vector<int> localExperts(const std::vector<int>& experts, int first, int n);

/// The first k words of that token's routing row as the fabric reads it: the local ids,
/// then 0xFFFFFFFF (no expert) up to k.
std::vector<uint32_t> routingIdWords(const std::vector<int>& local, int64_t k);

/// A trace path as a graph names it: a relative path is relative to the graph file's folder.
std::string tracePathFrom(const std::string& trace, const std::string& graphFile);

}  // namespace stepgen
