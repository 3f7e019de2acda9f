#include "emit/case_rom.hpp"

#include <fmt/format.h>

namespace stepgen {

std::string caseRomFunction(const std::string& name, const std::string& arg, int idxBits, int valBits,
                            const std::vector<uint32_t>& values) {
  const int idxDigits = (idxBits + 3) / 4, valDigits = (valBits + 3) / 4;
  std::string s = fmt::format("  function automatic logic [{}:0] {}(input logic [{}:0] {});\n", valBits - 1, name,
                              idxBits - 1, arg);
  s += fmt::format("    logic [{}:0] v;\n    case ({})\n", valBits - 1, arg);
  constexpr size_t kPerLine = 4;
  for (size_t i = 0; i < values.size(); i += kPerLine) {
    s += "     ";
    for (size_t j = i; j < i + kPerLine && j < values.size(); ++j)
      s += fmt::format(" {}'h{:0{}X}: v = {}'h{:0{}X};", idxBits, j, idxDigits, valBits, values[j], valDigits);
    s += "\n";
  }
  s += fmt::format("      default: v = {}'h0;\n    endcase\n    {} = v;\n  endfunction\n", valBits, name);
  return s;
}

}  // namespace stepgen
