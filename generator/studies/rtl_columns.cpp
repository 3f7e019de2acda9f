#include "studies/rtl_columns.hpp"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

#include "support/csv.hpp"

namespace stepgen {

std::map<std::vector<std::string>, std::vector<std::string>> readCsvColumns(const std::string& path,
                                                                          const std::vector<std::string>& keyColumns,
                                                                          const std::vector<std::string>& valueColumns) {
  std::map<std::vector<std::string>, std::vector<std::string>> m;
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
  std::vector<size_t> keys, values;
  for (const std::string& k : keyColumns) keys.push_back(col(k));
  for (const std::string& v : valueColumns) values.push_back(col(v));
  for (int n = 2; std::getline(f, line); ++n) {
    const std::vector<CsvField> row = splitCsvLine(line);
    if (row.size() != header.size())
      throw std::runtime_error(fmt::format("{}:{}: {} fields, the header has {}", path, n, row.size(), header.size()));
    std::vector<std::string> key, value;
    for (size_t k : keys) key.push_back(row[k].text);
    for (size_t v : values) value.push_back(row[v].text);
    m[key] = value;
  }
  return m;
}

std::map<std::vector<std::string>, RtlColumns> readRtlColumns(const std::string& path,
                                                              const std::vector<std::string>& keyColumns) {
  std::map<std::vector<std::string>, RtlColumns> m;
  for (const auto& [key, v] : readCsvColumns(path, keyColumns, {"rtl_cycles", "outputs_bit_exact"}))
    if (const auto cycles = parseWholeNumber(v[0]); cycles) m[key] = {*cycles, v[1] == "yes"};  // else no RTL run
  return m;
}

}  // namespace stepgen
