// sg_cu_mem: the compute unit's local memory (BUF_WORDS 32-bit words, one word address space
// shared by the a, b and output banks the configuration places in it; docs/hardware.md
// section 2, docs/fpga.md "The banked compute-unit memory").
//
// Every port is used as sg_cu drives it in one cycle: reads are combinational (they return
// the words before this cycle's writes), writes land at the clock edge. Ports:
//   a write  (loader in0: matmul a beats, Expand data beats): W words at a_wbase.. ;
//   b write  (loader in1: matmul b beats): W words at b_wbase.. ;
//   om write (MAC results at the end of a pass): lane l's word at om_wbase + l where
//            om_wmask[l]; oc write (Accum / Scan running tile): W words at oc_wbase.. .
//            om and oc are never used in the same cycle (one function runs at a time).
//   a read   (MAC): lane l's word at a_raddr[l] where a_ract[l]; the same port serves the
//            Expand copy (d_from_a: W words at d_rbase..);
//   b read   (MAC): lane l's word at b_raddr[l] where b_ract[l];
//   d read   (drain): W words at d_rbase.. (from the output banks, or the a port's with
//            d_from_a); c read (Accum / Scan): W words at c_rbase.. .
//
// BANKED = 0: one flat array with as many ports as the unit uses (2W + 2 LANES reads). It
// simulates any W and LANES, but no FPGA memory has those ports: such a unit does not
// synthesize (docs/fpga.md).
// BANKED = 1 (LANES <= W, W a power of two >= 2, BUF_WORDS a multiple of W): three memories,
// each written by one port (a, b, output), each of NB = W banks of BUF_WORDS / W words, one
// word wide, so every bank has one write port and one or two read ports, as FPGA LUT-RAM
// has. Word address x with rotation r lives in bank (x + r) mod NB at row x / NB. Every
// W-word access is W consecutive addresses, one per bank. The a loader writes row i of an
// a tile (K words, K a multiple of W: the mapper's M-305) with rotation i mod NB and the MAC
// reads lane l's a[i_l][k] with rotation i_l: the rows i a pass touches are at most LANES
// consecutive values, so at one k they fall in distinct banks. b is rotated the same way by
// its row j when transposed (bt, a_rrot / b_wrot = j mod NB); a pass's j values are one or
// two runs of consecutive values (the second after j wraps past N), so the b memory is held
// twice (B_COPIES = 2 with DYN) and each run reads its own copy. Without bt the MAC reads
// N <= LANES consecutive words (N < LANES) or LANES consecutive words of one row of b: rotation 0.
// Lanes that ask for the same word share the bank's read (broadcast). Reads return the same
// words as the flat memory whenever the conflict-free conditions hold (they do for every
// configuration the mapper writes); sg_cu's tests and the fabric tests compare both.
module sg_cu_mem #(
  parameter int W = 16,
  parameter int LANES = 16,
  parameter int BUF_WORDS = 4096,
  parameter int BANKED = 0,
  parameter int B_COPIES = 2,
  localparam int MI = (BUF_WORDS > 1) ? $clog2(BUF_WORDS) : 1,
  localparam int RB = (W > 1) ? $clog2(W) : 1
) (
  input  logic clk,
  input  logic a_we,
  input  logic [MI-1:0] a_wbase,
  input  logic [RB-1:0] a_wrot,
  input  logic [32*W-1:0] a_wdata,
  input  logic b_we,
  input  logic [MI-1:0] b_wbase,
  input  logic [RB-1:0] b_wrot,
  input  logic [32*W-1:0] b_wdata,
  input  logic om_we,
  input  logic [LANES-1:0] om_wmask,
  input  logic [MI-1:0] om_wbase,
  input  logic [32*LANES-1:0] om_wdata,
  input  logic oc_we,
  input  logic [MI-1:0] oc_wbase,
  input  logic [32*W-1:0] oc_wdata,
  input  logic [LANES-1:0] a_ract,
  input  logic [MI*LANES-1:0] a_raddr,
  input  logic [RB*LANES-1:0] a_rrot,
  output logic [32*LANES-1:0] a_rdata,
  input  logic [LANES-1:0] b_ract,
  input  logic [MI*LANES-1:0] b_raddr,
  input  logic [RB*LANES-1:0] b_rrot,
  input  logic [LANES-1:0] b_rcopy,     // lane reads b copy 1 (BANKED, bt: j wrapped)
  output logic [32*LANES-1:0] b_rdata,
  input  logic d_from_a,
  input  logic [MI-1:0] d_rbase,
  output logic [32*W-1:0] d_rdata,
  input  logic [MI-1:0] c_rbase,
  output logic [32*W-1:0] c_rdata
);
  // Banked layout (BANKED = 1)
  localparam int NB = W;                     // banks
  localparam int D = BUF_WORDS / NB;         // rows per bank
  localparam int DR = (MI > RB) ? MI - RB : 1;  // row bits
  localparam int NC = B_COPIES;
  // Row of word base + w (w < NB: the word of a W-word access that lands in a given bank).
  function automatic logic [DR-1:0] row_of(input logic [MI-1:0] base, input logic [RB-1:0] w);
    row_of = DR'((base + MI'(w)) >> RB);
  endfunction

  generate
    if (BANKED == 0) begin : g_flat
      // Blocking writes in a loop (Verilator 5.006 rejects non-blocking array writes in a loop
      // it does not unroll, BLKLOOPINIT; LANES can be 2048). The reads are combinational, so
      // they see the words before this edge's writes either way.
      logic [31:0] mem [0:BUF_WORDS-1];
      always_comb begin
        for (int l = 0; l < LANES; l++) begin
          a_rdata[32*l +: 32] = a_ract[l] ? mem[a_raddr[MI*l +: MI]] : 32'h0;
          b_rdata[32*l +: 32] = b_ract[l] ? mem[b_raddr[MI*l +: MI]] : 32'h0;
        end
        for (int w = 0; w < W; w++) begin
          d_rdata[32*w +: 32] = mem[MI'(d_rbase + MI'(w))];
          c_rdata[32*w +: 32] = mem[MI'(c_rbase + MI'(w))];
        end
      end
      /* verilator lint_off UNUSEDSIGNAL */
      logic unused;                   // one memory: no rotations, copies or port choice
      assign unused = ^{a_wrot, b_wrot, a_rrot, b_rrot, b_rcopy, d_from_a};
      /* verilator lint_on UNUSEDSIGNAL */
      /* verilator lint_off BLKSEQ */
      always_ff @(posedge clk) begin
        if (a_we) for (int w = 0; w < W; w++) mem[MI'(a_wbase + MI'(w))] = a_wdata[32*w +: 32];
        if (b_we) for (int w = 0; w < W; w++) mem[MI'(b_wbase + MI'(w))] = b_wdata[32*w +: 32];
        if (oc_we) for (int w = 0; w < W; w++) mem[MI'(oc_wbase + MI'(w))] = oc_wdata[32*w +: 32];
        if (om_we)
          for (int l = 0; l < LANES; l++)
            if (om_wmask[l]) mem[MI'(om_wbase + MI'(l))] = om_wdata[32*l +: 32];
      end
      /* verilator lint_on BLKSEQ */
    end else begin : g_banked
      // Bank of lane l's word in each read port, and each bank's read row.
      logic [RB*LANES-1:0] a_lb, b_lb;
      logic [DR*NB-1:0] a_row, oc_row, od_row;
      logic [DR*NB*NC-1:0] b_row;
      logic [32*NB-1:0] a_q, od_q, oc_q;
      logic [32*NB*NC-1:0] b_q;
      always_comb begin
        for (int l = 0; l < LANES; l++) begin
          a_lb[RB*l +: RB] = a_raddr[MI*l +: RB] + a_rrot[RB*l +: RB];
          b_lb[RB*l +: RB] = b_raddr[MI*l +: RB] + b_rrot[RB*l +: RB];
        end
        // A bank serves the lowest lane that asks for it: every lane asking for one bank asks
        // for the same word (the conflict-free layout above).
        for (int b = 0; b < NB; b++) begin
          od_row[DR*b +: DR] = row_of(d_rbase, RB'(b) - d_rbase[RB-1:0]);
          oc_row[DR*b +: DR] = row_of(c_rbase, RB'(b) - c_rbase[RB-1:0]);
          a_row[DR*b +: DR] = od_row[DR*b +: DR];
          for (int c = 0; c < NC; c++) b_row[DR*(NB*c + b) +: DR] = '0;
          if (!d_from_a) begin
            for (int l = LANES - 1; l >= 0; l--)
              if (a_ract[l] && a_lb[RB*l +: RB] == RB'(b)) a_row[DR*b +: DR] = a_raddr[MI*l + RB +: DR];
          end
          for (int l = LANES - 1; l >= 0; l--)
            if (b_ract[l] && b_lb[RB*l +: RB] == RB'(b))
              b_row[DR*(NB*(NC > 1 ? 32'(b_rcopy[l]) : 0) + b) +: DR] = b_raddr[MI*l + RB +: DR];
        end
      end
      // Each lane's word from its bank; the W-word reads, word w from bank (base + w) mod NB.
      logic [RB-1:0] dk, ck;
      always_comb begin
        for (int l = 0; l < LANES; l++) begin
          a_rdata[32*l +: 32] = a_q[32*32'(a_lb[RB*l +: RB]) +: 32];
          b_rdata[32*l +: 32] = b_q[32*(NB*(NC > 1 ? 32'(b_rcopy[l]) : 0) + 32'(b_lb[RB*l +: RB])) +: 32];
        end
        dk = '0;
        ck = '0;
        for (int w = 0; w < W; w++) begin
          dk = d_rbase[RB-1:0] + RB'(w);
          ck = c_rbase[RB-1:0] + RB'(w);
          d_rdata[32*w +: 32] = d_from_a ? a_q[32*32'(dk) +: 32] : od_q[32*32'(dk) +: 32];
          c_rdata[32*w +: 32] = oc_q[32*32'(ck) +: 32];
        end
      end
      /* verilator lint_off UNUSEDSIGNAL */
      logic unused;                   // one b copy (no bt): lanes never pick copy 1
      assign unused = ^b_rcopy;
      /* verilator lint_on UNUSEDSIGNAL */

      for (genvar b = 0; b < NB; b++) begin : g_bank
        // Write side: the word of each port that lands in this bank.
        logic [RB-1:0] aw, bw, ow;   // beat word / lane index
        logic [DR-1:0] a_wr, b_wr, o_wr;
        logic o_we;
        logic [31:0] o_wd;
        always_comb begin
          aw = RB'(b) - a_wbase[RB-1:0] - a_wrot;
          bw = RB'(b) - b_wbase[RB-1:0] - b_wrot;
          a_wr = row_of(a_wbase, aw);
          b_wr = row_of(b_wbase, bw);
          if (om_we) begin
            ow = RB'(b) - om_wbase[RB-1:0];
            o_we = (32'(ow) < LANES) && om_wmask[32'(ow) % LANES];
            o_wr = row_of(om_wbase, ow);
            o_wd = om_wdata[32*(32'(ow) % LANES) +: 32];
          end else begin
            ow = RB'(b) - oc_wbase[RB-1:0];
            o_we = oc_we;
            o_wr = row_of(oc_wbase, ow);
            o_wd = oc_wdata[32*32'(ow) +: 32];
          end
        end
        logic [31:0] ma [0:D-1];
        logic [31:0] mo [0:D-1];
        always_ff @(posedge clk) begin
          if (a_we) ma[a_wr] <= a_wdata[32*32'(aw) +: 32];
          if (o_we) mo[o_wr] <= o_wd;
        end
        assign a_q[32*b +: 32] = ma[a_row[DR*b +: DR]];
        assign od_q[32*b +: 32] = mo[od_row[DR*b +: DR]];
        assign oc_q[32*b +: 32] = mo[oc_row[DR*b +: DR]];
        for (genvar c = 0; c < NC; c++) begin : g_bcopy
          logic [31:0] mb [0:D-1];
          always_ff @(posedge clk)
            if (b_we) mb[b_wr] <= b_wdata[32*32'(bw) +: 32];
          assign b_q[32*(NB*c + b) +: 32] = mb[b_row[DR*(NB*c + b) +: DR]];
        end
      end
    end
  endgenerate
endmodule
