// Feedback streams (docs/graph_format.md#feedback-streams) on tests/data/graphs/feedback.yaml:
// the shape check accepts a cycle through a Map(fn: select) with initial tokens and locates
// the bad ones; the functional model runs the cycle in rounds. Expected rows by plain loops
// from the merge order (each merged selector names the region its input came from).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/fp.hpp"
#include "driver/inputs.hpp"
#include "driver/pipeline.hpp"
#include "model/functional.hpp"
#include "passes/graph_order.hpp"
#include "passes/shape_check.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {


std::string feedbackText() {
  std::ifstream f(root() + "/tests/data/graphs/feedback.yaml");
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The feedback graph with each `from` replaced by its `to` (once), written to a temporary file.
std::string variant(const std::string& name, const std::vector<std::pair<std::string, std::string>>& edits) {
  std::string t = feedbackText();
  for (const auto& [from, to] : edits) {
    const size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    t.replace(at, from.size(), to);
  }
  const std::string path = (std::filesystem::temp_directory_path() / ("stepgen_feedback_" + name + ".yaml")).string();
  std::ofstream(path) << t;
  return path;
}

// The only diagnostic of checking `path` (the loader must accept it).
Diagnostic onlyDiag(const std::string& path) {
  const StepGraph g = loadGraph(path);
  try {
    checkShapes(g);
  } catch (const DiagError& e) {
    REQUIRE(e.diags.size() == 1);
    return e.diags[0];
  }
  FAIL("no shape error");
  return {};
}

int lineOf(const std::string& path, const std::string& text) {
  std::ifstream f(path);
  std::string l;
  for (int n = 1; std::getline(f, l); ++n)
    if (l.find(text) != std::string::npos) return n;
  return -1;
}

int opIndex(const StepGraph& g, const std::string& name) {
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].name == name) return int(i);
  return -1;
}

// Rows 0.. of `m` equal to `rows` (each 16 words) and the rest zero.
void requireRows(const Matrix& m, const std::vector<std::vector<uint32_t>>& rows) {
  REQUIRE(m.cols == 16);
  for (int64_t r = 0; r < m.rows; ++r)
    for (int64_t c = 0; c < 16; ++c) {
      const uint32_t want = size_t(r) < rows.size() ? rows[size_t(r)][size_t(c)] : 0u;
      INFO("row " << r << " col " << c);
      REQUIRE(m.data[size_t(r * 16 + c)] == want);
    }
}

// The graph's input x: 12 rows of 16 words, row r's words r + 1 + (c mod 4).
Matrix rowsX() {
  Matrix x{12, 16, {}};
  for (int r = 0; r < 12; ++r)
    for (int c = 0; c < 16; ++c) x.data.push_back(floatToBits(float(r + 1 + (c % 4))));
  return x;
}

}  // namespace

TEST_CASE("feedback: the cycle through a select with initial tokens is legal", "[feedback][shape_check][quick]") {
  const StepGraph g = loadGraph(root() + "/tests/data/graphs/feedback.yaml");
  const OpOrder o = orderOps(g);
  REQUIRE(o.cycles.empty());
  REQUIRE(o.feedback.size() == 2);
  CHECK(g.stream(o.feedback[0]).name == "f0");
  CHECK(g.stream(o.feedback[1]).name == "f1");
  const ShapeResult s = checkShapes(g);
  const StreamType& free = s.types.at(size_t(g.findStream("free")->v));
  CHECK(free.elem.kind == ElemType::Kind::Selector);
  CHECK(free.rank() == 0);
}

TEST_CASE("feedback: initial tokens given by a symbol", "[feedback][shape_check][quick]") {
  const std::string p = variant("symbol", {{"symbols: {B: 12}", "symbols: {B: 12, C0: 2}"},
                                           {"value: 0, n: 2, initial: 2", "value: 0, n: 2, initial: C0"}});
  const StepGraph g = loadGraph(p);
  CHECK(orderOps(g).feedback.size() == 2);
  CHECK_NOTHROW(checkShapes(g));
}

TEST_CASE("feedback: located errors for bad cycles and selectors", "[feedback][shape_check][quick]") {
  SECTION("a cycle without initial tokens (S-205)") {
    const std::string p = variant("noinit", {{"value: 1, n: 2, initial: 1", "value: 1, n: 2, initial: 0"}});
    const Diagnostic d = onlyDiag(p);
    CHECK(d.id == "S-205");
    CHECK(d.message.find("without initial tokens") != std::string::npos);
    CHECK(d.message.find("Map(select) 'free1'") != std::string::npos);
    CHECK(d.message.find("Partition 'part'") != std::string::npos);
  }
  SECTION("merged selectors among different numbers of outputs (S-242)") {
    const std::string p = variant("width", {{"value: 1, n: 2, initial: 1", "value: 1, n: 3, initial: 1"}});
    const Diagnostic d = onlyDiag(p);
    CHECK(d.id == "S-242");
    CHECK(d.loc.line == lineOf(p, "name: merge_free"));
  }
  SECTION("a value outside [0, n) (S-251, at the value)") {
    const std::string p = variant("value", {{"value: 1, n: 2, initial: 1", "value: 2, n: 2, initial: 1"}});
    const Diagnostic d = onlyDiag(p);
    CHECK(d.id == "S-251");
    CHECK(d.loc.line == lineOf(p, "name: free1"));
    CHECK(d.loc.col > 1);
  }
}

TEST_CASE("feedback: the partition's selector arity is checked through the cycle", "[feedback][shape_check][quick]") {
  // Both selects say n = 3: the merged selector picks among 3 outputs, the Partition has 2.
  std::string t = feedbackText();
  for (const char* v : {"value: 0, n: 2", "value: 1, n: 2"}) {
    const size_t at = t.find(v);
    REQUIRE(at != std::string::npos);
    t.replace(at, std::string(v).size(), std::string(v).substr(0, 13) + "3");
  }
  const std::string path = (std::filesystem::temp_directory_path() / "stepgen_feedback_arity3.yaml").string();
  std::ofstream(path) << t;
  const Diagnostic d = onlyDiag(path);
  CHECK(d.id == "S-240");
  CHECK(d.message.find("selects among 3 outputs but the operator has n = 2") != std::string::npos);
  CHECK(d.loc.line == lineOf(path, "name: part,"));
}

TEST_CASE("feedback: rows go where the merged selector says, each once, in order", "[feedback][model][quick]") {
  const StepGraph g = loadGraph(root() + "/tests/data/graphs/feedback.yaml");
  const ShapeResult s = checkShapes(g);
  const ArchModel a = loadArch(root() + "/arch/attention.yaml");
  const Matrix x = rowsX();
  // The merge's arrival order: the k-th merged selector names the region of input k.
  // 12 dispatches, then the 3 tokens left over (region 0 has 2 + 7, region 1 has 1 + 5).
  const std::vector<int> dispatch = {0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0};
  std::vector<int> order = dispatch;
  order.insert(order.end(), {0, 0, 1});
  const FunctionalResult f = runFunctional(g, s, a, {{"x", x}}, true, {{opIndex(g, "merge_free"), order}});
  std::vector<std::vector<uint32_t>> want0, want1;
  for (int r = 0; r < 12; ++r) {
    (dispatch[size_t(r)] == 0 ? want0 : want1).push_back(std::vector<uint32_t>(x.data.begin() + r * 16, x.data.begin() + (r + 1) * 16));
  }
  requireRows(f.outputs.at("y0"), want0);
  requireRows(f.outputs.at("y1"), want1);
  // The select streams: initial tokens, then one per finished row.
  CHECK(f.streams.at(size_t(g.findStream("f0")->v)).size() == 2 + 7 + 1);
  CHECK(f.streams.at(size_t(g.findStream("f1")->v)).size() == 1 + 5 + 1);
}

TEST_CASE("feedback: a cycle whose tokens are not returned stops (R-408)", "[feedback][model][quick]") {
  // Every token names region 1 (region 0's select says 1), and region 1 returns none: its
  // select counts one loaded row instead of its own. 2 + 1 + 1 tokens for 12 rows.
  const std::string p =
      variant("starve", {{"value: 0, n: 2, initial: 2", "value: 1, n: 2, initial: 2"},
                         {"  - {name: bcast1, op: Broadcast, in: x1, out: [x1s, x1f]}\n", ""},
                         {"in: x1s, tensor: y1", "in: x1, tensor: y1"},
                         {"in: x1f, out: f1", "in: xe, out: f1"},
                         {"  # the cycle's return",
                          "  - {name: load_e, op: LinearOffChipLoad, tensor: x, tile: [1, 16], iter: [1], strides: [[1, 0]], "
                          "out: xe}\n  # the cycle's return"}});
  const StepGraph g = loadGraph(p);
  const ShapeResult s = checkShapes(g);
  const ArchModel a = loadArch(root() + "/arch/attention.yaml");
  const auto in = loadInputs(g, "", 1);
  try {
    runFunctional(g, s, a, in);
    FAIL("no error");
  } catch (const DiagError& e) {
    REQUIRE(e.diags.size() == 1);
    CHECK(e.diags[0].id == "R-408");
    CHECK(e.diags[0].loc.line == lineOf(p, "name: part,"));
    CHECK(e.diags[0].message.find("'free'") != std::string::npos);
  }
}

TEST_CASE("feedback: a routing-only run has the streams of a run with values, no output words",
          "[feedback][model][quick]") {
  const StepGraph g = loadGraph(root() + "/tests/data/graphs/feedback.yaml");
  const ShapeResult s = checkShapes(g);
  const ArchModel a = loadArch(root() + "/arch/attention.yaml");
  const Matrix x = rowsX();
  const MergeOrders orders = {{opIndex(g, "merge_free"), {0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1}}};
  const FunctionalResult full = runFunctional(g, s, a, {{"x", x}}, true, orders);
  const FunctionalResult routing = runFunctional(g, s, a, {{"x", x}}, true, orders, nullptr, true);
  CHECK(routing.followed == full.followed);
  REQUIRE(routing.streams.size() == full.streams.size());
  for (size_t i = 0; i < full.streams.size(); ++i) {
    INFO("stream " << g.streams[i].name);
    REQUIRE(routing.streams[i].size() == full.streams[i].size());
    for (size_t k = 0; k < full.streams[i].size(); ++k) {
      CHECK(routing.streams[i][k].kind == full.streams[i][k].kind);
      CHECK(routing.streams[i][k].stop == full.streams[i][k].stop);
    }
  }
  // The stores write nothing.
  CHECK(full.outputs.at("y0").data.at(0) != 0u);
  for (const char* y : {"y0", "y1"})
    for (uint32_t w : routing.outputs.at(y).data) CHECK(w == 0u);
}
