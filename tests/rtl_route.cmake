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

set(SG_ROUTE_SV ${STEPGEN_ROOT}/rtl_templates/sg_route.sv)
set(SG_ROUTE_VFLAGS -O3 --x-assign fast --x-initial fast -Wall)

add_executable(test_rtl_route
  ${STEPGEN_ROOT}/tests/rtl/test_rtl_route.cpp
  ${STEPGEN_ROOT}/generator/arch/config_layout.cpp)
target_include_directories(test_rtl_route PRIVATE ${STEPGEN_ROOT}/generator ${STEPGEN_ROOT}/sim
                                                  ${STEPGEN_ROOT}/tests/rtl)
# Verilator's own headers are not -Wextra clean: include them as system headers.
target_include_directories(test_rtl_route SYSTEM PRIVATE
  "${VERILATOR_ROOT}/include" "${VERILATOR_ROOT}/include/vltstd")
target_link_libraries(test_rtl_route PRIVATE fmt::fmt Catch2::Catch2WithMain)
target_compile_definitions(test_rtl_route PRIVATE STEPGEN_ROOT="${STEPGEN_ROOT}")

foreach(v "a;4;64;8;2;16" "b;8;64;16;4;32" "c;16;64;128;8;64")
  list(GET v 0 tag)
  list(GET v 1 w)
  list(GET v 2 maxt)
  list(GET v 3 maxe)
  list(GET v 4 maxk)
  list(GET v 5 roww)
  verilate(test_rtl_route PREFIX Vsg_route_${tag} TOP_MODULE sg_route
    SOURCES ${SG_ROUTE_SV}
    VERILATOR_ARGS ${SG_ROUTE_VFLAGS} -GW=${w} -GMAXT=${maxt} -GMAXE=${maxe} -GMAXK=${maxk}
                   -GROWW=${roww})
endforeach()
add_test(NAME rtl_route COMMAND test_rtl_route)

# ---- lint: a small odd-sized set (nothing a power of two) and the default size
set(SG_ROUTE_LINT_SETS
  "small|-GW=4 -GMAXT=5 -GMAXE=3 -GMAXK=1 -GROWW=12"
  "big|-GW=16 -GMAXT=1024 -GMAXE=128 -GMAXK=8 -GROWW=256")
foreach(s ${SG_ROUTE_LINT_SETS})
  string(REPLACE "|" ";" parts "${s}")
  list(GET parts 0 tag)
  list(GET parts 1 params)
  separate_arguments(params UNIX_COMMAND "${params}")
  add_test(NAME rtl_route_lint_${tag}
           COMMAND verilator --lint-only -Wall ${params} --top-module sg_route ${SG_ROUTE_SV})
  set_tests_properties(rtl_route_lint_${tag} PROPERTIES LABELS "rtl")
endforeach()
set_tests_properties(rtl_route PROPERTIES LABELS "rtl")
