// composeGraph: stages are parsed with yaml-cpp, renamed, and written back in flow style one
// declaration or op per line, in the stages' order (byte-for-byte reproducible).
#include "builders/compose.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <regex>
#include <set>

#include "support/diag.hpp"

namespace stepgen {

namespace {

[[noreturn]] void badCompose(const std::string& msg) { throw DiagError("G-120", SourceLoc{}, "compose: " + msg); }

bool isIdent(const std::string& s) { return std::regex_match(s, std::regex("[A-Za-z_][A-Za-z0-9_]*")); }

struct Renamer {
  const GraphStage& stage;
  std::set<std::string> symbols;

  std::string pre(const std::string& n) const { return stage.prefix + "_" + n; }

  // Symbols inside an expression ("B*K", "F/tf") get the prefix; other words (true) stay.
  std::string expr(const std::string& e) const {
    static const std::regex word("[A-Za-z_][A-Za-z0-9_]*");
    std::string out;
    auto it = std::sregex_iterator(e.begin(), e.end(), word);
    size_t last = 0;
    for (; it != std::sregex_iterator(); ++it) {
      out += e.substr(last, size_t(it->position()) - last);
      out += symbols.count(it->str()) ? pre(it->str()) : it->str();
      last = size_t(it->position() + it->length());
    }
    return out + e.substr(last);
  }

  // Flow text of a value whose scalars are expressions (shape, tile, iter, strides, n, ...).
  std::string exprs(const YAML::Node& v) const {
    if (v.IsScalar()) return expr(v.Scalar());
    if (v.IsSequence()) {
      std::vector<std::string> parts;
      for (const auto& c : v) parts.push_back(exprs(c));
      return "[" + fmt::format("{}", fmt::join(parts, ", ")) + "]";
    }
    badCompose(fmt::format("stage {}: a map where an expression or a list was expected", stage.prefix));
  }

  std::string streams(const YAML::Node& v) const {
    if (v.IsScalar()) return pre(v.Scalar());
    std::vector<std::string> parts;
    for (const auto& c : v) parts.push_back(pre(c.Scalar()));
    return "[" + fmt::format("{}", fmt::join(parts, ", ")) + "]";
  }

  std::string op(const YAML::Node& m) const {
    std::vector<std::string> parts;
    for (const auto& kv : m) {
      const std::string k = kv.first.Scalar();
      std::string v;
      if (k == "name") v = pre(kv.second.Scalar());
      else if (k == "in" || k == "out") v = streams(kv.second);
      else if (k == "tensor") v = stageTensorName(stage, kv.second.Scalar());
      else if (k == "op" || k == "fn" || k == "trace") v = kv.second.Scalar();
      else v = exprs(kv.second);
      parts.push_back(k + ": " + v);
    }
    return "{" + fmt::format("{}", fmt::join(parts, ", ")) + "}";
  }
};

}  // namespace

std::string stageTensorName(const GraphStage& s, const std::string& tensor) {
  auto it = s.shared.find(tensor);
  return it != s.shared.end() ? it->second : s.prefix + "_" + tensor;
}

std::map<std::string, Matrix> stageInputs(const GraphStage& s, const std::map<std::string, Matrix>& in, bool keepShared) {
  std::map<std::string, Matrix> out;
  for (const auto& [name, m] : in)
    if (keepShared || !s.shared.count(name)) out[stageTensorName(s, name)] = m;
  return out;
}

ComposedStages composeStages(const std::set<std::string>& layerTensors, const std::vector<GraphStage>& stages) {
  std::set<std::string> prefixes;
  ComposedStages out;
  std::string &symbols = out.symbols, &schedule = out.schedule, &decls = out.decls, &streams = out.streams, &ops = out.ops;
  for (const GraphStage& s : stages) {
    if (!isIdent(s.prefix) || !prefixes.insert(s.prefix).second)
      badCompose(fmt::format("stage prefix '{}' is not an identifier or is used twice", s.prefix));
    for (const auto& [from, to] : s.shared)
      if (!layerTensors.count(to)) badCompose(fmt::format("stage {}: shared tensor {} -> {} is not a layer tensor", s.prefix, from, to));
    YAML::Node g;
    try {
      g = YAML::Load(s.text);
    } catch (const YAML::Exception& e) {
      badCompose(fmt::format("stage {}: {}", s.prefix, e.what()));
    }
    if (!g["ops"] || !g["ops"].IsSequence()) badCompose(fmt::format("stage {}: the text has no ops", s.prefix));
    Renamer r{s, {}};
    for (const char* key : {"symbols", "schedule"})
      if (g[key])
        for (const auto& kv : g[key]) r.symbols.insert(kv.first.Scalar());
    for (const char* key : {"symbols", "schedule"}) {
      if (!g[key]) continue;
      std::string& dst = std::string(key) == "symbols" ? symbols : schedule;
      for (const auto& kv : g[key]) dst += fmt::format("{}{}: {}", dst.empty() ? "" : ", ", r.pre(kv.first.Scalar()), kv.second.Scalar());
    }
    if (g["tensors"])
      for (const auto& kv : g["tensors"]) {
        if (s.shared.count(kv.first.Scalar())) continue;
        decls += fmt::format("  {}: {{shape: {}, role: {}}}\n", r.pre(kv.first.Scalar()), r.exprs(kv.second["shape"]),
                             kv.second["role"].Scalar());
      }
    if (g["streams"])
      for (const auto& kv : g["streams"]) {
        std::vector<std::string> parts;
        for (const auto& f : kv.second) parts.push_back(f.first.Scalar() + ": " + r.exprs(f.second));
        streams += fmt::format("  {}: {{{}}}\n", r.pre(kv.first.Scalar()), fmt::join(parts, ", "));
      }
    ops += fmt::format("  # stage {}\n", s.prefix);
    for (const auto& o : g["ops"]) ops += "  - " + r.op(o) + "\n";
  }
  return out;
}

std::string composeGraph(const std::string& name, const std::vector<std::string>& comment,
                         const std::vector<LayerTensor>& tensors, const std::vector<GraphStage>& stages) {
  std::set<std::string> layerTensors;
  for (const LayerTensor& t : tensors) layerTensors.insert(t.name);
  const ComposedStages c = composeStages(layerTensors, stages);
  const std::string &symbols = c.symbols, &schedule = c.schedule, &decls = c.decls, &streams = c.streams, &ops = c.ops;
  std::string y;
  for (const std::string& c : comment) y += "# " + c + "\n";
  y += "stepgraph: " + name + "\n";
  if (!symbols.empty()) y += "symbols: {" + symbols + "}\n";
  if (!schedule.empty()) y += "schedule: {" + schedule + "}\n";
  y += "tensors:\n";
  for (const LayerTensor& t : tensors)
    y += fmt::format("  {}: {{shape: [{}], role: {}}}\n", t.name, fmt::join(t.shape, ", "), t.role);
  y += decls;
  if (!streams.empty()) y += "streams:\n" + streams;
  return y + "ops:\n" + ops;
}

}  // namespace stepgen
