#pragma once
// Test helpers shared by the shape-check tests: builds a StepGraph in memory and reads the
// diagnostics of checkShapes.
#include <catch2/catch.hpp>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "passes/shape_check.hpp"

namespace stepgen::testing {

/// Builds a StepGraph the way the loader would: every op on its own line of "test.yaml",
/// each attribute at its own column, so tests can assert diagnostic locations.
struct GraphBuilder {
  StepGraph g;
  int nextLine = 10;

  GraphBuilder() {
    g.name = "test";
    g.loc = SourceLoc{"test.yaml", 1, 1};
  }

  void symbols(const SymEnv& s) { g.symbols = s; }

  void tensor(const std::string& name, const std::vector<std::string>& shape, bool output = false) {
    Tensor t;
    t.name = name;
    t.loc = SourceLoc{"test.yaml", 2 + int(g.tensors.size()), 3};
    for (const auto& d : shape) t.shape.push_back(SymExpr::parse(d));
    t.isOutput = output;
    g.tensors.push_back(t);
  }

  StreamId stream(const std::string& name) {
    for (size_t i = 0; i < g.streams.size(); ++i)
      if (g.streams[i].name == name) return StreamId{int(i)};
    Stream s;
    s.name = name;
    s.loc = SourceLoc{"test.yaml", 500 + int(g.streams.size()), 5};
    g.streams.push_back(s);
    return StreamId{int(g.streams.size()) - 1};
  }

  void declare(const std::string& name, const std::vector<std::string>& shape, const std::vector<std::string>& tile) {
    StreamType t;
    for (const auto& d : shape) t.shape.push_back(SymExpr::parse(d));
    for (const auto& d : tile) t.elem.tile.push_back(SymExpr::parse(d));
    g.streams[size_t(stream(name).v)].declared = t;
  }

  // Attribute values.
  static Attr scalar(const std::string& s) {
    Attr a;
    a.scalar = s;
    return a;
  }
  static Attr list(const std::vector<std::string>& v) {
    Attr a;
    a.isList = true;
    for (const auto& s : v) a.list.push_back(scalar(s));
    return a;
  }
  static Attr pairs(const std::vector<std::vector<std::string>>& v) {
    Attr a;
    a.isList = true;
    for (const auto& p : v) a.list.push_back(list(p));
    return a;
  }

  /// Adds an op; attributes get locations (line of the op, column 20 + 10*k in key order).
  OpId op(const std::string& name, OpKind kind, const std::vector<std::string>& ins,
          const std::vector<std::string>& outs, std::map<std::string, Attr> attrs = {}) {
    Op o;
    o.name = name;
    o.kind = kind;
    o.loc = SourceLoc{"test.yaml", nextLine++, 5};
    int k = 0;
    if (!ins.empty()) attrs.emplace("in", ins.size() == 1 ? scalar(ins[0]) : list(ins));
    if (!outs.empty()) attrs.emplace("out", outs.size() == 1 ? scalar(outs[0]) : list(outs));
    for (auto& [key, a] : attrs) {
      a.loc = SourceLoc{"test.yaml", o.loc.line, 20 + 10 * k++};
      for (auto& x : a.list) x.loc = a.loc;
    }
    o.attrs = std::move(attrs);
    OpId id{int(g.ops.size())};
    for (const auto& s : ins) {
      StreamId sid = stream(s);
      o.inputs.push_back(sid);
      g.streams[size_t(sid.v)].consumers.push_back(id);
    }
    for (const auto& s : outs) {
      StreamId sid = stream(s);
      o.outputs.push_back(sid);
      g.streams[size_t(sid.v)].producer = id;
    }
    g.ops.push_back(o);
    return id;
  }

  const Op& opNamed(const std::string& name) const {
    for (const auto& o : g.ops)
      if (o.name == name) return o;
    throw std::runtime_error("no op " + name);
  }
  SourceLoc attrLoc(const std::string& opName, const std::string& key) const {
    return opNamed(opName).attrs.at(key).loc;
  }
  const StreamType& type(const ShapeResult& r, const std::string& s) const {
    for (size_t i = 0; i < g.streams.size(); ++i)
      if (g.streams[i].name == s) return r.types.at(i);
    throw std::runtime_error("no stream " + s);
  }
};

using GB = GraphBuilder;

/// A LinearOffChipLoad `name` of `tensor` in tiles `tile`, walking `iter` with `strides`, into stream `out`.
inline void load(GB& b, const std::string& name, const std::string& tensor, const std::vector<std::string>& tile,
                 const std::vector<std::string>& iter, const std::vector<std::vector<std::string>>& strides,
                 const std::string& out) {
  b.op(name, OpKind::LinearOffChipLoad, {}, {out},
       {{"tensor", GB::scalar(tensor)}, {"tile", GB::list(tile)}, {"iter", GB::list(iter)},
        {"strides", GB::pairs(strides)}});
}

/// The diagnostics checkShapes(g) throws (none if it passes).
inline std::vector<Diagnostic> diagsOf(const StepGraph& g) {
  try {
    checkShapes(g);
  } catch (const DiagError& e) {
    return e.diags;
  }
  return {};
}

inline bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

/// The diagnostics one a line, "S-201 message", for INFO.
inline std::string diagLines(const std::vector<Diagnostic>& d) {
  std::string s;
  for (const auto& x : d) s += x.id + " " + x.message + "\n";
  return s;
}

/// Runs the check, expects exactly one diagnostic with `id`, returns it.
inline Diagnostic onlyError(const StepGraph& g, const std::string& id) {
  auto d = diagsOf(g);
  INFO("diagnostics: " << diagLines(d));
  REQUIRE(d.size() == 1);
  CHECK(d[0].id == id);
  return d[0];
}

inline bool sameLoc(const SourceLoc& a, const SourceLoc& b) { return a.file == b.file && a.line == b.line && a.col == b.col; }

/// Checks that the message of `d` holds every one of `parts`.
inline void checkMessage(const Diagnostic& d, const std::vector<std::string>& parts) {
  INFO("message: " << d.message);
  for (const std::string& p : parts) {
    INFO("part: " << p);
    CHECK(contains(d.message, p));
  }
}

/// A graph that must raise exactly one diagnostic `id`, whose message holds every one of
/// `parts` and, when `atOp` is set, which points at attribute `atAttr` of op `atOp`.
struct OneError {
  const char* name;
  const char* id;
  std::vector<std::string> parts;
  void (*build)(GraphBuilder&);
  const char* atOp = nullptr;
  const char* atAttr = nullptr;
};

/// Builds every case on a copy of `base` and checks its one diagnostic. A case that fails
/// is reported and the next one still runs (CHECK, not REQUIRE).
inline void checkOneErrors(const GraphBuilder& base, const std::vector<OneError>& cases) {
  for (const OneError& e : cases) {
    INFO("case: " << e.name);
    GraphBuilder b = base;
    e.build(b);
    const std::vector<Diagnostic> d = diagsOf(b.g);
    INFO("diagnostics: " << diagLines(d));
    CHECK(d.size() == 1);
    if (d.size() != 1) continue;
    CHECK(d[0].id == e.id);
    checkMessage(d[0], e.parts);
    if (e.atOp) CHECK(sameLoc(d[0].loc, b.attrLoc(e.atOp, e.atAttr)));
  }
}

}  // namespace stepgen::testing
