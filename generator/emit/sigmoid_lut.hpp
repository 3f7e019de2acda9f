#pragma once
// Emits the sigmoid table of silu as SystemVerilog (docs/hardware.md section 3). The values
// come from sim/common/fp (sigmoidTable), the same ones the model computes with.
#include <string>

namespace stepgen {

/// Text of sg_sigmoid_lut.sv: package sg_sigmoid_lut with the function sg_sigmoid_lut(idx)
/// returning sigmoidTable()[idx] (alias sigmoid_lut(idx) for iverilog; implementations
/// sigmoid_lut_flat and sigmoid_lut_case). emitFabric writes it into every fabric; the RTL
/// unit tests verilate the golden copy tests/rtl/sg_sigmoid_lut.sv, which must equal this
/// (tests/unit/test_fp.cpp; STEPGEN_REGEN_GOLDEN=1 rewrites it).
std::string sigmoidLutSv();

/// Text of sg_sigmoid_rom.sv: module sg_sigmoid_rom, the same table as a ROM with two
/// synchronous read ports (clk; i0, i1 indices; q0, q1 the entries one cycle later), which
/// synthesis maps to block RAM; sg_cu holds one per two words of a beat. Golden copy
/// tests/rtl/sg_sigmoid_rom.sv, as for sigmoidLutSv.
std::string sigmoidRomSv();

}  // namespace stepgen
