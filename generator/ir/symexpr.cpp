// Symbolic integer expressions (docs/step_semantics.md#symbolic-shapes): parser, smart
// constructors with light simplification (constant folding, x*1, x+0, x-0, x/1), evaluation,
// canonical printing, and the provablyEqual / provablyDivides queries (plain arithmetic
// when every symbol is bound, Z3 otherwise).
#include "ir/symexpr.hpp"

#include <z3++.h>

#include <cctype>
#include <climits>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

namespace stepgen {

struct SymExpr::Node {
  Kind kind = Kind::Const;
  int64_t value = 0;
  std::string name;
  std::vector<SymExpr> args;
};

namespace {

bool isConst(const SymExpr& e, int64_t v) { return e.kind() == SymExpr::Kind::Const && e.constValue() == v; }

int64_t floorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t ceilDivInt(int64_t a, int64_t b) { return -floorDivInt(-a, b); }

/// Structural identity (same tree).
bool structEq(const SymExpr& a, const SymExpr& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case SymExpr::Kind::Const: return a.constValue() == b.constValue();
    case SymExpr::Kind::Sym:
    case SymExpr::Kind::Ragged: return a.name() == b.name();
    default: break;
  }
  const auto& x = a.args();
  const auto& y = b.args();
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (!structEq(x[i], y[i])) return false;
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Construction (all node building happens in members / friends: Node is private)

SymExpr::SymExpr() : SymExpr(std::make_shared<const Node>()) {}
SymExpr::SymExpr(std::shared_ptr<const Node> n) : n_(std::move(n)) {}

SymExpr SymExpr::constant(int64_t v) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Const;
  n->value = v;
  return SymExpr(std::shared_ptr<const Node>(n));
}

SymExpr SymExpr::symbol(std::string name) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Sym;
  n->name = std::move(name);
  return SymExpr(std::shared_ptr<const Node>(n));
}

SymExpr SymExpr::ragged(std::string tag) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Ragged;
  n->name = std::move(tag);
  return SymExpr(std::shared_ptr<const Node>(n));
}

#define STEPGEN_BINARY_NODE(K, A, B)                  \
  do {                                                \
    auto n_ = std::make_shared<SymExpr::Node>();      \
    n_->kind = (K);                                   \
    n_->args = {(A), (B)};                            \
    return SymExpr(std::shared_ptr<const SymExpr::Node>(n_)); \
  } while (0)

namespace {

/// a + b, a - b or a * b (kind Add, Sub or Mul) folded into a constant when both are
/// constants and the result fits int64; nothing otherwise.
std::optional<SymExpr> foldConstants(SymExpr::Kind kind, const SymExpr& a, const SymExpr& b) {
  using K = SymExpr::Kind;
  if (a.kind() != K::Const || b.kind() != K::Const) return std::nullopt;
  const int64_t x = a.constValue(), y = b.constValue();
  int64_t r;
  const bool overflow = kind == K::Add   ? __builtin_add_overflow(x, y, &r)
                        : kind == K::Sub ? __builtin_sub_overflow(x, y, &r)
                                         : __builtin_mul_overflow(x, y, &r);
  if (overflow) return std::nullopt;
  return SymExpr::constant(r);
}

}  // namespace

SymExpr operator+(const SymExpr& a, const SymExpr& b) {
  using K = SymExpr::Kind;
  if (auto r = foldConstants(K::Add, a, b)) return *r;
  if (isConst(b, 0)) return a;
  if (isConst(a, 0)) return b;
  STEPGEN_BINARY_NODE(K::Add, a, b);
}

SymExpr operator-(const SymExpr& a, const SymExpr& b) {
  using K = SymExpr::Kind;
  if (auto r = foldConstants(K::Sub, a, b)) return *r;
  if (isConst(b, 0)) return a;
  STEPGEN_BINARY_NODE(K::Sub, a, b);
}

SymExpr operator*(const SymExpr& a, const SymExpr& b) {
  using K = SymExpr::Kind;
  if (auto r = foldConstants(K::Mul, a, b)) return *r;
  if (isConst(b, 1)) return a;
  if (isConst(a, 1)) return b;
  if ((isConst(a, 0) && !b.isRagged()) || (isConst(b, 0) && !a.isRagged())) return SymExpr::constant(0);
  STEPGEN_BINARY_NODE(K::Mul, a, b);
}

SymExpr SymExpr::div(const SymExpr& a, const SymExpr& b) {
  if (a.kind() == Kind::Const && b.kind() == Kind::Const && b.constValue() != 0 &&
      !(a.constValue() == INT64_MIN && b.constValue() == -1) && a.constValue() % b.constValue() == 0)
    return constant(a.constValue() / b.constValue());
  if (isConst(b, 1)) return a;
  STEPGEN_BINARY_NODE(Kind::Div, a, b);
}

SymExpr SymExpr::ceilDiv(const SymExpr& a, const SymExpr& b) {
  if (a.kind() == Kind::Const && b.kind() == Kind::Const && b.constValue() != 0 &&
      !(a.constValue() == INT64_MIN && b.constValue() == -1))
    return constant(ceilDivInt(a.constValue(), b.constValue()));
  if (isConst(b, 1)) return a;
  STEPGEN_BINARY_NODE(Kind::CeilDiv, a, b);
}

#undef STEPGEN_BINARY_NODE

// ---------------------------------------------------------------------------------------
// Accessors

SymExpr::Kind SymExpr::kind() const { return n_->kind; }
int64_t SymExpr::constValue() const { return n_->value; }
const std::string& SymExpr::name() const { return n_->name; }
const std::vector<SymExpr>& SymExpr::args() const { return n_->args; }

bool SymExpr::isRagged() const {
  if (n_->kind == Kind::Ragged) return true;
  for (const auto& a : n_->args)
    if (a.isRagged()) return true;
  return false;
}

std::vector<std::string> SymExpr::symbols() const {
  std::set<std::string> out;
  std::function<void(const SymExpr&)> walk = [&](const SymExpr& e) {
    if (e.kind() == Kind::Sym) out.insert(e.name());
    for (const auto& a : e.args()) walk(a);
  };
  walk(*this);
  return {out.begin(), out.end()};
}

std::optional<int64_t> SymExpr::evaluate(const SymEnv& env) const {
  switch (n_->kind) {
    case Kind::Const: return n_->value;
    case Kind::Sym: {
      auto it = env.find(n_->name);
      if (it == env.end()) return std::nullopt;
      return it->second;
    }
    case Kind::Ragged: return std::nullopt;
    default: break;
  }
  auto a = n_->args[0].evaluate(env);
  if (!a) return std::nullopt;
  auto b = n_->args[1].evaluate(env);
  if (!b) return std::nullopt;
  int64_t r = 0;
  switch (n_->kind) {
    case Kind::Add:
      if (__builtin_add_overflow(*a, *b, &r)) return std::nullopt;
      return r;
    case Kind::Sub:
      if (__builtin_sub_overflow(*a, *b, &r)) return std::nullopt;
      return r;
    case Kind::Mul:
      if (__builtin_mul_overflow(*a, *b, &r)) return std::nullopt;
      return r;
    case Kind::Div:
      if (*b == 0 || (*a == INT64_MIN && *b == -1) || *a % *b != 0) return std::nullopt;
      return *a / *b;
    case Kind::CeilDiv:
      if (*b == 0 || (*a == INT64_MIN && *b == -1)) return std::nullopt;
      return ceilDivInt(*a, *b);
    default: return std::nullopt;
  }
}

// ---------------------------------------------------------------------------------------
// Printing: minimal parentheses such that parse(toString()) rebuilds the same tree
// (left-associative binary operators; a right operand of equal precedence and every
// negative constant operand are bracketed).

namespace {
int precedence(SymExpr::Kind k) {
  switch (k) {
    case SymExpr::Kind::Add:
    case SymExpr::Kind::Sub: return 1;
    case SymExpr::Kind::Mul:
    case SymExpr::Kind::Div: return 2;
    default: return 3;  // constants, symbols, ceil(...), ragged(...)
  }
}

std::string operand(const SymExpr& c, int parentPrec, bool right) {
  std::string s = c.toString();
  int p = precedence(c.kind());
  bool neg = c.kind() == SymExpr::Kind::Const && c.constValue() < 0;
  if (neg || p < parentPrec || (right && p == parentPrec)) return "(" + s + ")";
  return s;
}
}  // namespace

std::string SymExpr::toString() const {
  switch (n_->kind) {
    case Kind::Const: return std::to_string(n_->value);
    case Kind::Sym: return n_->name;
    case Kind::Ragged: return "ragged(" + n_->name + ")";
    case Kind::Add: return operand(n_->args[0], 1, false) + "+" + operand(n_->args[1], 1, true);
    case Kind::Sub: return operand(n_->args[0], 1, false) + "-" + operand(n_->args[1], 1, true);
    case Kind::Mul: return operand(n_->args[0], 2, false) + "*" + operand(n_->args[1], 2, true);
    case Kind::Div: return operand(n_->args[0], 2, false) + "/" + operand(n_->args[1], 2, true);
    case Kind::CeilDiv:
      return "ceil(" + operand(n_->args[0], 2, false) + "/" + operand(n_->args[1], 2, true) + ")";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------
// Parser: recursive descent.
//   expr    := term (('+'|'-') term)*
//   term    := unary (('*'|'/') unary)*
//   unary   := '-' unary | primary
//   primary := INT | IDENT | 'ceil' '(' expr ')' | 'ragged' '(' IDENT ')' | '(' expr ')'
// ceil's argument must be a division a/b (at its top level, parentheses allowed).

namespace {
struct Parsed {
  SymExpr e;
  std::optional<std::pair<SymExpr, SymExpr>> topDiv;  // set when e was built as a/b last
};

class Parser {
 public:
  explicit Parser(const std::string& t) : t_(t) {}

  SymExpr parseAll() {
    skip();
    if (pos_ >= t_.size()) fail("empty expression");
    Parsed p = expr();
    skip();
    if (pos_ < t_.size()) fail(std::string("unexpected '") + t_[pos_] + "'");
    return p.e;
  }

 private:
  const std::string& t_;
  size_t pos_ = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("bad expression \"" + t_ + "\": " + what + " at position " +
                                std::to_string(pos_ + 1));
  }
  void skip() {
    while (pos_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip();
    if (pos_ < t_.size() && t_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c)) {
      if (pos_ >= t_.size()) fail(std::string("expected '") + c + "' but the text ended");
      fail(std::string("expected '") + c + "', found '" + t_[pos_] + "'");
    }
  }

  Parsed expr() {
    Parsed acc = term();
    for (;;) {
      if (accept('+')) {
        Parsed r = term();
        acc = Parsed{acc.e + r.e, std::nullopt};
      } else if (accept('-')) {
        Parsed r = term();
        acc = Parsed{acc.e - r.e, std::nullopt};
      } else {
        return acc;
      }
    }
  }

  Parsed term() {
    Parsed acc = unary();
    for (;;) {
      if (accept('*')) {
        Parsed r = unary();
        acc = Parsed{acc.e * r.e, std::nullopt};
      } else if (accept('/')) {
        Parsed r = unary();
        acc = Parsed{SymExpr::div(acc.e, r.e), std::make_pair(acc.e, r.e)};
      } else {
        return acc;
      }
    }
  }

  Parsed unary() {
    if (accept('-')) {
      Parsed r = unary();
      if (r.e.kind() == SymExpr::Kind::Const && r.e.constValue() != INT64_MIN)
        return Parsed{SymExpr::constant(-r.e.constValue()), std::nullopt};
      return Parsed{SymExpr::constant(0) - r.e, std::nullopt};
    }
    return primary();
  }

  Parsed primary() {
    skip();
    if (pos_ >= t_.size()) fail("expected a number, a symbol or '(' but the text ended");
    char c = t_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (pos_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[pos_]))) {
        if (__builtin_mul_overflow(v, int64_t(10), &v) || __builtin_add_overflow(v, int64_t(t_[pos_] - '0'), &v))
          fail("integer too large");
        ++pos_;
      }
      return Parsed{SymExpr::constant(v), std::nullopt};
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[pos_])) || t_[pos_] == '_')) ++pos_;
      std::string id = t_.substr(start, pos_ - start);
      size_t save = pos_;
      if (id == "ceil" && accept('(')) {
        size_t argPos = pos_;
        Parsed inner = expr();
        expect(')');
        if (!inner.topDiv) {
          pos_ = argPos;
          fail("ceil() takes a division a/b");
        }
        return Parsed{SymExpr::ceilDiv(inner.topDiv->first, inner.topDiv->second), std::nullopt};
      }
      if (id == "ragged" && accept('(')) {
        skip();
        size_t s2 = pos_;
        while (pos_ < t_.size() && t_[pos_] != ')') ++pos_;
        std::string tag = t_.substr(s2, pos_ - s2);
        while (!tag.empty() && std::isspace(static_cast<unsigned char>(tag.back()))) tag.pop_back();
        if (tag.empty()) fail("ragged() needs a tag");
        expect(')');
        return Parsed{SymExpr::ragged(tag), std::nullopt};
      }
      pos_ = save;
      return Parsed{SymExpr::symbol(id), std::nullopt};
    }
    if (c == '(') {
      ++pos_;
      Parsed inner = expr();
      expect(')');
      return inner;  // keeps topDiv so that ceil((a/b)) works
    }
    fail(std::string("unexpected '") + c + "'");
  }
};
}  // namespace

SymExpr SymExpr::parse(const std::string& text) { return Parser(text).parseAll(); }

// ---------------------------------------------------------------------------------------
// Solver queries

namespace {

bool allBound(const SymExpr& e, const SymEnv& env) {
  for (const auto& s : e.symbols())
    if (!env.count(s)) return false;
  return true;
}

/// Encodes SymExprs into Z3 integer terms. Exact division a/b becomes a fresh q with
/// a == b*q; ceil(a/b) a fresh q with b*(q-1) < a <= b*q; every divisor is assumed >= 1
/// (shapes and tile sizes are positive). Bound symbols are replaced by their values; each
/// unbound symbol gets x >= lower (default 0, at least 1 when used as a divisor).
class Z3Encoder {
 public:
  Z3Encoder(z3::context& ctx, z3::solver& s, const SymConstraints& c) : ctx_(ctx), s_(s), c_(c) {}

  /// Symbols that appear directly as a divisor get lower bound >= 1.
  void noteDivisors(const SymExpr& e) {
    if (e.kind() == SymExpr::Kind::Div || e.kind() == SymExpr::Kind::CeilDiv) {
      if (e.args()[1].kind() == SymExpr::Kind::Sym) divisorSyms_.insert(e.args()[1].name());
    }
    for (const auto& a : e.args()) noteDivisors(a);
  }
  void markDivisorSymbol(const SymExpr& e) {
    if (e.kind() == SymExpr::Kind::Sym) divisorSyms_.insert(e.name());
  }

  bool unsupported() const { return unsupported_; }

  z3::expr enc(const SymExpr& e) {
    using K = SymExpr::Kind;
    switch (e.kind()) {
      case K::Const: return ctx_.int_val(static_cast<int64_t>(e.constValue()));
      case K::Sym: return sym(e.name());
      case K::Ragged:
        unsupported_ = true;
        return ctx_.int_val(0);
      case K::Add: return enc(e.args()[0]) + enc(e.args()[1]);
      case K::Sub: return enc(e.args()[0]) - enc(e.args()[1]);
      case K::Mul: return enc(e.args()[0]) * enc(e.args()[1]);
      case K::Div:
      case K::CeilDiv: {
        const SymExpr& den = e.args()[1];
        if (den.kind() == K::Const && den.constValue() <= 0) {
          unsupported_ = true;  // division by zero or a negative constant: not a shape
          return ctx_.int_val(0);
        }
        z3::expr a = enc(e.args()[0]);
        z3::expr b = enc(den);
        z3::expr q = ctx_.int_const(("!q" + std::to_string(fresh_++)).c_str());
        s_.add(b >= 1);
        if (e.kind() == K::Div) {
          s_.add(a == b * q);
        } else {
          s_.add(b * (q - 1) < a);
          s_.add(a <= b * q);
        }
        return q;
      }
    }
    unsupported_ = true;
    return ctx_.int_val(0);
  }

 private:
  z3::context& ctx_;
  z3::solver& s_;
  const SymConstraints& c_;
  std::map<std::string, z3::expr> syms_;
  std::set<std::string> divisorSyms_;
  int fresh_ = 0;
  bool unsupported_ = false;

  z3::expr sym(const std::string& name) {
    auto v = c_.values.find(name);
    if (v != c_.values.end()) return ctx_.int_val(static_cast<int64_t>(v->second));
    auto it = syms_.find(name);
    if (it != syms_.end()) return it->second;
    z3::expr x = ctx_.int_const(name.c_str());
    int64_t lo = 0;
    auto l = c_.lower.find(name);
    if (l != c_.lower.end()) lo = l->second;
    if (divisorSyms_.count(name) && lo < 1) lo = 1;
    s_.add(x >= ctx_.int_val(static_cast<int64_t>(lo)));
    syms_.emplace(name, x);
    return x;
  }
};

/// Proof::Yes when the negation of a claim is unsatisfiable under c, No when it is
/// satisfiable, Unknown on a timeout (2 s), a Z3 error or when assertNegation (which asserts
/// the negation with enc on s) returns false (a term Z3Encoder does not support).
template <class F>
Proof proveByNegation(const SymConstraints& c, F&& assertNegation) {
  try {
    z3::context ctx;
    z3::solver s(ctx);
    z3::params p(ctx);
    p.set("timeout", 2000u);
    s.set(p);
    Z3Encoder enc(ctx, s, c);
    if (!assertNegation(enc, s)) return Proof::Unknown;
    switch (s.check()) {
      case z3::unsat: return Proof::Yes;
      case z3::sat: return Proof::No;
      default: return Proof::Unknown;
    }
  } catch (const z3::exception&) {
    return Proof::Unknown;
  }
}

// The text of `e` for a query key: bound symbols as their values (as Z3Encoder encodes them),
// unbound ones renamed $0, $1, ... in order of first appearance (`ids`), so that queries that
// differ only in a symbol's name (one per expert region or trial cut) share an answer.
void keyText(const SymExpr& e, const SymConstraints& c, std::map<std::string, int>& ids, std::string& out) {
  using K = SymExpr::Kind;
  switch (e.kind()) {
    case K::Const: out += std::to_string(e.constValue()); return;
    case K::Ragged: out += "ragged(" + e.name() + ")"; return;
    case K::Sym: {
      auto v = c.values.find(e.name());
      if (v != c.values.end()) {  // '#': the encoder treats a bound symbol apart from a constant as a divisor
        out += "#" + std::to_string(v->second);
        return;
      }
      auto it = ids.emplace(e.name(), int(ids.size())).first;
      out += "$" + std::to_string(it->second);
      return;
    }
    default: break;
  }
  out += e.kind() == K::Add ? "(+ " : e.kind() == K::Sub ? "(- " : e.kind() == K::Mul ? "(* " : e.kind() == K::Div ? "(/ " : "(ceil/ ";
  for (const SymExpr& a : e.args()) keyText(a, c, ids, out), out += " ";
  out += ")";
}

// The Z3 answers of this process, by query: the section planner shape-checks the same graph
// (and so asks the same questions) once per trial cut, and each Z3 call costs a context.
// The key holds what the encoding reads: the two expressions and the lower bounds of their
// unbound symbols.
Proof memoized(char kind, const SymExpr& a, const SymExpr& b, const SymConstraints& c, const std::function<Proof()>& ask) {
  static std::map<std::string, Proof> cache;
  std::map<std::string, int> ids;
  std::string key(1, kind);
  keyText(a, c, ids, key);
  key += "|";
  keyText(b, c, ids, key);
  std::vector<int64_t> lower(ids.size(), 0);
  for (const auto& [name, id] : ids) {
    auto l = c.lower.find(name);
    if (l != c.lower.end()) lower[size_t(id)] = l->second;
  }
  for (int64_t l : lower) key += "|" + std::to_string(l);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const Proof p = ask();
  cache.emplace(std::move(key), p);
  return p;
}

}  // namespace

Proof provablyEqual(const SymExpr& a, const SymExpr& b, const SymConstraints& c) {
  if (structEq(a, b)) return Proof::Yes;
  if (a.isRagged() || b.isRagged()) return Proof::Unknown;
  if (allBound(a, c.values) && allBound(b, c.values)) {
    auto x = a.evaluate(c.values);
    auto y = b.evaluate(c.values);
    if (!x || !y) return Proof::Unknown;  // inexact division or overflow: ill-defined
    return *x == *y ? Proof::Yes : Proof::No;
  }
  return memoized('=', a, b, c, [&] {
    return proveByNegation(c, [&](Z3Encoder& enc, z3::solver& s) {
      enc.noteDivisors(a);
      enc.noteDivisors(b);
      z3::expr za = enc.enc(a);
      z3::expr zb = enc.enc(b);
      if (enc.unsupported()) return false;
      s.add(za != zb);
      return true;
    });
  });
}

Proof provablyDivides(const SymExpr& d, const SymExpr& a, const SymConstraints& c) {
  if (d.kind() == SymExpr::Kind::Const && (d.constValue() == 1 || d.constValue() == -1)) return Proof::Yes;
  if (!d.isRagged() && structEq(a, d)) return Proof::Yes;
  if (!d.isRagged() && a.kind() == SymExpr::Kind::Mul &&
      (structEq(a.args()[0], d) || structEq(a.args()[1], d)) && !a.isRagged())
    return Proof::Yes;
  if (a.isRagged() || d.isRagged()) return Proof::Unknown;
  if (allBound(a, c.values) && allBound(d, c.values)) {
    auto x = a.evaluate(c.values);
    auto y = d.evaluate(c.values);
    if (!x || !y || *y == 0) return Proof::Unknown;
    if (*y == -1) return Proof::Yes;
    return (*x % *y == 0) ? Proof::Yes : Proof::No;
  }
  return memoized('|', d, a, c, [&] {
    return proveByNegation(c, [&](Z3Encoder& enc, z3::solver& s) {
      enc.noteDivisors(a);
      enc.noteDivisors(d);
      enc.markDivisorSymbol(d);
      z3::expr za = enc.enc(a);
      z3::expr zd = enc.enc(d);
      if (enc.unsupported()) return false;
      s.add(zd != 0);
      s.add(z3::mod(za, zd) != 0);
      return true;
    });
  });
}

}  // namespace stepgen
