#include "support/yaml_doc.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <fstream>
#include <sstream>

namespace stepgen {

struct YamlValue::Ctx {
  std::string file;
  YamlDiagIds ids;
};

namespace {

SourceLoc toLoc(const std::string& file, const YAML::Mark& m) {
  if (m.is_null()) return SourceLoc{file, 1, 1};
  return SourceLoc{file, m.line + 1, m.column + 1};
}

std::string childPath(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string quoteShort(const std::string& s) {
  if (s.size() > 40) return "'" + s.substr(0, 37) + "...'";
  return "'" + s + "'";
}

}  // namespace

std::string joinWords(const std::vector<std::string>& words) {
  std::string s;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i) s += ", ";
    s += words[i];
  }
  return s;
}

// ---------------------------------------------------------------------------------- value

YamlValue::YamlValue(std::shared_ptr<const Ctx> ctx, std::shared_ptr<const YAML::Node> node,
                     std::string path, const SourceLoc* keyLoc)
    : ctx_(std::move(ctx)), node_(std::move(node)), path_(std::move(path)) {
  // An empty value's mark points at the next token, which is misleading: use the key.
  if (keyLoc && (node_->IsNull() || node_->Mark().is_null()))
    loc_ = *keyLoc;
  else
    loc_ = toLoc(ctx_->file, node_->Mark());
}

const YamlDiagIds& YamlValue::ids() const { return ctx_->ids; }

bool YamlValue::isMap() const { return node_->IsMap(); }
bool YamlValue::isList() const { return node_->IsSequence(); }
bool YamlValue::isScalar() const { return node_->IsScalar(); }
bool YamlValue::isNull() const { return !node_->IsDefined() || node_->IsNull(); }
bool YamlValue::isPlainScalar() const { return node_->IsScalar() && node_->Tag() == "?"; }

std::string YamlValue::kindName() const {
  if (isMap()) return "a map";
  if (isList()) return "a list";
  if (isScalar()) return "the text " + quoteShort(node_->Scalar());
  return "nothing";
}

void YamlValue::fail(const std::string& id, const std::string& message,
                     std::vector<DiagNote> notes) const {
  std::string text = path_.empty() ? message : path_ + ": " + message;
  throw DiagError(id, loc_, text, std::move(notes));
}

void YamlValue::failType(const std::string& what) const {
  fail(ids().wrongType, fmt::format("expected {}, got {}", what, kindName()));
}

std::string YamlValue::asString() const {
  if (!isScalar()) failType("a string");
  return node_->Scalar();
}

int64_t YamlValue::asInt(int64_t lo, int64_t hi) const {
  if (!isPlainScalar()) failType("an integer");
  const std::string& s = node_->Scalar();
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (b != e && *b == '+' && b + 1 != e && b[1] != '-') ++b;
  int64_t v = 0;
  auto r = std::from_chars(b, e, v);
  if (b == e || r.ec == std::errc::invalid_argument || r.ptr != e) failType("an integer");
  if (r.ec == std::errc::result_out_of_range || v < lo || v > hi) {
    if (hi == INT64_MAX)
      fail(ids().outOfRange, fmt::format("must be >= {}, got {}", lo, s));
    fail(ids().outOfRange, fmt::format("must be between {} and {}, got {}", lo, hi, s));
  }
  return v;
}

std::string YamlValue::asEnum(const std::vector<std::string>& allowed) const {
  if (!isScalar()) failType("one of " + joinWords(allowed));
  const std::string& s = node_->Scalar();
  for (const auto& w : allowed)
    if (w == s) return s;
  fail(ids().notAllowed, fmt::format("{} is not one of {}", quoteShort(s), joinWords(allowed)));
}

std::vector<YamlValue> YamlValue::asList() const {
  if (!isList()) failType("a list");
  std::vector<YamlValue> out;
  size_t i = 0;
  for (const auto& child : *node_) {
    out.push_back(YamlValue(ctx_, std::make_shared<const YAML::Node>(child),
                            fmt::format("{}[{}]", path_, i), &loc_));
    ++i;
  }
  return out;
}

YamlMap YamlValue::asMap() const {
  if (!isMap()) failType("a map");
  return YamlMap(*this);
}

// ---------------------------------------------------------------------------------- map

YamlMap::YamlMap(YamlValue self) : self_(std::move(self)) {
  const YAML::Node& n = *self_.node_;
  for (auto it = n.begin(); it != n.end(); ++it) {
    SourceLoc kl = toLoc(self_.ctx_->file, it->first.Mark());
    if (!it->first.IsScalar())
      throw DiagError(self_.ids().wrongType, kl,
                      fmt::format("{}keys must be plain words, got a {}",
                                  self_.path_.empty() ? "" : self_.path_ + ": ",
                                  it->first.IsMap() ? "map" : "list"));
    std::string key = it->first.Scalar();
    int prev = index(key);
    if (prev >= 0)
      throw DiagError(self_.ids().duplicateKey, kl,
                      fmt::format("{}: key '{}' appears twice", childPath(self_.path_, key), key),
                      {DiagNote{entries_[prev].keyLoc, "first written here"}});
    entries_.push_back(YamlEntry{key, kl,
                                 YamlValue(self_.ctx_, std::make_shared<const YAML::Node>(it->second),
                                           childPath(self_.path_, key), &kl)});
    used_.push_back(false);
  }
}

int YamlMap::index(const std::string& key) const {
  for (size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].key == key) return int(i);
  return -1;
}

bool YamlMap::has(const std::string& key) const { return index(key) >= 0; }

std::optional<YamlValue> YamlMap::find(const std::string& key) {
  int i = index(key);
  if (i < 0) return std::nullopt;
  used_[i] = true;
  return entries_[i].value;
}

YamlValue YamlMap::get(const std::string& key) {
  auto v = find(key);
  if (!v)
    throw DiagError(self_.ids().missingKey, self_.loc(),
                    fmt::format("missing required key '{}' ({})", key, childPath(self_.path_, key)));
  return *v;
}

SourceLoc YamlMap::keyLoc(const std::string& key) const {
  int i = index(key);
  return i < 0 ? self_.loc() : entries_[i].keyLoc;
}

int64_t YamlMap::getInt(const std::string& key, int64_t lo, int64_t hi) { return get(key).asInt(lo, hi); }
std::string YamlMap::getString(const std::string& key) { return get(key).asString(); }
std::string YamlMap::getEnum(const std::string& key, const std::vector<std::string>& allowed) {
  return get(key).asEnum(allowed);
}
std::vector<YamlValue> YamlMap::getList(const std::string& key) { return get(key).asList(); }
YamlMap YamlMap::getMap(const std::string& key) { return get(key).asMap(); }

std::vector<YamlEntry> YamlMap::entries() {
  for (size_t i = 0; i < used_.size(); ++i) used_[i] = true;
  return entries_;
}

void YamlMap::finish(const std::string& allowedHint) const {
  std::vector<Diagnostic> d;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (used_[i]) continue;
    std::string msg = fmt::format("unknown key '{}' ({})", entries_[i].key,
                                  childPath(self_.path_, entries_[i].key));
    if (!allowedHint.empty()) msg += "; known keys here: " + allowedHint;
    d.push_back(Diagnostic{self_.ids().unknownKey, entries_[i].keyLoc, msg, {}});
  }
  if (!d.empty()) throw DiagError(std::move(d));
}

// ---------------------------------------------------------------------------------- load

YamlValue parseYamlString(const std::string& text, const std::string& fileName, const YamlDiagIds& ids) {
  std::istringstream in(text);
  auto ctx = std::make_shared<YamlValue::Ctx>(YamlValue::Ctx{fileName, ids});
  try {
    auto node = std::make_shared<const YAML::Node>(YAML::Load(in));
    return YamlValue(ctx, node, "", nullptr);
  } catch (const YAML::ParserException& e) {
    throw DiagError("Y-001", toLoc(fileName, e.mark), "YAML syntax error: " + e.msg);
  }
}

YamlValue loadYamlFile(const std::string& path, const YamlDiagIds& ids) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DiagError("Y-002", SourceLoc{path, 0, 0}, "cannot read file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parseYamlString(ss.str(), path, ids);
}

}  // namespace stepgen
