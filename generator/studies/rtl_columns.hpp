#pragma once
// The RTL columns of an earlier study CSV, reused when only the model changed: the RTL
// is a function of the arch and the graph, so its cycles and outputs stand.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace stepgen {

/// What a study row measured in RTL.
struct RtlColumns {
  int64_t cycles = 0;      ///< rtl_cycles
  bool bitExact = false;   ///< outputs_bit_exact == "yes"
};

/// Every row of the CSV at `path`: the values of `valueColumns` keyed by those of
/// `keyColumns` (in the order given). "" gives an empty map. Throws std::runtime_error for a
/// file that cannot be read, a missing column or a row with the wrong number of fields.
std::map<std::vector<std::string>, std::vector<std::string>> readCsvColumns(const std::string& path,
                                                                          const std::vector<std::string>& keyColumns,
                                                                          const std::vector<std::string>& valueColumns);

/// The rows of the CSV at `path` that have rtl_cycles, keyed by the values of `keyColumns`
/// (in that order). "" gives an empty map. Throws std::runtime_error for a file that cannot
/// be read, a missing column or a row with the wrong number of fields.
std::map<std::vector<std::string>, RtlColumns> readRtlColumns(const std::string& path,
                                                              const std::vector<std::string>& keyColumns);

}  // namespace stepgen
