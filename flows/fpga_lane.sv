// fpga_lane: one lane of the compute unit's arithmetic on its own, registered in and out,
// so that `flows/fpga_lane.sh` can compare the per-lane cost of sg_fp_pkg with published
// fp32 operator costs (docs/results/fpga.md). OP = 0: fp32_add (near/far); 1: fp32_mul;
// 2: bf16_mul; 3: the matmul lane's multiply-accumulate, fp32_add(acc, bf16_mul(a, b));
// 4: fp32_add_sp (single path); 5: the multiply-accumulate with fp32_add_sp.
module fpga_lane #(
  parameter int OP = 0
) (
  input  logic clk,
  input  logic [31:0] a,
  input  logic [31:0] b,
  input  logic [31:0] c,
  output logic [31:0] y
);
  logic [31:0] a_q, b_q, c_q, r;
  always_comb begin
    case (OP)
      0: r = sg_fp_pkg::fp32_add(a_q, b_q);
      1: r = sg_fp_pkg::fp32_mul(a_q, b_q);
      2: r = sg_fp_pkg::bf16_mul(a_q, b_q);
      3: r = sg_fp_pkg::fp32_add(c_q, sg_fp_pkg::bf16_mul(a_q, b_q));
      4: r = sg_fp_pkg::fp32_add_sp(a_q, b_q);
      default: r = sg_fp_pkg::fp32_add_sp(c_q, sg_fp_pkg::bf16_mul(a_q, b_q));
    endcase
  end
  always_ff @(posedge clk) begin
    a_q <= a;
    b_q <= b;
    c_q <= c;
    y <= r;
  end
endmodule
