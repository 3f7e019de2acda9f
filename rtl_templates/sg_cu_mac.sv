// sg_cu_mac: the compute unit's MAC array, LANES fp32 multiply-accumulate lanes in two stages
// (docs/hardware.md section 2; sg_cu.sv header, matmul). Stage 1, the k step's cycle: every
// active lane's product a * b (bf16_mul with BF16 = 1: operands truncated to bf16, exact
// product; fp32_mul otherwise) into a register. Stage 2, the next cycle: the product is
// added into the lane's sum, from +0 at k = 0 (sum = fp32_add(kfirst ? +0 : sum, product),
// the adder NEAR_FAR chooses). A register between the multiply and the add halves the path:
// block RAM -> bf16 multiply -> fp32 add was 81 logic levels on xc7. Stage 2 depends on
// registers only, so stage 1 runs the next step meanwhile.
//
// Ports: lane l's operands, products and sums at [32*l +: 32]. `sum` is combinational: every
// lane's sum after this cycle's stage 2 (inactive lanes and cycles: unchanged), which at a
// pass's last k step is what sg_cu writes to its output bank. Arithmetic: sg_fp_pkg
// (bit-exact with sim/common/fp.hpp).
module sg_cu_mac #(
  parameter int LANES = 16,
  parameter int BF16 = 1,
  parameter int NEAR_FAR = 1
) (
  input  logic clk,
  input  logic rst_n,
  input  logic go,                      // stage 1 works: a k step of a data tile
  input  logic [LANES-1:0] act,         // the lanes with an output in this pass (o < mn)
  input  logic kfirst,                  // the step is k = 0
  input  logic [32*LANES-1:0] a,        // the operands (the local memory's reads)
  input  logic [32*LANES-1:0] b,
  output logic sum_v,                   // stage 2 works this cycle (last cycle's go)
  output logic [LANES-1:0] sum_act,     // ... on these lanes
  output logic [32*LANES-1:0] sum
);
  logic kfirst_q;
  always_ff @(posedge clk) begin
    sum_v <= rst_n && go;
    sum_act <= act;
    kfirst_q <= kfirst;
  end
  // Two codings of the same lanes, chosen by LANES for the simulator's sake (Yosys reads
  // either as the same logic): up to 64 lanes, one block per lane on 32-bit words, whose
  // slices of the wide ports are constants (the default unit's MAC array runs a quarter
  // faster in Verilator so); above, one loop over the lanes, which keeps the verilated code
  // of the 2,048-lane unit one loop body instead of 2,048 copies of the fp32 arithmetic.
  if (LANES <= 64) begin : g_lanes
    for (genvar l = 0; l < LANES; l++) begin : g_lane
      logic [31:0] mpr_q, acc, s;
      always_ff @(posedge clk)
        if (go && act[l])
          mpr_q <= (BF16 != 0) ? sg_fp_pkg::bf16_mul(a[32*l +: 32], b[32*l +: 32])
                               : sg_fp_pkg::fp32_mul(a[32*l +: 32], b[32*l +: 32]);
      // (s = acc, then the sum under the condition: written as if / else, Verilator turns
      // it into a select and computes the sum in every cycle)
      always_comb begin
        s = acc;
        if (sum_v && sum_act[l]) s = sg_fp_pkg::fp32_add_by(NEAR_FAR, kfirst_q ? 32'h0 : acc, mpr_q);
      end
      assign sum[32*l +: 32] = s;
      always_ff @(posedge clk)
        if (sum_v && sum_act[l]) acc <= s;
    end
  end else begin : g_loop
    logic [32*LANES-1:0] acc, mpr_q;
    always_ff @(posedge clk)
      if (go)
        for (int l = 0; l < LANES; l++)
          if (act[l])
            mpr_q[32*l +: 32] <= (BF16 != 0) ? sg_fp_pkg::bf16_mul(a[32*l +: 32], b[32*l +: 32])
                                             : sg_fp_pkg::fp32_mul(a[32*l +: 32], b[32*l +: 32]);
    always_comb begin
      sum = acc;
      if (sum_v)
        for (int l = 0; l < LANES; l++)
          if (sum_act[l])
            sum[32*l +: 32] = sg_fp_pkg::fp32_add_by(NEAR_FAR, kfirst_q ? 32'h0 : acc[32*l +: 32], mpr_q[32*l +: 32]);
    end
    always_ff @(posedge clk)
      if (sum_v) acc <= sum;
  end
endmodule
