# Unit-level RTL tests of the hand-written templates rtl_templates/sg_{fifo,ag,cu,mu}.sv
# (sg_mu with ROUTE=1 also includes rtl_templates/sg_route.sv and sg_combine.sv; each alone:
# tests/rtl_route.cmake, tests/rtl_combine.cmake).
#
# The templates need the generated package sg_cfg_pkg. verilate() runs Verilator at
# configure time, so a copy generated for a small test architecture (rtlu::testArch() in
# tests/rtl/rtl_unit_util.hpp) is committed as tests/rtl/sg_cfg_pkg.sv, and the test
# rtl_units_cfg_pkg requires it to equal emitConfigPackage(buildConfigLayout(testArch())).
# config_layout.cpp and fp.cpp are compiled into the tests directly (they need nothing but
# fmt), so these tests build even while other parts of stepgen_core do not.
#
# Lint: every unit is also checked with `verilator --lint-only -Wall` for a few parameter
# sets (the templates' own waivers are commented in place; sg_cfg_pkg carries the
# emitter's UNUSEDPARAM waiver: one package serves all unit kinds).

set(SG_UNITS_PKG ${STEPGEN_ROOT}/tests/rtl/sg_cfg_pkg.sv)
set(SG_UNITS_FP ${STEPGEN_ROOT}/rtl_templates/sg_sigmoid_lut.sv ${STEPGEN_ROOT}/rtl_templates/sg_fp_pkg.sv)
set(SG_UNITS_VFLAGS -O3 --x-assign fast --x-initial fast -Wall)

function(sg_units_test name)
  add_executable(${name}
    ${STEPGEN_ROOT}/tests/rtl/${name}.cpp
    ${STEPGEN_ROOT}/generator/arch/config_layout.cpp
    ${STEPGEN_ROOT}/sim/common/fp.cpp)
  target_include_directories(${name} PRIVATE ${STEPGEN_ROOT}/generator ${STEPGEN_ROOT}/sim
                                             ${STEPGEN_ROOT}/tests/rtl)
  # Verilator's own headers are not -Wextra clean: include them as system headers.
  target_include_directories(${name} SYSTEM PRIVATE
    "${VERILATOR_ROOT}/include" "${VERILATOR_ROOT}/include/vltstd")
  target_link_libraries(${name} PRIVATE fmt::fmt Catch2::Catch2WithMain)
endfunction()

# ---- the committed test package equals the emitter's output
add_executable(test_rtl_cfg_pkg
  ${STEPGEN_ROOT}/tests/rtl/test_rtl_cfg_pkg.cpp
  ${STEPGEN_ROOT}/generator/arch/config_layout.cpp)
target_include_directories(test_rtl_cfg_pkg PRIVATE ${STEPGEN_ROOT}/generator ${STEPGEN_ROOT}/tests/rtl)
target_include_directories(test_rtl_cfg_pkg SYSTEM PRIVATE
  "${VERILATOR_ROOT}/include" "${VERILATOR_ROOT}/include/vltstd")
target_link_libraries(test_rtl_cfg_pkg PRIVATE fmt::fmt)
add_test(NAME rtl_units_cfg_pkg COMMAND test_rtl_cfg_pkg ${SG_UNITS_PKG})

# ---- sg_fifo: depths 1, 2, 3 (8-bit data)
sg_units_test(test_rtl_fifo)
foreach(d 1 2 3)
  verilate(test_rtl_fifo PREFIX Vsg_fifo_d${d} TOP_MODULE sg_fifo
    SOURCES ${STEPGEN_ROOT}/rtl_templates/sg_fifo.sv
    VERILATOR_ARGS ${SG_UNITS_VFLAGS} -GWIDTH=8 -GDEPTH=${d})
endforeach()
add_test(NAME rtl_units_fifo COMMAND test_rtl_fifo)

# ---- sg_cu: W=4, LANES=8, 256-word buffer; fp32 and bf16_fp32 multiply with the dynamic
# datapath (DYN=1, the default), and fp32 without it (Vsg_cu_static, DYN=0). The Scan /
# Expand / Parallelize goldens come from the functional model (routing_ops.cpp).
sg_units_test(test_rtl_cu)
target_sources(test_rtl_cu PRIVATE ${STEPGEN_ROOT}/sim/model/routing_ops.cpp)
foreach(v "fp32;0;1" "bf16;1;1" "static;0;0")
  list(GET v 0 tag)
  list(GET v 1 bf)
  list(GET v 2 dyn)
  verilate(test_rtl_cu PREFIX Vsg_cu_${tag} TOP_MODULE sg_cu
    SOURCES ${SG_UNITS_PKG} ${SG_UNITS_FP} ${STEPGEN_ROOT}/rtl_templates/sg_cu.sv
    VERILATOR_ARGS ${SG_UNITS_VFLAGS} -GW=4 -GLANES=8 -GBUF_WORDS=256 -GBF16=${bf} -GDYN=${dyn})
endforeach()
add_test(NAME rtl_units_cu COMMAND test_rtl_cu)

# ---- sg_mu: W=4, 256 words (two halves of 128), CPB 1 and 3; without the route and combine
# modes (Vsg_mu_c<CPB>, ROUTE=0) and with them (Vsg_mu_r<CPB>, ROUTE=1: sg_route and
# sg_combine inside, MAXK 2)
sg_units_test(test_rtl_mu)
foreach(c 1 3)
  verilate(test_rtl_mu PREFIX Vsg_mu_c${c} TOP_MODULE sg_mu
    SOURCES ${SG_UNITS_PKG} ${STEPGEN_ROOT}/rtl_templates/sg_mu.sv
    VERILATOR_ARGS ${SG_UNITS_VFLAGS} -GW=4 -GWORDS=256 -GCPB=${c})
  verilate(test_rtl_mu PREFIX Vsg_mu_r${c} TOP_MODULE sg_mu
    SOURCES ${SG_UNITS_PKG} ${STEPGEN_ROOT}/rtl_templates/sg_route.sv
            ${STEPGEN_ROOT}/rtl_templates/sg_combine.sv ${STEPGEN_ROOT}/rtl_templates/sg_mu.sv
    VERILATOR_ARGS ${SG_UNITS_VFLAGS} -GW=4 -GWORDS=256 -GCPB=${c} -GROUTE=1)
endforeach()
add_test(NAME rtl_units_mu COMMAND test_rtl_mu)

# ---- sg_ag: W=32 (P=2 pieces per beat), 32-bit addresses, 4 beats outstanding
sg_units_test(test_rtl_ag)
verilate(test_rtl_ag PREFIX Vsg_ag TOP_MODULE sg_ag
  SOURCES ${SG_UNITS_PKG} ${STEPGEN_ROOT}/rtl_templates/sg_ag.sv
  VERILATOR_ARGS ${SG_UNITS_VFLAGS} -GW=32 -GP=2 -GAB=32 -GOUTSTANDING=4)
add_test(NAME rtl_units_ag COMMAND test_rtl_ag)

# ---- lint, several parameter sets per unit (fast: well under a second each)
set(SG_UNITS_LINT_SETS
  "fifo_d1|sg_fifo|-GWIDTH=5 -GDEPTH=1"
  "fifo_d4|sg_fifo|-GWIDTH=518 -GDEPTH=4"
  "ag_p1|sg_ag|-GW=16 -GP=1 -GAB=32 -GOUTSTANDING=16"
  "ag_p4|sg_ag|-GW=64 -GP=4 -GAB=40 -GOUTSTANDING=3"
  "cu_small|sg_cu|-GW=2 -GLANES=3 -GBUF_WORDS=100 -GBF16=0"
  "cu_big|sg_cu|-GW=16 -GLANES=2048 -GBUF_WORDS=4096 -GBF16=1"
  "cu_static|sg_cu|-GW=2 -GLANES=3 -GBUF_WORDS=100 -GBF16=0 -GDYN=0"
  "mu_small|sg_mu|-GW=2 -GWORDS=64 -GCPB=3"
  "mu_big|sg_mu|-GW=16 -GWORDS=16384 -GCPB=1"
  "mu_route_small|sg_mu|-GW=4 -GWORDS=256 -GCPB=3 -GROUTE=1"
  "mu_route_big|sg_mu|-GW=16 -GWORDS=16384 -GCPB=1 -GROUTE=1"
  "mu_route_wide|sg_mu|-GW=128 -GWORDS=16384 -GCPB=2 -GROUTE=1")
foreach(s ${SG_UNITS_LINT_SETS})
  string(REPLACE "|" ";" parts "${s}")
  list(GET parts 0 tag)
  list(GET parts 1 top)
  list(GET parts 2 params)
  separate_arguments(params UNIX_COMMAND "${params}")
  if(top STREQUAL "sg_fifo")
    set(srcs ${STEPGEN_ROOT}/rtl_templates/sg_fifo.sv)
  elseif(top STREQUAL "sg_cu")
    set(srcs ${SG_UNITS_PKG} ${SG_UNITS_FP} ${STEPGEN_ROOT}/rtl_templates/sg_cu.sv)
  elseif(top STREQUAL "sg_mu" AND params MATCHES "ROUTE=1")
    set(srcs ${SG_UNITS_PKG} ${STEPGEN_ROOT}/rtl_templates/sg_route.sv
             ${STEPGEN_ROOT}/rtl_templates/sg_combine.sv ${STEPGEN_ROOT}/rtl_templates/sg_mu.sv)
  else()
    set(srcs ${SG_UNITS_PKG} ${STEPGEN_ROOT}/rtl_templates/${top}.sv)
  endif()
  add_test(NAME rtl_units_lint_${tag}
           COMMAND verilator --lint-only -Wall ${params} --top-module ${top} ${srcs})
  set_tests_properties(rtl_units_lint_${tag} PROPERTIES LABELS "rtl")
endforeach()
set_tests_properties(rtl_units_cfg_pkg rtl_units_fifo rtl_units_cu rtl_units_mu rtl_units_ag
                     PROPERTIES LABELS "rtl")
