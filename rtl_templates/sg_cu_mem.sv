// sg_cu_mem: the compute unit's local memory (BUF_WORDS 32-bit words, one word address space
// shared by the a, b and output banks the configuration places in it; docs/hardware.md
// section 2, docs/fpga.md "The compute unit's memory: banked or flat").
//
// Reads are synchronous, as block RAM's: sg_cu gives in cycle c the read addresses of cycle
// c + 1, the memory registers them, and the words it returns in c + 1 include the writes of
// cycle c (write-first). Writes land at the clock edge. Ports:
//   a write  (loader in0: matmul a beats, Expand data beats): W words at a_wbase.. ;
//   b write  (loader in1: matmul b beats): W words at b_wbase.. ;
//   om write (MAC results at the end of a pass): lane l's word at om_wbase + l where
//            om_wmask[l]; oc write (Accum / Scan running tile): W words at oc_wbase.. .
//            om and oc are never used in the same cycle (one function runs at a time).
//   a read   (MAC): lane l's word at a_raddr[l]; the same port serves the Expand copy
//            (d_from_a: W words at d_rbase..);
//   b read   (MAC): lane l's word at b_raddr[l];
//   d read   (drain): W words at d_rbase.. (from the output banks, or the a port's with
//            d_from_a); c read (Accum / Scan): W words at c_rbase.. .
// The Accum / Scan port (oc write, c read) takes whole beats: oc_wbase and c_rbase are
// multiples of W (the mapper puts those banks at beat offsets). In the banked layout its
// word w is bank w, so no rotation sits in Accum's read-add-write loop (docs/fpga.md).
//
// BANKED = 0: one flat array with as many ports as the unit uses (2W + 2 LANES reads). It
// simulates any W and LANES, but no FPGA memory has those ports: such a unit does not
// synthesize (docs/fpga.md).
// BANKED = 1 (LANES <= W, W a power of two >= 2, BUF_WORDS a multiple of W): three memories,
// each written by one port (a, b, output), each of NB = W banks of BUF_WORDS / W words, one
// word wide, so every bank has one write port and one or two read ports (block RAM). Word
// address x with rotation r lives in bank (x + r) mod NB at row x / NB. Every W-word access
// is W consecutive addresses, one per bank. The a loader writes row i of an a tile (K words,
// K a multiple of W: the mapper's M-305) with rotation i mod NB and the MAC reads lane l's
// a[i_l][k] with rotation i_l: the rows i a pass touches are at most LANES consecutive
// values, so at one k they fall in distinct banks. With A_COPIES = 2 (`memory: banked_ragged`)
// K need not be whole beats (K > W and even): a beat may then end row i and start row i + 1.
// The a memory is held twice, copy 0 written with the rotation of the beat's first row, copy 1
// with that rotation + 1, so each row's head (the words of the beat that begins in row i - 1)
// is rotated by i in copy 1 and the rest of the row by i in copy 0; a lane reads its word's
// copy (a_rcopy, sg_cu). Word k of row i is then in bank (base + i (K + 1) + k) mod NB, and
// K + 1 odd keeps the rows of one k in distinct banks. b is rotated the same way by its row j
// when transposed (bt, a_rrot / b_wrot = j mod NB); a pass's j values are one or two runs of
// consecutive values (the second after j wraps past N), so the b memory is held twice
// (B_COPIES = 2 with DYN) and each run reads its own copy. Without bt the MAC reads N <= LANES
// consecutive words (N < LANES) or LANES consecutive words of one row of b: rotation 0.
// A bank serves the lowest lane that asks for it; lanes that ask for the same word share the
// read (broadcast), and the lanes past the tile's last output (whose addresses mean nothing)
// are above every working lane. Reads return the same words as the flat memory whenever the
// conflict-free conditions hold (they do for every configuration the mapper writes).
module sg_cu_mem #(
  parameter int W = 16,
  parameter int LANES = 16,
  parameter int BUF_WORDS = 4096,
  parameter int BANKED = 0,
  parameter int B_COPIES = 2,
  parameter int A_COPIES = 1,
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
  input  logic mac_on,                   // the unit runs a matmul: the lanes' reads matter
  input  logic [MI*LANES-1:0] a_raddr,
  input  logic [RB*LANES-1:0] a_rrot,
  input  logic [LANES-1:0] a_rcopy,     // lane reads a copy 1 (A_COPIES = 2: the row's head)
  output logic [32*LANES-1:0] a_rdata,
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
  localparam int NA = A_COPIES;
  // Row of word base + w (w < NB: the word of a W-word access that lands in a given bank).
  function automatic logic [DR-1:0] row_of(input logic [MI-1:0] base, input logic [RB-1:0] w);
    row_of = DR'((base + MI'(w)) >> RB);
  endfunction

  generate
    if (BANKED == 0) begin : g_flat
      // Blocking writes in a loop (Verilator 5.006 rejects non-blocking array writes in a loop
      // it does not unroll, BLKLOOPINIT; LANES can be 2048). The read addresses are registered
      // and the array read after the edge, so a read sees the writes of the cycle before.
      logic [31:0] mem [0:BUF_WORDS-1];
      logic [MI*LANES-1:0] a_ra_q, b_ra_q;
      logic [MI-1:0] d_ra_q, c_ra_q;
      always_comb begin
        for (int l = 0; l < LANES; l++) begin
          a_rdata[32*l +: 32] = mem[a_ra_q[MI*l +: MI]];
          b_rdata[32*l +: 32] = mem[b_ra_q[MI*l +: MI]];
        end
        for (int w = 0; w < W; w++) begin
          d_rdata[32*w +: 32] = mem[MI'(d_ra_q + MI'(w))];
          c_rdata[32*w +: 32] = mem[MI'(c_ra_q + MI'(w))];
        end
      end
      /* verilator lint_off UNUSEDSIGNAL */
      logic unused;                   // one memory: no rotations, copies or port choice
      assign unused = ^{a_wrot, b_wrot, a_rrot, a_rcopy, b_rrot, b_rcopy, d_from_a, mac_on};
      /* verilator lint_on UNUSEDSIGNAL */
      /* verilator lint_off BLKSEQ */
      always_ff @(posedge clk) begin
        a_ra_q <= a_raddr;
        b_ra_q <= b_raddr;
        d_ra_q <= d_rbase;
        c_ra_q <= c_rbase;
        if (a_we) for (int w = 0; w < W; w++) mem[MI'(a_wbase + MI'(w))] = a_wdata[32*w +: 32];
        if (b_we) for (int w = 0; w < W; w++) mem[MI'(b_wbase + MI'(w))] = b_wdata[32*w +: 32];
        if (oc_we) for (int w = 0; w < W; w++) mem[MI'(oc_wbase + MI'(w))] = oc_wdata[32*w +: 32];
        if (om_we)
          for (int l = 0; l < LANES; l++)
            if (om_wmask[l]) mem[MI'(om_wbase + MI'(l))] = om_wdata[32*l +: 32];
      end
      /* verilator lint_on BLKSEQ */
    end else begin : g_banked
      // Bank of lane l's word in each read port (registered for the read select below), and
      // each bank's read row of the next cycle: sg_prim_bank_arb. Off outside a matmul
      // (mac_on = 0): only the MAC reads these ports, and the arbitration is a large part of
      // a fabric simulation's time.
      logic [RB*LANES-1:0] a_lb, b_lb;
      logic [DR*NB-1:0] oc_row, od_row;
      logic [DR*NB*NA-1:0] a_row, a_lrow;
      logic [DR*NB*NC-1:0] b_row;
      always_comb
        for (int l = 0; l < LANES; l++) begin
          a_lb[RB*l +: RB] = a_raddr[MI*l +: RB] + a_rrot[RB*l +: RB];
          b_lb[RB*l +: RB] = b_raddr[MI*l +: RB] + b_rrot[RB*l +: RB];
        end
      sg_prim_bank_arb #(.LANES(LANES), .NB(NB), .NCOPY(NA), .MI(MI)) u_a_arb (
        .en(mac_on), .addr(a_raddr), .rot(a_rrot), .copy(a_rcopy), .bank_row(a_lrow));
      sg_prim_bank_arb #(.LANES(LANES), .NB(NB), .NCOPY(NC), .MI(MI)) u_b_arb (
        .en(mac_on), .addr(b_raddr), .rot(b_rrot), .copy(b_rcopy), .bank_row(b_row));
      // The W-word reads (a separate block: the lanes' addresses above change once a cycle,
      // these with the unit's inputs, and a simulator re-evaluates a block on any input).
      always_comb
        for (int b = 0; b < NB; b++) begin
          od_row[DR*b +: DR] = row_of(d_rbase, RB'(b) - d_rbase[RB-1:0]);
          oc_row[DR*b +: DR] = DR'(c_rbase >> RB);
          // Expand reads its data tile (rotation 0) from copy 0
          a_row[DR*b +: DR] = d_from_a ? od_row[DR*b +: DR] : a_lrow[DR*b +: DR];
          for (int c = 1; c < NA; c++) a_row[DR*(NB*c + b) +: DR] = a_lrow[DR*(NB*c + b) +: DR];
        end
      // Registered: each bank's row (inside the bank, where it becomes the block RAM's read
      // address), and which bank and copy each lane and each word takes its word from.
      logic [RB*LANES-1:0] a_lb_q, b_lb_q;
      logic [LANES-1:0] a_rcopy_q, b_rcopy_q;
      logic [RB-1:0] d_off_q;
      logic d_from_a_q;
      always_ff @(posedge clk) begin
        a_lb_q <= a_lb;
        b_lb_q <= b_lb;
        a_rcopy_q <= a_rcopy;
        b_rcopy_q <= b_rcopy;
        d_off_q <= d_rbase[RB-1:0];
        d_from_a_q <= d_from_a;
      end
      logic [32*NB-1:0] od_q, oc_q;
      logic [32*NB*NA-1:0] a_q;
      logic [32*NB*NC-1:0] b_q;
      // Each lane's word from its bank; the drain's words, word w from bank (base + w) mod NB
      // (the Accum / Scan port's from bank w).
      logic [RB-1:0] dk;
      always_comb begin
        for (int l = 0; l < LANES; l++) begin
          a_rdata[32*l +: 32] = (NA > 1 && a_rcopy_q[l]) ? a_q[32*(NB + 32'(a_lb_q[RB*l +: RB])) +: 32]
                                                          : a_q[32*32'(a_lb_q[RB*l +: RB]) +: 32];
          b_rdata[32*l +: 32] = (NC > 1 && b_rcopy_q[l]) ? b_q[32*(NB + 32'(b_lb_q[RB*l +: RB])) +: 32]
                                                          : b_q[32*32'(b_lb_q[RB*l +: RB]) +: 32];
        end
        dk = '0;
        for (int w = 0; w < W; w++) begin
          dk = d_off_q + RB'(w);
          d_rdata[32*w +: 32] = d_from_a_q ? a_q[32*32'(dk) +: 32] : od_q[32*32'(dk) +: 32];
        end
        c_rdata = oc_q;
      end
      /* verilator lint_off UNUSEDSIGNAL */
      logic unused;                   // one a or b copy: lanes never pick copy 1; whole-beat oc / c bases
      assign unused = ^{a_rcopy, a_rcopy_q, b_rcopy, b_rcopy_q, oc_wbase[RB-1:0], c_rbase[RB-1:0]};
      /* verilator lint_on UNUSEDSIGNAL */

      for (genvar b = 0; b < NB; b++) begin : g_bank
        // Write side: the word of each port that lands in this bank, worked out under the
        // port's enable (a simulator then skips it in the cycles without a write).
        logic [RB-1:0] ow;           // the MAC lane whose result lands here
        assign ow = RB'(b) - om_wbase[RB-1:0];
        // One block RAM per memory, copy and bank: a registered read address, write-first.
        logic [31:0] mo [0:D-1];
        logic [DR-1:0] od_ra, oc_ra;
        always_ff @(posedge clk) begin
          if (om_we) begin
            if (32'(ow) < LANES && om_wmask[32'(ow) % LANES])
              mo[row_of(om_wbase, ow)] <= om_wdata[32*(32'(ow) % LANES) +: 32];
          end else if (oc_we) mo[DR'(oc_wbase >> RB)] <= oc_wdata[32*b +: 32];
          od_ra <= od_row[DR*b +: DR];
          oc_ra <= oc_row[DR*b +: DR];
        end
        assign od_q[32*b +: 32] = mo[od_ra];
        for (genvar c = 0; c < NA; c++) begin : g_acopy
          logic [31:0] ma [0:D-1];
          logic [DR-1:0] a_ra;
          logic [RB-1:0] aw;         // the beat's word that lands here (copy c: rotation + c)
          assign aw = RB'(b) - a_wbase[RB-1:0] - a_wrot - RB'(c);
          always_ff @(posedge clk) begin
            if (a_we) ma[row_of(a_wbase, aw)] <= a_wdata[32*32'(aw) +: 32];
            a_ra <= a_row[DR*(NB*c + b) +: DR];
          end
          assign a_q[32*(NB*c + b) +: 32] = ma[a_ra];
        end
        assign oc_q[32*b +: 32] = mo[oc_ra];
        logic [RB-1:0] bw;           // the b beat's word that lands here
        assign bw = RB'(b) - b_wbase[RB-1:0] - b_wrot;
        for (genvar c = 0; c < NC; c++) begin : g_bcopy
          logic [31:0] mb [0:D-1];
          logic [DR-1:0] b_ra;
          always_ff @(posedge clk) begin
            if (b_we) mb[row_of(b_wbase, bw)] <= b_wdata[32*32'(bw) +: 32];
            b_ra <= b_row[DR*(NB*c + b) +: DR];
          end
          assign b_q[32*(NB*c + b) +: 32] = mb[b_ra];
        end
      end
    end
  endgenerate
endmodule
