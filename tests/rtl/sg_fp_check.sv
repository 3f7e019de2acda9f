// sg_fp_check: test wrapper for sg_fp_pkg and sg_sigmoid_lut (tests/rtl_fp.cmake).
// LANES independent lanes, evaluated the way the array RTL uses the packages: inside a for
// loop in an always_ff block. Outputs are registered: the results for the inputs present at
// a rising clock edge appear after that edge. Per lane:
//   add_o  = fp32_add(a, b)      mul_o  = fp32_mul(a, b)      bf16_o = bf16_mul(a, b)
//   addsp_o = fp32_add_sp(a, b)  (the single-path adder: the same function)
//   addsim_o, mulsim_o, bf16sim_o = fp32_add_sim, fp32_mul_sim, bf16_mul_sim (the simulation
//            bodies fabrics are verilated with, SG_SIM_BODY; the others are the synthesis ones)
//   silu_o = fp32_mul(a, sg_sigmoid_lut(sigmoid_index(a)))    sidx_o = sigmoid_index(a)
//   sig_o  = sg_sigmoid_lut(sigmoid_index(a))    sigc_o = sigmoid_lut_case(sigmoid_index(a))
//   rcp_o  = recip(a) as sg_cu composes it: the seed r0 (sg_attn_lut::recip_seed), p = y * r0
//            for a's significand y, sg_fp_pkg::recip_finish(a, r0, p)
//   rsq_o  = rsqrt(a) as sg_cu composes it: z (a's significand, doubled for an odd exponent)
//            times the row's half square sg_attn_lut::rsqrt_hsq, r1 = fp32_mul(r0, rsqrt_q(p)),
//            sg_fp_pkg::rsqrt_pack(a, r1)
//   exp_o  = exp(a) as sg_cu composes it: t = fp32_mul(a, EXP_LOG2E), exp_key(exp_shift(t))
//            (a register between the two there), exp_pack with sg_attn_lut::exp_mant
// sg_sigmoid_lut is the flat-vector form under Verilator and the case form elsewhere, so the
// simulation checks both table forms and Yosys never sees the (slow to synthesise) flat one.
// The calls use the alias sg_sigmoid_lut::sigmoid_lut (= sg_sigmoid_lut) because iverilog 11
// cannot parse sg_sigmoid_lut::sg_sigmoid_lut(...).
module sg_fp_check #(
    parameter int LANES = 2
) (
    input  logic                                  clk,
    input  logic [             LANES*32-1:0]      a,
    input  logic [             LANES*32-1:0]      b,
    output logic [             LANES*32-1:0]      add_o,
    output logic [             LANES*32-1:0]      addsp_o,
    output logic [             LANES*32-1:0]      addsim_o,
    output logic [             LANES*32-1:0]      mulsim_o,
    output logic [             LANES*32-1:0]      bf16sim_o,
    output logic [             LANES*32-1:0]      mul_o,
    output logic [             LANES*32-1:0]      bf16_o,
    output logic [             LANES*32-1:0]      silu_o,
    output logic [LANES*sg_fp_pkg::SIG_IDX_W-1:0] sidx_o,
    output logic [             LANES*32-1:0]      sig_o,
    output logic [             LANES*32-1:0]      sigc_o,
    output logic [             LANES*32-1:0]      rcp_o,
    output logic [             LANES*32-1:0]      rsq_o,
    output logic [             LANES*32-1:0]      exp_o
);
  localparam int IW = sg_fp_pkg::SIG_IDX_W;
  localparam int RW = sg_fp_pkg::EXP_ROW_W;

  function automatic logic [31:0] exp_of(input logic [31:0] x);
    logic [RW+9:0] k;
    k = sg_fp_pkg::exp_key(sg_fp_pkg::exp_shift(x[30:23] == 8'hFF && x[22:0] != 23'd0,
                                                sg_fp_pkg::fp32_mul(x, sg_fp_pkg::EXP_LOG2E)));
    exp_of = sg_fp_pkg::exp_pack(k[RW+9 -: 10], sg_attn_lut::exp_mant(k[RW-1:0]));
  endfunction

  function automatic logic [31:0] rsqrt_of(input logic [31:0] x);
    logic [7:0] idx;
    logic [31:0] p;
    idx = {~x[23], x[22:16]};
    p = sg_fp_pkg::fp32_mul({1'b0, x[23] ? 8'd127 : 8'd128, x[22:0]}, sg_attn_lut::rsqrt_hsq(idx));
    rsqrt_of = sg_fp_pkg::rsqrt_pack(x, sg_fp_pkg::fp32_mul({9'h07E, sg_attn_lut::rsqrt_seed(idx)}, sg_fp_pkg::rsqrt_q(p)));
  endfunction

  always_ff @(posedge clk) begin
    for (int i = 0; i < LANES; i++) begin
      add_o[i*32+:32]  <= sg_fp_pkg::fp32_add(a[i*32+:32], b[i*32+:32]);
      addsp_o[i*32+:32] <= sg_fp_pkg::fp32_add_sp(a[i*32+:32], b[i*32+:32]);
      addsim_o[i*32+:32] <= sg_fp_pkg::fp32_add_sim(a[i*32+:32], b[i*32+:32]);
      mul_o[i*32+:32]  <= sg_fp_pkg::fp32_mul(a[i*32+:32], b[i*32+:32]);
      mulsim_o[i*32+:32] <= sg_fp_pkg::fp32_mul_sim(a[i*32+:32], b[i*32+:32]);
      bf16sim_o[i*32+:32] <= sg_fp_pkg::bf16_mul_sim(a[i*32+:32], b[i*32+:32]);
      bf16_o[i*32+:32] <= sg_fp_pkg::bf16_mul(a[i*32+:32], b[i*32+:32]);
      silu_o[i*32+:32] <= sg_fp_pkg::fp32_mul(
          a[i*32+:32], sg_sigmoid_lut::sigmoid_lut(sg_fp_pkg::sigmoid_index(a[i*32+:32])));
      sidx_o[i*IW+:IW] <= sg_fp_pkg::sigmoid_index(a[i*32+:32]);
      sig_o[i*32+:32]  <= sg_sigmoid_lut::sigmoid_lut(sg_fp_pkg::sigmoid_index(a[i*32+:32]));
      sigc_o[i*32+:32] <= sg_sigmoid_lut::sigmoid_lut_case(sg_fp_pkg::sigmoid_index(a[i*32+:32]));
      rcp_o[i*32+:32] <= sg_fp_pkg::recip_finish(
          a[i*32+:32], {9'h07E, sg_attn_lut::recip_seed(a[i*32+15+:8])},
          sg_fp_pkg::fp32_mul({9'h07F, a[i*32+:23]}, {9'h07E, sg_attn_lut::recip_seed(a[i*32+15+:8])}));
      exp_o[i*32+:32] <= exp_of(a[i*32+:32]);
      rsq_o[i*32+:32] <= rsqrt_of(a[i*32+:32]);
    end
  end
endmodule
