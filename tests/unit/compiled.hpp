#pragma once
// Test helpers shared by the mapping tests: look-ups in a CompileResult.
#include <functional>
#include <stdexcept>
#include <string>

#include "driver/pipeline.hpp"

namespace stepgen::testing {

/// Configuration field `name` of context (section) `ctx` of fabric unit `unit` in the
/// compiled image. Throws std::logic_error if the unit's kind has no such field.
inline uint64_t cfgFieldAt(const CompileResult& c, int unit, int ctx, const std::string& name) {
  const KindLayout& k = c.programLayout.kindLayout(c.arch.units.at(size_t(unit)).kind);
  for (size_t s = 0; s < c.programLayout.slots.size(); ++s)
    if (c.programLayout.slots[s].unit == unit)
      for (size_t f = 0; f < k.fields.size(); ++f)
        if (k.fields[f].name == name) return c.image.values[s].at(size_t(ctx))[f];
  throw std::logic_error("no field " + name);
}

/// Configuration field `name` of context 0 of fabric unit `unit`.
inline uint64_t cfgField(const CompileResult& c, int unit, const std::string& name) { return cfgFieldAt(c, unit, 0, name); }

/// The id of the first diagnostic `f` raises (DiagError), or "none" when it raises none.
inline std::string diagId(const std::function<void()>& f) {
  try {
    f();
  } catch (const DiagError& e) {
    return e.diags.at(0).id;
  }
  return "none";
}

/// OpId of the operator called `name`. Throws std::logic_error if there is none.
inline int opIndex(const CompileResult& c, const std::string& name) {
  for (size_t i = 0; i < c.graph.ops.size(); ++i)
    if (c.graph.ops[i].name == name) return int(i);
  throw std::logic_error("no op " + name);
}

}  // namespace stepgen::testing
