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

set(SG_COMBINE_SV ${STEPGEN_ROOT}/rtl_templates/sg_combine.sv)
set(SG_COMBINE_VFLAGS -O3 --x-assign fast --x-initial fast -Wall)

add_executable(test_rtl_combine
  ${STEPGEN_ROOT}/tests/rtl/test_rtl_combine.cpp
  ${STEPGEN_ROOT}/generator/arch/config_layout.cpp)
target_include_directories(test_rtl_combine PRIVATE ${STEPGEN_ROOT}/generator ${STEPGEN_ROOT}/sim
                                                    ${STEPGEN_ROOT}/tests/rtl)
# Verilator's own headers are not -Wextra clean: include them as system headers.
target_include_directories(test_rtl_combine SYSTEM PRIVATE
  "${VERILATOR_ROOT}/include" "${VERILATOR_ROOT}/include/vltstd")
target_link_libraries(test_rtl_combine PRIVATE fmt::fmt Catch2::Catch2WithMain)
target_compile_definitions(test_rtl_combine PRIVATE STEPGEN_ROOT="${STEPGEN_ROOT}")

foreach(v "a;4;64;2;16;512" "b;16;64;8;64;2048" "c;6;5;3;12;37")
  list(GET v 0 tag)
  list(GET v 1 w)
  list(GET v 2 maxt)
  list(GET v 3 maxk)
  list(GET v 4 roww)
  list(GET v 5 maxent)
  verilate(test_rtl_combine PREFIX Vsg_combine_${tag} TOP_MODULE sg_combine
    SOURCES ${SG_COMBINE_SV}
    VERILATOR_ARGS ${SG_COMBINE_VFLAGS} -GW=${w} -GMAXT=${maxt} -GMAXK=${maxk} -GROWW=${roww}
                   -GMAXENT=${maxent})
endforeach()
add_test(NAME rtl_combine COMMAND test_rtl_combine)

# ---- lint: small odd-sized sets (nothing a power of two; MAXK 1) and the sg_mu sizes
set(SG_COMBINE_LINT_SETS
  "small|-GW=4 -GMAXT=5 -GMAXK=1 -GROWW=12 -GMAXENT=7"
  "odd|-GW=6 -GMAXT=3 -GMAXK=3 -GROWW=6 -GMAXENT=1"
  "big|-GW=16 -GMAXT=64 -GMAXK=8 -GROWW=64 -GMAXENT=16384"
  "wide|-GW=128 -GMAXT=64 -GMAXK=8 -GROWW=128 -GMAXENT=16384")
foreach(s ${SG_COMBINE_LINT_SETS})
  string(REPLACE "|" ";" parts "${s}")
  list(GET parts 0 tag)
  list(GET parts 1 params)
  separate_arguments(params UNIX_COMMAND "${params}")
  add_test(NAME rtl_combine_lint_${tag}
           COMMAND verilator --lint-only -Wall ${params} --top-module sg_combine ${SG_COMBINE_SV})
  set_tests_properties(rtl_combine_lint_${tag} PROPERTIES LABELS "rtl")
endforeach()
set_tests_properties(rtl_combine PROPERTIES LABELS "rtl")
