// loadGraph: reads a STeP graph YAML (docs/graph_format.md) into a StepGraph.
// It checks structure only: keys, operator names, stream wiring (one producer, one
// consumer), tensor names, symbol expressions. Op-specific attributes stay as text in
// Op::attrs for the shape checker. Errors are collected and thrown together as one
// DiagError, sorted by location; ids G-1xx (support/diag_ids.md).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "ir/graph.hpp"
#include "ir/op_table.hpp"
#include "support/yaml_doc.hpp"

namespace stepgen {

namespace {

const YamlDiagIds kGraphIds{"G-109", "G-111", "G-112", "G-113", "G-114", "G-115"};

std::string arityWords(int lo, int hi) {
  if (lo == hi) return std::to_string(lo);
  if (hi < 0) return lo == 1 ? "one or more" : fmt::format("{} or more", lo);
  if (hi == lo + 1) return fmt::format("{} or {}", lo, hi);
  return fmt::format("{} to {}", lo, hi);
}

std::vector<std::string> operatorNames() {
  std::vector<std::string> v;
  for (const OpRow& r : opTable()) v.push_back(r.name);
  return v;
}

size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      bool same = std::tolower((unsigned char)a[i - 1]) == std::tolower((unsigned char)b[j - 1]);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

bool isIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum((unsigned char)c) || c == '_')) return false;
  return true;
}

SymExpr parseExpr(const YamlValue& v) {
  std::string text = v.asString();
  try {
    return SymExpr::parse(text);
  } catch (const std::invalid_argument& e) {
    v.fail("G-107", fmt::format("bad symbol expression '{}': {}", text, e.what()));
  }
}

std::vector<SymExpr> parseExprList(const YamlValue& v, size_t exactLen, const char* what) {
  std::vector<YamlValue> items = v.asList();
  if (exactLen && items.size() != exactLen)
    v.fail(kGraphIds.outOfRange, fmt::format("{} must have {} entries, got {}", what, exactLen, items.size()));
  if (items.empty()) v.fail(kGraphIds.outOfRange, fmt::format("{} must not be empty", what));
  std::vector<SymExpr> out;
  for (const auto& it : items) out.push_back(parseExpr(it));
  return out;
}

Attr toAttr(const YamlValue& v) {
  Attr a;
  a.loc = v.loc();
  if (v.isScalar()) {
    a.scalar = v.asString();
  } else if (v.isList()) {
    a.isList = true;
    for (const auto& c : v.asList()) a.list.push_back(toAttr(c));
  } else {
    v.failType("a scalar or a list");
  }
  return a;
}

/// A stream name written in an op's `in` or `out`, with its place.
struct StreamRef {
  std::string name;
  SourceLoc loc;
  std::string path;  ///< e.g. ops[3].in[1]
};

std::vector<StreamRef> readRefs(const YamlValue& v) {
  std::vector<StreamRef> out;
  if (v.isList()) {
    for (const auto& c : v.asList()) out.push_back({c.asString(), c.loc(), c.path()});
  } else {
    if (!v.isScalar()) v.failType("a stream name or a list of stream names");
    out.push_back({v.asString(), v.loc(), v.path()});
  }
  return out;
}

class GraphLoader {
 public:
  explicit GraphLoader(const std::string& path) : path_(path) {}

  StepGraph run() {
    YamlValue root = loadYamlFile(path_, kGraphIds);
    YamlMap top = root.asMap();
    g_.loc = SourceLoc{path_, 0, 0};
    collectDiagnostics(errs_, [&] { g_.name = top.getString("stepgraph"); });
    size_t before = errs_.size();
    if (auto s = top.find("symbols")) collectDiagnostics(errs_, [&] { readSymbols(*s); });
    if (auto s = top.find("schedule")) collectDiagnostics(errs_, [&] { readSymbols(*s); });
    symbolsOk_ = errs_.size() == before;
    if (auto t = top.find("tensors")) {
      size_t before = errs_.size();
      collectDiagnostics(errs_, [&] { readTensors(*t); });
      tensorsOk_ = errs_.size() == before;
    }
    if (auto s = top.find("streams")) collectDiagnostics(errs_, [&] { readStreams(*s); });
    collectDiagnostics(errs_, [&] {
      std::vector<YamlValue> ops = top.getList("ops");
      for (const auto& o : ops) readOp(o);
      checkWiring();
    });
    collectDiagnostics(errs_, [&] { top.finish("stepgraph, symbols, schedule, tensors, streams, ops"); });
    if (!errs_.empty()) {
      std::stable_sort(errs_.begin(), errs_.end(), [](const Diagnostic& a, const Diagnostic& b) {
        return std::tie(a.loc.line, a.loc.col) < std::tie(b.loc.line, b.loc.col);
      });
      throw DiagError(std::move(errs_));
    }
    return std::move(g_);
  }

 private:
  std::string path_;
  StepGraph g_;
  std::vector<Diagnostic> errs_;
  bool symbolsOk_ = true;  // false: a symbol is missing, so shapes cannot be evaluated
  bool tensorsOk_ = true;
  // Per stream: where its producer and its first consumer name it.
  std::vector<StreamRef> producerRef_, consumerRef_;
  std::vector<bool> declared_;
  // Names to indices: StepGraph::find* scan, and a graph has streams and tensors by the 100k.
  std::unordered_map<std::string, int> streamIndex_, opIndex_;
  std::unordered_set<std::string> tensorNames_;

  void readSymbols(const YamlValue& v) {
    YamlMap m = v.asMap();
    for (const YamlEntry& e : m.entries()) {
      collectDiagnostics(errs_, [&] {
        if (!isIdentifier(e.key))
          throw DiagError("G-117", e.keyLoc, fmt::format("{}: bad symbol name '{}': use letters, digits and _",
                                                   e.value.path(), e.key));
        auto prev = g_.symbolLocs.find(e.key);
        if (prev != g_.symbolLocs.end())
          throw DiagError("G-117", e.keyLoc, fmt::format("{}: symbol '{}' is defined twice", e.value.path(), e.key),
                          {DiagNote{prev->second, "first defined here"}});
        int64_t val = e.value.asInt(1, INT64_MAX);
        g_.symbols[e.key] = val;
        g_.symbolLocs[e.key] = e.keyLoc;
      });
    }
  }

  void readTensors(const YamlValue& v) {
    YamlMap m = v.asMap();
    int64_t next = 0;
    for (const YamlEntry& e : m.entries()) {
      collectDiagnostics(errs_, [&] {
        YamlMap tm = e.value.asMap();
        Tensor t;
        t.name = e.key;
        t.loc = e.keyLoc;
        YamlValue sv = tm.get("shape");
        t.shape = parseExprList(sv, 2, "a tensor shape [rows, cols]");
        const std::string role = tm.getEnum("role", {"input", "output", "state"});
        t.isOutput = role != "input";
        t.isState = role == "state";
        tm.finish("shape, role");
        int64_t size = 4;
        std::vector<YamlValue> dims = sv.asList();
        for (size_t i = 0; i < 2; ++i) {
          auto d = t.shape[i].evaluate(g_.symbols);
          if ((!d || *d < 1) && !symbolsOk_) {  // a bad symbol, already reported
            size = 4;
            break;
          }
          if (!d || *d < 1)
            dims[i].fail("G-116", fmt::format("cannot evaluate '{}' to a positive integer with the symbols "
                                              "(unknown symbol or inexact division)",
                                              dims[i].asString()));
          size *= *d;
        }
        t.baseAddress = next;
        next = (next + size + 4095) / 4096 * 4096;
        tensorNames_.insert(t.name);
        g_.tensors.push_back(std::move(t));
      });
    }
  }

  StreamId streamFor(const std::string& name, const SourceLoc& loc) {
    auto [it, fresh] = streamIndex_.emplace(name, int(g_.streams.size()));
    if (!fresh) return StreamId{it->second};
    Stream s;
    s.name = name;
    s.loc = loc;
    g_.streams.push_back(std::move(s));
    producerRef_.emplace_back();
    consumerRef_.emplace_back();
    declared_.push_back(false);
    return StreamId{int(g_.streams.size()) - 1};
  }

  void readStreams(const YamlValue& v) {
    YamlMap m = v.asMap();
    for (const YamlEntry& e : m.entries()) {
      collectDiagnostics(errs_, [&] {
        YamlMap sm = e.value.asMap();
        StreamType t;
        t.shape = parseExprList(sm.get("shape"), 0, "a stream shape");
        t.elem.kind = ElemType::Kind::Tile;
        t.elem.tile = parseExprList(sm.get("tile"), 2, "a tile [rows, cols]");
        sm.finish("shape, tile");
        StreamId id = streamFor(e.key, e.keyLoc);
        g_.streams[id.v].declared = std::move(t);
        declared_[id.v] = true;
      });
    }
  }

  void readOp(const YamlValue& v) {
    std::optional<YamlMap> mm;
    collectDiagnostics(errs_, [&] { mm = v.asMap(); });
    if (!mm) return;
    YamlMap& m = *mm;
    Op op;
    op.loc = v.loc();
    op.kind = OpKind::Map;
    OpId id{int(g_.ops.size())};
    op.name = fmt::format("op{}", id.v);
    collectDiagnostics(errs_, [&] {
      YamlValue nv = m.get("name");
      std::string name = nv.asString();
      auto [first, fresh] = opIndex_.emplace(name, id.v);
      if (!fresh)
        nv.fail("G-108", fmt::format("op name '{}' is used twice", name), {DiagNote{g_.ops[size_t(first->second)].loc, "first used here"}});
      op.name = name;
    });
    std::optional<YamlValue> kindV;
    collectDiagnostics(errs_, [&] { kindV = m.get("op"); kindV->asString(); });
    // Wire streams first, so a bad operator does not also make its streams dangle.
    std::vector<StreamRef> ins, outs;
    bool inOk = true, outOk = true;  // false if `in` / `out` was malformed (no arity check then)
    if (auto iv = m.find("in")) collectDiagnostics(errs_, [&] { inOk = false; ins = readRefs(*iv); inOk = true; });
    if (auto ov = m.find("out")) collectDiagnostics(errs_, [&] { outOk = false; outs = readRefs(*ov); outOk = true; });
    // The op being read is not in g_.ops yet; it may name one stream twice.
    auto nameOf = [&](OpId o) -> const std::string& { return o.v == id.v ? op.name : g_.ops[o.v].name; };
    for (const auto& r : ins) {
      StreamId s = streamFor(r.name, r.loc);
      Stream& st = g_.streams[s.v];
      if (!st.consumers.empty()) {
        const std::string& first = nameOf(st.consumers[0]);
        errs_.push_back(Diagnostic{"G-103", r.loc,
                                   fmt::format("{}: stream '{}' is consumed by both {} and {}; use Broadcast",
                                               r.path, r.name, first, op.name),
                                   {DiagNote{consumerRef_[s.v].loc, fmt::format("{} consumes it here", first)}}});
      } else {
        consumerRef_[s.v] = r;
      }
      st.consumers.push_back(id);
      op.inputs.push_back(s);
    }
    for (const auto& r : outs) {
      StreamId s = streamFor(r.name, r.loc);
      Stream& st = g_.streams[s.v];
      if (st.producer.valid()) {
        const std::string& first = nameOf(st.producer);
        errs_.push_back(Diagnostic{"G-102", r.loc,
                                   fmt::format("{}: stream '{}' is produced by both {} and {}", r.path, r.name,
                                               first, op.name),
                                   {DiagNote{producerRef_[s.v].loc, fmt::format("{} produces it here", first)}}});
      } else {
        st.producer = id;
        producerRef_[s.v] = r;
      }
      op.outputs.push_back(s);
    }
    bool kindOk = false;
    if (kindV) {
      collectDiagnostics(errs_, [&] {
        std::string kn = kindV->asString();
        auto k = opKindFromName(kn);
        if (!k) {
          std::string best;
          size_t bestD = 3;
          for (const OpRow& r : opTable()) {
            size_t d = editDistance(kn, r.name);
            if (d < bestD) bestD = d, best = r.name;
          }
          std::string msg = fmt::format("unknown operator '{}'", kn);
          if (!best.empty()) msg += fmt::format(" (did you mean {}?)", best);
          msg += "; valid operators: " + joinWords(operatorNames());
          kindV->fail("G-101", msg);
        }
        op.kind = *k;
        kindOk = true;
      });
    }
    if (kindOk) {
      const std::vector<std::string>& keys = opRow(op.kind).keys;
      std::vector<std::string> allKeys = {"name", "op", "in", "out"};
      allKeys.insert(allKeys.end(), keys.begin(), keys.end());
      for (const auto& k : keys)
        if (auto a = m.find(k)) collectDiagnostics(errs_, [&] { op.attrs[k] = toAttr(*a); });
      collectDiagnostics(errs_, [&] { m.finish(joinWords(allKeys)); });
      const OpArity ar = opRow(op.kind).arity;
      auto fits = [](size_t n, int lo, int hi) { return int(n) >= lo && (hi < 0 || int(n) <= hi); };
      auto plural = [](int lo, int hi) { return lo == 1 && hi == 1 ? "" : "s"; };
      if (inOk && !fits(ins.size(), ar.inMin, ar.inMax))
        errs_.push_back(Diagnostic{"G-118", m.keyLoc("in"),
                                   fmt::format("{}.in: {} takes {} input stream{}, got {}", m.path(), opKindName(op.kind),
                                               arityWords(ar.inMin, ar.inMax), plural(ar.inMin, ar.inMax), ins.size()), {}});
      if (outOk && !fits(outs.size(), ar.outMin, ar.outMax))
        errs_.push_back(Diagnostic{"G-118", m.keyLoc("out"),
                                   fmt::format("{}.out: {} takes {} output stream{}, got {}", m.path(), opKindName(op.kind),
                                               arityWords(ar.outMin, ar.outMax), plural(ar.outMin, ar.outMax), outs.size()), {}});
      auto t = op.attrs.find("tensor");
      if (t != op.attrs.end() && tensorsOk_) {
        if (t->second.isList || !tensorNames_.count(t->second.scalar)) {
          std::vector<std::string> names;
          for (const auto& x : g_.tensors) names.push_back(x.name);
          errs_.push_back(Diagnostic{"G-106", t->second.loc,
                                     fmt::format("{}.tensor: unknown tensor '{}'; declared tensors: {}",
                                                 m.path(), t->second.scalar,
                                                 names.empty() ? "none" : joinWords(names)), {}});
        }
      }
    }
    g_.ops.push_back(std::move(op));
  }

  void checkWiring() {
    for (size_t i = 0; i < g_.streams.size(); ++i) {
      const Stream& s = g_.streams[i];
      bool prod = s.producer.valid(), cons = !s.consumers.empty();
      // A stream with one side only (op o `did` it, no op `missing` it): reported where the
      // graph names that side.
      auto oneSided = [&](const char* id, const Op& o, const StreamRef& ref, const char* did,
                          const char* missing) {
        std::vector<DiagNote> notes{DiagNote{o.loc, fmt::format("{} by op {} here", did, o.name)}};
        if (declared_[i]) notes.push_back(DiagNote{s.loc, "declared here"});
        errs_.push_back(Diagnostic{id, ref.loc,
                                   fmt::format("{}: stream '{}' is {} by {} but no op {} it",
                                               ref.path, s.name, did, o.name, missing),
                                   notes});
      };
      if (!prod && !cons) {
        errs_.push_back(Diagnostic{"G-119", s.loc,
                                   fmt::format("streams.{}: stream '{}' is declared but no op produces or consumes it",
                                               s.name, s.name),
                                   {}});
      } else if (!prod) {
        const Op& c = g_.ops[s.consumers[0].v];
        if (c.kind == OpKind::LinearOffChipLoad || c.kind == OpKind::SelectGen) continue;  // G-118 already reported
        oneSided("G-104", c, consumerRef_[i], "consumed", "produces");
      } else if (!cons) {
        const Op& p = g_.ops[s.producer.v];
        if (p.kind == OpKind::LinearOffChipStore) continue;  // G-118 already reported
        oneSided("G-105", p, producerRef_[i], "produced", "consumes");
      }
    }
  }
};

}  // namespace

std::optional<StreamId> StepGraph::findStream(const std::string& n) const {
  for (size_t i = 0; i < streams.size(); ++i)
    if (streams[i].name == n) return StreamId{int(i)};
  return std::nullopt;
}

std::optional<int> StepGraph::findTensor(const std::string& n) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == n) return int(i);
  return std::nullopt;
}

StepGraph loadGraph(const std::string& path) { return GraphLoader(path).run(); }

}  // namespace stepgen
