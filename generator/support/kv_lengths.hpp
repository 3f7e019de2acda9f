#pragma once
// KV-cache lengths of LLM decode batches: the CSV format of examples/attention/data
// (`source_file,batch,stdev_label,start_row_1based,end_row_1based,slot,context_tokens`, one
// row per request, the rows of one batch consecutive and its slots 0 .. batch-1 in order).
#include <cstdint>
#include <string>
#include <vector>

namespace stepgen {

/// One decode batch: its source name (`source_file`), the spread label of the trace it
/// came from (`stdev_label`) and every request's KV length (tokens, `context_tokens`).
struct KvBatch {
  std::string id;
  int64_t stdevLabel = 0;
  std::vector<int64_t> lengths;
};

/// Reads every batch of a KV-length CSV, in file order. Errors (DiagError R-407 at
/// file:line:column of the field): a missing file, a header other than the one above, a row
/// with the wrong number of fields, a field that is not a whole number, a negative length, a
/// batch size that disagrees with the batch's rows, slots out of order.
std::vector<KvBatch> readKvBatches(const std::string& path);

/// Batch `index` (0-based, file order) of a KV-length CSV. Throws as readKvBatches, and
/// DiagError G-120 naming the file when there is no such batch.
KvBatch readKvBatch(const std::string& path, int64_t index);

/// Every length divided by `divisor` (>= 1), rounding up: a smaller run for RTL.
std::vector<int64_t> scaledKvLengths(std::vector<int64_t> lengths, int64_t divisor);

/// A command's batch of KV lengths: `given` (--lengths), or batch `index` of the CSV `csv`
/// when it is not empty; the first `requests` of them (0: all); each divided by `divisor`
/// (scaledKvLengths). Throws as readKvBatch, and DiagError G-120 "<cmd>: give --kv-lengths
/// CSV or --lengths" when there is none.
std::vector<int64_t> requestKvLengths(std::vector<int64_t> given, const std::string& csv, int64_t index, int64_t requests,
                                      int64_t divisor, const std::string& cmd);

}  // namespace stepgen
