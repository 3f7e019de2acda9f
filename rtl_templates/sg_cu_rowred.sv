// sg_cu_rowred: the compute unit's rowmax / rowsum tree (ATTN = 1; sg_cu.sv header, rowmax /
// rowsum; sim/common/fp.hpp rowReduce). A beat's W words are reduced by a pairwise tree
// (sg_fp_pkg::fp32_max, or fp32_add by the adder NEAR_FAR chooses; heap order: words 0 op 1,
// 2 op 3, ...), one tree level per register stage (RP = log2 W stages; W a power of two). The
// stages shift in lockstep when `adv` is set, so a beat per cycle passes; STOP and DONE
// beats go through them too (their header only), keeping the order. One level per stage
// because a level is one fp32 adder deep: a one-cycle tree of a 16-word beat plus the fold
// was the attention compute unit's longest path (178 logic levels on xc7, fpga.csv).
// `val` folds the last stage's root into the row's value so far: the root itself for the
// row's first beat (first), else acc op root (combinational; sg_cu holds acc).
//
// Node n of the heap at [32*n +: 32] (a packed vector: an unpacked array here would make
// Yosys warn that it replaces a memory by registers); node 0 is not used, nodes W .. 2W-1
// are in0's words, node n < W is registered in stage log2(W) - floor(log2(n)).
// With ATTN = 0 sg_cu never runs rowmax or rowsum: the tree is left out (synthesis would
// remove it, but Verilator kept it, its register feeding itself, and spent a quarter of the
// default fabric's simulation time on W - 1 fp32 adds per unit and cycle).
module sg_cu_rowred #(
  parameter int W = 16,
  parameter int ATTN = 0,
  parameter int NEAR_FAR = 1,
  localparam int HW = sg_beat_pkg::HDR_W
) (
  input  logic clk,
  /* verilator lint_off UNUSEDSIGNAL */  // rst_n, run, take: W > 1 only; head_v: W = 1 only
  input  logic rst_n,
  input  logic run,                   // the context runs (0: the stages empty)
  input  logic sum,                   // rowsum (else rowmax)
  input  logic adv,                   // the stages shift this cycle
  input  logic take,                  // in0's beat (header kind, last, stop; words) enters them
  input  logic head_v,                // in0's head is valid (W = 1: the last stage is in0's head)
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic [1:0] in_k,
  input  logic in_l,
  input  logic [2:0] in_s,
  input  logic [32*W-1:0] in_d,
  input  logic eos,                   // the input DONE was taken
  input  logic first,                 // the last stage's beat is its row's first
  input  logic [31:0] acc,            // the row's value before that beat
  output logic v,                     // the last stage holds a beat: its kind, last, stop
  output logic [1:0] k,
  output logic l,
  output logic [2:0] s,
  output logic dn,                    // a DONE is in the stages or taken: nothing more this context
  output logic [31:0] val             // the row's value with the last stage's beat
);
  localparam logic [1:0] K_DONE = sg_beat_pkg::K_DONE;
  localparam int RP = $clog2(W);
  /* verilator lint_off UNUSEDSIGNAL */
  logic [64*W-1:0] src;               // the registered nodes and in0's words
  logic [32*W-1:0] nxt, tq;           // every internal node's next value, its register
  /* verilator lint_on UNUSEDSIGNAL */
  logic [31:0] x;                     // the tree's root: the beat reduced
  always_comb begin
    src = '0;
    nxt = '0;
    if (ATTN != 0) begin
      src[32*W-1:0] = tq;
      for (int w = 0; w < W; w++) src[32*(W + w) +: 32] = in_d[32*w +: 32];
      for (int n = W - 1; n >= 1; n--)
        nxt[32*n +: 32] = sum ? sg_fp_pkg::fp32_add_by(NEAR_FAR, src[32*(2*n) +: 32], src[32*(2*n+1) +: 32]) :
                                sg_fp_pkg::fp32_max(src[32*(2*n) +: 32], src[32*(2*n+1) +: 32]);
    end
  end
  if (RP == 0) begin : g_comb
    // W = 1: the word is its own root; the fold reads in0's head.
    assign x = in_d[31:0];
    assign {v, k, l, s} = {head_v, in_k, in_l, in_s};
    assign dn = eos;
  end else begin : g_pipe
    logic [(HW+1)*RP-1:0] rh_q;       // stage j's {valid, kind, last, stop} at [(HW+1)*j +: HW+1]
    always_ff @(posedge clk) begin
      if (!rst_n || !run) rh_q <= '0;
      else if (adv) rh_q <= ((HW+1)*RP)'({rh_q, take, in_k, in_l, in_s});
    end
    assign x = tq[63:32];
    assign {v, k, l, s} = rh_q[(HW+1)*(RP-1) +: HW+1];
    always_comb begin
      dn = eos;
      for (int j = 0; j < RP; j++) dn = dn || (rh_q[(HW+1)*j + HW] && rh_q[(HW+1)*j + sg_beat_pkg::KIND_LSB +: 2] == K_DONE);
    end
  end
  always_ff @(posedge clk)
    if (adv) tq <= nxt;
  assign val = (ATTN == 0 || first) ? x : sum ? sg_fp_pkg::fp32_add_by(NEAR_FAR, acc, x) : sg_fp_pkg::fp32_max(acc, x);
endmodule
