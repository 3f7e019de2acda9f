#pragma once
// The two CSV inputs (routing traces, KV-length batches) share their line splitting and
// number parsing here; each reader keeps its own format checks and messages.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepgen {

/// One field of a CSV line and the 1-based column of its first character.
struct CsvField {
  std::string text;
  int col;
};

/// Splits `line` at every comma (no quoting: the project's files have none). A trailing CR
/// (CRLF files) is dropped. An empty line gives one empty field.
std::vector<CsvField> splitCsvLine(std::string line);

/// The whole field as a base-10 integer, or nothing if any character is not part of it.
std::optional<int64_t> parseWholeNumber(const std::string& s);

}  // namespace stepgen
