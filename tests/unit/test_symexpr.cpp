// SymExpr: parser, simplification, printing, evaluation, and the Z3-backed provablyEqual /
// provablyDivides (docs/step_semantics.md#symbolic-shapes).
#include <catch2/catch.hpp>

#include <stdexcept>
#include <utility>
#include <vector>

#include "ir/symexpr.hpp"

using namespace stepgen;

namespace {
SymExpr P(const std::string& s) { return SymExpr::parse(s); }
std::string canon(const std::string& s) { return SymExpr::parse(s).toString(); }

/// {a, b, expected}: provablyEqual(a, b) or provablyDivides(a, b), a and b parsed.
struct ProofRow {
  const char* a;
  const char* b;
  Proof want;
};
void checkEqual(const std::vector<ProofRow>& rows, const SymConstraints& c) {
  for (const ProofRow& r : rows) {
    INFO(r.a << " == " << r.b);
    CHECK(provablyEqual(P(r.a), P(r.b), c) == r.want);
  }
}
void checkDivides(const std::vector<ProofRow>& rows, const SymConstraints& c) {
  for (const ProofRow& r : rows) {
    INFO(r.a << " divides " << r.b);
    CHECK(provablyDivides(P(r.a), P(r.b), c) == r.want);
  }
}
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
  const std::pair<const char*, const char*> rows[] = {
      {"2*3", "6"},   {"2*3+4", "10"},
      {"x*1", "x"},   {"1*x", "x"},
      {"x+0", "x"},   {"0+x", "x"},
      {"x-0", "x"},   {"x/1", "x"},
      {"x*0", "0"},   {"12/4", "3"},
      {"7/2", "7/2"},  // inexact: kept, evaluates to nothing
      {"-5", "-5"},   {"x*-2", "x*(-2)"},
      {"(2+2)*B", "4*B"}};
  for (const auto& [in, want] : rows) {
    INFO(in);
    CHECK(canon(in) == want);
  }
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
  checkEqual({{"(2*N)/2", "N", Proof::Yes}, {"B/tb*tb", "B", Proof::Yes}, {"N/2+N/2", "N", Proof::Yes},
              {"a+b", "b+a", Proof::Yes}, {"ceil((16*T)/16)", "T", Proof::Yes}},
             none);
  // ceil(T/16)*16 >= T, equal only when 16 | T: T = 1 is a counterexample.
  checkEqual({{"ceil(T/16)*16", "T", Proof::No}, {"N", "N+1", Proof::No}, {"N*M", "N", Proof::No}}, none);
  // Partially bound: B bound, T free.
  SymConstraints some;
  some.values = {{"B", 64}};
  checkEqual({{"B/16*T", "4*T", Proof::Yes}, {"B/16*T", "5*T", Proof::No}}, some);  // No: T = 1
  // Non-linear: T*T == T only for T in {0, 1}; T = 2 is a counterexample.
  SymConstraints lb;
  lb.lower = {{"T", 1}};
  CHECK(provablyEqual(P("T*T"), P("T"), lb) == Proof::No);
  // Lower bounds matter: ceil(T/(T+1)) is 1 for T >= 1 but 0 for T = 0 (default bound 0).
  CHECK(provablyEqual(P("ceil(T/(T+1))"), P("1"), lb) == Proof::Yes);
  CHECK(provablyEqual(P("ceil(T/(T+1))"), P("1"), none) == Proof::No);
}

TEST_CASE("symexpr: ragged is never provably equal unless identical", "[symexpr][z3]") {
  checkEqual({{"ragged(r)", "ragged(r)", Proof::Yes}, {"ragged(r)+1", "ragged(r)+1", Proof::Yes}}, {});
  checkEqual({{"ragged(r)", "ragged(s)", Proof::Unknown},
              {"ragged(r)", "4", Proof::Unknown},
              {"1+ragged(r)", "ragged(r)+1", Proof::Unknown}},
             {});
}

TEST_CASE("symexpr: provablyDivides", "[symexpr][z3]") {
  checkDivides({{"16", "ceil(T/16)*16", Proof::Yes}, {"2", "2*N+4", Proof::Yes}, {"tb", "tb*K", Proof::Yes},
                {"tb", "B/tb*tb", Proof::Yes}, {"1", "anything", Proof::Yes}},
               {});
  // Counterexamples: N = 1; N = 4; any N (2*N+1 is odd); tb = 2, B = 1.
  checkDivides({{"4", "N", Proof::No}, {"4", "N/4", Proof::No}, {"2", "2*N+1", Proof::No}, {"tb", "B", Proof::No}}, {});

  SymConstraints c;
  c.values = {{"B", 64}, {"tb", 16}, {"D", 256}};
  checkDivides({{"tb", "B", Proof::Yes}, {"tb", "B+1", Proof::No}, {"D", "D", Proof::Yes}}, c);
  c.values["B"] = 65;
  checkDivides({{"tb", "B", Proof::No}, {"4", "ragged(r)", Proof::Unknown}}, c);
}

// Z3's answers are memoized by question with free symbols renamed in order of appearance
// (symexpr.cpp memoized): the same question about other names reuses an answer, a question
// that differs in a bound value or a lower bound does not.
TEST_CASE("symexpr: a remembered Z3 answer is reused only for the same question", "[symexpr][z3]") {
  SymConstraints t16, t32, s16;
  t16.values = {{"tb", 16}};
  t32.values = {{"tb", 32}};
  s16.values = {{"ts", 16}};
  CHECK(provablyDivides(P("tb"), P("16*T"), t16) == Proof::Yes);
  CHECK(provablyDivides(P("tb"), P("16*T"), t32) == Proof::No);  // T = 1
  CHECK(provablyDivides(P("ts"), P("16*U"), s16) == Proof::Yes);
  SymConstraints lb1, lb0;
  lb1.lower = {{"V", 1}};
  CHECK(provablyEqual(P("ceil(V/(V+1))"), P("1"), lb1) == Proof::Yes);
  CHECK(provablyEqual(P("ceil(W/(W+1))"), P("1"), lb0) == Proof::No);  // W = 0
}
