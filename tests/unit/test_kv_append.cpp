// KV-cache append (buildKvAppendGraph, state tensors): the functional model against a plain
// loop (the cache with each request's row len_b replaced by its new row), the dependency
// order and section cut a state tensor imposes, and its errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <random>

#include "arch/arch_model.hpp"
#include "builders/kv_append.hpp"
#include "driver/inputs.hpp"
#include "driver/pipeline.hpp"
#include "ir/graph.hpp"
#include "model/functional.hpp"
#include "passes/graph_order.hpp"
#include "passes/shape_check.hpp"
#include "support/diag.hpp"
#include "support/files.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {


// The graph, with `readFirst` its read-back (load_k, store_k) declared before the append:
// then only the state order runs the append first.
std::string writeGraph(const KvAppendParams& p, const std::string& tag, bool readFirst = false) {
  std::string text = buildKvAppendGraph(p);
  if (readFirst) {
    const size_t read = text.find("  - {name: load_k"), ops = text.find("  - {name: load_pos");
    REQUIRE((read != std::string::npos && ops != std::string::npos && ops < read));
    const std::string tail = text.substr(read);
    text = text.substr(0, ops) + tail + text.substr(ops, read - ops);
  }
  const auto dir = std::filesystem::temp_directory_path() / ("sg_kv_" + tag);
  writeFile(dir / "graph.yaml", text);
  return (dir / "graph.yaml").string();
}

int opIndexOrFail(const StepGraph& g, const std::string& name) {
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].name == name) return int(i);
  FAIL("no op " << name);
  return -1;
}

}  // namespace

TEST_CASE("kv-append: the model writes each new row at its request's length, and reads the cache back after", "[model][kv]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 4; ++trial) {
    KvAppendParams p;
    p.capacity = 1 + int64_t(rng() % 40);
    p.headDim = 16 * (1 + int64_t(rng() % 3));
    p.lengths.clear();
    for (int b = 0, n = 1 + int(rng() % 9); b < n; ++b) p.lengths.push_back(int64_t(rng() % uint32_t(p.capacity)));
    p.lengths.back() = p.capacity - 1;  // the last free row
    p.lengths.front() = 0;              // an empty cache
    const StepGraph g = loadGraph(writeGraph(p, std::to_string(trial), trial % 2 == 1));
    auto in = loadInputs(g, "", uint32_t(trial));
    for (auto& [name, m] : kvAppendFixedInputs(p)) in[name] = m;
    const auto out = runFunctional(g, checkShapes(g), loadArch(root() + "/arch/default.yaml"), in).outputs;
    // The reference: a copy of the cache, row b*L + len_b from k_new row b.
    std::vector<uint32_t> want = in.at("k").data;
    const int64_t D = p.headDim;
    for (size_t b = 0; b < p.lengths.size(); ++b)
      std::copy_n(in.at("k_new").data.begin() + int64_t(b) * D, D, want.begin() + (int64_t(b) * p.capacity + p.lengths[b]) * D);
    INFO("trial " << trial << ": " << p.lengths.size() << " requests, L " << p.capacity << ", D " << D);
    CHECK(out.at("kout").data == want);  // what the read-back saw
    CHECK(out.at("k").data == want);     // the state tensor as returned
    CHECK(want != in.at("k").data);      // the append changed something
  }
}

TEST_CASE("kv-append: a state tensor's loads come after its stores, on a fabric in a later section", "[mapper][kv]") {
  KvAppendParams p;
  p.lengths = {3, 7, 0, 5};
  const std::string path = writeGraph(p, "order", true);
  const StepGraph g = loadGraph(path);
  const int append = opIndexOrFail(g, "append"), load = opIndexOrFail(g, "load_k");
  REQUIRE(load < append);  // declared first: without the state order the load would run first
  std::vector<std::pair<int, int>> pairs = stateOrder(g);
  REQUIRE(pairs == std::vector<std::pair<int, int>>{{append, load}});
  const OpOrder o = orderOps(g);
  CHECK(o.stateConflicts.empty());
  auto pos = [&](int op) { return std::find(o.order.begin(), o.order.end(), op) - o.order.begin(); };
  CHECK(pos(append) < pos(load));
  const CompileResult c = compileGraph(root() + "/arch/default.yaml", path);
  CHECK(c.sections.sections == 2);  // the whole graph fits one context: the state order alone cuts it
  const int store = opIndexOrFail(c.graph, "store_k");
  CHECK(c.sections.sectionOf.at(size_t(opIndexOrFail(c.graph, "append"))) == 0);
  CHECK(c.sections.sectionOf.at(size_t(store)) == 1);
}

TEST_CASE("kv-append: bad parameters and a store that depends on its own state tensor are errors", "[kv][bad]") {
  KvAppendParams p;
  p.lengths = {8};
  p.capacity = 8;
  CHECK_THROWS_WITH(buildKvAppendGraph(p), Catch::Contains("length 8 leaves no free cache row"));
  p.lengths = {1};
  p.headDim = 24;
  CHECK_THROWS_WITH(buildKvAppendGraph(p), Catch::Contains("multiple of 16"));
  p.headDim = 16;
  // The new rows read from the cache itself: the append would depend on a read of k.
  std::string text = buildKvAppendGraph(p);
  const std::string from = "tensor: k_new, tile", to = "tensor: k, tile";
  text.replace(text.find(from), from.size(), to);
  const auto dir = std::filesystem::temp_directory_path() / "sg_kv_conflict";
  writeFile(dir / "graph.yaml", text);
  const StepGraph g = loadGraph((dir / "graph.yaml").string());
  CHECK(orderOps(g).stateConflicts.size() == 1);
  try {
    checkShapes(g);
    FAIL("no error");
  } catch (const DiagError& e) {
    CHECK(e.diags.at(0).id == "S-252");
  }
}
