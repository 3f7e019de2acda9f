// composeGraph (builders/compose.hpp): stage renaming and shared tensors, checked on a
// two-stage graph written by hand, and its errors.
#include <catch2/catch.hpp>

#include "builders/compose.hpp"
#include "support/diag.hpp"

using namespace stepgen;

namespace {

// A stage that copies x [B, D] to out row by row.
const char* kCopy = R"(stepgraph: copy
symbols: {B: 4, D: 16}
tensors:
  x: {shape: [B, D], role: input}
  c: {shape: [1, D], role: input}
  out: {shape: [B, D], role: output}
ops:
  - {name: load, op: LinearOffChipLoad, tensor: x, tile: [1, D], iter: [B], strides: [[1, 0]], out: xs}
  - {name: store, op: LinearOffChipStore, in: xs, tensor: out, iter: [B], strides: [[1, 0]]}
)";

}  // namespace

TEST_CASE("compose: stage ops, streams, symbols and own tensors get the prefix, shared tensors the layer's name",
          "[compose]") {
  const std::vector<LayerTensor> tensors = {{"a", {4, 16}, "input"}, {"mid", {4, 16}, "state"}, {"z", {4, 16}, "output"}};
  const std::string y = composeGraph("two", {"hand-made"}, tensors,
                                     {{"s1", kCopy, {{"x", "a"}, {"out", "mid"}}}, {"s2", kCopy, {{"x", "mid"}, {"out", "z"}}}});
  CHECK(y.find("# hand-made\nstepgraph: two\n") == 0);
  CHECK(y.find("symbols: {s1_B: 4, s1_D: 16, s2_B: 4, s2_D: 16}\n") != std::string::npos);
  CHECK(y.find("  a: {shape: [4, 16], role: input}\n  mid: {shape: [4, 16], role: state}\n  z: {shape: [4, 16], role: output}\n") !=
        std::string::npos);
  // The unshared tensor c is each stage's own; x and out are not declared again.
  CHECK(y.find("  s1_c: {shape: [1, s1_D], role: input}\n") != std::string::npos);
  CHECK(y.find("  s2_c: {shape: [1, s2_D], role: input}\n") != std::string::npos);
  CHECK(y.find("s1_x:") == std::string::npos);
  CHECK(y.find("  - {name: s1_load, op: LinearOffChipLoad, tensor: a, tile: [1, s1_D], iter: [s1_B], strides: [[1, 0]], out: s1_xs}\n") !=
        std::string::npos);
  CHECK(y.find("  - {name: s2_store, op: LinearOffChipStore, in: s2_xs, tensor: z, iter: [s2_B], strides: [[1, 0]]}\n") !=
        std::string::npos);
  const GraphStage s{"s1", kCopy, {{"x", "a"}}};
  CHECK(stageTensorName(s, "x") == "a");
  CHECK(stageTensorName(s, "c") == "s1_c");
  const std::map<std::string, Matrix> in = {{"x", Matrix{1, 1, {1}}}, {"c", Matrix{1, 1, {2}}}};
  const auto named = stageInputs(s, in, false);
  REQUIRE(named.size() == 1);
  CHECK(named.at("s1_c").data[0] == 2);
  CHECK(stageInputs(s, in, true).count("a") == 1);
}

TEST_CASE("compose: a repeated prefix, a shared name that is not a layer tensor, a text without ops", "[compose][bad]") {
  const std::vector<LayerTensor> tensors = {{"a", {4, 16}, "input"}};
  CHECK_THROWS_AS(composeGraph("g", {}, tensors, {{"s", kCopy, {}}, {"s", kCopy, {}}}), DiagError);
  CHECK_THROWS_AS(composeGraph("g", {}, tensors, {{"1s", kCopy, {}}}), DiagError);
  CHECK_THROWS_AS(composeGraph("g", {}, tensors, {{"s", kCopy, {{"x", "nope"}}}}), DiagError);
  CHECK_THROWS_AS(composeGraph("g", {}, tensors, {{"s", "stepgraph: empty\n", {}}}), DiagError);
}
