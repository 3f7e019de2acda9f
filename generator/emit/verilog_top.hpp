#pragma once
// Emits the fabric's top module: a function of the architecture alone (docs/architecture.md#principles).
#include <string>
#include <vector>

#include "arch/arch_model.hpp"
#include "arch/config_layout.hpp"

namespace stepgen {

/// One emitted file (name relative to the RTL output folder, text).
struct RtlFile {
  std::string name;
  std::string text;
};

/// All files of the fabric, in compile order: sg_cfg_pkg.sv, sg_sigmoid_lut.sv, sg_sigmoid_rom.sv and sg_attn_lut.sv (generated), the hand-written
/// templates copied from rtl_templates/ (read from `templateDir`), `sg_top.sv`
/// (module sg_top, ports in docs/hardware.md section 6), then the AXI wrapper: sg_axi_master.sv,
/// sg_axi_lite.sv and the generated `sg_axi_top.sv` (docs/axi.md). Deterministic.
/// Throws std::runtime_error if a template file cannot be read.
std::vector<RtlFile> emitFabric(const ArchModel& a, const ConfigLayout& l, const std::string& templateDir);

/// Template files every fabric instantiates, in compile order (packages first). emitFabric
/// adds sg_route.sv and sg_combine.sv after them when the architecture has memory_unit.route.
const std::vector<std::string>& templateFiles();

}  // namespace stepgen
