#pragma once
// Emits sg_axi_top: the fabric behind AXI ports, so it drops into an FPGA shell (docs/axi.md).
#include <string>

#include "arch/arch_model.hpp"

namespace stepgen {

/// Text of `sg_axi_top.sv` for architecture `a`: module sg_axi_top with one AXI4 master
/// (512-bit data, INCR bursts, ports m<NN>_axi_*, NN = the AG's index in grid order) per
/// address generator, an AXI4-Lite control slave (s_axil_*; register map in
/// rtl_templates/sg_axi_lite.sv) and the fabric sg_top inside; the fabric's dbg_* outputs
/// pass through. A function of the architecture alone; deterministic. Never throws for a
/// validated ArchModel.
std::string emitAxiTop(const ArchModel& a);

}  // namespace stepgen
