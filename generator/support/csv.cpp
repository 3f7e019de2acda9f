#include "support/csv.hpp"

#include <stdexcept>

namespace stepgen {

std::vector<CsvField> splitCsvLine(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::vector<CsvField> f;
  size_t start = 0;
  for (;;) {
    const size_t comma = line.find(',', start);
    f.push_back({line.substr(start, comma == std::string::npos ? std::string::npos : comma - start), int(start) + 1});
    if (comma == std::string::npos) return f;
    start = comma + 1;
  }
}

std::optional<int64_t> parseWholeNumber(const std::string& s) {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != s.size()) return std::nullopt;
  return v;
}

}  // namespace stepgen
