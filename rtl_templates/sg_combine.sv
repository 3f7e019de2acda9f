// sg_combine: the back of a Mixture-of-Experts layer in hardware (docs/step_semantics.md#operators):
//   Partition(expert output rows, selector) -> FlatMap(rows, dropping padding rows) ->
//   Flatten -> Reassemble(by token): the expert output rows, which arrive in the order
//   sg_route emitted their entries (experts ascending, padding included), are put back in
//   slot order t*k + j and grouped by token.
// Runs inside sg_mu (combine = 1; rtl_templates/sg_mu.sv). Beats as in docs/hardware.md
// section 1: {kind[2], last[1], stop[3], data[32*W]}, kind 0 DATA, 1 STOP, 2 DONE.
//
// Parameters: W words per beat (W >= 4, even, as sg_route), MAXT max tokens, MAXK max slots
// per token, ROWW max words of one row (a multiple of W), MAXENT max entries (in1 DATA beats,
// padding included; = max rows on in0). Slots: NS = MAXT*MAXK.
//
// Configuration (plain ports, held constant from `start` to `done`):
//   k         slots per token, 1..MAXK (token of slot s = s / k).
//   row_beats beats per row = D/W, 1..ROWW/W.
//
// Inputs
// * in1 (entries): sg_route's meta output: one DATA beat per entry, word1 = the entry's slot
//   t*k + j, or 0xFFFFFFFF for a padding entry; then DONE. Only the kind and word1 are read
//   (words 0, 2, 3, `last` and `stop` are ignored); STOP beats are accepted and dropped.
//   Entry n = the n-th DATA beat. in1 is taken freely, one beat per cycle, independently of
//   in0: the meta stream is broadcast to other consumers (address generators of the expert
//   weights) that need it long before in0 arrives; a unit that took in1 in lockstep with in0
//   would deadlock the fabric.
// * in0 (expert output rows): DATA beats, row_beats per row (rows are counted by beats; `last`
//   and `stop` of DATA beats are ignored), then DONE; STOP beats are accepted and dropped.
//   Row n pairs with entry n. A non-padding row is stored at its slot; the beats of a padding
//   row are consumed and dropped.
//
// Output, after both DONEs: every written slot in ascending slot order, each as row_beats
// DATA beats (`last` = 1 on the row's final beat only). Stop on a row's final beat: 2 for the
// last written slot; else 1 if the next written slot belongs to another token; else 0.
// Non-final beats stop 0. Then one DONE (nothing written: only the DONE). This is the
// Reassemble output [B, K] of [1, D] rows: S1 after each token's rows, S2 at the end (tokens
// without a written slot give nothing). `done` rises once the DONE is accepted and stays high
// until the next `start`.
// peak_words: words held at the end of collection, counted as the inputs are accepted: +W per
// stored (non-padding) in0 DATA beat, +1 per in1 DATA entry (its slot). Cleared by `start`.
//
// Storage: entry memory (MAXENT x {pad, slot}; written at the entry count, read at the in0
// row count), row memory (NS * ROWW/W beats, written at slot*ROWW/W + beat), and a written
// bit per slot (wm_q). Both memories have one write and one asynchronous read port, as in
// sg_route. Token boundaries without a divider: the per-token written mask tm (bit t*MAXK + j
// = slot t*k + j written, j < k) is wm_q viewed through a MAXK-way multiplexer on k (t*c is
// an elaboration constant for each candidate c); tany = tokens with a written slot (function
// next_slot). The read-out keeps the current row (token ct, slot cs = ct*k + j) and the next
// written slot (nt, nj) one ahead, so a row's stop is known when its final beat is
// registered: next = the next set bit of tm[nt] above nj, else the first set bit of the next
// token in tany. Longest combinational paths: nt -> tany priority encoder (MAXT bits) -> tm
// row select (MAXT:1 of MAXK bits) -> MAXK-bit priority encoder -> nt/nj registers; in0 row
// count -> entry memory read -> row memory write address; cursor slot -> row memory read ->
// output register.
// Port widths: k $clog2(MAXK+1), row_beats $clog2(ROWW/W+1) bits.
//
// Timing (cycle S = the `start` cycle; S+1 clears the unit, inputs are accepted from S+2).
// A `start` pulse restarts the unit from any state.
// * Collection: in1_ready = 1 from S+2 until in1's DONE has been accepted (one beat per
//   cycle, whatever in0 does). in0_ready = 1 from S+2 until in0's DONE has been accepted,
//   except while in1's DONE has not been accepted and the entry of the current in0 row n
//   (rows counted from 0; after the last row, n = the number of rows) has not been accepted
//   in an earlier cycle: a beat of row n is taken from the cycle after entry n, and in0's
//   DONE from the cycle after entry n or in1's DONE. Let d = the cycle in which the later
//   of the two DONEs is accepted. With both inputs offered from S+2 without gaps (in1: n_e
//   entries then DONE; in0: n_e*row_beats DATA beats then DONE; no STOP beats):
//     entry n accepted in S+2+n, in1's DONE in S+2+n_e; in0 beat i in S+3+i;
//     d = S + 3 + n_e*row_beats   (also for n_e = 0: in0's DONE waits for in1's DONE).
// * Cycle d: the first written slot is looked up; d+1: it becomes the current row and the
//   second written slot is looked up; d+2: the first beat is registered. First output beat
//   valid in cycle d + 3, for any n_e, k, row_beats (also when nothing was written: then
//   that beat is the DONE).
// * Then one beat per cycle while out_ready = 1, no bubbles (unwritten slots and tokens cost
//   nothing): with n_w = written slots, the N = n_w*row_beats + 1 output beats (DONE
//   included) occupy cycles d+3 .. d+2+N. `done` is high from cycle d + 3 + N (it rises at
//   the edge that ends cycle d+2+N, in which DONE is accepted). Total, start to done,
//   without gaps and stalls: S + 7 + (n_e + n_w)*row_beats.
// * Output back-pressure: a beat waits in the output register; beats are unchanged, every
//   stalled cycle delays the rest by one. Input gaps delay only the input they occur on
//   (and in0 through its wait for entries).
// Out of contract (undefined): more than MAXENT entries, in0 row and in1 entry counts that
// differ (rows beyond the entries are dropped), a slot >= MAXT*k that is not 0xFFFFFFFF, a
// slot written twice (the later row wins), configuration changes during a run.
//
// Ports: out_valid / out_beat / done / peak_words come from registers; in0_ready and
// in1_ready are functions of registers only (no path from any valid, beat or out_ready).
module sg_combine #(
  parameter int W = 16,
  parameter int MAXT = 64,
  parameter int MAXK = 8,
  parameter int ROWW = 64,
  parameter int MAXENT = 16384
) (
  input  logic clk,
  input  logic rst_n,
  input  logic [$clog2(MAXK+1)-1:0] k,
  input  logic [$clog2(ROWW/W+1)-1:0] row_beats,
  input  logic start,
  output logic done,
  output logic [31:0] peak_words,
  // in0: last and stop are ignored (rows are counted by beats); kind and data are used.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [32*W+sg_beat_pkg::HDR_W-1:0] in0_beat,
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic in0_valid,
  output logic in0_ready,
  // in1: only the kind and word1 (the slot) are read, by definition of the meta beat.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [32*W+sg_beat_pkg::HDR_W-1:0] in1_beat,
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic in1_valid,
  output logic in1_ready,
  output logic [32*W+sg_beat_pkg::HDR_W-1:0] out_beat,
  output logic out_valid,
  input  logic out_ready
);
  localparam int DW = 32 * W;
  localparam int BW = DW + sg_beat_pkg::HDR_W;
  localparam int RBM = ROWW / W;                          // beat slots per stored row
  localparam int NS = MAXT * MAXK;                        // slots
  localparam int SW = (NS > 1) ? $clog2(NS) : 1;          // slot index bits
  localparam int NXB = NS * RBM;                          // row memory beats
  localparam int XA = (NXB > 1) ? $clog2(NXB) : 1;        // row memory address bits
  localparam int XB = (RBM > 1) ? $clog2(RBM) : 1;        // beat-in-row bits
  localparam int TW = $clog2(MAXT);                       // token index bits (MAXT >= 2)
  localparam int JW = (MAXK > 1) ? $clog2(MAXK) : 1;      // slot-in-token bits
  localparam int NW = $clog2(MAXENT + 1);                 // entry / row count bits
  localparam int EA = (MAXENT > 1) ? $clog2(MAXENT) : 1;  // entry memory address bits
  localparam logic [1:0] K_DATA = sg_beat_pkg::K_DATA, K_DONE = sg_beat_pkg::K_DONE;  // STOPs: dropped
  localparam logic [2:0] S_IDLE = 3'd0, S_INIT = 3'd1, S_COL = 3'd2, S_PREP = 3'd3,
                         S_EMIT = 3'd4;

  if (W < 4 || (W % 2) != 0 || MAXK < 1 || (ROWW % W) != 0 || ROWW < W || MAXT < 2 ||
      MAXENT < 1) begin : g_bad_params
    $error("sg_combine: need W >= 4 even, MAXK >= 1, ROWW a multiple of W, MAXT >= 2, MAXENT >= 1");
  end

  // ---------------------------------------------------------------- priority encoders
  // Lowest set bit of v at an index >= from: {found, index}.
  function automatic logic [TW:0] ffs_t(input logic [MAXT-1:0] v, input int from);
    logic [TW:0] r;
    r = '0;
    for (int i = MAXT - 1; i >= 0; i--)
      if (v[i] && i >= from) r = {1'b1, TW'(i)};
    ffs_t = r;
  endfunction
  function automatic logic [JW:0] ffs_j(input logic [MAXK-1:0] v, input int from);
    logic [JW:0] r;
    r = '0;
    for (int i = MAXK - 1; i >= 0; i--)
      if (v[i] && i >= from) r = {1'b1, JW'(i)};
    ffs_j = r;
  endfunction
  // The written slot after slot j of token t in slot order: the next written slot of token t
  // above j, else the first written slot of the next token that has one; from0: the first
  // written slot of all. v: (t, j) is a slot (the successor of none is none). Returns
  // {found, token, slot in token}. wm: written bits by slot; kk: k. The per-token mask is wm
  // through a MAXK-way multiplexer on k (t*c is an elaboration constant for each candidate
  // c), so no divider is needed. Called only where its result is registered (in the
  // always_ff below, under col_end / adv): a simulator then skips it in all other cycles
  // (as a continuous assignment it cost every cycle of every route-capable memory unit).
  function automatic logic [TW+JW:0] next_slot(input logic [NS-1:0] wm,
                                               input logic [$clog2(MAXK+1)-1:0] kk,
                                               input logic [TW-1:0] t, input logic [JW-1:0] j,
                                               input logic v, input logic from0);
    logic [NS-1:0] tm;                    // bit t*MAXK + j: slot t*k + j written (j < k)
    logic [MAXT-1:0] tany;                // token t has a written slot
    logic [JW:0] f_in;                    // next written slot of token t above j
    logic [TW:0] f_tok;                   // next token with a written slot
    logic [JW:0] f_first;                 // its first written slot
    tm = '0;
    for (int tt = 0; tt < MAXT; tt++) begin
      for (int c = 1; c <= MAXK; c++)
        if (32'(kk) == c)
          for (int jj = 0; jj < c; jj++) tm[tt * MAXK + jj] = wm[tt * c + jj];
      tany[tt] = |tm[tt * MAXK +: MAXK];
    end
    f_in = ffs_j(tm[32'(t) * MAXK +: MAXK], 32'(j) + 1);
    f_tok = ffs_t(tany, from0 ? 0 : 32'(t) + 1);
    f_first = ffs_j(tm[32'(f_tok[TW-1:0]) * MAXK +: MAXK], 0);
    if (!from0 && f_in[JW]) next_slot = {v, t, f_in[JW-1:0]};
    // (a token in tany has a first written slot: f_first[JW] is 1 there)
    else next_slot = {f_tok[TW] && f_first[JW] && (from0 || v), f_tok[TW-1:0], f_first[JW-1:0]};
  endfunction

  // ---------------------------------------------------------------- state
  logic [2:0] st_q;
  logic done_q;
  logic [31:0] peak_q;
  // collection
  logic d0_q, d1_q;                       // DONE accepted on in0 / in1
  logic [NW-1:0] ent_q;                   // entries accepted on in1
  logic [NW-1:0] row_q;                   // current in0 row
  logic [XB-1:0] rb_q;                    // next beat within it
  logic [SW:0] emem [0:MAXENT-1];         // entry n: {padding, slot}
  logic [DW-1:0] xmem [0:NXB-1];          // row beats by slot
  logic [NS-1:0] wm_q;                    // slot s has been written
  // read-out: current row and the next written slot (one ahead)
  logic cv_q;                             // a current row remains (else: DONE is next)
  logic [TW-1:0] ct_q;
  logic [SW-1:0] cs_q;                    // its slot ct*k + cj
  logic [XB-1:0] cb_q;                    // beat within it
  logic nv_q;                             // a next written slot exists
  logic [TW-1:0] nt_q;
  logic [JW-1:0] nj_q;
  logic eos_q;                            // DONE has been put in the output register
  logic [BW-1:0] out_q;
  logic ov_q;

  // ---------------------------------------------------------------- collection
  logic f0, f1;
  logic [1:0] in0_kind, in1_kind;
  logic col_end;                          // the later DONE is accepted this cycle
  logic [SW:0] r_ent;                     // entry of the current in0 row
  logic r_ok;                             // ... exists (rows beyond the entries: dropped)
  logic wr0;                              // store the accepted in0 beat
  logic [XA-1:0] w_addr;

  assign in0_kind = in0_beat[DW + sg_beat_pkg::KIND_LSB +: 2];
  assign in1_kind = in1_beat[DW + sg_beat_pkg::KIND_LSB +: 2];
  assign in1_ready = (st_q == S_COL) && !d1_q;
  // Entry row_q has been accepted in an earlier cycle (or none will follow: take the rest).
  assign in0_ready = (st_q == S_COL) && !d0_q && (d1_q || ent_q > row_q);
  assign f0 = in0_valid && in0_ready;
  assign f1 = in1_valid && in1_ready;
  assign col_end = (st_q == S_COL) && (d1_q || (f1 && in1_kind == K_DONE)) &&
                   (d0_q || (f0 && in0_kind == K_DONE));
  assign r_ent = emem[row_q[EA-1:0]];
  assign r_ok = row_q < ent_q;
  assign wr0 = f0 && in0_kind == K_DATA && r_ok && !r_ent[SW];
  assign w_addr = XA'(32'(r_ent[SW-1:0]) * RBM + 32'(rb_q));

  // ---------------------------------------------------------------- read-out step
  logic row_end;                          // the current beat is the row's last
  logic [2:0] row_stop;
  logic can_out, step, adv;
  logic [XA-1:0] c_addr;

  assign row_end = (32'(cb_q) + 1 == 32'(row_beats));
  assign row_stop = !nv_q ? 3'd2 : (nt_q != ct_q) ? 3'd1 : 3'd0;
  assign can_out = !ov_q || out_ready;
  assign step = (st_q == S_EMIT) && !eos_q && can_out;
  // adv: the next written slot becomes the current row, and the one after it is looked up.
  // In S_PREP (the first row) and with the final beat of each row.
  assign adv = (st_q == S_PREP) || (step && cv_q && row_end);
  assign c_addr = XA'(32'(cs_q) * RBM + 32'(cb_q));

  assign out_beat = out_q;
  assign out_valid = ov_q;
  assign done = done_q;
  assign peak_words = peak_q;

  // Memories: no reset (entries and rows are read only where written in this run).
  always_ff @(posedge clk) begin
    if (st_q == S_COL && f1 && in1_kind == K_DATA)
      emem[ent_q[EA-1:0]] <= {in1_beat[32 +: 32] == 32'hFFFF_FFFF, in1_beat[32 +: SW]};
    if (st_q == S_COL && wr0) xmem[w_addr] <= in0_beat[DW-1:0];
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      st_q <= S_IDLE;
      done_q <= 1'b0;
      peak_q <= '0;
      ov_q <= 1'b0;
      eos_q <= 1'b0;
      d0_q <= 1'b0;
      d1_q <= 1'b0;
    end else if (start) begin
      st_q <= S_INIT;
      done_q <= 1'b0;
      peak_q <= '0;
      ov_q <= 1'b0;
      eos_q <= 1'b0;
    end else begin : b_run
      logic [TW+JW:0] nxt;                // next_slot's result (blocking, local)
      nxt = '0;
      case (st_q)
        S_INIT: begin
          st_q <= S_COL;
          d0_q <= 1'b0;
          d1_q <= 1'b0;
          ent_q <= '0;
          row_q <= '0;
          rb_q <= '0;
          wm_q <= '0;
          ov_q <= 1'b0;
          eos_q <= 1'b0;
        end
        S_COL: begin
          if (f1) begin
            if (in1_kind == K_DONE) d1_q <= 1'b1;
            else if (in1_kind == K_DATA) ent_q <= ent_q + 1'b1;
          end
          if (f0) begin
            if (in0_kind == K_DONE) begin
              d0_q <= 1'b1;
            end else if (in0_kind == K_DATA) begin
              if (wr0) wm_q[r_ent[SW-1:0]] <= 1'b1;
              if (32'(rb_q) + 1 == 32'(row_beats)) begin
                row_q <= row_q + 1'b1;
                rb_q <= '0;
              end else begin
                rb_q <= rb_q + 1'b1;
              end
            end
          end
          peak_q <= peak_q + (wr0 ? 32'(W) : 32'd0)
                           + ((f1 && in1_kind == K_DATA) ? 32'd1 : 32'd0);
          // wm_q is final here (the rows' beats precede in0's DONE): the first written slot
          // is looked up now (below).
          if (col_end) st_q <= S_PREP;
        end
        S_PREP: st_q <= S_EMIT;
        S_EMIT: begin
          if (step) begin
            ov_q <= 1'b1;
            if (!cv_q) begin
              out_q <= {sg_beat_pkg::H_DONE, {DW{1'b0}}};
              eos_q <= 1'b1;
            end else begin
              out_q <= {K_DATA, row_end, row_end ? row_stop : 3'd0, xmem[c_addr]};
              if (!row_end) cb_q <= cb_q + 1'b1;
            end
          end else if (out_ready) begin
            ov_q <= 1'b0;
            if (ov_q && eos_q) begin
              // the DONE beat has been accepted
              done_q <= 1'b1;
              st_q <= S_IDLE;
            end
          end
        end
        default: ;
      endcase
      if (adv) begin
        cv_q <= nv_q;
        ct_q <= nt_q;
        cs_q <= SW'(32'(nt_q) * 32'(k) + 32'(nj_q));
        cb_q <= '0;
      end
      // col_end (in S_COL: the first written slot) and adv (after it) never coincide.
      // One call into a local, then unpacked: Verilator inlines a function once per
      // destination of a concatenation assignment, which would run it three times.
      if (col_end || adv) begin
        nxt = next_slot(wm_q, k, nt_q, nj_q, nv_q, st_q == S_COL);
        {nv_q, nt_q, nj_q} <= nxt;
      end
    end
  end
endmodule
