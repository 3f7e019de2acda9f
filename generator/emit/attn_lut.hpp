#pragma once
// Emits the tables of the compute unit's attention functions (exp, recip, rsqrt) as
// SystemVerilog (docs/hardware.md section 3). The values come from sim/common/fp (expTable,
// recipTable, rsqrtTable, rsqrtHalfSqTable), the same ones the model computes with.
#include <string>

namespace stepgen {

/// Text of sg_attn_lut.sv: package sg_attn_lut with the functions exp_mant(row) (the 23-bit
/// mantissa expTable()[row]), recip_seed(idx) (recipTable()[idx]), rsqrt_seed(idx)
/// (rsqrtTable()[idx]) and rsqrt_hsq(idx) (rsqrtHalfSqTable()[idx]), each a case statement
/// (a ROM for Yosys, a table for Verilator). emitFabric writes it into every fabric; the RTL
/// unit tests verilate the golden copy tests/rtl/sg_attn_lut.sv, which must equal this
/// (tests/unit/test_fp.cpp; STEPGEN_REGEN_GOLDEN=1 rewrites it).
std::string attnLutSv();

}  // namespace stepgen
