// sg_route: the front of a Mixture-of-Experts layer in hardware (docs/step_semantics.md#operators):
//   Partition(x, selector, E, 0) -> per expert Reshape(tb, pad) (static token tile) or
//   Promote (dynamic tiling: all of an expert's tokens form one tile) -> retile ->
//   EagerMerge, with the experts emitted in ascending order (a legal EagerMerge order).
// Standalone for now; meant to become a mode of sg_mu. Beats as in docs/hardware.md
// section 1: {kind[2], last[1], stop[3], data[32*W]}, kind 0 DATA, 1 STOP, 2 DONE.
//
// Parameters: W words per beat (W >= 4, even), MAXT max tokens, MAXE max experts, MAXK max
// slots per token (MAXK <= W/2), ROWW max words of one x row (a multiple of W).
//
// Configuration (plain ports, held constant from `start` to `done`):
//   n_exp     E, 1..MAXE. Slots whose expert id is >= n_exp are ignored (routed nowhere).
//   k         slots per token, 1..MAXK.
//   tile_rows tb, 0..MAXT; 0 = dynamic tiling.
//   row_beats beats per x row = D/W, 1..ROWW/W (data mode only).
//   out_meta  0 = data output, 1 = meta output.
//
// Inputs
// * in1 (routing): B single-beat DATA rows, then DONE. Row t: word j (j < k) = expert id of
//   slot j (uint32), word W/2 + j = router weight of slot j (fp32 bits). Other words, `last`
//   and `stop` are ignored; STOP beats are accepted and dropped. B <= MAXT is not
//   configured: it is the number of DATA rows before DONE. The ids of one token should be
//   distinct (a Partition selector is multi-hot); if a token names an expert twice it is
//   routed to it once, with the lowest such slot j.
// * in0 (x rows, data mode only): B rows of row_beats DATA beats (`last` on the final beat
//   of each row: rows are delimited by `last`), then DONE; STOP beats are accepted and
//   dropped. In meta mode in0 is not used: in0_ready stays 0 and nothing is consumed.
//
// Output: for each expert e = 0..E-1 ascending, its T_e tokens t ascending (the tokens with e
// in one of their slots j < k). Static (tb > 0): ceil(T_e/tb) groups of tb entries, the last
// one padded with tb - (T_e mod tb) padding entries when T_e mod tb != 0. Dynamic (tb = 0):
// one group of T_e entries. An expert with T_e = 0 gives no group.
// * data mode: each group is one tile of (entries) rows x D, entry rows back to back
//   (row_beats beats each, copied from x row t; a padding entry is all-zero beats); `last`
//   = 1 only on the group's final beat; stop 0.
// * meta mode: each entry is one DATA beat with last = 1: word0 = t (0xFFFFFFFF padding),
//   word1 = t*k + j (0xFFFFFFFF padding), word2 = router weight of slot j (0 padding),
//   word3 = e, other words 0; stop 1 on the group's last entry, 0 otherwise.
// * After all groups: one DONE beat. `done` rises once it is accepted and stays high until
//   the next `start`.
// peak_words: words held in the unit's storage at the end of collection, counted as the
// inputs are accepted: +W per in0 DATA beat (data mode), +2k per in1 DATA row. It equals
// B*D + B*2k in data mode and B*2k in meta mode; cleared by `start`.
//
// Storage: x rows (MAXT * ROWW/W beats, written at token*ROWW/W + beat, one write and one
// read port), per token its k expert ids and weights (one write, one read port), and a
// MAXE x MAXT bit map (bit (e, t) = token t is routed to e) with a per-expert "non-empty"
// bit. No sort pass is needed: the read-out walks the bit map with priority encoders (next
// non-empty expert, next token of the current expert), one step per cycle. The next
// non-empty expert is kept in a register one expert ahead (nxt_e), and its first token is
// encoded from that register, so switching experts costs nothing. Longest combinational
// paths: bit map row select (MAXE:1 of MAXT bits) -> MAXT-bit priority encoder -> cursor
// register; cursor -> per-token memory read -> slot match -> output register.
// Simulation cost: the wide logic (routing-row decode and bit map update, priority encoders,
// per-token memory reads and slot match, output beat) is evaluated only inside the always_ff
// branches that register its results (functions and block-local temporaries), so a simulator
// skips it in every cycle that does not use it: idle, sg_mu's other contexts, x-row beats, the
// non-final beats of an entry. Only the two bit map row selects (row_cur, row_nxt: MAXT bits
// each) are continuous: the bit map is written in an always_ff of its own, update branch first,
// and read nowhere else, so Verilator updates it in place (read in the read-out's block, it
// would copy all MAXE*MAXT bits to a shadow and back every cycle). Priority encoders: mask the
// bits below `from`, isolate the lowest set bit (m & -m), OR-encode it with constant masks
// (clog2(n) steps instead of a loop over all n bits).
// Port widths: n_exp $clog2(MAXE+1), k $clog2(MAXK+1), tile_rows $clog2(MAXT+1), row_beats
// $clog2(ROWW/W+1) bits.
//
// Timing (cycle S = the `start` cycle; states: S+1 clears the unit, inputs are accepted from
// cycle S+2). A `start` pulse restarts the unit from any state.
// * Collection: in0 and in1 each accept one beat per cycle (ready = 1 from S+2 until that
//   input's DONE has been accepted), whatever the other input does. Let d = the cycle in
//   which the last needed DONE is accepted (in1's DONE in meta mode; the later of in0's and
//   in1's DONE in data mode). Without input gaps (x rows: B*row_beats DATA beats, then DONE):
//     d = S + 2 + B                        (meta mode)
//     d = S + 2 + max(B*row_beats, B)      (data mode)
// * Cycle d: the first non-empty expert is looked up; d+1: the first entry is loaded; d+2:
//   the first beat is registered. First output beat valid in cycle d + 3, for any B, k, E
//   (also when no token was routed: then that beat is the DONE).
// * Then one beat per cycle while out_ready = 1, no bubbles (also across groups, padding and
//   experts, empty experts cost nothing): N output beats including the final DONE occupy
//   cycles d+3 .. d+2+N, with
//     entries = sum_e ceil(T_e/tb)*tb (static)   or   sum_e T_e (dynamic; = B*k when the
//               ids of each token are distinct and < E),
//     N = entries*row_beats + 1 (data mode)   or   entries + 1 (meta mode).
//   `done` is high from cycle d + 3 + N (it rises at the edge that ends cycle d+2+N, in which
//   DONE is accepted). Total, start to done, without stalls:
//     S + 5 + B + N (meta)   or   S + 5 + max(B*row_beats, B) + N (data).
// * Output back-pressure: a beat waits in the output register (the unit moves on when
//   out_ready is 1); beats are unchanged, every stalled cycle delays the rest by one.
// Out of contract (undefined): more than MAXT tokens or x rows, an x row longer than ROWW
// words, row counts on in0 and in1 that differ, configuration changes during a run.
//
// Ports: out_valid / out_beat / done / peak_words come from registers; in0_ready and
// in1_ready are functions of registers and of out_meta only (no path from any valid).
module sg_route #(
  parameter int W = 16,
  parameter int MAXT = 64,
  parameter int MAXE = 128,
  parameter int MAXK = 8,
  parameter int ROWW = 64
) (
  input  logic clk,
  input  logic rst_n,
  input  logic [$clog2(MAXE+1)-1:0] n_exp,
  input  logic [$clog2(MAXK+1)-1:0] k,
  input  logic [$clog2(MAXT+1)-1:0] tile_rows,
  input  logic [$clog2(ROWW/W+1)-1:0] row_beats,
  input  logic out_meta,
  input  logic start,
  output logic done,
  output logic [31:0] peak_words,
  // in0: the stop field is ignored (rank-0 x rows, STOP beats dropped); only `last` and the
  // data of DATA beats are used.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [32*W+sg_beat_pkg::HDR_W-1:0] in0_beat,
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic in0_valid,
  output logic in0_ready,
  // in1: only the kind, words 0..MAXK-1 (ids) and W/2..W/2+MAXK-1 (weights) are read; the
  // words in between and above, last and stop are ignored by definition of the row format.
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
  localparam int RBM = ROWW / W;                          // beat slots per stored x row
  localparam int NXB = MAXT * RBM;                        // x memory beats
  localparam int XA = (NXB > 1) ? $clog2(NXB) : 1;        // x memory address bits
  localparam int XB = (RBM > 1) ? $clog2(RBM) : 1;        // beat-in-row bits
  localparam int TW = (MAXT > 1) ? $clog2(MAXT) : 1;      // token index bits
  localparam int EW = (MAXE > 1) ? $clog2(MAXE) : 1;      // expert index bits
  localparam int TBW = $clog2(MAXT + 1);                 // width of tile_rows
  localparam int JW = (MAXK > 1) ? $clog2(MAXK) : 1;      // slot index bits
  localparam logic [1:0] K_DATA = sg_beat_pkg::K_DATA, K_DONE = sg_beat_pkg::K_DONE;  // STOPs: dropped
  localparam logic [2:0] S_IDLE = 3'd0, S_INIT = 3'd1, S_COL = 3'd2, S_PREP = 3'd3,
                         S_EMIT = 3'd4;

  // The meta beat needs words 0..3 and the weights sit at W/2..W/2+MAXK-1.
  if (W < 4 || (W % 2) != 0 || MAXK > W / 2 || MAXK < 1 || (ROWW % W) != 0 || MAXT < 2)
  begin : g_bad_params
    $error("sg_route: need W >= 4 even, 1 <= MAXK <= W/2, ROWW a multiple of W, MAXT >= 2");
  end

  // ---------------------------------------------------------------- functions
  // Called only inside the always_ff blocks below, in the branches that register their
  // results: a simulator then skips this logic in every other cycle (as continuous
  // assignments it cost every cycle of every route-capable memory unit, idle or not).

  // Priority encoders: the lowest set bit of v at an index >= from: {found, index}. The bits
  // below `from` are masked off, the lowest remaining set bit is isolated (m & -m) and
  // encoded: index bit b = OR of the one-hot bits i with bit b of i set (constant masks).
  function automatic logic [TW*MAXT-1:0] enc_masks_t();
    for (int b = 0; b < TW; b++)
      for (int i = 0; i < MAXT; i++) enc_masks_t[b * MAXT + i] = ((i >> b) & 1) != 0;
  endfunction
  function automatic logic [EW*MAXE-1:0] enc_masks_e();
    for (int b = 0; b < EW; b++)
      for (int i = 0; i < MAXE; i++) enc_masks_e[b * MAXE + i] = ((i >> b) & 1) != 0;
  endfunction
  localparam logic [TW*MAXT-1:0] ENC_T = enc_masks_t();
  localparam logic [EW*MAXE-1:0] ENC_E = enc_masks_e();
  function automatic logic [TW:0] ffs_t(input logic [MAXT-1:0] v, input int from);
    logic [MAXT-1:0] m;
    m = v & ({MAXT{1'b1}} << from);
    m = m & (~m + 1'b1);
    ffs_t[TW] = |m;
    for (int b = 0; b < TW; b++) ffs_t[b] = |(m & ENC_T[b * MAXT +: MAXT]);
  endfunction
  function automatic logic [EW:0] ffs_e(input logic [MAXE-1:0] v, input int from);
    logic [MAXE-1:0] m;
    m = v & ({MAXE{1'b1}} << from);
    m = m & (~m + 1'b1);
    ffs_e[EW] = |m;
    for (int b = 0; b < EW; b++) ffs_e[b] = |(m & ENC_E[b * MAXE +: MAXE]);
  endfunction

  // Routing row (words 0..MAXK-1 of an in1 beat): the expert id of each slot, and which slots
  // are routed (j < k and id < n_exp).
  function automatic logic [MAXK*EW-1:0] row_ids(input logic [MAXK*32-1:0] w);
    for (int j = 0; j < MAXK; j++) row_ids[j * EW +: EW] = w[j * 32 +: EW];
  endfunction
  function automatic logic [MAXK-1:0] row_ok(input logic [MAXK*32-1:0] w,
                                             input logic [$clog2(MAXK+1)-1:0] kk,
                                             input logic [$clog2(MAXE+1)-1:0] ne);
    for (int j = 0; j < MAXK; j++) row_ok[j] = (j < 32'(kk)) && (w[j * 32 +: 32] < 32'(ne));
  endfunction

  // The experts named by the routed slots of a routing row (ids, ok as above).
  function automatic logic [MAXE-1:0] row_hit(input logic [MAXK*EW-1:0] ids,
                                              input logic [MAXK-1:0] ok);
    row_hit = '0;
    for (int j = 0; j < MAXK; j++)
      if (ok[j]) row_hit[ids[j * EW +: EW]] = 1'b1;
  endfunction

  // Meta words 0..3 of the entry (token t of expert e, pad: padding) from the token's stored
  // ids, routed slots and weights: the slot j is the lowest routed slot naming e.
  function automatic logic [127:0] meta_words(input logic [MAXK*EW-1:0] ids,
                                              input logic [MAXK-1:0] ok,
                                              input logic [MAXK*32-1:0] wts,
                                              input logic [EW-1:0] e, input logic [TW-1:0] t,
                                              input logic pad,
                                              input logic [$clog2(MAXK+1)-1:0] kk);
    logic [JW-1:0] j;
    j = '0;
    for (int i = MAXK - 1; i >= 0; i--)
      if (ok[i] && ids[i * EW +: EW] == e) j = JW'(i);
    meta_words[0 +: 32] = pad ? 32'hFFFF_FFFF : 32'(t);
    meta_words[32 +: 32] = pad ? 32'hFFFF_FFFF : 32'(t) * 32'(kk) + 32'(j);
    meta_words[64 +: 32] = pad ? 32'd0 : wts[32'(j) * 32 +: 32];
    meta_words[96 +: 32] = 32'(e);
  endfunction

  // ---------------------------------------------------------------- state
  logic [2:0] st_q;
  logic done_q;
  logic [31:0] peak_q;
  // collection
  logic d0_q, d1_q;                       // DONE accepted on in0 / in1
  logic [TW:0] rt_q;                      // next routing row (token) index
  logic [TW:0] xt_q;                      // next x row index
  logic [XB-1:0] xb_q;                    // next beat within the x row
  logic [DW-1:0] xmem [0:NXB-1];
  logic [MAXK*EW-1:0] tid_mem [0:MAXT-1]; // expert id of each slot
  logic [MAXK-1:0] tok_mem [0:MAXT-1];    // slot j is routed (j < k, id < n_exp)
  logic [MAXK*32-1:0] twt_mem [0:MAXT-1]; // router weight of each slot
  logic [MAXE*MAXT-1:0] bm_q;             // bit e*MAXT + t: token t routed to expert e
  logic [MAXE-1:0] ne_q;                  // expert e has at least one token
  // read-out cursor: the entry to emit next
  logic cur_v_q;                          // an entry remains (else: DONE is next)
  logic [EW-1:0] cur_e_q;
  logic [TW-1:0] cur_t_q;
  logic cur_pad_q;                        // padding entry
  logic [XB-1:0] cur_b_q;                 // beat within the entry's row (data mode)
  logic [TBW-1:0] cnt_q;                  // entries already emitted in the current group
  logic nxt_v_q;                          // a non-empty expert above cur_e remains
  logic [EW-1:0] nxt_e_q;                 // ... and it is this one
  logic eos_q;                            // DONE has been put in the output register
  logic [BW-1:0] out_q;
  logic ov_q;

  // ---------------------------------------------------------------- collection
  logic f0, f1;
  logic [1:0] in0_kind, in1_kind;
  logic col_end;                          // the last needed DONE is accepted this cycle

  assign in0_kind = in0_beat[DW + sg_beat_pkg::KIND_LSB +: 2];
  assign in1_kind = in1_beat[DW + sg_beat_pkg::KIND_LSB +: 2];
  assign in0_ready = (st_q == S_COL) && !d0_q && !out_meta;
  assign in1_ready = (st_q == S_COL) && !d1_q;
  assign f0 = in0_valid && in0_ready;
  assign f1 = in1_valid && in1_ready;
  assign col_end = (st_q == S_COL) && (d1_q || (f1 && in1_kind == K_DONE)) &&
                   (out_meta || d0_q || (f0 && in0_kind == K_DONE));

  // ---------------------------------------------------------------- read-out step
  logic ent_end;                          // the current beat is the entry's last
  logic can_out, step;
  logic [XA-1:0] c_addr;                  // x memory address of the current beat
  logic [MAXT-1:0] row_cur, row_nxt;      // bit map rows of cur_e and nxt_e

  assign ent_end = out_meta || (32'(cur_b_q) + 1 == 32'(row_beats));
  assign can_out = !ov_q || out_ready;
  assign step = (st_q == S_EMIT) && !eos_q && can_out;
  assign c_addr = XA'(32'(cur_t_q) * RBM + 32'(cur_b_q));
  // The bit map rows of cur_e and nxt_e (plain row selects; see the bit map block below).
  assign row_cur = bm_q[32'(cur_e_q) * MAXT +: MAXT];
  assign row_nxt = bm_q[32'(nxt_e_q) * MAXT +: MAXT];

  assign out_beat = out_q;
  assign out_valid = ov_q;
  assign done = done_q;
  assign peak_words = peak_q;

  // The bit map: with an accepted routing row, row e |= the token's one-hot for every expert e
  // named by a routed slot (hit); cleared in S_INIT. A block of its own, read elsewhere only
  // through row_cur / row_nxt, and the update branch first: then Verilator updates bm_q in
  // place (otherwise it copies all MAXE*MAXT bits to a shadow and back every cycle).
  always_ff @(posedge clk) begin
    if (rst_n && !start) begin
      if (f1 && in1_kind == K_DATA) begin : b_row
        logic [MAXE-1:0] hit;
        hit = row_hit(row_ids(in1_beat[0 +: MAXK * 32]),
                      row_ok(in1_beat[0 +: MAXK * 32], k, n_exp));
        for (int e = 0; e < MAXE; e++)
          if (hit[e])
            bm_q[e * MAXT +: MAXT] <= bm_q[e * MAXT +: MAXT] | (MAXT'(1) << rt_q[TW-1:0]);
        ne_q <= ne_q | hit;
      end else if (st_q == S_INIT) begin
        for (int e = 0; e < MAXE; e++) bm_q[e * MAXT +: MAXT] <= '0;  // row by row
        ne_q <= '0;
      end
    end
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
      // Read-out step values, set only in the cycles that use them (blocking, local):
      logic [TW:0] nt;                    // next token of cur_e after cur_t: {found, t}
      logic has_next;                     // the current expert has a token after cur_t
      logic grp_end;                      // the current entry is its group's last
      logic load;
      logic [TW:0] ft;                    // first token of nxt_e: {found, t}
      logic [EW:0] fe;                    // next non-empty expert: {found, e}
      nt = '0;
      ft = '0;
      fe = '0;
      has_next = 1'b0;
      grp_end = 1'b0;
      // load: move the cursor to the first token of nxt_e (or to the end when there is no
      // further non-empty expert) and look up the non-empty expert after nxt_e. In S_PREP
      // (the first expert) and after the last entry of an expert's last group.
      load = (st_q == S_PREP);
      case (st_q)
        S_INIT: begin
          st_q <= S_COL;
          d0_q <= 1'b0;
          d1_q <= 1'b0;
          rt_q <= '0;
          xt_q <= '0;
          xb_q <= '0;
          ov_q <= 1'b0;
          eos_q <= 1'b0;
        end
        S_COL: begin
          // x rows
          if (f0) begin
            if (in0_kind == K_DONE) begin
              d0_q <= 1'b1;
            end else if (in0_kind == K_DATA) begin
              xmem[XA'(32'(xt_q) * RBM + 32'(xb_q))] <= in0_beat[DW-1:0];
              if (in0_beat[DW + sg_beat_pkg::LAST_BIT]) begin
                xt_q <= xt_q + 1'b1;
                xb_q <= '0;
              end else begin
                xb_q <= xb_q + 1'b1;
              end
            end
          end
          // routing rows
          if (f1) begin
            if (in1_kind == K_DONE) begin
              d1_q <= 1'b1;
            end else if (in1_kind == K_DATA) begin
              tid_mem[rt_q[TW-1:0]] <= row_ids(in1_beat[0 +: MAXK * 32]);
              tok_mem[rt_q[TW-1:0]] <= row_ok(in1_beat[0 +: MAXK * 32], k, n_exp);
              twt_mem[rt_q[TW-1:0]] <= in1_beat[W / 2 * 32 +: MAXK * 32];
              rt_q <= rt_q + 1'b1;
            end
          end
          peak_q <= peak_q + ((f0 && in0_kind == K_DATA) ? 32'(W) : 32'd0)
                           + ((f1 && in1_kind == K_DATA) ? 32'(k) * 2 : 32'd0);
          // The bit map is final here (in1's rows precede its DONE): look up the first
          // non-empty expert now.
          if (col_end) st_q <= S_PREP;  // (nxt_e: below)
        end
        S_PREP: st_q <= S_EMIT;
        S_EMIT: begin
          if (step) begin
            ov_q <= 1'b1;
            if (!cur_v_q) begin
              out_q <= {sg_beat_pkg::H_DONE, {DW{1'b0}}};
              eos_q <= 1'b1;
            end else if (!ent_end) begin
              // a beat inside an x row (data mode): the group cannot end here
              out_q <= {K_DATA, 1'b0, 3'd0, cur_pad_q ? {DW{1'b0}} : xmem[c_addr]};
              cur_b_q <= cur_b_q + 1'b1;
            end else begin
              // the entry's last (in meta mode: only) beat
              if (!cur_pad_q) nt = ffs_t(row_cur, 32'(cur_t_q) + 1);
              has_next = nt[TW];
              grp_end = (tile_rows == '0) ? !has_next
                                          : ({1'b0, cnt_q} + 1'b1 == {1'b0, tile_rows});
              if (out_meta)
                out_q <= {K_DATA, 1'b1, grp_end ? 3'd1 : 3'd0, {(DW - 128){1'b0}},
                          meta_words(tid_mem[cur_t_q], tok_mem[cur_t_q], twt_mem[cur_t_q],
                                     cur_e_q, cur_t_q, cur_pad_q, k)};
              else
                out_q <= {K_DATA, grp_end, 3'd0, cur_pad_q ? {DW{1'b0}} : xmem[c_addr]};
              cur_b_q <= '0;
              cnt_q <= grp_end ? '0 : cnt_q + 1'b1;
              if (has_next) cur_t_q <= nt[TW-1:0];
              else if (!grp_end) cur_pad_q <= 1'b1;  // static tile: pad up to tb entries
              else load = 1'b1;
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
      if (load) begin
        ft = ffs_t(row_nxt, 0);
        cur_v_q <= nxt_v_q && ft[TW];     // (a non-empty expert has a first token)
        cur_e_q <= nxt_e_q;
        cur_t_q <= ft[TW-1:0];
        cur_pad_q <= 1'b0;
        cur_b_q <= '0;
        cnt_q <= '0;
      end
      // nxt_e: the first non-empty expert when the bit map is final (col_end), then the one
      // after nxt_e with every load (the two never coincide).
      if (col_end || load) begin
        fe = ffs_e(ne_q, col_end ? 0 : 32'(nxt_e_q) + 1);
        nxt_v_q <= fe[EW];
        nxt_e_q <= fe[EW-1:0];
      end
    end
  end
endmodule
