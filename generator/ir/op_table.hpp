#pragma once
// The operator table: one row per STeP operator, read by the graph loader (name, keys,
// arity), the mapper (unit kind, absorbed or not), the bitstream writer and the timing model
// (compute-unit function). Adding an operator means one row here plus its shape rule
// (passes/), its functional semantics (model/), its unit behaviour (rtl_templates/ and the
// matching timing unit model) and their tests. Semantics: docs/step_semantics.md.
#include <optional>
#include <string>
#include <vector>

#include "arch/arch_model.hpp"
#include "arch/config_layout.hpp"
#include "ir/graph.hpp"

namespace stepgen {

/// How an operator reaches the fabric.
enum class OpHardware {
  Unit,      ///< placed on a unit of OpRow::unit (one per output for Parallelize)
  Absorbed,  ///< realised by links: fan-out, second input port, per-port stop-level map
  Cluster,   ///< only inside a fixed cluster (map/clusters.hpp), as its host or a member; M-306 outside one
};

/// Allowed numbers of input and output streams: [min, max], max -1 = no upper bound.
struct OpArity {
  int inMin = 1, inMax = 1, outMin = 1, outMax = 1;
};

/// One operator.
struct OpRow {
  OpKind kind;
  const char* name;               ///< as the STeP paper spells it, and as graph YAML writes it
  std::vector<std::string> keys;  ///< operator-specific YAML keys besides name, op, in, out
  OpArity arity;
  OpHardware hardware;
  UnitKind unit;                  ///< the unit kind it runs on (Empty unless hardware = Unit; a cluster host's: clusterUnit)
};

/// Every row, in OpKind order.
const std::vector<OpRow>& opTable();
/// The row of `k`.
const OpRow& opRow(OpKind k);

/// A compute-unit function: which (operator, fn) runs as which CuFunc, and the name the
/// architecture's compute_unit.functions lists for it.
struct CuFunctionRow {
  OpKind op;
  const char* fn;        ///< the op's `fn` attribute ("" for operators without one)
  CuFunc func;           ///< the cu.func configuration value (sg_cu.sv)
  const char* archName;  ///< entry of compute_unit.functions that enables it
  bool transposedB;      ///< matmul_t: in1 carries b transposed (cu.bt = 1)
};

/// The compute-unit function of `op`, or nullptr if `op` does not run on a compute unit or
/// names a function the hardware lacks (Scan other than add, an unknown Map fn). The
/// mapper (M-304 check), the bitstream (cu.func, cu.bt) and the model all read this.
const CuFunctionRow* cuFunctionOf(const Op& op);
/// The architecture function name the mapper looks for in compute_unit.functions (also for
/// functions the hardware lacks, e.g. "scan_max", so M-304 can name it); "" if none.
std::string cuFunctionName(const Op& op);

}  // namespace stepgen
