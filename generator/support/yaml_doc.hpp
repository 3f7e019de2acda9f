#pragma once
// A thin located wrapper over yaml-cpp: every value knows its file, 1-based line/column and
// field path (e.g. `compute_unit.lanes`, `ops[3].in`), maps track which keys were read so
// unknown keys are errors, and typed getters throw DiagError naming the place and the field.
// Loaders pass their own diagnostic ids (YamlDiagIds) so an arch file reports A-1xx and a
// graph file G-1xx for the same kind of mistake; syntax errors are always Y-001.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/diag.hpp"

namespace YAML {
class Node;
}

namespace stepgen {

/// Diagnostic ids the wrapper raises for schema mistakes; defaults are the generic Y-xxx ids
/// (support/diag_ids.md). Syntax errors (Y-001) and unreadable files (Y-002) are fixed.
struct YamlDiagIds {
  std::string unknownKey = "Y-003";    ///< a key the schema does not have
  std::string missingKey = "Y-004";    ///< a required key is absent
  std::string wrongType = "Y-005";     ///< e.g. a list where an integer belongs
  std::string outOfRange = "Y-006";    ///< integer outside its allowed range
  std::string notAllowed = "Y-007";    ///< word not in the allowed set
  std::string duplicateKey = "Y-008";  ///< the same key twice in one map
};

class YamlMap;

/// One node of a loaded document with its location and field path. Cheap to copy (shares
/// the underlying yaml-cpp node and the document context).
class YamlValue {
 public:
  /// Location of the node: file and 1-based line/column. For an empty value (`key:` with
  /// nothing after it) this is the key's location.
  const SourceLoc& loc() const { return loc_; }
  /// Field path from the document root, e.g. `link.width_bits` or `units[1][2]`; "" = root.
  const std::string& path() const { return path_; }
  /// Ids this document reports schema errors with.
  const YamlDiagIds& ids() const;

  bool isMap() const;
  bool isList() const;
  bool isScalar() const;
  bool isNull() const;  ///< absent value (`key:`), or an empty document
  /// True for an unquoted scalar (quoted "16" is a string, not a number).
  bool isPlainScalar() const;
  /// A short name of the node's kind for messages: "a map", "a list", "a scalar", "nothing".
  std::string kindName() const;

  /// Scalar text (any scalar, quoted or not). Throws wrongType if not a scalar.
  std::string asString() const;
  /// Integer in [lo, hi] (decimal, optional sign, unquoted). Throws wrongType if the node is
  /// not an integer, outOfRange (naming the range) if outside it.
  int64_t asInt(int64_t lo, int64_t hi) const;
  /// One of `allowed` (exact, case-sensitive). Throws wrongType if not a scalar, notAllowed
  /// listing the allowed words otherwise.
  std::string asEnum(const std::vector<std::string>& allowed) const;
  /// The entries of a list (paths `path[i]`). Throws wrongType if not a list.
  std::vector<YamlValue> asList() const;
  /// A key-tracking reader over a map. Throws wrongType if not a map, duplicateKey if a
  /// key occurs twice.
  YamlMap asMap() const;

  /// Throws DiagError(id, loc(), "<path>: <message>").
  [[noreturn]] void fail(const std::string& id, const std::string& message,
                         std::vector<DiagNote> notes = {}) const;
  /// fail() with the wrongType id and "expected <what>, got <kind/text>".
  [[noreturn]] void failType(const std::string& what) const;

 private:
  friend class YamlMap;
  friend YamlValue loadYamlFile(const std::string&, const YamlDiagIds&);
  friend YamlValue parseYamlString(const std::string&, const std::string&, const YamlDiagIds&);
  struct Ctx;
  YamlValue(std::shared_ptr<const Ctx> ctx, std::shared_ptr<const YAML::Node> node,
            std::string path, const SourceLoc* keyLoc);
  std::shared_ptr<const Ctx> ctx_;
  std::shared_ptr<const YAML::Node> node_;
  std::string path_;
  SourceLoc loc_;
};

/// One `key: value` pair of a map, with the key's own location.
struct YamlEntry {
  std::string key;
  SourceLoc keyLoc;
  YamlValue value;
};

/// Reads a YAML map while recording which keys were consumed. Call finish() after reading
/// every known key: any key left over is an unknownKey error at the key's location.
class YamlMap {
 public:
  const SourceLoc& loc() const { return self_.loc(); }
  const std::string& path() const { return self_.path(); }
  /// The map itself as a value (for fail()).
  const YamlValue& value() const { return self_; }

  bool has(const std::string& key) const;
  /// Required key; marks it consumed. Throws missingKey (at the map) if absent.
  YamlValue get(const std::string& key);
  /// Optional key; marks it consumed.
  std::optional<YamlValue> find(const std::string& key);
  /// Location of a key (the key text itself); the map's location if absent.
  SourceLoc keyLoc(const std::string& key) const;

  /// get(key).asInt(lo, hi)
  int64_t getInt(const std::string& key, int64_t lo, int64_t hi);
  /// get(key).asString()
  std::string getString(const std::string& key);
  /// get(key).asEnum(allowed)
  std::string getEnum(const std::string& key, const std::vector<std::string>& allowed);
  /// get(key).asList()
  std::vector<YamlValue> getList(const std::string& key);
  /// get(key).asMap()
  YamlMap getMap(const std::string& key);

  /// All entries in document order, marking every key consumed (for maps keyed by names,
  /// such as a table of symbols).
  std::vector<YamlEntry> entries();
  /// Throws unknownKey naming each key not consumed (one diagnostic per key); `allowedHint`
  /// (e.g. "name, grid, units") is added to the message when non-empty.
  void finish(const std::string& allowedHint = {}) const;

 private:
  friend class YamlValue;
  explicit YamlMap(YamlValue self);
  YamlValue self_;
  std::vector<YamlEntry> entries_;
  std::vector<bool> used_;
  int index(const std::string& key) const;
};

/// Loads one YAML file. Errors: Y-002 if it cannot be read, Y-001 on a syntax error
/// (file:line:col from the parser, 1-based). An empty file gives a null root value.
YamlValue loadYamlFile(const std::string& path, const YamlDiagIds& ids = {});
/// Parses YAML text; `fileName` is used for locations only (the text need not exist on disk).
YamlValue parseYamlString(const std::string& text, const std::string& fileName,
                          const YamlDiagIds& ids = {});

/// Joins words as "a, b, c" (for messages listing allowed values).
std::string joinWords(const std::vector<std::string>& words);

}  // namespace stepgen
