# Unit-level RTL test of rtl_templates/sg_route.sv (the front of an MoE layer: Partition ->
# Reshape(tb, pad) / Promote -> retile -> EagerMerge, docs in the module header).
#
# sg_route has plain configuration ports and needs no sg_cfg_pkg. Three verilated parameter
# sets (PREFIX Vsg_route_<tag>):
#   a: W=4,  MAXT=64, MAXE=8,   MAXK=2, ROWW=16  (E = MAXE, k = MAXK)
#   b: W=8,  MAXT=64, MAXE=16,  MAXK=4, ROWW=32  (E < MAXE, k < MAXK: unused slots ignored)
#   c: W=16, MAXT=64, MAXE=128, MAXK=8, ROWW=64  (the default size; Qwen3 top-8 trace)
# The test reads the routing traces in examples/moe/data (STEPGEN_ROOT define).
# config_layout.cpp is linked only because rtl_unit_util.hpp declares CfgVec/testArch.
include(${STEPGEN_ROOT}/tests/rtl/sg_rtl.cmake)

# Lint: a small odd-sized set (nothing a power of two) and the default size.
sg_rtl_module_test(route sg_route
  MODELS "a|-GW=4 -GMAXT=64 -GMAXE=8 -GMAXK=2 -GROWW=16"
         "b|-GW=8 -GMAXT=64 -GMAXE=16 -GMAXK=4 -GROWW=32"
         "c|-GW=16 -GMAXT=64 -GMAXE=128 -GMAXK=8 -GROWW=64"
  LINT "small|-GW=4 -GMAXT=5 -GMAXE=3 -GMAXK=1 -GROWW=12"
       "big|-GW=16 -GMAXT=1024 -GMAXE=128 -GMAXK=8 -GROWW=256"
  SOURCES ${SG_RTL}/sg_beat_pkg.sv ${SG_RTL}/sg_route.sv)
