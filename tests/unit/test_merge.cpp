// EagerMerge on a compute unit (tests/data/graphs/merge.yaml on arch/attention.yaml): the
// model merges in arrival order, found from its own timing. The rows by plain loops: b's
// rows first (they arrive long before the matmul's), then a w^T in double within the bf16
// operand bound; and the first round (input order) is not what the timing says.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "common/fp.hpp"
#include "driver/inputs.hpp"
#include "driver/pipeline.hpp"
#include "model/functional.hpp"
#include "model/model.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {

// A graph of random seed 54 (tests/data/graphs/<file>) on random_a4 at link FIFO depth 1,
// through the model with the study's inputs of that seed.
struct Seed54 {
  CompileResult c;
  std::map<std::string, Matrix> in;
  ModelResult r;
};
Seed54 runSeed54(const std::string& file) {
  Seed54 s{compileGraph(root() + "/tests/data/arch_random_a4_fifo1.yaml", root() + "/tests/data/graphs/" + file), {}, {}};
  s.in = loadInputs(s.c.graph, "", 54);
  s.r = runModel(s.c.graph, s.c.shapes, s.c.mapping, s.c.arch, s.c.layout, s.c.image, s.in);
  return s;
}
}  // namespace

TEST_CASE("EagerMerge on a compute unit merges in arrival order", "[model][merge]") {
  const CompileResult c = compileGraph(root() + "/arch/attention.yaml", root() + "/tests/data/graphs/merge.yaml");
  const auto in = loadInputs(c.graph, "", 1);
  const ModelResult r = runModel(c.graph, c.shapes, c.mapping, c.arch, c.layout, c.image, in);
  REQUIRE_FALSE(r.timing.deadlock);
  const Matrix &a = in.at("a"), &w = in.at("w"), &b = in.at("b"), &out = r.outputs.at("out");
  REQUIRE(out.rows == 64);
  // b's 32 rows first, unchanged
  for (int64_t i = 0; i < 32 * 64; ++i) REQUIRE(out.data[size_t(i)] == b.data[size_t(i)]);
  // then a w^T (bf16 operands, fp32 sums: within 2^-7 of sum |a||w| per element)
  double worst = 0;
  for (int64_t i = 0; i < 32; ++i)
    for (int64_t j = 0; j < 64; ++j) {
      double ref = 0, scale = 1e-30;
      for (int64_t k = 0; k < 64; ++k) {
        ref += f(a.data[size_t(i * 64 + k)]) * f(w.data[size_t(j * 64 + k)]);
        scale += std::fabs(f(a.data[size_t(i * 64 + k)]) * f(w.data[size_t(j * 64 + k)]));
      }
      worst = std::max(worst, std::fabs(f(out.data[size_t((32 + i) * 64 + j)]) - ref) / scale);
    }
  CHECK(worst < 1.0 / 128);
  // The merge order the model settled on, and that the input order (round 0) was not it.
  const int merge = int(std::find_if(c.graph.ops.begin(), c.graph.ops.end(),
                                     [](const Op& o) { return o.name == "merge"; }) - c.graph.ops.begin());
  REQUIRE(r.timing.mergeOrders.count(merge) == 1);
  CHECK(r.timing.mergeOrders.at(merge) == std::vector<int>{1, 1, 1, 1, 0, 0, 0, 0});
  const FunctionalResult first = runFunctional(c.graph, c.shapes, c.arch, in);
  CHECK(first.outputs.at("out").data != out.data);
  // Rounds: a b tile is more beats than its input FIFO holds, so under a guess that takes a
  // tile of a before b's k-th, b's next tile cannot start before that and arrives late in
  // that round's timing: each round moves exactly one more b tile ahead, and one more round
  // confirms the order. So one round per b tile, plus one.
  const auto& settled = r.timing.mergeOrders.at(merge);
  CHECK(r.mergeRounds == std::count(settled.begin(), settled.end(), 1) + 1);
}

// A Partition feeding both inputs (tests/data/graphs/partition_merge.yaml): the first round's
// guess, all of input 0 first, deadlocks the timing (row 0 goes to input 1); the model takes
// the decisions the deadlocked timing could make and runs again. The rows come out in their
// original order, so y equals x.
TEST_CASE("EagerMerge of a Partition's outputs: a guessed order that deadlocks is revised", "[model][merge]") {
  const CompileResult c =
      compileGraph(root() + "/tests/data/arch_partition4.yaml", root() + "/tests/data/graphs/partition_merge.yaml");
  const auto in = loadInputs(c.graph, "", 7);
  const ModelResult r = runModel(c.graph, c.shapes, c.mapping, c.arch, c.layout, c.image, in);
  REQUIRE_FALSE(r.timing.deadlock);
  CHECK(r.outputs.at("y").data == in.at("x").data);
  const int merge = int(std::find_if(c.graph.ops.begin(), c.graph.ops.end(),
                                     [](const Op& o) { return o.name == "merge"; }) - c.graph.ops.begin());
  CHECK(r.timing.mergeOrders.at(merge) == std::vector<int>{1, 0, 0, 1, 0});  // the trace's experts
}

// Random seed 54 (tests/data/graphs/random_s54_feedback.yaml) at link FIFO depth 1: x1's two
// [4, 16] tiles are dealt by the merge of two free signals, f7 (2 initial tokens) and f10
// (1). Both select units emit their first token in the same cycle; a depth-1 FIFO passes a
// beat every second cycle, so f7's second token comes two cycles after its first. The merge
// takes f7's first, is free again the next cycle (one-beat tiles pass one per cycle, as the
// RTL merge does) and finds only f10's at a head: the order starts 0, 1, 0, so tile 0 goes
// to output 0 (y0) and tile 1 to output 1 (silu, y2). The RTL deals them so. The model
// deadlocked here while the select held a tile's dropped beats, and took f7's second token
// while its merge waited a cycle too long between one-beat tiles.
TEST_CASE("EagerMerge of free signals through depth-1 FIFOs: the order the RTL's timing gives", "[model][merge][feedback]") {
  const Seed54 s = runSeed54("random_s54_feedback.yaml");
  const CompileResult& c = s.c;
  const ModelResult& r = s.r;
  const auto& in = s.in;
  REQUIRE_FALSE(r.timing.deadlock);
  const int merge = int(std::find_if(c.graph.ops.begin(), c.graph.ops.end(),
                                     [](const Op& o) { return o.name == "merge_free2"; }) - c.graph.ops.begin());
  const std::vector<int>& order = r.timing.mergeOrders.at(merge);
  REQUIRE(order.size() >= 3);
  CHECK(std::vector<int>(order.begin(), order.begin() + 3) == std::vector<int>{0, 1, 0});
  const Matrix &x = in.at("x1"), &y0 = r.outputs.at("y0"), &y2 = r.outputs.at("y2");
  REQUIRE((x.rows == 8 && x.cols == 16 && y0.rows == 8 && y2.rows == 8));
  for (int64_t i = 0; i < 64; ++i) {
    CHECK(y0.data[size_t(i)] == x.data[size_t(i)]);  // tile 0, as loaded
    CHECK(y0.data[size_t(64 + i)] == 0u);             // tile 1 went elsewhere
    CHECK(y2.data[size_t(i)] != 0u);                  // silu of tile 1: v sigmoid(v), v's sign
    CHECK((y2.data[size_t(i)] >> 31) == (x.data[size_t(64 + i)] >> 31));
    CHECK(y2.data[size_t(64 + i)] == 0u);
  }
}

// The reducer's graph of that seed (tests/data/graphs/random_s54_reduced.yaml, one-row tiles):
// the same merge order 0, 1, 0 by the same timing, so row 0 goes to y1 and row 1 to y2. The
// model before the merge fix gave row 1 to y1 as well.
TEST_CASE("EagerMerge of free signals through depth-1 FIFOs: the reducer's graph", "[model][merge][feedback]") {
  const Seed54 s = runSeed54("random_s54_reduced.yaml");
  REQUIRE_FALSE(s.r.timing.deadlock);
  const Matrix &x = s.in.at("x1"), &y1 = s.r.outputs.at("y1"), &y2 = s.r.outputs.at("y2");
  REQUIRE((x.rows == 2 && x.cols == 16 && y1.rows == 2 && y2.rows == 2));
  for (int64_t i = 0; i < 16; ++i) {
    CHECK(y1.data[size_t(i)] == x.data[size_t(i)]);
    CHECK(y1.data[size_t(16 + i)] == 0u);
    CHECK(y2.data[size_t(i)] == x.data[size_t(16 + i)]);
    CHECK(y2.data[size_t(16 + i)] == 0u);
  }
}
