#include "support/kv_lengths.hpp"

#include <fmt/format.h>

#include <fstream>
#include <utility>

#include "support/csv.hpp"
#include "support/diag.hpp"

namespace stepgen {

namespace {
constexpr const char* kHeader = "source_file,batch,stdev_label,start_row_1based,end_row_1based,slot,context_tokens";
}  // namespace

std::vector<KvBatch> readKvBatches(const std::string& path) {
  auto fail = [&](int line, int col, const std::string& msg) -> DiagError {
    return DiagError("R-407", SourceLoc{path, line, col}, msg);
  };
  std::ifstream in(path);
  if (!in) throw fail(0, 0, "cannot read the KV-length file");
  std::string line;
  if (!std::getline(in, line) || line.substr(0, line.find('\r')) != kHeader)
    throw fail(1, 1, fmt::format("header must be {}", kHeader));
  std::vector<KvBatch> out;
  int64_t expectSize = 0;
  for (int ln = 2; std::getline(in, line); ++ln) {
    if (line.empty() || line == "\r") continue;
    const std::vector<CsvField> f = splitCsvLine(line);
    if (f.size() != 7) throw fail(ln, 1, fmt::format("{} fields, the header has 7", f.size()));
    auto number = [&](size_t i, const char* name) {
      const std::optional<int64_t> v = parseWholeNumber(f[i].text);
      if (!v) throw fail(ln, f[i].col, fmt::format("{} '{}' is not a whole number", name, f[i].text));
      return *v;
    };
    const int64_t batch = number(1, "batch"), stdev = number(2, "stdev_label"), slot = number(5, "slot"),
                  len = number(6, "context_tokens");
    if (len < 0) throw fail(ln, f[6].col, fmt::format("context_tokens {} is negative", len));
    if (batch < 1) throw fail(ln, f[1].col, fmt::format("batch {} must be at least 1", batch));
    if (out.empty() || out.back().id != f[0].text || int64_t(out.back().lengths.size()) == expectSize) {
      if (!out.empty() && int64_t(out.back().lengths.size()) != expectSize)
        throw fail(ln, 1, fmt::format("batch '{}' has {} rows, its batch field says {}", out.back().id,
                                      out.back().lengths.size(), expectSize));
      out.push_back({f[0].text, stdev, {}});
      expectSize = batch;
    }
    if (batch != expectSize) throw fail(ln, f[1].col, fmt::format("batch {} differs from the batch's {}", batch, expectSize));
    if (slot != int64_t(out.back().lengths.size()))
      throw fail(ln, f[5].col, fmt::format("slot {} out of order (expected {})", slot, out.back().lengths.size()));
    out.back().lengths.push_back(len);
  }
  if (!out.empty() && int64_t(out.back().lengths.size()) != expectSize)
    throw fail(0, 0, fmt::format("batch '{}' has {} rows, its batch field says {}", out.back().id, out.back().lengths.size(),
                                 expectSize));
  return out;
}

KvBatch readKvBatch(const std::string& path, int64_t index) {
  std::vector<KvBatch> all = readKvBatches(path);
  if (index < 0 || index >= int64_t(all.size()))
    throw DiagError("G-120", {path}, fmt::format("batch index {} is outside 0 .. {}", index, int64_t(all.size()) - 1));
  return std::move(all[size_t(index)]);
}

std::vector<int64_t> scaledKvLengths(std::vector<int64_t> lengths, int64_t divisor) {
  for (int64_t& l : lengths) l = (l + divisor - 1) / divisor;
  return lengths;
}

std::vector<int64_t> requestKvLengths(std::vector<int64_t> given, const std::string& csv, int64_t index, int64_t requests,
                                      int64_t divisor, const std::string& cmd) {
  if (!csv.empty()) given = readKvBatch(csv, index).lengths;
  if (given.empty()) throw DiagError("G-120", {}, cmd + ": give --kv-lengths CSV or --lengths");
  if (requests > 0 && requests < int64_t(given.size())) given.resize(size_t(requests));
  return scaledKvLengths(std::move(given), divisor);
}

}  // namespace stepgen
