# Unit-level RTL test of rtl_templates/sg_combine.sv (the back of an MoE layer: Partition ->
# FlatMap(drop padding) -> Flatten -> Reassemble by token; docs in the module header).
#
# sg_combine has plain configuration ports and needs no sg_cfg_pkg. Three verilated parameter
# sets (PREFIX Vsg_combine_<tag>):
#   a: W=4,  MAXT=64, MAXK=2, ROWW=16, MAXENT=512   (k 1..2, rows of 1..4 beats)
#   b: W=16, MAXT=64, MAXK=8, ROWW=64, MAXENT=2048  (the sg_mu size but MAXENT; Qwen3 top-8)
#   c: W=6,  MAXT=5,  MAXK=3, ROWW=12, MAXENT=37    (no size a power of two; MAXENT filled)
# The test reads the routing traces in examples/moe/data (STEPGEN_ROOT define).
# config_layout.cpp is linked only because rtl_unit_util.hpp declares CfgVec/testArch.
include(${STEPGEN_ROOT}/tests/rtl/sg_rtl.cmake)

# Lint: small odd-sized sets (nothing a power of two; MAXK 1) and the sg_mu sizes.
sg_rtl_module_test(combine sg_combine
  MODELS "a|-GW=4 -GMAXT=64 -GMAXK=2 -GROWW=16 -GMAXENT=512"
         "b|-GW=16 -GMAXT=64 -GMAXK=8 -GROWW=64 -GMAXENT=2048"
         "c|-GW=6 -GMAXT=5 -GMAXK=3 -GROWW=12 -GMAXENT=37"
  LINT "small|-GW=4 -GMAXT=5 -GMAXK=1 -GROWW=12 -GMAXENT=7"
       "odd|-GW=6 -GMAXT=3 -GMAXK=3 -GROWW=6 -GMAXENT=1"
       "big|-GW=16 -GMAXT=64 -GMAXK=8 -GROWW=64 -GMAXENT=16384"
       "wide|-GW=128 -GMAXT=64 -GMAXK=8 -GROWW=128 -GMAXENT=16384"
  SOURCES ${SG_RTL}/sg_beat_pkg.sv ${SG_RTL}/sg_combine.sv)
