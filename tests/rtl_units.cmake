# Unit-level RTL tests of the hand-written templates rtl_templates/sg_{fifo,ag,cu,mu}.sv
# (sg_mu with ROUTE=1 also includes rtl_templates/sg_route.sv and sg_combine.sv; each alone:
# tests/rtl_route.cmake, tests/rtl_combine.cmake). Helpers: tests/rtl/sg_rtl.cmake.
#
# The templates need the generated package sg_cfg_pkg. verilate() runs Verilator at
# configure time, so a copy generated for a small test architecture (rtlu::testArch() in
# tests/rtl/rtl_unit_util.hpp) is committed as tests/rtl/sg_cfg_pkg.sv, and the test
# rtl_units_cfg_pkg requires it to equal emitConfigPackage(buildConfigLayout(testArch())).
#
# Lint: every unit is also checked with `verilator --lint-only -Wall` for a few parameter
# sets (the templates' own waivers are commented in place; sg_cfg_pkg carries the
# emitter's UNUSEDPARAM waiver: one package serves all unit kinds).
include(${STEPGEN_ROOT}/tests/rtl/sg_rtl.cmake)

set(SG_UNITS_ROUTE ${SG_RTL}/sg_route.sv ${SG_RTL}/sg_combine.sv)

# ---- the committed test package equals the emitter's output
add_executable(test_rtl_cfg_pkg
  ${STEPGEN_ROOT}/tests/rtl/test_rtl_cfg_pkg.cpp
  ${STEPGEN_ROOT}/generator/arch/config_layout.cpp
  ${STEPGEN_ROOT}/generator/arch/unit_catalogue.cpp)
target_include_directories(test_rtl_cfg_pkg PRIVATE ${STEPGEN_ROOT}/generator ${STEPGEN_ROOT}/tests/rtl)
target_include_directories(test_rtl_cfg_pkg SYSTEM PRIVATE
  "${VERILATOR_ROOT}/include" "${VERILATOR_ROOT}/include/vltstd")
target_link_libraries(test_rtl_cfg_pkg PRIVATE fmt::fmt)
add_test(NAME rtl_units_cfg_pkg COMMAND test_rtl_cfg_pkg ${SG_UNITS_PKG})

# ---- sg_fifo: depths 1, 2, 3 (8-bit data)
sg_rtl_test(test_rtl_fifo)
foreach(d 1 2 3)
  sg_rtl_verilate(test_rtl_fifo Vsg_fifo_d${d} sg_fifo "-GWIDTH=8 -GDEPTH=${d}" ${SG_RTL}/sg_fifo.sv)
endforeach()
add_test(NAME rtl_units_fifo COMMAND test_rtl "[fifo]")

# ---- sg_cu: W=4, LANES=8, 256-word buffer; fp32 and bf16_fp32 multiply with the dynamic
# datapath (DYN=1, the default), and fp32 without it (Vsg_cu_static, DYN=0). The Scan /
# Expand / Parallelize goldens come from the functional model (routing_ops.cpp).
sg_rtl_test(test_rtl_cu ${STEPGEN_ROOT}/sim/common/fp.cpp ${STEPGEN_ROOT}/generator/model/routing_ops.cpp)
# Vsg_cu_fp32 is built with the simulation bodies (SG_SIM_BODY, as fabrics are: its adders are
# fp32_add_sp), the others with the synthesis bodies (docs/hardware.md section 6).
foreach(v "fp32;0;1;+define+SG_SIM_BODY" "bf16;1;1;" "static;0;0;")
  list(GET v 0 tag)
  list(GET v 1 bf)
  list(GET v 2 dyn)
  list(GET v 3 body)
  sg_rtl_verilate(test_rtl_cu Vsg_cu_${tag} sg_cu "-GW=4 -GLANES=8 -GBUF_WORDS=256 -GBF16=${bf} -GDYN=${dyn} -GATTN=${dyn} ${body}"
                  ${SG_UNIT_DEPS} ${SG_FP_DEPS} ${SG_CU_PARTS} ${SG_RTL}/sg_cu.sv)
endforeach()
# LANES = W = 4: sg_cu_mem's banked memory (fp32 with a held twice, A_COPIES = 2, for rows
# that are not whole beats; bf16_fp32 with one a copy and without silu's table, SILU = 0);
# Vsg_cu_banks is Vsg_cu_bank with the simulation bodies (sg_prim_bank_arb's, fp32_add_sp):
# the banked test cases run on both.
foreach(v "bank;0;1;2;" "banks;0;1;2;+define+SG_SIM_BODY" "bankbf;1;0;1;")
  list(GET v 0 tag)
  list(GET v 1 bf)
  list(GET v 2 silu)
  list(GET v 3 ac)
  list(GET v 4 body)
  sg_rtl_verilate(test_rtl_cu Vsg_cu_${tag} sg_cu "-GW=4 -GLANES=4 -GBUF_WORDS=256 -GBF16=${bf} -GDYN=1 -GATTN=1 -GSILU=${silu} -GBANKED=1 -GA_COPIES=${ac} ${body}"
                  ${SG_UNIT_DEPS} ${SG_FP_DEPS} ${SG_CU_PARTS} ${SG_RTL}/sg_cu.sv)
endforeach()
add_test(NAME rtl_units_cu COMMAND test_rtl "[cu]")

# ---- sg_cu's parts alone (sg_cu.sv implementation note), W = 4, LANES = 4: the MAC array
# (fp32 with the synthesis body's near/far adder, bf16 with the simulation body's), the
# operand addresses (DYN = 1 for bt, A_COPIES = 2 for ragged rows), the W-word unit with
# every function (ATTN = DYN = SILU = MUL = 1) and the rowmax / rowsum tree.
sg_rtl_test(test_rtl_cu_parts ${STEPGEN_ROOT}/generator/model/router.cpp)
sg_rtl_verilate(test_rtl_cu_parts Vsg_cu_mac_fp32 sg_cu_mac "-GLANES=4 -GBF16=0" ${SG_FP_DEPS} ${SG_RTL}/sg_cu_mac.sv)
sg_rtl_verilate(test_rtl_cu_parts Vsg_cu_mac_bf16 sg_cu_mac "-GLANES=4 -GBF16=1 +define+SG_SIM_BODY"
                ${SG_FP_DEPS} ${SG_RTL}/sg_cu_mac.sv)
sg_rtl_verilate(test_rtl_cu_parts Vsg_cu_addr sg_cu_addr "-GW=4 -GLANES=4 -GBUF_WORDS=256 -GDYN=1 -GA_COPIES=2"
                ${SG_UNITS_PKG} ${SG_RTL}/sg_cu_addr.sv)
sg_rtl_verilate(test_rtl_cu_parts Vsg_cu_addr_hold sg_cu_addr "-GW=4 -GLANES=4 -GBUF_WORDS=256 -GDYN=1 -GA_COPIES=2 -GHOLD=1"
                ${SG_UNITS_PKG} ${SG_RTL}/sg_cu_addr.sv)
sg_rtl_verilate(test_rtl_cu_parts Vsg_cu_word sg_cu_word "-GW=4 -GDYN=1 -GATTN=1 -GSILU=1 -GMUL=1 -GTOPK=1"
                ${SG_UNITS_PKG} ${SG_FP_DEPS} ${SG_RTL}/sg_cu_word.sv)
# (alone, the tree reads few of sg_beat_pkg's constants: -Wno-UNUSEDPARAM)
sg_rtl_verilate(test_rtl_cu_parts Vsg_cu_rowred sg_cu_rowred "-GW=4 -GATTN=1 -Wno-UNUSEDPARAM"
                ${SG_RTL}/sg_beat_pkg.sv ${SG_FP_DEPS} ${SG_RTL}/sg_cu_rowred.sv)
add_test(NAME rtl_units_cu_parts COMMAND test_rtl "[cu_parts]")

# ---- sg_mu: W=4, 256 words (two halves of 128), CPB 1 and 3; without the route and combine
# modes (Vsg_mu_c<CPB>, ROUTE=0) and with them (Vsg_mu_r<CPB>, ROUTE=1: sg_route and
# sg_combine inside, MAXK 2)
sg_rtl_test(test_rtl_mu)
foreach(c 1 3)
  sg_rtl_verilate(test_rtl_mu Vsg_mu_c${c} sg_mu "-GW=4 -GWORDS=256 -GCPB=${c}"
                  ${SG_UNIT_DEPS} ${SG_RTL}/sg_mu.sv)
  sg_rtl_verilate(test_rtl_mu Vsg_mu_r${c} sg_mu "-GW=4 -GWORDS=256 -GCPB=${c} -GROUTE=1"
                  ${SG_UNIT_DEPS} ${SG_UNITS_ROUTE} ${SG_RTL}/sg_mu.sv)
endforeach()
add_test(NAME rtl_units_mu COMMAND test_rtl "[mu]")

# ---- sg_ag: W=32 (P=2 pieces per beat), 32-bit addresses, 4 beats outstanding
sg_rtl_test(test_rtl_ag)
sg_rtl_verilate(test_rtl_ag Vsg_ag sg_ag "-GW=32 -GP=2 -GAB=32 -GOUTSTANDING=4" ${SG_UNIT_DEPS} ${SG_RTL}/sg_ag.sv)
add_test(NAME rtl_units_ag COMMAND test_rtl "[ag]")

# ---- the primitives' two bodies proven equal by Yosys (simulation = synthesis; about 10 s)
add_test(NAME rtl_prims_equiv COMMAND bash ${STEPGEN_ROOT}/tests/formal/equiv_prims.sh ${CMAKE_BINARY_DIR}/prims_equiv)

# ---- lint, several parameter sets per unit (fast: well under a second each)
sg_rtl_lint(rtl_units sg_fifo "fifo_d1|-GWIDTH=5 -GDEPTH=1" "fifo_d4|-GWIDTH=518 -GDEPTH=4"
            SOURCES ${SG_RTL}/sg_fifo.sv)
sg_rtl_lint(rtl_units sg_ag "ag_p1|-GW=16 -GP=1 -GAB=32 -GOUTSTANDING=16"
            "ag_p4|-GW=64 -GP=4 -GAB=40 -GOUTSTANDING=3" SOURCES ${SG_UNIT_DEPS} ${SG_RTL}/sg_ag.sv)
sg_rtl_lint(rtl_units sg_cu "cu_small|-GW=2 -GLANES=3 -GBUF_WORDS=100 -GBF16=0"
            "cu_big|-GW=16 -GLANES=2048 -GBUF_WORDS=4096 -GBF16=1"
            "cu_static|-GW=2 -GLANES=3 -GBUF_WORDS=100 -GBF16=0 -GDYN=0"
            "cu_attn|-GW=4 -GLANES=2 -GBUF_WORDS=64 -GBF16=0 -GDYN=0 -GATTN=1 -GSILU=0"
            "cu_banked|-GW=16 -GLANES=16 -GBUF_WORDS=16384 -GBF16=1 -GDYN=1 -GATTN=1 -GBANKED=1"
            "cu_banked_ragged|-GW=16 -GLANES=16 -GBUF_WORDS=16384 -GBF16=1 -GDYN=1 -GBANKED=1 -GA_COPIES=2"
            "cu_banked_static|-GW=16 -GLANES=16 -GBUF_WORDS=16384 -GBF16=1 -GDYN=0 -GBANKED=1"
            "cu_banked_sim|-GW=16 -GLANES=16 -GBUF_WORDS=16384 -GBF16=1 -GDYN=1 -GATTN=1 -GBANKED=1 +define+SG_SIM_BODY"
            "cu_banked_ragged_sim|-GW=16 -GLANES=16 -GBUF_WORDS=16384 -GBF16=1 -GDYN=1 -GBANKED=1 -GA_COPIES=2 +define+SG_SIM_BODY"
            "cu_single_path_sim|-GW=2 -GLANES=3 -GBUF_WORDS=100 -GBF16=0 -GNEAR_FAR=0 +define+SG_SIM_BODY"
            "cu_nomul|-GW=2 -GLANES=1 -GBUF_WORDS=128 -GBF16=1 -GDYN=0 -GSILU=0 -GMUL=0 -GBANKED=1"
            "cu_nomul_dyn|-GW=4 -GLANES=2 -GBUF_WORDS=64 -GBF16=0 -GDYN=1 -GATTN=1 -GSILU=0 -GMUL=0"
            SOURCES ${SG_UNIT_DEPS} ${SG_FP_DEPS} ${SG_CU_PARTS} ${SG_RTL}/sg_cu.sv)
# the compute unit's parts alone, as `stepgen synth --cu-parts` synthesizes them (-Wno-UNUSEDPARAM:
# alone, a part reads few of the packages' constants)
sg_rtl_lint(rtl_units sg_cu_addr "cu_addr|-GW=16 -GLANES=16 -GBUF_WORDS=16384 -GDYN=1 -GA_COPIES=2 -Wno-UNUSEDPARAM"
            "cu_addr_static|-GW=2 -GLANES=3 -GBUF_WORDS=100 -GDYN=0 -Wno-UNUSEDPARAM"
            SOURCES ${SG_UNITS_PKG} ${SG_RTL}/sg_cu_addr.sv)
sg_rtl_lint(rtl_units sg_cu_mac "cu_mac|-GLANES=16 -GBF16=1" "cu_mac_sim|-GLANES=3 -GBF16=0 -GNEAR_FAR=0 +define+SG_SIM_BODY"
            SOURCES ${SG_FP_DEPS} ${SG_RTL}/sg_cu_mac.sv)
sg_rtl_lint(rtl_units sg_cu_word "cu_word|-GW=16 -GDYN=1 -GATTN=1 -GSILU=1 -GMUL=1 -GTOPK=1 -Wno-UNUSEDPARAM"
            "cu_word_nomul|-GW=2 -GDYN=0 -GATTN=0 -GSILU=0 -GMUL=0 -Wno-UNUSEDPARAM"
            SOURCES ${SG_UNITS_PKG} ${SG_FP_DEPS} ${SG_RTL}/sg_cu_word.sv)
sg_rtl_lint(rtl_units sg_cu_rowred "cu_rowred|-GW=16 -GATTN=1 -Wno-UNUSEDPARAM" "cu_rowred_w1|-GW=1 -GATTN=1 -Wno-UNUSEDPARAM"
            SOURCES ${SG_RTL}/sg_beat_pkg.sv ${SG_FP_DEPS} ${SG_RTL}/sg_cu_rowred.sv)
sg_rtl_lint(rtl_units sg_mu "mu_small|-GW=2 -GWORDS=64 -GCPB=3" "mu_big|-GW=16 -GWORDS=16384 -GCPB=1"
            SOURCES ${SG_UNIT_DEPS} ${SG_RTL}/sg_mu.sv)
sg_rtl_lint(rtl_units sg_mu "mu_route_small|-GW=4 -GWORDS=256 -GCPB=3 -GROUTE=1"
            "mu_route_big|-GW=16 -GWORDS=16384 -GCPB=1 -GROUTE=1"
            "mu_route_wide|-GW=128 -GWORDS=16384 -GCPB=2 -GROUTE=1"
            SOURCES ${SG_UNIT_DEPS} ${SG_UNITS_ROUTE} ${SG_RTL}/sg_mu.sv)

# ---- the AXI wrapper's parts: sg_axi_master (DRAM port) at P=2, 32-bit addresses, 2 read
# bursts in flight, and sg_axi_lite (control slave); the whole wrapper: e2e_axi_swiglu_default
sg_rtl_test(test_rtl_axi)
sg_rtl_verilate(test_rtl_axi Vsg_axi_master sg_axi_master "-GP=2 -GAB=32 -GMAX_RD=2"
                ${SG_RTL}/sg_fifo.sv ${SG_RTL}/sg_axi_master.sv)
sg_rtl_test(test_rtl_axil)
sg_rtl_verilate(test_rtl_axil Vsg_axi_lite sg_axi_lite "" ${SG_RTL}/sg_axi_lite.sv)
add_test(NAME rtl_units_axi COMMAND test_rtl "[axi]")
sg_rtl_lint(rtl_units sg_axi_master "axi_p1|-GP=1 -GAB=32 -GMAX_RD=8" "axi_p4|-GP=4 -GAB=40 -GMAX_RD=3"
            SOURCES ${SG_RTL}/sg_fifo.sv ${SG_RTL}/sg_axi_master.sv)
sg_rtl_lint(rtl_units sg_axi_lite "axil|" SOURCES ${SG_RTL}/sg_axi_lite.sv)
