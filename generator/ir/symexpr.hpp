#pragma once
// Symbolic integer expressions for STeP shapes (docs/step_semantics.md#symbolic-shapes): integers, symbols,
// + - * , exact division `/`, ceil(a/b), and the ragged marker. Immutable, value semantics.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stepgen {

/// Values of the static symbols (e.g. B=64, tb=16).
using SymEnv = std::map<std::string, int64_t>;

/// An integer expression over named symbols. Parse with SymExpr::parse.
class SymExpr {
 public:
  enum class Kind { Const, Sym, Add, Sub, Mul, Div, CeilDiv, Ragged };
  SymExpr();  ///< the constant 0
  static SymExpr constant(int64_t v);
  static SymExpr symbol(std::string name);
  /// A ragged dimension (different length under each outer index); `tag` names it.
  static SymExpr ragged(std::string tag);
  /// Parses "B/tb", "ceil(T_e/16)", "2*D+1". Throws std::invalid_argument with a message
  /// naming the offending character position.
  static SymExpr parse(const std::string& text);

  Kind kind() const;
  int64_t constValue() const;       ///< Const only
  const std::string& name() const;  ///< Sym and Ragged
  const std::vector<SymExpr>& args() const;

  /// True if any sub-expression is Ragged (docs/step_semantics.md#symbolic-shapes: anything mentioning ragged is ragged).
  bool isRagged() const;
  /// Symbols mentioned (sorted, unique).
  std::vector<std::string> symbols() const;
  /// Value under env, or nullopt if a symbol is unbound, a division is inexact, or ragged.
  std::optional<int64_t> evaluate(const SymEnv& env) const;
  /// Canonical text, e.g. "B/tb"; parse(toString()) == *this structurally.
  std::string toString() const;

  friend SymExpr operator+(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator-(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator*(const SymExpr& a, const SymExpr& b);
  static SymExpr div(const SymExpr& a, const SymExpr& b);      ///< exact division
  static SymExpr ceilDiv(const SymExpr& a, const SymExpr& b);

 private:
  struct Node;
  std::shared_ptr<const Node> n_;
  explicit SymExpr(std::shared_ptr<const Node> n);
};

/// Facts about symbols a solver may use: bound values and lower bounds (symbols >= 0,
/// dynamic symbols >= lower bound).
struct SymConstraints {
  SymEnv values;                          ///< symbols with known values
  std::map<std::string, int64_t> lower;   ///< lower bounds of unbound symbols (default 0)
};

/// Answers of the symbolic solver (Z3 where symbols are unbound; plain arithmetic when
/// every symbol has a value). Ragged expressions are never provably equal.
enum class Proof { Yes, No, Unknown };
/// Is a == b for every assignment satisfying c?
Proof provablyEqual(const SymExpr& a, const SymExpr& b, const SymConstraints& c);
/// Does d divide a exactly for every assignment satisfying c?
Proof provablyDivides(const SymExpr& d, const SymExpr& a, const SymConstraints& c);

}  // namespace stepgen
