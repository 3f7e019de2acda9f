#pragma once
// A ROM as a SystemVerilog function with a case statement (Yosys maps it to a ROM, Verilator
// to a table): the form of the emitted sigmoid, exp and reciprocal tables.
#include <cstdint>
#include <string>
#include <vector>

namespace stepgen {

/// Text of `function automatic logic [valBits-1:0] <name>(input logic [idxBits-1:0] <arg>)`
/// returning values[arg] (4 entries per line, index and value in hex; other indices give 0),
/// ending with `endfunction` and a newline. valBits <= 32, values.size() <= 2^idxBits and a
/// multiple of 4.
std::string caseRomFunction(const std::string& name, const std::string& arg, int idxBits, int valBits,
                            const std::vector<uint32_t>& values);

}  // namespace stepgen
