#include "driver/decisions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

#include "arch/unit_catalogue.hpp"
#include "support/csv.hpp"

namespace stepgen {

MergeOrders readRtlMergeOrders(const CompileResult& c, const std::filesystem::path& csv) {
  const UnitCatalogue cat(c.arch);
  std::map<std::string, int> unitOf;
  for (UnitId u : cat.units()) unitOf[cat.instanceName(u)] = u.v;
  // (unit, context) -> the EagerMerge placed there
  std::map<std::pair<int, int>, int> mergeAt;
  for (size_t i = 0; i < c.graph.ops.size(); ++i)
    if (c.graph.ops[i].kind == OpKind::EagerMerge && c.mapping.ops.at(i).unit >= 0)
      mergeAt[{c.mapping.ops[i].unit, c.mapping.ops[i].ctx}] = int(i);

  std::ifstream in(csv);
  if (!in) throw std::runtime_error(fmt::format("decision log '{}': cannot be read", csv.string()));
  MergeOrders orders;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const auto bad = [&](const std::string& why) {
      return std::runtime_error(fmt::format("decision log '{}' line {}: {}", csv.string(), n, why));
    };
    std::vector<CsvField> f = splitCsvLine(line);
    if (n == 1) {
      if (line != "cycle,section,unit,input") throw bad("the header must be cycle,section,unit,input");
      continue;
    }
    if (f.size() != 4) throw bad(fmt::format("{} fields, expected 4", f.size()));
    const auto section = parseWholeNumber(f[1].text), input = parseWholeNumber(f[3].text);
    if (!parseWholeNumber(f[0].text) || !section) throw bad("cycle and section must be whole numbers");
    if (!input || (*input != 0 && *input != 1)) throw bad("field 'input' must be 0 or 1");
    const auto u = unitOf.find(f[2].text);
    if (u == unitOf.end()) throw bad(fmt::format("no unit '{}' in this fabric", f[2].text));
    const auto op = mergeAt.find({u->second, int(*section)});
    if (op == mergeAt.end()) throw bad(fmt::format("unit '{}' holds no EagerMerge in section {}", f[2].text, *section));
    orders[op->second].push_back(int(*input));
  }
  return orders;
}

int64_t differingDecisions(const MergeOrders& model, const MergeOrders& rtl) {
  static const std::vector<int> none;
  const auto orderOf = [](const MergeOrders& m, int op) -> const std::vector<int>& {
    const auto it = m.find(op);
    return it == m.end() ? none : it->second;
  };
  MergeOrders all = model;
  all.insert(rtl.begin(), rtl.end());  // every op either side names
  int64_t n = 0;
  for (const auto& entry : all) {
    const std::vector<int>&a = orderOf(model, entry.first), &b = orderOf(rtl, entry.first);
    const size_t common = std::min(a.size(), b.size());
    for (size_t k = 0; k < common; ++k) n += a[k] != b[k];
    n += int64_t(std::max(a.size(), b.size()) - common);
  }
  return n;
}

int64_t decisionCount(const MergeOrders& orders) {
  int64_t n = 0;
  for (const auto& [op, o] : orders) n += int64_t(o.size());
  return n;
}

}  // namespace stepgen
