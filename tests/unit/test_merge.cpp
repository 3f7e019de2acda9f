// EagerMerge on a compute unit (tests/data/graphs/merge.yaml on arch/attention.yaml): the
// model merges in arrival order, found from its own timing. The rows by plain loops: b's
// rows first (they arrive long before the matmul's), then a w^T in double within the bf16
// operand bound; and the first round (input order) is not what the timing says.
#include <catch2/catch.hpp>

#include <cmath>

#include "common/fp.hpp"
#include "driver/inputs.hpp"
#include "driver/pipeline.hpp"
#include "model/functional.hpp"
#include "model/model.hpp"

using namespace stepgen;

namespace {
std::string root() { return STEPGEN_ROOT; }
double f(uint32_t bits) { return double(bitsToFloat(bits)); }
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
