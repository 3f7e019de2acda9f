// Attribute readers of the shape check: scalars, symbolic expressions, lists, walks and
// tensors of an op's attributes, each failure reported (S-201..S-204, S-232) and collected.
//
// Not ir/attrs.hpp: that one evaluates attributes to integers and throws the first error
// (G-130) for the later stages; the checker keeps dims symbolic (B/tb, T_e) and reports
// every error of the graph at once.
#include <stdexcept>

#include "passes/shape_rules.hpp"

namespace stepgen::shape_detail {

const Attr* Checker::attr(const Op& op, const std::string& key) const {
  auto it = op.attrs.find(key);
  return it == op.attrs.end() ? nullptr : &it->second;
}

SourceLoc Checker::attrLoc(const Op& op, const std::string& key) const {
  const Attr* a = attr(op, key);
  return (a && (a->loc.line > 0 || !a->loc.file.empty())) ? a->loc : op.loc;
}

const Attr* Checker::requireAttr(const Op& op, const std::string& key) {
  const Attr* a = attr(op, key);
  if (!a) error("S-202", op.loc, opLabel(op) + ": missing attribute '" + key + "'");
  return a;
}

std::optional<SymExpr> Checker::parseExpr(const Op& op, const std::string& key, const Attr& a) {
  if (a.isList) {
    error("S-203", a.loc.line > 0 ? a.loc : op.loc,
          opLabel(op) + ": attribute '" + key + "' must be a scalar expression, not a list");
    return std::nullopt;
  }
  try {
    return SymExpr::parse(a.scalar);
  } catch (const std::invalid_argument& e) {
    error("S-203", a.loc.line > 0 ? a.loc : op.loc, opLabel(op) + ": attribute '" + key + "': " + e.what());
    return std::nullopt;
  }
}

std::optional<std::string> Checker::stringAttr(const Op& op, const std::string& key) {
  const Attr* a = requireAttr(op, key);
  if (!a) return std::nullopt;
  if (a->isList || a->scalar.empty()) {
    error("S-203", attrLoc(op, key), opLabel(op) + ": attribute '" + key + "' must be a name");
    return std::nullopt;
  }
  return a->scalar;
}

std::optional<SymExpr> Checker::exprAttr(const Op& op, const std::string& key) {
  const Attr* a = requireAttr(op, key);
  if (!a) return std::nullopt;
  return parseExpr(op, key, *a);
}

/// An integer attribute (b, lo, hi); expressions of bound symbols are accepted.
std::optional<int64_t> Checker::intAttr(const Op& op, const std::string& key) {
  auto e = exprAttr(op, key);
  if (!e) return std::nullopt;
  auto v = e->evaluate(g_.symbols);
  if (!v) {
    error("S-203", attrLoc(op, key),
          opLabel(op) + ": attribute '" + key + "' must be an integer, got '" + e->toString() + "'");
    return std::nullopt;
  }
  return v;
}

std::optional<std::vector<SymExpr>> Checker::exprListAttr(const Op& op, const std::string& key, size_t wantSize) {
  const Attr* a = requireAttr(op, key);
  if (!a) return std::nullopt;
  if (!a->isList) {
    error("S-203", attrLoc(op, key), opLabel(op) + ": attribute '" + key + "' must be a list");
    return std::nullopt;
  }
  std::vector<SymExpr> out;
  bool ok = true;
  for (const Attr& x : a->list) {
    auto e = parseExpr(op, key, x);
    if (!e) {
      ok = false;
      continue;
    }
    out.push_back(*e);
  }
  if (!ok) return std::nullopt;
  if (wantSize && out.size() != wantSize) {
    error("S-203", attrLoc(op, key),
          opLabel(op) + ": attribute '" + key + "' must have " + std::to_string(wantSize) + " entries, has " +
              std::to_string(out.size()));
    return std::nullopt;
  }
  if (!wantSize && out.empty()) {
    error("S-203", attrLoc(op, key), opLabel(op) + ": attribute '" + key + "' must not be empty");
    return std::nullopt;
  }
  return out;
}

/// The strides attribute: one [dr, dc] pair per iter level.
std::optional<std::vector<std::pair<SymExpr, SymExpr>>> Checker::stridesAttr(const Op& op, size_t levels) {
  const Attr* a = requireAttr(op, "strides");
  if (!a) return std::nullopt;
  if (!a->isList) {
    error("S-203", attrLoc(op, "strides"), opLabel(op) + ": attribute 'strides' must be a list of [dr, dc] pairs");
    return std::nullopt;
  }
  std::vector<std::pair<SymExpr, SymExpr>> out;
  for (const Attr& pair : a->list) {
    if (!pair.isList || pair.list.size() != 2) {
      error("S-203", pair.loc.line > 0 ? pair.loc : attrLoc(op, "strides"),
            opLabel(op) + ": each entry of 'strides' must be a pair [tile-row step, tile-col step]");
      return std::nullopt;
    }
    auto r = parseExpr(op, "strides", pair.list[0]);
    auto c = parseExpr(op, "strides", pair.list[1]);
    if (!r || !c) return std::nullopt;
    out.emplace_back(*r, *c);
  }
  if (out.size() != levels) {
    error("S-232", attrLoc(op, "strides"),
          opLabel(op) + ": 'strides' has " + std::to_string(out.size()) + " entries but 'iter' has " +
              std::to_string(levels) + " levels");
    return std::nullopt;
  }
  return out;
}

std::optional<WalkSpec> Checker::walkAttrs(const Op& op) {
  auto iter = exprListAttr(op, "iter");
  if (!iter) return std::nullopt;
  auto strides = stridesAttr(op, iter->size());
  if (!strides) return std::nullopt;
  WalkSpec w{*iter, *strides};
  if (attr(op, "origin")) {
    auto o = exprListAttr(op, "origin", 2);
    if (!o) return std::nullopt;
    w.origin = {(*o)[0], (*o)[1]};
  }
  return w;
}

const Tensor* Checker::tensorAttr(const Op& op) {
  auto name = stringAttr(op, "tensor");
  if (!name) return nullptr;
  auto t = g_.findTensor(*name);
  if (!t) {
    error("S-204", attrLoc(op, "tensor"), opLabel(op) + ": unknown tensor '" + *name + "'");
    return nullptr;
  }
  return &g_.tensors[size_t(*t)];
}

/// An optional true/false attribute.
std::optional<bool> Checker::boolAttr(const Op& op, const std::string& key, bool dflt) {
  const Attr* a = attr(op, key);
  if (!a) return dflt;
  if (!a->isList && (a->scalar == "true" || a->scalar == "false")) return a->scalar == "true";
  error("S-203", attrLoc(op, key), opLabel(op) + ": attribute '" + key + "' must be true or false");
  return std::nullopt;
}

/// The number of routed streams `n`: a static integer >= 1 that must equal `have`.
std::optional<int64_t> Checker::countAttr(const Op& op, const std::string& what, size_t have) {
  auto n = intAttr(op, "n");
  if (!n) return std::nullopt;
  if (*n < 1) {
    error("S-203", attrLoc(op, "n"), opLabel(op) + ": n = " + std::to_string(*n) + " must be at least 1");
    return std::nullopt;
  }
  if (size_t(*n) != have) {
    error("S-201", attrLoc(op, "n"),
          opLabel(op) + ": n = " + std::to_string(*n) + " but the operator has " + std::to_string(have) + " " + what);
    return std::nullopt;
  }
  return n;
}

}  // namespace stepgen::shape_detail
