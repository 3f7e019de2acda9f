// checkShapes on the dynamic path (docs/step_semantics.md#operators; docs/graph_format.md
// "Operators of the dynamic path"): SelectGen, Partition, Reassemble, EagerMerge, Reshape,
// Expand, Scan, FlatMap, Parallelize, RandomOffChipLoad/Store. Small in-memory graphs
// (as in test_shape_check.cpp), one test per error id, and the MoE-shaped YAML graph.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "graph_builder.hpp"
#include "passes/shape_check.hpp"

using namespace stepgen;
using namespace stepgen::testing;

namespace {

/// B = 64 tokens in tiles of tb = 16 (4 token tiles), hidden D = 32, expert width H = 16.
GB base() {
  GB b;
  b.g.symbols = {{"B", 64}, {"D", 32}, {"H", 16}, {"tb", 16}};
  b.tensor("x", {"B", "D"});
  b.tensor("w", {"D", "H"});
  b.tensor("v", {"160", "16"});
  b.tensor("y", {"B", "H"}, true);
  return b;
}

/// xs: [B/tb] x tile [tb, D].
void loadX(GB& b, const std::string& out = "xs") {
  load(b, "load_" + out, "x", {"tb", "D"}, {"B/tb"}, {{"1", "0"}}, out);
}

/// A SelectGen over n outputs, k hot, shape iter.
void selectGen(GB& b, const std::string& out, const std::string& n, const std::string& k,
               const std::vector<std::string>& iter) {
  b.op("sg_" + out, OpKind::SelectGen, {}, {out},
       {{"trace", GB::scalar("trace.csv")}, {"n", GB::scalar(n)}, {"k", GB::scalar(k)}, {"iter", GB::list(iter)}});
}

/// `data` split by a Partition 'p' at dim `bDim` into `outs` (n = their count), over a
/// k-of-n selector 'sel' of shape [B/tb].
void partitionBySel(GB& b, const std::string& data, const std::vector<std::string>& outs, const std::string& k = "1",
                    const std::string& bDim = "0") {
  const std::string n = std::to_string(outs.size());
  selectGen(b, "sel", n, k, {"B/tb"});
  b.op("p", OpKind::Partition, {data, "sel"}, outs, {{"n", GB::scalar(n)}, {"b", GB::scalar(bDim)}});
}

/// xs: [B/tb, 2] x tile [tb, 16] (each token tile in two halves of 16 columns).
void loadXHalves(GB& b) {
  load(b, "ld", "x", {"tb", "16"}, {"B/tb", "2"}, {{"1", "0"}, {"0", "1"}}, "xs");
}

/// vs: [10] x tile [16, 16] (tensor v is 160 x 16).
void loadV(GB& b, const std::string& out = "vs") {
  load(b, "load_" + out, "v", {"16", "16"}, {"10"}, {{"1", "0"}}, out);
}

/// The rows of `rows` ([.., tb] x tile [1, D]) flattened, regrouped into tiles of 4 rows
/// (padded), each tile and its is-padding flags retiled, and filtered by those flags: 'kept'.
void filterRows(GB& b, const std::string& rows) {
  b.op("fl", OpKind::Flatten, {rows}, {rows + "_f"}, {{"lo", GB::scalar("0")}, {"hi", GB::scalar("1")}});
  b.op("rp", OpKind::Reshape, {rows + "_f"}, {"rg", "pg"}, {{"chunk", GB::scalar("4")}, {"b", GB::scalar("0")}, {"pad", GB::scalar("true")}});
  b.op("tx", OpKind::Accum, {"rg"}, {"tx"}, {{"fn", GB::scalar("retile")}, {"b", GB::scalar("1")}});
  b.op("tp", OpKind::Accum, {"pg"}, {"tp"}, {{"fn", GB::scalar("retile")}, {"b", GB::scalar("1")}});
  b.op("ff", OpKind::FlatMap, {"tx", "tp"}, {"kept"}, {{"fn", GB::scalar("filter_rows")}, {"b", GB::scalar("1")}});
}

std::string fmtOf(const GB& b, const ShapeResult& r, const std::string& s) { return formatStreamType(b.type(r, s)); }

}  // namespace

// ------------------------------------------------------------------------------------------
// Positive

TEST_CASE("shape_check dyn: SelectGen and Partition outputs are dynamic regular", "[shape_check][dynamic]") {
  GB b = base();
  loadX(b);
  partitionBySel(b, "xs", {"e0", "e1", "e2", "e3"});
  ShapeResult r = checkShapes(b.g);
  CHECK(fmtOf(b, r, "sel") == "[B/tb] x selector 1-of-4");
  CHECK(b.type(r, "sel").elem.kind == ElemType::Kind::Selector);
  for (int i = 0; i < 4; ++i) {
    const StreamType& t = b.type(r, "e" + std::to_string(i));
    CHECK(formatStreamType(t) == "[T_p_" + std::to_string(i) + "] x tile [tb, D]");
    REQUIRE(t.shape.size() == 1);
    CHECK(t.shape[0].kind() == SymExpr::Kind::Sym);
    CHECK_FALSE(t.shape[0].isRagged());
    CHECK(t.rank() == 0);
  }
}

TEST_CASE("shape_check dyn: Partition keeps the inner b dims as the chunk", "[shape_check][dynamic]") {
  GB b = base();
  loadXHalves(b);
  partitionBySel(b, "xs", {"a", "c"}, "2", "1");
  ShapeResult r = checkShapes(b.g);
  CHECK(fmtOf(b, r, "a") == "[T_p_0, 2] x tile [tb, 16]");
  CHECK(fmtOf(b, r, "c") == "[T_p_1, 2] x tile [tb, 16]");
}

TEST_CASE("shape_check dyn: Reassemble groups hold k chunks for a top-k selector", "[shape_check][dynamic]") {
  for (std::string k : {"1", "2"}) {
    GB b = base();
    loadX(b);
    selectGen(b, "sel", "4", k, {"B/tb"});
    b.op("bs", OpKind::Broadcast, {"sel"}, {"sel_p", "sel_r"});
    b.op("p", OpKind::Partition, {"xs", "sel_p"}, {"e0", "e1", "e2", "e3"},
         {{"n", GB::scalar("4")}, {"b", GB::scalar("0")}});
    b.op("r", OpKind::Reassemble, {"e0", "e1", "e2", "e3", "sel_r"}, {"y"},
         {{"n", GB::scalar("4")}, {"b", GB::scalar("0")}});
    ShapeResult r = checkShapes(b.g);
    const StreamType& y = b.type(r, "y");
    REQUIRE(y.shape.size() == 2);
    // A k-of-n selector names exactly k outputs (top-k routing): groups of k chunks.
    CHECK(formatStreamType(y) == "[B/tb, " + k + "] x tile [tb, D]");
    CHECK_FALSE(y.shape[1].isRagged());
    CHECK(y.rank() == 1);
  }
}

TEST_CASE("shape_check dyn: EagerMerge data and selector outputs", "[shape_check][dynamic]") {
  GB b = base();
  loadX(b);
  partitionBySel(b, "xs", {"e0", "e1"});
  b.op("m", OpKind::EagerMerge, {"e0", "e1"}, {"md", "ms"}, {{"b", GB::scalar("0")}});
  ShapeResult r = checkShapes(b.g);
  CHECK(fmtOf(b, r, "md") == "[T_p_0+T_p_1] x tile [tb, D]");
  CHECK(fmtOf(b, r, "ms") == "[T_p_0+T_p_1] x selector 1-of-2");
  CHECK(b.type(r, "ms").rank() == 0);
  CHECK(b.type(r, "ms").elem.kind == ElemType::Kind::Selector);

  // Static inputs of different lengths: the total is their sum.
  GB s = base();
  loadV(s, "v1");
  load(s, "ld2", "v", {"16", "16"}, {"3", "2"}, {{"2", "0"}, {"1", "0"}}, "v2");
  s.op("m", OpKind::EagerMerge, {"v1", "v2"}, {"md", "ms"}, {{"b", GB::scalar("0")}});
  auto d = diagsOf(s.g);
  REQUIRE(d.size() == 1);  // ranks differ: 0 vs 1
  CHECK(d[0].id == "S-242");
}

TEST_CASE("shape_check dyn: Reshape with and without padding", "[shape_check][dynamic]") {
  GB b = base();
  loadV(b);
  b.op("bc", OpKind::Broadcast, {"vs"}, {"v1", "v2"});
  b.op("rp", OpKind::Reshape, {"v1"}, {"r", "is_pad"},
       {{"chunk", GB::scalar("4")}, {"b", GB::scalar("0")}, {"pad", GB::scalar("true")}});
  b.op("re", OpKind::Reshape, {"v2"}, {"q"}, {{"chunk", GB::scalar("5")}, {"b", GB::scalar("0")}});
  ShapeResult r = checkShapes(b.g);
  CHECK(fmtOf(b, r, "r") == "[3, 4] x tile [16, 16]");
  CHECK(fmtOf(b, r, "is_pad") == "[3, 4] x tile<bool> [1, 1]");
  CHECK(fmtOf(b, r, "q") == "[2, 5] x tile [16, 16]");

  // Symbolic: an outer dim that divides, and a dynamic innermost dim padded (ceil).
  GB s = base();
  load(s, "ld", "x", {"tb", "D"}, {"B/tb", "1"}, {{"1", "0"}, {"0", "0"}}, "xs");
  s.op("ro", OpKind::Reshape, {"xs"}, {"xo"}, {{"chunk", GB::scalar("2")}, {"b", GB::scalar("1")}});
  loadX(s, "x2");
  partitionBySel(s, "x2", {"e0", "e1"});
  s.op("rd", OpKind::Reshape, {"e0"}, {"eo"}, {{"chunk", GB::scalar("4")}, {"b", GB::scalar("0")}, {"pad", GB::scalar("true")}});
  s.op("pr", OpKind::Promote, {"e1"}, {"e1p"}, {{"b", GB::scalar("0")}});
  ShapeResult rs = checkShapes(s.g);
  CHECK(fmtOf(s, rs, "xo") == "[B/tb/2, 2, 1] x tile [tb, D]");
  CHECK(fmtOf(s, rs, "eo") == "[ceil(T_p_0/4), 4] x tile [tb, D]");
  CHECK(fmtOf(s, rs, "e1p") == "[T_p_1, 1] x tile [tb, D]");
}

TEST_CASE("shape_check dyn: FlatMap rows and ragged rows", "[shape_check][dynamic]") {
  GB b = base();
  loadX(b);
  b.op("bc", OpKind::Broadcast, {"xs"}, {"x1", "x2"});
  b.op("fr", OpKind::FlatMap, {"x1"}, {"rows"}, {{"fn", GB::scalar("rows")}, {"b", GB::scalar("1")}});
  // filter_rows takes the is-padding flags of each tile: a Reshape's second output, retiled.
  b.op("fr2", OpKind::FlatMap, {"x2"}, {"r2"}, {{"fn", GB::scalar("rows")}, {"b", GB::scalar("1")}});
  filterRows(b, "r2");
  ShapeResult r = checkShapes(b.g);
  CHECK(fmtOf(b, r, "rows") == "[B/tb, tb] x tile [1, D]");
  CHECK(fmtOf(b, r, "tp") == "[B/tb*tb/4] x tile<bool> [4, 1]");
  CHECK(fmtOf(b, r, "kept") == "[B/tb*tb/4, ragged(R_ff)] x tile [1, D]");
  CHECK(b.type(r, "kept").shape[1].isRagged());

  // A ragged group retiled into one tile, unpacked again: the rows are ragged.
  GB m = base();
  loadX(m);
  m.op("fr", OpKind::FlatMap, {"xs"}, {"rows"}, {{"fn", GB::scalar("rows")}, {"b", GB::scalar("1")}});
  filterRows(m, "rows");
  m.op("rt", OpKind::Accum, {"kept"}, {"t"}, {{"fn", GB::scalar("retile")}, {"b", GB::scalar("1")}});
  m.op("fm", OpKind::FlatMap, {"t"}, {"rr"}, {{"fn", GB::scalar("rows")}, {"b", GB::scalar("1")}});
  ShapeResult rm = checkShapes(m.g);
  const StreamType& rr = m.type(rm, "rr");
  CHECK(formatStreamType(rr) == "[B/tb*tb/4, ragged(R_ff)] x tile [1, D]");
  CHECK(rr.shape[1].isRagged());
  CHECK(m.type(rm, "t").elem.tile[0].isRagged());
}

TEST_CASE("shape_check dyn: Expand, Scan, Parallelize, RandomOffChipLoad/Store", "[shape_check][dynamic]") {
  GB b = base();
  loadX(b);
  partitionBySel(b, "xs", {"e0", "e1"});
  b.op("b0", OpKind::Broadcast, {"e0"}, {"e0a", "e0r"});
  load(b, "lw", "w", {"D", "H"}, {"1"}, {{"0", "0"}}, "w1");
  b.op("ex", OpKind::Expand, {"w1", "e0r"}, {"we"}, {{"b", GB::scalar("1")}});
  b.op("z", OpKind::Zip, {"e0a", "we"}, {"zz"});
  b.op("mm", OpKind::Map, {"zz"}, {"h"}, {{"fn", GB::scalar("matmul")}});
  b.op("sc", OpKind::Scan, {"h"}, {"hs"}, {{"fn", GB::scalar("add")}, {"b", GB::scalar("0")}});
  b.op("par", OpKind::Parallelize, {"e1"}, {"q0", "q1", "q2"});
  loadV(b);
  b.op("bv", OpKind::Broadcast, {"vs"}, {"va", "vb"});
  b.op("par2", OpKind::Parallelize, {"va"}, {"u0", "u1", "u2"});
  b.op("par3", OpKind::Parallelize, {"vb"}, {"t0", "t1"});
  selectGen(b, "addr", "8", "1", {"3", "2"});
  b.op("ba", OpKind::Broadcast, {"addr"}, {"addr_l", "addr_s"});
  b.op("rl", OpKind::RandomOffChipLoad, {"addr_l"}, {"wt"},
       {{"tensor", GB::scalar("w")}, {"tile", GB::list({"D", "H"})}});
  b.op("rs", OpKind::RandomOffChipStore, {"addr_s", "wt"}, {"ack"}, {{"tensor", GB::scalar("w")}});
  ShapeResult r = checkShapes(b.g);
  CHECK(fmtOf(b, r, "we") == "[T_p_0] x tile [D, H]");
  CHECK(fmtOf(b, r, "h") == "[T_p_0] x tile [tb, H]");
  CHECK(fmtOf(b, r, "hs") == "[T_p_0] x tile [tb, H]");
  CHECK(fmtOf(b, r, "q0") == "[ceil(T_p_1/3)] x tile [tb, D]");
  CHECK(fmtOf(b, r, "q2") == "[ceil((T_p_1-2)/3)] x tile [tb, D]");
  CHECK(fmtOf(b, r, "u0") == "[4] x tile [16, 16]");  // 10 round-robin over 3: 4, 3, 3
  CHECK(fmtOf(b, r, "u1") == "[3] x tile [16, 16]");
  CHECK(fmtOf(b, r, "u2") == "[3] x tile [16, 16]");
  CHECK(fmtOf(b, r, "t1") == "[5] x tile [16, 16]");
  CHECK(fmtOf(b, r, "wt") == "[3, 2] x tile [D, H]");
  CHECK(fmtOf(b, r, "ack") == "[3, 2] x tile<bool> [1, 1]");
}

// ------------------------------------------------------------------------------------------
// Errors

TEST_CASE("shape_check dyn: graphs with one error each (S-201, S-203, S-221, S-240 to S-247)", "[shape_check][dynamic]") {
  checkOneErrors(base(), {
    {"Partition b above the rank", "S-221", {"Partition 'p'", "b = 1 exceeds the rank 0", "'xs' [B/tb] x tile [tb, D]"},
     [](GB& b) {
       loadX(b);
       partitionBySel(b, "xs", {"e0", "e1"}, "1", "1");
     }, "p", "b"},
    {"Reassemble b above the rank", "S-221", {"Reassemble 'r'", "b = 3 exceeds the rank 0", "[B/tb] x tile [tb, D]"},
     [](GB& b) {
       loadX(b, "a");
       loadX(b, "c");
       selectGen(b, "sel", "2", "1", {"B/tb"});
       b.op("r", OpKind::Reassemble, {"a", "c", "sel"}, {"y"}, {{"n", GB::scalar("2")}, {"b", GB::scalar("3")}});
     }},
    {"EagerMerge b above the rank", "S-221", {"EagerMerge 'm'", "b = 2 exceeds the rank 0"},
     [](GB& b) {
       loadX(b, "a");
       loadX(b, "c");
       b.op("m", OpKind::EagerMerge, {"a", "c"}, {"md", "ms"}, {{"b", GB::scalar("2")}});
     }},
    {"Reshape innermost without pad", "S-243",
     {"Reshape 're'", "'vs' [10] x tile [16, 16]", "is not divisible by the chunk 4", "[10] would become [3, 4]"},
     [](GB& b) {
       loadV(b);
       b.op("re", OpKind::Reshape, {"vs"}, {"q"}, {{"chunk", GB::scalar("4")}, {"b", GB::scalar("0")}});
     }, "re", "chunk"},
    {"Reshape of an outer dim, dynamic", "S-243",
     {"Reshape 're'", "D_1 = T_p_0", "divisible by the chunk 4", "[T_p_0, 2] would become [ceil(T_p_0/4), 4]"},
     [](GB& b) {
       loadXHalves(b);
       partitionBySel(b, "xs", {"e0", "e1"}, "1", "1");
       b.op("re", OpKind::Reshape, {"e0"}, {"q"}, {{"chunk", GB::scalar("4")}, {"b", GB::scalar("1")}});
     }},
    {"Reshape pad on an outer split", "S-244", {"Reshape 're'", "b = 1", "[B/tb, 2] x tile [tb, 16]"},
     [](GB& b) {
       loadXHalves(b);
       b.op("re", OpKind::Reshape, {"xs"}, {"q"}, {{"chunk", GB::scalar("3")}, {"b", GB::scalar("1")}, {"pad", GB::scalar("true")}});
     }},
    {"Reshape padding output without pad", "S-201", {"pad: true"},
     [](GB& b) {
       loadV(b);
       b.op("re", OpKind::Reshape, {"vs"}, {"q", "qp"}, {{"chunk", GB::scalar("5")}, {"b", GB::scalar("0")}});
     }},
    {"Expand of a dim that is not 1", "S-245",
     {"Expand 'ex'", "D_0 = B/tb", "'xs' [B/tb] x tile [tb, D]", "is not 1", "reference shape [B/tb]"},
     [](GB& b) {
       loadX(b);
       loadX(b, "ref");
       b.op("ex", OpKind::Expand, {"xs", "ref"}, {"o"}, {{"b", GB::scalar("1")}});
     }},
    {"Expand with outer dims that differ", "S-246", {"Expand 'ex'", "[2, 1] vs [3, 4]"},
     [](GB& b) {
       load(b, "ld", "x", {"tb", "D"}, {"2", "1"}, {{"1", "0"}, {"0", "0"}}, "a");
       load(b, "ld2", "x", {"tb", "D"}, {"3", "4"}, {{"1", "0"}, {"0", "0"}}, "ref");
       b.op("ex", OpKind::Expand, {"a", "ref"}, {"o"}, {{"b", GB::scalar("1")}});
     }},
    {"Reassemble inputs of different shape", "S-242",
     {"Reassemble 'r'", "'a' [B/tb] x tile [tb, D]", "'c' [B/tb] x tile [tb, 16]"},
     [](GB& b) {
       loadX(b, "a");
       load(b, "ld", "x", {"tb", "16"}, {"B/tb"}, {{"1", "0"}}, "c");
       selectGen(b, "sel", "2", "1", {"B/tb"});
       b.op("r", OpKind::Reassemble, {"a", "c", "sel"}, {"y"}, {{"n", GB::scalar("2")}, {"b", GB::scalar("0")}});
     }},
    {"EagerMerge inputs of different shape", "S-242",
     {"EagerMerge 'm'", "[2, 2] x tile [tb, 16]", "[2, 1] x tile [tb, 16]", "chunk dims [2] vs [1] differ"},
     [](GB& b) {
       load(b, "ld", "x", {"tb", "16"}, {"2", "2"}, {{"1", "0"}, {"0", "1"}}, "a");
       load(b, "ld2", "x", {"tb", "16"}, {"2", "1"}, {{"1", "0"}, {"0", "1"}}, "c");
       b.op("m", OpKind::EagerMerge, {"a", "c"}, {"md", "ms"}, {{"b", GB::scalar("1")}});
     }},
    {"Partition over a stream that is not a selector", "S-240",
     {"Partition 'p'", "'notsel' [B/tb] x tile [tb, D]", "must carry selector elements"},
     [](GB& b) {
       loadX(b);
       loadX(b, "notsel");
       b.op("p", OpKind::Partition, {"xs", "notsel"}, {"e0", "e1"}, {{"n", GB::scalar("2")}, {"b", GB::scalar("0")}});
     }},
    {"selector over another n", "S-240", {"[B/tb] x selector 1-of-4", "n = 2"},
     [](GB& b) {
       loadX(b);
       selectGen(b, "sel", "4", "1", {"B/tb"});
       b.op("p", OpKind::Partition, {"xs", "sel"}, {"e0", "e1"}, {{"n", GB::scalar("2")}, {"b", GB::scalar("0")}});
     }},
    {"selector shape", "S-241",
     {"Partition 'p'", "'sel' [B/tb, 2] x selector 1-of-2", "'xs' [B/tb] x tile [tb, D]",
      "[B/tb, 2] vs the data's outer dims [B/tb]"},
     [](GB& b) {
       loadX(b);
       selectGen(b, "sel", "2", "1", {"B/tb", "2"});
       b.op("p", OpKind::Partition, {"xs", "sel"}, {"e0", "e1"}, {{"n", GB::scalar("2")}, {"b", GB::scalar("0")}});
     }},
    {"address stream of tiles", "S-240", {"RandomOffChipLoad 'rl'", "address stream 'xs' [B/tb] x tile [tb, D]"},
     [](GB& b) {
       loadX(b);
       b.op("rl", OpKind::RandomOffChipLoad, {"xs"}, {"wt"}, {{"tensor", GB::scalar("w")}, {"tile", GB::list({"D", "H"})}});
     }},
    {"RandomOffChipStore shapes differ", "S-247", {"RandomOffChipStore 'rs'", "[3] vs [2]"},
     [](GB& b) {
       selectGen(b, "addr", "4", "1", {"3"});
       load(b, "ld", "w", {"D", "H"}, {"2"}, {{"0", "0"}}, "d");
       b.op("rs", OpKind::RandomOffChipStore, {"addr", "d"}, {}, {{"tensor", GB::scalar("w")}});
     }},
    {"Partition n mismatch", "S-201", {"n = 3 but the operator has 2 output streams"},
     [](GB& b) {
       loadX(b);
       selectGen(b, "sel", "3", "1", {"B/tb"});
       b.op("p", OpKind::Partition, {"xs", "sel"}, {"e0", "e1"}, {{"n", GB::scalar("3")}, {"b", GB::scalar("0")}});
     }},
    {"a region's SelectGen beyond the trace's experts", "S-203", {"first + n <= of", "first = 6, n = 4, of = 8"},
     [](GB& b) {
       b.op("sg_sel", OpKind::SelectGen, {}, {"sel"},
            {{"trace", GB::scalar("trace.csv")}, {"n", GB::scalar("4")}, {"k", GB::scalar("2")},
             {"first", GB::scalar("6")}, {"of", GB::scalar("8")}, {"iter", GB::list({"B/tb"})}});
     }, "sg_sel", "first"},
    {"FlatMap of an unknown fn", "S-203", {"FlatMap(silu) 'fm'"},
     [](GB& b) {
       loadX(b);
       b.op("fm", OpKind::FlatMap, {"xs"}, {"o"}, {{"fn", GB::scalar("silu")}, {"b", GB::scalar("1")}});
     }},
  });
}

// ------------------------------------------------------------------------------------------
// YAML

TEST_CASE("shape_check dyn: MoE-shaped YAML graph loads and shape-checks", "[shape_check][dynamic]") {
  StepGraph g = loadGraph(std::string(STEPGEN_ROOT) + "/tests/data/graphs/moe_shapes.yaml");
  ShapeResult r = checkShapes(g);
  auto typeOf = [&](const std::string& s) { return formatStreamType(r.types.at(size_t(g.findStream(s)->v))); };
  CHECK(typeOf("sel") == "[B/tb] x selector 1-of-4");
  CHECK(typeOf("x0") == "[T_part_0] x tile [tb, D]");
  CHECK(typeOf("x3") == "[T_part_3] x tile [tb, D]");
  CHECK(typeOf("w0e") == "[T_part_0] x tile [D, H]");
  CHECK(typeOf("y2") == "[T_part_2] x tile [tb, H]");
  CHECK(typeOf("y") == "[B/tb, 1] x tile [tb, H]");
}

TEST_CASE("shape_check dyn: loader keys and arities of the dynamic operators", "[shape_check][dynamic][graph]") {
  const std::string path = "/tmp/stepgen_dyn_loader_test.yaml";
  auto load = [&](const std::string& ops) {
    {
      std::ofstream out(path);
      out << "stepgraph: t\nsymbols: {N: 4}\ntensors:\n  a: {shape: [N, 16], role: input}\nops:\n"
          << "  - {name: ld, op: LinearOffChipLoad, tensor: a, tile: [N, 16], iter: [1], strides: [[0, 0]], out: s}\n"
          << ops;
    }
    std::vector<Diagnostic> d;
    try {
      loadGraph(path);
    } catch (const DiagError& e) {
      d = e.diags;
    }
    std::remove(path.c_str());
    return d;
  };
  // Accepted (G-110 no longer raised), with their own keys.
  auto ok = load("  - {name: r, op: Reshape, chunk: 1, b: 0, pad: true, in: s, out: [t, p]}\n"
                 "  - {name: sc, op: Scan, fn: add, b: 0, in: t, out: u}\n"
                 "  - {name: g, op: SelectGen, trace: t.csv, n: 2, k: 1, iter: [1, 1], out: sel}\n"
                 "  - {name: pt, op: Partition, in: [u, sel], n: 2, b: 0, out: [o0, o1]}\n"
                 "  - {name: m, op: EagerMerge, in: [o0, o1], b: 0, out: [md, ms]}\n"
                 "  - {name: z, op: Zip, in: [md, p], out: zz}\n"
                 "  - {name: z2, op: Zip, in: [zz, ms], out: zz2}\n"
                 "  - {name: st, op: LinearOffChipStore, in: zz2, tensor: a, iter: [1], strides: [[0, 0]]}\n");
  CHECK(ok.empty());
  auto bad = load("  - {name: r, op: Reshape, chunk: 1, b: 0, fn: add, in: s, out: [t, p, q]}\n");
  std::set<std::string> ids;
  for (const auto& x : bad) ids.insert(x.id);
  CHECK(ids.count("G-109"));  // fn is not a Reshape key
  CHECK(ids.count("G-118"));  // 1 or 2 outputs
  bool arityMsg = false;
  for (const auto& x : bad) arityMsg = arityMsg || contains(x.message, "Reshape takes 1 or 2 output streams, got 3");
  CHECK(arityMsg);
  CHECK_FALSE(ids.count("G-110"));
}
