#include "studies/rtl_columns.hpp"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

#include "support/csv.hpp"

namespace stepgen {

std::map<std::vector<std::string>, RtlColumns> readRtlColumns(const std::string& path,
                                                              const std::vector<std::string>& keyColumns) {
  std::map<std::vector<std::string>, RtlColumns> m;
  if (path.empty()) return m;
  std::ifstream f(path);
  if (!f) throw std::runtime_error(fmt::format("cannot read {}", path));
  std::string line;
  std::getline(f, line);
  std::vector<std::string> header;
  for (const CsvField& x : splitCsvLine(line)) header.push_back(x.text);
  auto col = [&](const std::string& name) {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    throw std::runtime_error(fmt::format("{}: no column '{}'", path, name));
  };
  std::vector<size_t> keys;
  for (const std::string& k : keyColumns) keys.push_back(col(k));
  const size_t rc = col("rtl_cycles"), ex = col("outputs_bit_exact");
  for (int n = 2; std::getline(f, line); ++n) {
    const std::vector<CsvField> row = splitCsvLine(line);
    if (row.size() != header.size())
      throw std::runtime_error(fmt::format("{}:{}: {} fields, the header has {}", path, n, row.size(), header.size()));
    const auto cycles = parseWholeNumber(row[rc].text);
    if (!cycles) continue;  // no RTL run for this row
    std::vector<std::string> key;
    for (size_t k : keys) key.push_back(row[k].text);
    m[key] = {*cycles, row[ex].text == "yes"};
  }
  return m;
}

}  // namespace stepgen
