# Helpers of the unit-level RTL tests (tests/rtl_*.cmake). Every fragment includes this file
# itself, so each still works when another is skipped (STEPGEN_SKIP_FRAGMENTS).
include_guard(GLOBAL)

set(SG_RTL ${STEPGEN_ROOT}/rtl_templates)
set(SG_RTL_VFLAGS -O3 --x-assign fast --x-initial fast -Wall)
# Generated files the tests verilate at configure time, committed as goldens of the emitter
# (tests rtl_units_cfg_pkg and stepgen_tests "[golden]" keep them equal to its output).
set(SG_UNITS_PKG ${STEPGEN_ROOT}/tests/rtl/sg_cfg_pkg.sv)
set(SG_SIGMOID_LUT ${STEPGEN_ROOT}/tests/rtl/sg_sigmoid_lut.sv ${STEPGEN_ROOT}/tests/rtl/sg_sigmoid_rom.sv)
set(SG_ATTN_LUT ${STEPGEN_ROOT}/tests/rtl/sg_attn_lut.sv)
# What every unit template needs before itself (packages first).
set(SG_UNIT_DEPS ${SG_UNITS_PKG} ${SG_RTL}/sg_beat_pkg.sv ${SG_RTL}/sg_ctx_seq.sv)
set(SG_FP_DEPS ${SG_SIGMOID_LUT} ${SG_ATTN_LUT} ${SG_RTL}/sg_fp_pkg.sv)
# The compute unit's parts (sg_cu.sv's implementation note), which sg_cu instantiates.
set(SG_CU_PARTS ${SG_RTL}/sg_prim_bank_arb.sv ${SG_RTL}/sg_cu_mem.sv ${SG_RTL}/sg_cu_addr.sv ${SG_RTL}/sg_cu_mac.sv
    ${SG_RTL}/sg_cu_word.sv ${SG_RTL}/sg_cu_rowred.sv)

# All unit-level RTL tests are one Catch2 executable, test_rtl: Verilator's runtime and the
# generator sources the tests need are then compiled once, not once per unit (a fresh build
# spent about a minute of CPU on seven copies). Each ctest entry runs it with a tag filter.
# The generator and model sources are compiled in directly (config_layout for
# rtl_unit_util.hpp's testArch), so it builds while other parts of stepgen_core do not.
add_executable(test_rtl
  ${STEPGEN_ROOT}/generator/arch/config_layout.cpp ${STEPGEN_ROOT}/generator/arch/unit_catalogue.cpp)
target_include_directories(test_rtl PRIVATE ${STEPGEN_ROOT}/generator ${STEPGEN_ROOT}/sim ${STEPGEN_ROOT}/tests/rtl)
# Verilator's own headers are not -Wextra clean: include them as system headers.
target_include_directories(test_rtl SYSTEM PRIVATE "${VERILATOR_ROOT}/include" "${VERILATOR_ROOT}/include/vltstd")
target_link_libraries(test_rtl PRIVATE fmt::fmt Catch2::Catch2WithMain)
target_compile_definitions(test_rtl PRIVATE STEPGEN_ROOT="${STEPGEN_ROOT}")
# -O0 and Verilator's header precompiled: the unit models run a few thousand cycles each,
# so compile time dominates. A fresh build of test_rtl (2 cores, no ccache) took 127 s at -O1
# with the models' construction code at -O0, 101 s with the header precompiled, 63 s at -O0
# throughout (one set of flags, so the precompiled header serves every file). The fp check
# runs 2.5 M inputs: its model stays at -O1 (rtl_fp 5 s; 17 s at -O0).
target_compile_options(test_rtl PRIVATE -O0)
target_precompile_headers(test_rtl PRIVATE <verilated.h>)
# Unity builds by group: only the verilated models' files (sg_rtl_verilate) join one.
set_target_properties(test_rtl PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
set(SG_RTL_O1_MODELS Vsg_fp_check)

# sg_rtl_test(<name> [extra sources...]): tests/rtl/<name>.cpp and the sources it needs
# join test_rtl; verilate its models onto test_rtl (the name is kept for the models' docs).
function(sg_rtl_test name)
  target_sources(test_rtl PRIVATE ${STEPGEN_ROOT}/tests/rtl/${name}.cpp ${ARGN})
endfunction()

# sg_rtl_verilate(<target> <prefix> <top> "<-Gparams>" <sources...>): a Verilator model
# V<prefix> of <top> in test_rtl (<target> names the test file it serves), -Wall with
# warnings fatal.
function(sg_rtl_verilate target prefix top params)
  separate_arguments(params UNIX_COMMAND "${params}")
  set(fast "")
  if(prefix IN_LIST SG_RTL_O1_MODELS)
    set(fast OPT_FAST -O1)
  endif()
  verilate(test_rtl PREFIX ${prefix} TOP_MODULE ${top} SOURCES ${ARGN}
           VERILATOR_ARGS ${SG_RTL_VFLAGS} ${params} ${fast})
  # One translation unit per model, as Verilator's own make does for small designs
  # (VM_PARALLEL_BUILDS = 0): each of a model's ~7 files parsed verilated.h and the model's
  # headers again, about 0.75 s each at -O0.
  get_target_property(srcs test_rtl SOURCES)
  list(FILTER srcs INCLUDE REGEX "/${prefix}\\.dir/[^/]*\\.cpp$")
  set_source_files_properties(${srcs} PROPERTIES UNITY_GROUP ${prefix})
endfunction()

# _sg_rtl_param_set(<set> <tag_var> <params_var>): splits "<tag>|<-Gparams>" into the tag and
# the parameter list.
macro(_sg_rtl_param_set set tag_var params_var)
  string(REPLACE "|" ";" _sg_parts "${set}")
  list(GET _sg_parts 0 ${tag_var})
  list(GET _sg_parts 1 ${params_var})
endmacro()

# sg_rtl_models(<target> <top> "<tag>|<-Gparams>" ... SOURCES <files...>): one model
# V<top>_<tag> per parameter set.
function(sg_rtl_models target top)
  cmake_parse_arguments(M "" "" "SOURCES" ${ARGN})
  foreach(s ${M_UNPARSED_ARGUMENTS})
    _sg_rtl_param_set("${s}" tag params)
    sg_rtl_verilate(${target} V${top}_${tag} ${top} "${params}" ${M_SOURCES})
  endforeach()
endfunction()

# sg_rtl_lint(<prefix> <top> "<tag>|<-Gparams>" ... SOURCES <files...>): one test
# <prefix>_lint_<tag> per parameter set, `verilator --lint-only -Wall`.
function(sg_rtl_lint prefix top)
  cmake_parse_arguments(L "" "" "SOURCES" ${ARGN})
  foreach(s ${L_UNPARSED_ARGUMENTS})
    _sg_rtl_param_set("${s}" tag params)
    separate_arguments(params UNIX_COMMAND "${params}")
    add_test(NAME ${prefix}_lint_${tag}
             COMMAND verilator --lint-only -Wall ${params} --top-module ${top} ${L_SOURCES})
  endforeach()
endfunction()

# sg_rtl_module_test(<name> <top> MODELS "<tag>|<-Gparams>"... LINT "<tag>|<-Gparams>"...
# SOURCES <files...>): the Catch2 test test_rtl_<name> (ctest rtl_<name>) with one model
# V<top>_<tag> per MODELS set, and a lint test rtl_<name>_lint_<tag> per LINT set.
function(sg_rtl_module_test name top)
  cmake_parse_arguments(T "" "" "MODELS;LINT;SOURCES" ${ARGN})
  sg_rtl_test(test_rtl_${name})
  sg_rtl_models(test_rtl_${name} ${top} ${T_MODELS} SOURCES ${T_SOURCES})
  add_test(NAME rtl_${name} COMMAND test_rtl "[${name}]~[mu]")  # sg_mu's own tests cover it inside the unit
  sg_rtl_lint(rtl_${name} ${top} ${T_LINT} SOURCES ${T_SOURCES})
endfunction()
