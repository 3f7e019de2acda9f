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
  logic [32*LANES-1:0] acc, mpr_n, mpr_q;
  logic kfirst_q;
  always_comb begin
    mpr_n = mpr_q;
    if (go)
      for (int l = 0; l < LANES; l++)
        if (act[l])
          mpr_n[32*l +: 32] = (BF16 != 0) ? sg_fp_pkg::bf16_mul(a[32*l +: 32], b[32*l +: 32])
                                          : sg_fp_pkg::fp32_mul(a[32*l +: 32], b[32*l +: 32]);
  end
  always_comb begin
    sum = acc;
    if (sum_v)
      for (int l = 0; l < LANES; l++)
        if (sum_act[l])
          sum[32*l +: 32] = sg_fp_pkg::fp32_add_by(NEAR_FAR, kfirst_q ? 32'h0 : acc[32*l +: 32], mpr_q[32*l +: 32]);
  end
  always_ff @(posedge clk) begin
    mpr_q <= mpr_n;
    if (sum_v) acc <= sum;
    sum_v <= rst_n && go;
    sum_act <= act;
    kfirst_q <= kfirst;
  end
endmodule
