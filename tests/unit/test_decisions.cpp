// The fabric's arbitration decisions replayed in the model (driver/decisions.hpp,
// replayModel) on tests/data/graphs/feedback.yaml: the harness's decision log is read back
// as merge orders, and the model run under an order other than its own sends each row where
// that order says. Expected rows by a plain loop over the order (the k-th merged selector
// names the region of input k; the Partition sends row k there).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "arch/unit_catalogue.hpp"
#include "common/fp.hpp"
#include "compiled.hpp"
#include "driver/decisions.hpp"
#include "driver/pipeline.hpp"
#include "model/model.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {


CompileResult feedback() { return compileProgram(kRoot + "/arch/attention.yaml", kRoot + "/tests/data/graphs/feedback.yaml"); }

std::filesystem::path logFile(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / ("stepgen_decisions_" + name + ".csv");
  std::ofstream(p) << text;
  return p;
}

std::string mergeUnit(const CompileResult& c) {
  return UnitCatalogue(c.arch).instanceName({c.mapping.ops.at(size_t(testing::opIndex(c, "merge_free"))).unit});
}

std::string errorOf(const CompileResult& c, const std::filesystem::path& p) {
  try {
    readRtlMergeOrders(c, p);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "none";
}

}  // namespace

TEST_CASE("decisions: the harness's log becomes the merge order of the op on that unit", "[decisions][quick]") {
  const CompileResult c = feedback();
  const std::string u = mergeUnit(c);
  const auto p = logFile("ok", "cycle,section,unit,input\n4,0," + u + ",0\n5,0," + u + ",1\n9,0," + u + ",0\n");
  const MergeOrders o = readRtlMergeOrders(c, p);
  REQUIRE(o.size() == 1);
  CHECK(o.at(testing::opIndex(c, "merge_free")) == std::vector<int>{0, 1, 0});
}

TEST_CASE("decisions: a log that does not fit is an error naming file and line", "[decisions][quick]") {
  const CompileResult c = feedback();
  const std::string u = mergeUnit(c);
  const std::string h = "cycle,section,unit,input\n";
  CHECK(errorOf(c, logFile("header", "cycle,unit\n")).find("line 1: the header") != std::string::npos);
  CHECK(errorOf(c, logFile("unit", h + "4,0,u_cu_x99_y99,0\n")).find("line 2: no unit 'u_cu_x99_y99'") != std::string::npos);
  CHECK(errorOf(c, logFile("input", h + "4,0," + u + ",0\n5,0," + u + ",2\n")).find("line 3: field 'input'") !=
        std::string::npos);
  CHECK(errorOf(c, logFile("section", h + "4,1," + u + ",0\n")).find("holds no EagerMerge in section 1") != std::string::npos);
  CHECK(errorOf(c, logFile("fields", h + "4,0," + u + "\n")).find("line 2: 3 fields") != std::string::npos);
  CHECK(errorOf(c, "/nonexistent/decisions.csv").find("cannot be read") != std::string::npos);
}

TEST_CASE("decisions: differing decisions are counted position by position", "[decisions][quick]") {
  CHECK(differingDecisions({{3, {0, 1, 0}}}, {{3, {0, 1, 0}}}) == 0);
  CHECK(differingDecisions({{3, {0, 1, 0}}}, {{3, {1, 0, 0}}}) == 2);
  CHECK(differingDecisions({{3, {0, 1, 0}}}, {{3, {0, 1}}}) == 1);              // one missing
  CHECK(differingDecisions({{3, {0, 1}}}, {{3, {0, 1}}, {5, {1, 1, 1}}}) == 3);  // an op only one side has
  CHECK(decisionCount({{3, {0, 1}}, {5, {1, 1, 1}}}) == 5);
}

TEST_CASE("decisions: the model replays an order other than its own", "[decisions][model][quick]") {
  const CompileResult c = feedback();
  Matrix x{12, 16, {}};
  for (int r = 0; r < 12; ++r)
    for (int col = 0; col < 16; ++col) x.data.push_back(floatToBits(float(r * 16 + col)));
  const std::map<std::string, Matrix> in{{"x", x}};
  const ModelResult own = runModel(c.graph, c.shapes, c.mapping, c.arch, c.programLayout, c.image, in);
  const int merge = testing::opIndex(c, "merge_free");
  std::vector<int> order = own.timing.mergeOrders.at(merge);
  // Swap the first two dispatches that name different regions: each region still gets as
  // many rows, so the order fits the inputs' token counts.
  size_t k = 0;
  while (k + 1 < order.size() && order[k] == order[k + 1]) ++k;
  REQUIRE(k + 1 < 12);
  std::swap(order[k], order[k + 1]);
  const ModelResult re = replayModel(c.graph, c.shapes, c.mapping, c.arch, c.programLayout, c.image, in, {{merge, order}});
  CHECK(re.timing.mergeOrders.count(merge) == 1);
  CHECK_FALSE(re.timing.deadlock);
  // Row r goes to region order[r], stored at that region's next row.
  Matrix y[2] = {{12, 16, std::vector<uint32_t>(192, 0)}, {12, 16, std::vector<uint32_t>(192, 0)}};
  int next[2] = {0, 0};
  for (int r = 0; r < 12; ++r) {
    const int reg = order[size_t(r)];
    std::copy(x.data.begin() + r * 16, x.data.begin() + (r + 1) * 16, y[reg].data.begin() + next[reg]++ * 16);
  }
  CHECK(re.outputs.at("y0").data == y[0].data);
  CHECK(re.outputs.at("y1").data == y[1].data);
  CHECK(own.outputs.at("y0").data != y[0].data);  // the swap changed where rows went
  // An order with a token too many for input 1 does not fit.
  std::vector<int> bad = order;
  bad.push_back(1);
  CHECK_THROWS_AS(replayModel(c.graph, c.shapes, c.mapping, c.arch, c.programLayout, c.image, in, {{merge, bad}}),
                  std::runtime_error);
}
