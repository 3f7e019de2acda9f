#include "ir/attrs.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace stepgen {

namespace {
[[noreturn]] void fail(const Op& op, const std::string& key, const SourceLoc& loc, const std::string& why) {
  throw DiagError("G-130", loc, fmt::format("operator '{}' ({}): attribute '{}' {}", op.name, opKindName(op.kind), key, why));
}

const Attr& need(const Op& op, const std::string& key) {
  auto it = op.attrs.find(key);
  if (it == op.attrs.end()) fail(op, key, op.loc, "is missing");
  return it->second;
}

int64_t evalScalar(const StepGraph& g, const Op& op, const std::string& key, const Attr& a) {
  if (a.isList) fail(op, key, a.loc, "must be a single integer expression, not a list");
  std::optional<int64_t> v;
  try {
    v = SymExpr::parse(a.scalar).evaluate(g.symbols);
  } catch (const std::invalid_argument& e) {
    fail(op, key, a.loc, fmt::format("'{}' is not an expression: {}", a.scalar, e.what()));
  }
  if (!v) fail(op, key, a.loc, fmt::format("'{}' has no static integer value", a.scalar));
  return *v;
}
}  // namespace

int64_t attrInt(const StepGraph& g, const Op& op, const std::string& key) {
  return evalScalar(g, op, key, need(op, key));
}

int64_t attrIntOr(const StepGraph& g, const Op& op, const std::string& key, int64_t dflt) {
  return op.attrs.count(key) ? attrInt(g, op, key) : dflt;
}

std::string attrString(const Op& op, const std::string& key) {
  const Attr& a = need(op, key);
  if (a.isList) fail(op, key, a.loc, "must be a word, not a list");
  return a.scalar;
}

std::vector<int64_t> attrIntList(const StepGraph& g, const Op& op, const std::string& key) {
  const Attr& a = need(op, key);
  if (!a.isList) fail(op, key, a.loc, "must be a list");
  std::vector<int64_t> v;
  for (const auto& e : a.list) v.push_back(evalScalar(g, op, key, e));
  return v;
}

std::vector<std::vector<int64_t>> attrIntMatrix(const StepGraph& g, const Op& op, const std::string& key) {
  const Attr& a = need(op, key);
  if (!a.isList) fail(op, key, a.loc, "must be a list of lists");
  std::vector<std::vector<int64_t>> m;
  for (const auto& row : a.list) {
    if (!row.isList) fail(op, key, row.loc, "must be a list of lists");
    std::vector<int64_t> r;
    for (const auto& e : row.list) r.push_back(evalScalar(g, op, key, e));
    m.push_back(r);
  }
  return m;
}

}  // namespace stepgen
