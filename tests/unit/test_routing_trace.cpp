// Routing traces: the facts examples/moe/data/README.md states about the real files.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "support/routing_trace.hpp"

using namespace stepgen;

namespace {
std::string example(const char* f) { return std::string(STEPGEN_ROOT) + "/examples/moe/data/" + f; }
}  // namespace

TEST_CASE("routing trace: Mixtral-8x7B batch 64", "[trace]") {
  RoutingTrace t = readRoutingTrace(example("routing_mixtral8x7b_b64.csv"), 8);
  CHECK(t.topK == 2);
  CHECK(t.experts.size() == 64);
  CHECK(t.tokensPerExpert() == std::vector<int>{13, 10, 17, 14, 17, 10, 24, 23});
}

TEST_CASE("routing trace: Qwen3-30B-A3B batch 64", "[trace]") {
  RoutingTrace t = readRoutingTrace(example("routing_qwen3_30b_a3b_b64.csv"), 128);
  CHECK(t.topK == 8);
  auto n = t.tokensPerExpert();
  CHECK(*std::max_element(n.begin(), n.end()) == 42);
  CHECK(std::count(n.begin(), n.end(), 0) == 68);
}

// The copies against their source files, in the folder STEPGEN_TRACE_SOURCE names (hidden
// tag: run by the ctest test trace_copies_equal_source when ../shared/data is beside the
// project, and by hand otherwise). A missing variable or file fails: nothing compared is no
// pass. Without the source, tests/data_checksums.sh checks the copies' SHA-256 sums.
TEST_CASE("routing trace: the copies equal their source files", "[.source]") {
  const char* src = std::getenv("STEPGEN_TRACE_SOURCE");
  REQUIRE(src != nullptr);
  REQUIRE(*src != 0);
  for (const char* f : {"routing_mixtral8x7b_b64.csv", "routing_qwen3_30b_a3b_b64.csv"}) {
    INFO(std::string(src) + "/" + f);
    std::ifstream a(example(f)), b(std::string(src) + "/" + f);
    REQUIRE(a.good());
    REQUIRE(b.good());
    std::string x((std::istreambuf_iterator<char>(a)), {}), y((std::istreambuf_iterator<char>(b)), {});
    CHECK(!x.empty());
    CHECK(x == y);
  }
}

TEST_CASE("routing trace: bad files name the line and field", "[trace][bad]") {
  std::string p = "/tmp/stepgen_bad_trace.csv";
  std::ofstream(p) << "token,expert_0,expert_1\n0,1,2\n1,3,3\n";
  CHECK_THROWS_WITH(readRoutingTrace(p, 8), Catch::Contains(":3:5: error[R-409]") && Catch::Contains("listed twice"));
  std::ofstream(p) << "token,expert_0\n0,9\n";
  CHECK_THROWS_WITH(readRoutingTrace(p, 8), Catch::Contains(":2:3: error[R-409]") && Catch::Contains("outside 0..7"));
  CHECK_THROWS_WITH(readRoutingTrace("/nonexistent.csv", 8), Catch::Contains("cannot read"));
}

// The synthetic batch-1024 traces of the real-size study: deterministic, k distinct experts
// per token, every expert possible, and popular experts of the real trace stay popular.
TEST_CASE("routing trace: a synthetic trace is shaped like the real one", "[trace]") {
  const RoutingTrace real = readRoutingTrace(example("routing_mixtral8x7b_b64.csv"), 8);
  const RoutingTrace s = syntheticRoutingTrace(real, 4096, 7);
  CHECK(syntheticRoutingTrace(real, 4096, 7).experts == s.experts);
  CHECK(syntheticRoutingTrace(real, 4096, 8).experts != s.experts);
  REQUIRE(s.experts.size() == 4096);
  CHECK(s.topK == 2);
  for (const auto& row : s.experts) {
    REQUIRE(row.size() == 2);
    CHECK(row[0] != row[1]);
    for (int e : row) CHECK((e >= 0 && e < 8));
  }
  // Expert 6 (24 tokens in the real batch) against expert 1 (10): drawn with weights 25 and
  // 11 out of 128 + 8 for the first slot, so it must get clearly more tokens.
  const std::vector<int> n = s.tokensPerExpert();
  CHECK(n[6] > n[1] * 3 / 2);
  for (int x : n) CHECK(x > 0);
  // The text round-trips through the reader.
  const std::string path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/stepgen_synth_trace.csv";
  std::ofstream(path) << routingTraceCsv(s);
  CHECK(readRoutingTrace(path, 8).experts == s.experts);
}
