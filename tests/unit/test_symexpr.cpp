// SymExpr: parser, simplification, printing, evaluation, and the Z3-backed provablyEqual /
// provablyDivides (docs/step_semantics.md#symbolic-shapes).
#include <catch2/catch.hpp>

#include <stdexcept>

#include "ir/symexpr.hpp"

using namespace stepgen;

namespace {
SymExpr P(const std::string& s) { return SymExpr::parse(s); }
std::string canon(const std::string& s) { return SymExpr::parse(s).toString(); }
}  // namespace

TEST_CASE("symexpr: parse atoms and precedence", "[symexpr]") {
  CHECK(P("42").kind() == SymExpr::Kind::Const);
  CHECK(P("42").constValue() == 42);
  CHECK(P("T_e").kind() == SymExpr::Kind::Sym);
  CHECK(P("T_e").name() == "T_e");
  CHECK(P("_x1").name() == "_x1");

  SymExpr e = P("2*D+1");
  REQUIRE(e.kind() == SymExpr::Kind::Add);
  CHECK(e.args()[0].kind() == SymExpr::Kind::Mul);
  CHECK(e.toString() == "2*D+1");

  CHECK(P("B/tb").kind() == SymExpr::Kind::Div);
  CHECK(P("a - b - c").toString() == "a-b-c");
  CHECK(P("a-(b-c)").toString() == "a-(b-c)");
  CHECK(P("(a+b)*c").toString() == "(a+b)*c");
  CHECK(P("a*(b/c)").toString() == "a*(b/c)");
  CHECK(P("a*b/c").toString() == "a*b/c");
  CHECK(P("  B / tb ").toString() == "B/tb");
}

TEST_CASE("symexpr: ceil(a/b)", "[symexpr]") {
  SymExpr c = P("ceil(T_e/16)");
  REQUIRE(c.kind() == SymExpr::Kind::CeilDiv);
  CHECK(c.args()[0].name() == "T_e");
  CHECK(c.args()[1].constValue() == 16);
  CHECK(c.toString() == "ceil(T_e/16)");
  CHECK(P("ceil((T+1)/tb)").toString() == "ceil((T+1)/tb)");
  CHECK(P("ceil((a/b))").kind() == SymExpr::Kind::CeilDiv);
  CHECK(P("ceil(7/2)").constValue() == 4);   // folded
  CHECK(P("ceil(8/2)").constValue() == 4);
  CHECK(P("ceil(T/16)*16").toString() == "ceil(T/16)*16");
  CHECK_THROWS_AS(P("ceil(T)"), std::invalid_argument);  // ceil needs a division
}

TEST_CASE("symexpr: constant folding and identities", "[symexpr]") {
  CHECK(canon("2*3") == "6");
  CHECK(canon("2*3+4") == "10");
  CHECK(canon("x*1") == "x");
  CHECK(canon("1*x") == "x");
  CHECK(canon("x+0") == "x");
  CHECK(canon("0+x") == "x");
  CHECK(canon("x-0") == "x");
  CHECK(canon("x/1") == "x");
  CHECK(canon("x*0") == "0");
  CHECK(canon("12/4") == "3");
  CHECK(canon("7/2") == "7/2");  // inexact: kept, evaluates to nothing
  CHECK(canon("-5") == "-5");
  CHECK(canon("x*-2") == "x*(-2)");
  CHECK(canon("(2+2)*B") == "4*B");
  CHECK((SymExpr::constant(2) * SymExpr::symbol("N")).toString() == "2*N");
  CHECK(SymExpr().toString() == "0");
}

TEST_CASE("symexpr: parse(toString()) round trip is structural", "[symexpr]") {
  for (const char* s : {"B/tb", "ceil(T_e/16)", "2*D+1", "a-(b-c)", "(a+b)*(c-d)", "a/(b*c)", "x*(-3)",
                        "ceil((B+tb)/(2*tb))*tb", "F/tf*(B/tb)", "ragged(tokens)"}) {
    SymExpr e = P(s);
    CHECK(P(e.toString()).toString() == e.toString());
    CHECK(provablyEqual(P(e.toString()), e, {}) == Proof::Yes);
  }
}

TEST_CASE("symexpr: parse errors name the position", "[symexpr]") {
  for (const char* s : {"", "B/", "(B", "B)", "B $ 2", "2x", "ceil(", "99999999999999999999"}) {
    INFO(s);
    CHECK_THROWS_AS(P(s), std::invalid_argument);
  }
  try {
    P("B + $");
    FAIL("no throw");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("position 5") != std::string::npos);
  }
}

TEST_CASE("symexpr: symbols, ragged, evaluate", "[symexpr]") {
  CHECK(P("B/tb + B*F - tb").symbols() == std::vector<std::string>{"B", "F", "tb"});
  CHECK(P("ragged(r)+1").isRagged());
  CHECK_FALSE(P("B+1").isRagged());
  CHECK(P("ragged(r)").symbols().empty());

  SymEnv env{{"B", 64}, {"tb", 16}, {"T", 17}};
  CHECK(P("B/tb").evaluate(env) == 4);
  CHECK(P("ceil(T/16)").evaluate(env) == 2);
  CHECK(P("ceil(B/16)").evaluate(env) == 4);
  CHECK(P("T/16").evaluate(env) == std::nullopt);  // inexact
  CHECK(P("B/F").evaluate(env) == std::nullopt);   // unbound
  CHECK(P("ragged(r)").evaluate(env) == std::nullopt);
  CHECK(P("B/(tb-16)").evaluate(env) == std::nullopt);  // division by zero
  CHECK(P("2*B-tb+1").evaluate(env) == 113);
}

TEST_CASE("symexpr: provablyEqual with bound symbols is arithmetic", "[symexpr][z3]") {
  SymConstraints c;
  c.values = {{"B", 64}, {"tb", 16}};
  CHECK(provablyEqual(P("4"), P("B/tb"), c) == Proof::Yes);
  CHECK(provablyEqual(P("5"), P("B/tb"), c) == Proof::No);
  CHECK(provablyEqual(P("B/tb"), P("B/tb"), {}) == Proof::Yes);  // structural, no values needed
}

TEST_CASE("symexpr: provablyEqual with unbound symbols uses Z3", "[symexpr][z3]") {
  SymConstraints none;
  CHECK(provablyEqual(P("(2*N)/2"), P("N"), none) == Proof::Yes);
  CHECK(provablyEqual(P("B/tb*tb"), P("B"), none) == Proof::Yes);
  CHECK(provablyEqual(P("N/2+N/2"), P("N"), none) == Proof::Yes);
  CHECK(provablyEqual(P("a+b"), P("b+a"), none) == Proof::Yes);
  CHECK(provablyEqual(P("ceil((16*T)/16)"), P("T"), none) == Proof::Yes);
  // ceil(T/16)*16 >= T, equal only when 16 | T: T = 1 is a counterexample.
  CHECK(provablyEqual(P("ceil(T/16)*16"), P("T"), none) == Proof::No);
  CHECK(provablyEqual(P("N"), P("N+1"), none) == Proof::No);
  CHECK(provablyEqual(P("N*M"), P("N"), none) == Proof::No);
  // Partially bound: B bound, T free.
  SymConstraints some;
  some.values = {{"B", 64}};
  CHECK(provablyEqual(P("B/16*T"), P("4*T"), some) == Proof::Yes);
  CHECK(provablyEqual(P("B/16*T"), P("5*T"), some) == Proof::No);  // T = 1
  // Non-linear: T*T == T only for T in {0, 1}; T = 2 is a counterexample.
  SymConstraints lb;
  lb.lower = {{"T", 1}};
  CHECK(provablyEqual(P("T*T"), P("T"), lb) == Proof::No);
  // Lower bounds matter: ceil(T/(T+1)) is 1 for T >= 1 but 0 for T = 0 (default bound 0).
  CHECK(provablyEqual(P("ceil(T/(T+1))"), P("1"), lb) == Proof::Yes);
  CHECK(provablyEqual(P("ceil(T/(T+1))"), P("1"), none) == Proof::No);
}

TEST_CASE("symexpr: ragged is never provably equal unless identical", "[symexpr][z3]") {
  CHECK(provablyEqual(P("ragged(r)"), P("ragged(r)"), {}) == Proof::Yes);
  CHECK(provablyEqual(P("ragged(r)+1"), P("ragged(r)+1"), {}) == Proof::Yes);
  CHECK(provablyEqual(P("ragged(r)"), P("ragged(s)"), {}) == Proof::Unknown);
  CHECK(provablyEqual(P("ragged(r)"), P("4"), {}) == Proof::Unknown);
  CHECK(provablyEqual(P("1+ragged(r)"), P("ragged(r)+1"), {}) == Proof::Unknown);
}

TEST_CASE("symexpr: provablyDivides", "[symexpr][z3]") {
  SymConstraints none;
  CHECK(provablyDivides(P("16"), P("ceil(T/16)*16"), none) == Proof::Yes);
  CHECK(provablyDivides(P("4"), P("N"), none) == Proof::No);     // N = 1
  CHECK(provablyDivides(P("4"), P("N/4"), none) == Proof::No);   // N = 4
  CHECK(provablyDivides(P("2"), P("2*N+4"), none) == Proof::Yes);
  CHECK(provablyDivides(P("2"), P("2*N+1"), none) == Proof::No);
  CHECK(provablyDivides(P("tb"), P("tb*K"), none) == Proof::Yes);
  CHECK(provablyDivides(P("tb"), P("B/tb*tb"), none) == Proof::Yes);
  CHECK(provablyDivides(P("1"), P("anything"), none) == Proof::Yes);
  CHECK(provablyDivides(P("tb"), P("B"), none) == Proof::No);

  SymConstraints c;
  c.values = {{"B", 64}, {"tb", 16}, {"D", 256}};
  CHECK(provablyDivides(P("tb"), P("B"), c) == Proof::Yes);
  CHECK(provablyDivides(P("tb"), P("B+1"), c) == Proof::No);
  CHECK(provablyDivides(P("D"), P("D"), c) == Proof::Yes);
  c.values["B"] = 65;
  CHECK(provablyDivides(P("tb"), P("B"), c) == Proof::No);
  CHECK(provablyDivides(P("4"), P("ragged(r)"), c) == Proof::Unknown);
}
