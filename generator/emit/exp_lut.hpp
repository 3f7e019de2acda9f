#pragma once
// Emits the exp table of the compute unit's exp as SystemVerilog (docs/hardware.md section 3).
// The values come from sim/common/fp (expTable), the same ones the model computes with.
#include <string>

namespace stepgen {

/// Text of sg_exp_lut.sv: package sg_exp_lut with the function sg_exp_lut(row) returning the
/// 23-bit mantissa expTable()[row] (a case statement: a ROM for Yosys, a table for
/// Verilator). emitFabric writes it into every fabric; the RTL unit tests verilate the golden
/// copy tests/rtl/sg_exp_lut.sv, which must equal this (tests/unit/test_fp.cpp;
/// STEPGEN_REGEN_GOLDEN=1 rewrites it).
std::string expLutSv();

}  // namespace stepgen
