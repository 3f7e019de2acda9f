// checkShapes on small in-memory StepGraphs (docs/step_semantics.md#operators, docs/graph_format.md):
// type inference of the SwiGLU chain and of the shape operators, and one test per error.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "graph_builder.hpp"
#include "passes/shape_check.hpp"

using namespace stepgen;
using namespace stepgen::testing;

namespace {


/// SwiGLU problem sizes (docs/step_semantics.md#validation-point): B=64, D=256, F=512, tile 16 x 256 x 16.
void swigluSymbols(GB& b) {
  b.symbols({{"B", 64}, {"D", 256}, {"F", 512}, {"tb", 16}, {"tf", 16}});
  b.tensor("x", {"B", "D"});
  b.tensor("wg", {"D", "F"});
  b.tensor("wu", {"D", "F"});
  b.tensor("wd", {"F", "D"});
  b.tensor("out", {"B", "D"}, true);
}

/// Checks the inferred types: per expected type, the streams that must have it.
void checkTypes(const GB& b, const ShapeResult& r, const std::vector<std::pair<std::string, std::vector<std::string>>>& want) {
  for (const auto& [type, streams] : want)
    for (const std::string& s : streams) {
      INFO("stream " << s);
      CHECK(formatStreamType(b.type(r, s)) == type);
    }
}

/// The SwiGLU layer `out = (silu(x Wg) * (x Wu)) Wd`, ops deliberately listed consumers first.
GB swiglu() {
  GB b;
  swigluSymbols(b);
  b.op("store", OpKind::LinearOffChipStore, {"o"}, {},
       {{"tensor", GB::scalar("out")}, {"iter", GB::list({"B/tb"})}, {"strides", GB::pairs({{"1", "0"}})}});
  b.op("acc", OpKind::Accum, {"p"}, {"o"}, {{"fn", GB::scalar("add")}, {"b", GB::scalar("1")}});
  b.op("md", OpKind::Map, {"zd"}, {"p"}, {{"fn", GB::scalar("matmul")}});
  b.op("zd", OpKind::Zip, {"h", "wds"}, {"zd"});
  b.op("mh", OpKind::Map, {"zh"}, {"h"}, {{"fn", GB::scalar("mul")}});
  b.op("zh", OpKind::Zip, {"sg", "u"}, {"zh"});
  b.op("silu", OpKind::Map, {"g"}, {"sg"}, {{"fn", GB::scalar("silu")}});
  b.op("mg", OpKind::Map, {"zg"}, {"g"}, {{"fn", GB::scalar("matmul")}});
  b.op("mu", OpKind::Map, {"zu"}, {"u"}, {{"fn", GB::scalar("matmul")}});
  b.op("zg", OpKind::Zip, {"xa", "wgs"}, {"zg"});
  b.op("zu", OpKind::Zip, {"xb", "wus"}, {"zu"});
  b.op("bx", OpKind::Broadcast, {"xs"}, {"xa", "xb"});
  load(b, "load_x", "x", {"tb", "D"}, {"B/tb", "F/tf"}, {{"1", "0"}, {"0", "0"}}, "xs");
  load(b, "load_wg", "wg", {"D", "tf"}, {"B/tb", "F/tf"}, {{"0", "0"}, {"0", "1"}}, "wgs");
  load(b, "load_wu", "wu", {"D", "tf"}, {"B/tb", "F/tf"}, {{"0", "0"}, {"0", "1"}}, "wus");
  load(b, "load_wd", "wd", {"tf", "D"}, {"B/tb", "F/tf"}, {{"0", "0"}, {"1", "0"}}, "wds");
  return b;
}

}  // namespace

// ------------------------------------------------------------------------------------------
// Positive

TEST_CASE("shape_check: SwiGLU chain types, ops in any order", "[shape_check]") {
  GB b = swiglu();
  b.declare("xs", {"B/tb", "F/tf"}, {"tb", "D"});
  b.declare("g", {"4", "32"}, {"16", "16"});  // numeric, equal under the symbol values
  ShapeResult r = checkShapes(b.g);
  REQUIRE(r.types.size() == b.g.streams.size());
  checkTypes(b, r, {{"[B/tb, F/tf] x tile [tb, D]", {"xs", "xa", "p"}},
                    {"[B/tb, F/tf] x tile [D, tf]", {"wgs"}},
                    {"[B/tb, F/tf] x (tile [tb, D], tile [D, tf])", {"zg"}},
                    {"[B/tb, F/tf] x tile [tb, tf]", {"g", "sg", "h"}},
                    {"[B/tb, F/tf] x tile [tf, D]", {"wds"}},
                    {"[B/tb] x tile [tb, D]", {"o"}}});
  CHECK(b.type(r, "o").rank() == 0);
  CHECK(b.type(r, "p").rank() == 1);
  CHECK(b.type(r, "zg").elem.kind == ElemType::Kind::Tuple);
}

TEST_CASE("shape_check: shape operators", "[shape_check]") {
  GB b;
  b.symbols({{"B", 64}, {"D", 256}, {"tb", 16}});
  b.tensor("x", {"B", "D"});
  load(b, "ld", "x", {"tb", "D"}, {"1", "B/tb", "2"}, {{"0", "0"}, {"1", "0"}, {"0", "0"}}, "a");  // [1, B/tb, 2]
  b.op("bc", OpKind::Broadcast, {"a"}, {"a1", "a2", "a3", "a4", "a5"});
  b.op("pr0", OpKind::Promote, {"a1"}, {"p0"}, {{"b", GB::scalar("0")}});
  b.op("pr2", OpKind::Promote, {"a2"}, {"p2"}, {{"b", GB::scalar("2")}});
  b.op("fl", OpKind::Flatten, {"a3"}, {"f"}, {{"lo", GB::scalar("0")}, {"hi", GB::scalar("1")}});
  b.op("rp", OpKind::RepeatStatic, {"a4"}, {"r"}, {{"n", GB::scalar("3")}});
  b.op("bz", OpKind::Bufferize, {"a5"}, {"ref"}, {{"b", GB::scalar("1")}});
  b.op("sf", OpKind::Streamify, {"ref"}, {"s"}, {{"repeat", GB::scalar("4")}});
  b.op("rt", OpKind::Accum, {"s"}, {"t"}, {{"fn", GB::scalar("retile")}, {"b", GB::scalar("2")}});
  ShapeResult r = checkShapes(b.g);
  checkTypes(b, r, {{"[1, B/tb, 2] x tile [tb, D]", {"a"}},
                    {"[1, B/tb, 2, 1] x tile [tb, D]", {"p0"}},
                    {"[1, 1, B/tb, 2] x tile [tb, D]", {"p2"}},
                    {"[1, B/tb*2] x tile [tb, D]", {"f"}},
                    {"[1, B/tb, 2, 3] x tile [tb, D]", {"r"}},
                    {"[1, B/tb] x ref [2] of tile [tb, D]", {"ref"}},
                    {"[1, B/tb, 4, 2] x tile [tb, D]", {"s"}},
                    {"[1, B/tb] x tile [tb*4*2, D]", {"t"}}});
}

TEST_CASE("shape_check: formatStreamType and evalDim", "[shape_check]") {
  StreamType t;
  t.shape = {SymExpr::parse("B/tb"), SymExpr::parse("F/tf")};
  t.elem.tile = {SymExpr::parse("tb"), SymExpr::parse("D")};
  CHECK(formatStreamType(t) == "[B/tb, F/tf] x tile [tb, D]");
  t.elem.dtype = "bf16";
  CHECK(formatStreamType(t) == "[B/tb, F/tf] x tile<bf16> [tb, D]");

  SymEnv env{{"B", 64}, {"tb", 16}};
  CHECK(evalDim(SymExpr::parse("B/tb"), env) == 4);
  try {
    evalDim(SymExpr::parse("B/F"), env);
    FAIL("no throw");
  } catch (const DiagError& e) {
    REQUIRE(e.diags.size() == 1);
    CHECK(e.diags[0].id == "S-250");
    CHECK(contains(e.diags[0].message, "B/F"));
    CHECK(contains(e.diags[0].message, "F"));
  }
  CHECK_THROWS_AS(evalDim(SymExpr::parse("ragged(r)"), env), DiagError);
  CHECK_THROWS_AS(evalDim(SymExpr::parse("B/3"), env), DiagError);  // inexact
}

// ------------------------------------------------------------------------------------------
// Errors

TEST_CASE("shape_check: graphs with one error each (S-210 to S-213, S-231)", "[shape_check]") {
  GB base;
  swigluSymbols(base);
  checkOneErrors(base, {
    {"Zip inputs of different shape", "S-210",
     {"Zip 'zg'", "'xs'", "'wgs'", "[B/tb, F/tf] x tile [tb, D]", "[B/tb] x tile [D, tf]"},
     [](GB& b) {
       load(b, "load_x", "x", {"tb", "D"}, {"B/tb", "F/tf"}, {{"1", "0"}, {"0", "0"}}, "xs");
       load(b, "load_wg", "wg", {"D", "tf"}, {"B/tb"}, {{"0", "1"}}, "wgs");
       b.op("zg", OpKind::Zip, {"xs", "wgs"}, {"zg"});
     }, "zg", "in"},
    {"Map over two inputs of different shape", "S-210",
     {"Map(add) 'm'", "[B/tb, 2] x tile [tb, D]", "[B/tb, 3] x tile [tb, D]"},
     [](GB& b) {
       load(b, "l1", "x", {"tb", "D"}, {"B/tb", "2"}, {{"1", "0"}, {"0", "0"}}, "a");
       load(b, "l2", "x", {"tb", "D"}, {"B/tb", "3"}, {{"1", "0"}, {"0", "0"}}, "c");
       b.op("m", OpKind::Map, {"a", "c"}, {"o"}, {{"fn", GB::scalar("add")}});
     }},
    {"matmul inner dims differ", "S-212", {"Map(matmul) 'mg'", "[tb, D]", "[tb, tf]", "K = D", "rows = tb"},
     [](GB& b) {
       load(b, "load_x", "x", {"tb", "D"}, {"B/tb"}, {{"1", "0"}}, "xs");
       load(b, "load_wg", "wg", {"tb", "tf"}, {"B/tb"}, {{"1", "0"}}, "wgs");  // rows tb, not D
       b.op("zg", OpKind::Zip, {"xs", "wgs"}, {"zg"});
       b.op("mg", OpKind::Map, {"zg"}, {"g"}, {{"fn", GB::scalar("matmul")}});
     }, "mg", "in"},
    {"mul of different tiles", "S-213", {"Map(mul) 'mm'", "tile [tb, D]", "tile [tb, tf]"},
     [](GB& b) {
       load(b, "l1", "x", {"tb", "D"}, {"B/tb"}, {{"1", "0"}}, "a");
       load(b, "l2", "wg", {"tb", "tf"}, {"B/tb"}, {{"1", "0"}}, "c");
       b.op("z", OpKind::Zip, {"a", "c"}, {"z"});
       b.op("mm", OpKind::Map, {"z"}, {"o"}, {{"fn", GB::scalar("mul")}});
     }},
    {"silu of a tuple", "S-211", {"Map(silu) 's'"},
     [](GB& b) {
       load(b, "l1", "x", {"tb", "D"}, {"B/tb"}, {{"1", "0"}}, "a");
       load(b, "l2", "x", {"tb", "D"}, {"B/tb"}, {{"1", "0"}}, "c");
       b.op("z", OpKind::Zip, {"a", "c"}, {"z"});
       b.op("s", OpKind::Map, {"z"}, {"o"}, {{"fn", GB::scalar("silu")}});
     }},
    {"load walk leaves the tensor", "S-231",
     {"LinearOffChipLoad 'load_x'", "'x' [B, D]", "tile (6, 0)", "4 x 1 tiles of [tb, D]"},
     [](GB& b) {
       load(b, "load_x", "x", {"tb", "D"}, {"B/tb", "F/tf"}, {{"2", "0"}, {"0", "0"}}, "xs");  // rows 0,2,4,6 of 4
       b.op("bc", OpKind::Broadcast, {"xs"}, {"y"});
     }, "load_x", "strides"},
    {"a walk from an origin leaves the tensor", "S-231",
     {"LinearOffChipLoad 'load_x'", "from tile (1, 0)", "tile (4, 0)", "4 x 1 tiles of [tb, D]"},
     [](GB& b) {  // rows 1 .. 4 of 4: the origin moves the whole walk down one tile row
       b.op("load_x", OpKind::LinearOffChipLoad, {}, {"xs"},
            {{"tensor", GB::scalar("x")}, {"tile", GB::list({"tb", "D"})}, {"iter", GB::list({"B/tb"})},
             {"strides", GB::pairs({{"1", "0"}})}, {"origin", GB::list({"1", "0"})}});
       b.op("bc", OpKind::Broadcast, {"xs"}, {"y"});
     }, "load_x", "strides"},
    {"store walk leaves the tensor", "S-231", {"LinearOffChipStore 'st'", "tile (3, 1)"},
     [](GB& b) {
       load(b, "l1", "x", {"tb", "D"}, {"B/tb", "2"}, {{"1", "0"}, {"0", "0"}}, "a");
       b.op("st", OpKind::LinearOffChipStore, {"a"}, {},
            {{"tensor", GB::scalar("out")}, {"iter", GB::list({"B/tb", "2"})}, {"strides", GB::pairs({{"1", "0"}, {"0", "1"}})}});
     }},
  });
}

TEST_CASE("shape_check: declared type differs from the inferred one (S-220)", "[shape_check]") {
  GB b = swiglu();
  b.declare("xs", {"B/tb", "F/tf"}, {"tb", "F"});
  b.declare("g", {"5", "32"}, {"16", "16"});
  auto d = diagsOf(b.g);
  REQUIRE(d.size() == 2);
  for (const auto& x : d) CHECK(x.id == "S-220");
  const Diagnostic& xs = d[0].message.find("'xs'") != std::string::npos ? d[0] : d[1];
  CHECK(contains(xs.message, "[B/tb, F/tf] x tile [tb, F]"));
  CHECK(contains(xs.message, "[B/tb, F/tf] x tile [tb, D]"));
  CHECK(contains(xs.message, "LinearOffChipLoad 'load_x'"));
  CHECK(sameLoc(xs.loc, b.g.streams[size_t(b.stream("xs").v)].loc));
  REQUIRE(xs.notes.size() == 1);
  CHECK(sameLoc(xs.notes[0].loc, b.opNamed("load_x").loc));
}

TEST_CASE("shape_check: rank parameters out of range (S-221)", "[shape_check]") {
  GB b;
  swigluSymbols(b);
  load(b, "ld", "x", {"tb", "D"}, {"B/tb", "2"}, {{"1", "0"}, {"0", "0"}}, "a");  // rank 1
  b.op("bc", OpKind::Broadcast, {"a"}, {"a1", "a2", "a3", "a4", "a5"});
  b.op("acc", OpKind::Accum, {"a1"}, {"o1"}, {{"fn", GB::scalar("add")}, {"b", GB::scalar("3")}});
  b.op("neg", OpKind::Bufferize, {"a2"}, {"o2"}, {{"b", GB::scalar("-1")}});
  b.op("fl", OpKind::Flatten, {"a3"}, {"o3"}, {{"lo", GB::scalar("0")}, {"hi", GB::scalar("2")}});
  b.op("pr", OpKind::Promote, {"a4"}, {"o4"}, {{"b", GB::scalar("3")}});  // rank + 1 = 2 is the outermost
  b.op("fl2", OpKind::Flatten, {"a5"}, {"o5"}, {{"lo", GB::scalar("1")}, {"hi", GB::scalar("0")}});
  auto d = diagsOf(b.g);
  REQUIRE(d.size() == 5);
  for (const auto& x : d) CHECK(x.id == "S-221");
  CHECK(contains(d[0].message, "Accum(add) 'acc'"));
  CHECK(contains(d[0].message, "b = 3 exceeds the rank 1"));
  CHECK(contains(d[0].message, "[B/tb, 2] x tile [tb, D]"));
  CHECK(sameLoc(d[0].loc, b.attrLoc("acc", "b")));
  CHECK(contains(d[1].message, "Bufferize 'neg'"));
  CHECK(contains(d[1].message, "negative"));
  CHECK(contains(d[2].message, "Flatten 'fl'"));
  CHECK(contains(d[2].message, "hi = 2"));
  CHECK(sameLoc(d[2].loc, b.attrLoc("fl", "hi")));
  CHECK(contains(d[3].message, "Promote 'pr'"));
  CHECK(contains(d[4].message, "lo = 1 is above hi = 0"));
}

TEST_CASE("shape_check: tensor not divisible by the tile (S-230)", "[shape_check]") {
  // Tensor x [rows, D] loaded in tiles [tileRows, D] along [iter] into 'xs', which is consumed.
  auto graph = [](const SymEnv& syms, const std::string& rows, const std::string& tileRows, const std::string& iter) {
    GB b;
    b.symbols(syms);
    b.tensor("x", {rows, "D"});
    load(b, "load_x", "x", {tileRows, "D"}, {iter}, {{"1", "0"}}, "xs");
    b.op("bc", OpKind::Broadcast, {"xs"}, {"y"});
    return b;
  };
  SECTION("bound symbols") {
    GB b = graph({{"B", 72}, {"D", 256}, {"tb", 16}}, "B", "tb", "4");
    Diagnostic d = onlyError(b.g, "S-230");
    checkMessage(d, {"LinearOffChipLoad 'load_x'", "[B, D]", "[tb, D]", "72 % 16"});
    CHECK(sameLoc(d.loc, b.attrLoc("load_x", "tile")));
  }
  SECTION("unbound symbol: Z3 finds a counterexample") {
    GB b = graph({{"D", 256}}, "N", "16", "N/16");
    checkMessage(onlyError(b.g, "S-230"), {"[N, D]", "is not divisible by tile [16, D]"});
  }
  SECTION("unbound but provably divisible") { CHECK(diagsOf(graph({{"D", 256}}, "16*N", "16", "N").g).empty()); }
}

TEST_CASE("shape_check: store input does not match iter / tile (S-233, S-234)", "[shape_check]") {
  GB b;
  swigluSymbols(b);
  load(b, "l1", "x", {"tb", "D"}, {"B/tb"}, {{"1", "0"}}, "a");
  load(b, "l2", "x", {"tb", "D"}, {"B/tb"}, {{"1", "0"}}, "c");
  b.op("st1", OpKind::LinearOffChipStore, {"a"}, {},
       {{"tensor", GB::scalar("out")}, {"iter", GB::list({"B/tb", "2"})}, {"strides", GB::pairs({{"1", "0"}, {"0", "0"}})}});
  b.op("st2", OpKind::LinearOffChipStore, {"c"}, {},
       {{"tensor", GB::scalar("out")}, {"tile", GB::list({"tb", "tf"})}, {"iter", GB::list({"B/tb"})},
        {"strides", GB::pairs({{"1", "0"}})}});
  auto d = diagsOf(b.g);
  REQUIRE(d.size() == 2);
  CHECK(d[0].id == "S-233");
  CHECK(contains(d[0].message, "LinearOffChipStore 'st1'"));
  CHECK(contains(d[0].message, "[B/tb] x tile [tb, D]"));
  CHECK(contains(d[0].message, "[B/tb, 2]"));
  CHECK(sameLoc(d[0].loc, b.attrLoc("st1", "iter")));
  CHECK(d[1].id == "S-234");
  CHECK(contains(d[1].message, "LinearOffChipStore 'st2'"));
  CHECK(contains(d[1].message, "[tb, D]"));
  CHECK(contains(d[1].message, "[tb, tf]"));
}

TEST_CASE("shape_check: missing and malformed attributes", "[shape_check]") {
  GB b;
  swigluSymbols(b);
  load(b, "ld", "x", {"tb", "D"}, {"B/tb"}, {{"1", "0"}}, "a");
  b.op("bc", OpKind::Broadcast, {"a"}, {"a1", "a2", "a3", "a4"});
  b.op("nob", OpKind::Accum, {"a1"}, {"o1"}, {{"fn", GB::scalar("add")}});
  b.op("badb", OpKind::Bufferize, {"a2"}, {"o2"}, {{"b", GB::scalar("1+")}});
  b.op("badfn", OpKind::Map, {"a3"}, {"o3"}, {{"fn", GB::scalar("gelu")}});
  b.op("symb", OpKind::Promote, {"a4"}, {"o4"}, {{"b", GB::scalar("Q")}});
  load(b, "badtensor", "nope", {"tb", "D"}, {"B/tb"}, {{"1", "0"}}, "z1");
  load(b, "badstrides", "x", {"tb", "D"}, {"B/tb", "2"}, {{"1", "0"}}, "z2");
  b.op("notile", OpKind::LinearOffChipLoad, {}, {"z3"},
       {{"tensor", GB::scalar("x")}, {"tile", GB::list({"tb"})}, {"iter", GB::list({"1"})}, {"strides", GB::pairs({{"0", "0"}})}});
  b.op("bz", OpKind::Broadcast, {"z1", "z2", "z3"}, {"zz"});  // wrong arity
  auto d = diagsOf(b.g);
  // Per op, the diagnostic that names it and the id it must have.
  const std::vector<std::pair<std::string, std::string>> want{
      {"nob", "S-202"},       {"badb", "S-203"},       {"badfn", "S-203"},  {"symb", "S-203"},
      {"badtensor", "S-204"}, {"badstrides", "S-232"}, {"notile", "S-203"}, {"bz", "S-201"}};
  std::map<std::string, const Diagnostic*> byOp;
  for (const auto& x : d)
    for (const auto& [n, id] : want)
      if (contains(x.message, "'" + n + "'")) byOp[n] = &x;
  for (const auto& [n, id] : want) {
    INFO("op " << n);
    CHECK(byOp.count(n));
    if (byOp.count(n)) CHECK(byOp[n]->id == id);
  }
  REQUIRE(byOp.size() == want.size());  // the checks below read byOp
  CHECK(contains(byOp["nob"]->message, "missing attribute 'b'"));
  CHECK(sameLoc(byOp["nob"]->loc, b.opNamed("nob").loc));
  CHECK(sameLoc(byOp["badb"]->loc, b.attrLoc("badb", "b")));
  CHECK(contains(byOp["badfn"]->message, "gelu"));
  CHECK(d.size() == 8);
}

TEST_CASE("shape_check: dependency cycle (S-205)", "[shape_check]") {
  GB b;
  swigluSymbols(b);
  load(b, "ld", "x", {"tb", "D"}, {"B/tb"}, {{"1", "0"}}, "a");
  b.op("z", OpKind::Zip, {"a", "loop"}, {"za"});
  b.op("m1", OpKind::Map, {"za"}, {"m"}, {{"fn", GB::scalar("add")}});
  b.op("bc", OpKind::Broadcast, {"m"}, {"loop", "outm"});
  b.op("s", OpKind::Map, {"outm"}, {"fin"}, {{"fn", GB::scalar("silu")}});  // downstream of the cycle
  Diagnostic d = onlyError(b.g, "S-205");
  CHECK(contains(d.message, "Zip 'z'"));
  CHECK(contains(d.message, "Map(add) 'm1'"));
  CHECK(contains(d.message, "Broadcast 'bc'"));
  CHECK(contains(d.message, "Zip 'z' -('za')-> Map(add) 'm1'"));
  CHECK(contains(d.message, "Broadcast 'bc' -('loop')-> Zip 'z'"));
  CHECK_FALSE(contains(d.message, "'s'"));
  CHECK(d.notes.size() == 3);
}

TEST_CASE("shape_check: stream without producer, Partition of wrong arity", "[shape_check]") {
  GB b;
  swigluSymbols(b);
  b.op("m", OpKind::Map, {"ghost"}, {"o"}, {{"fn", GB::scalar("silu")}});
  b.op("p", OpKind::Partition, {"o"}, {"q"});
  auto d = diagsOf(b.g);
  REQUIRE(d.size() == 2);
  CHECK(d[0].id == "S-206");
  CHECK(contains(d[0].message, "'ghost'"));
  CHECK(contains(d[0].message, "Map(silu) 'm'"));
  CHECK(d[1].id == "S-201");  // Partition is shape-checked since issue 3: [data, selector]
  CHECK(contains(d[1].message, "Partition 'p'"));
}

TEST_CASE("shape_check: all errors of the pass in one DiagError", "[shape_check]") {
  GB b = swiglu();
  // Two independent mistakes: a wrong declared type and an Accum rank above the stream rank.
  b.declare("wds", {"B/tb", "F/tf"}, {"D", "tf"});
  b.g.ops[1].attrs["b"].scalar = "5";  // acc
  try {
    checkShapes(b.g);
    FAIL("no throw");
  } catch (const DiagError& e) {
    REQUIRE(e.diags.size() == 2);
    std::set<std::string> ids{e.diags[0].id, e.diags[1].id};
    CHECK(ids == std::set<std::string>{"S-220", "S-221"});
    CHECK(contains(e.what(), "error[S-220]"));
    CHECK(contains(e.what(), "error[S-221]"));
  }
}
