// sg_ag: off-chip address generator, LinearOffChipLoad / LinearOffChipStore, and
// RandomOffChipLoad incl. the per-expert weight address generator (docs/hardware.md
// section 2, docs/step_semantics.md#operators).
//
// Parameters: W words per beat, P = W*4/64 pieces of 64 bytes per beat (one DRAM request),
// AB address bits, OUTSTANDING beats in flight (response FIFO depth).
//
// Per-context configuration (sg_cfg_pkg AG_*): enable, store, rank, base, n0..n3, s0..s3,
// rows, ppr, row_stride, random, per_group, idx_word, idx_stride, count, cnt_word, in0_stopmap (read by a
// random load), in1_stopmap (read by a random store); a linear store consumes stops, a
// linear load has no input; in0_src / in1_src belong to the generated top.
// random = per_group = idx_word = idx_stride = 0 is the linear unit (in1 unused).
//
// The walk: for i3 < n3, i2 < n2, i1 < n1, i0 < n0 (levels above `rank` count as 1), one tile
// per iteration at base + i3*s3 + i2*s2 + i1*s1 + i0*s0; a tile is rows x ppr pieces of 64
// bytes, piece q of row r at tile + r*row_stride + q*64. The pieces are taken P at a time
// (beat j of the walk = pieces j*P .. j*P+P-1, piece k of a request at req_addr[k*AB +: AB]);
// rows*ppr must be a multiple of P (the mapper guarantees it). A used level with n = 0, or
// rows = 0 or ppr = 0, is an empty walk (a load emits only DONE).
// Stop of a tile's last beat: the number of levels among 0..rank-1 that end at that tile,
// counted from level 0 outward (0 if level 0 does not end).
//
// Load (store = 0): req_valid (req_write = 0) whenever fewer than OUTSTANDING beats are in
// flight (requested, not yet moved to the output register), one request per cycle.
// Responses (resp_valid, no back-pressure; in request order) go to the output register
// directly when it is free and nothing older is queued, else into the response FIFO.
// Output: DATA beats, `last` + stop on each tile's last beat, then DONE; the context
// finishes when DONE is accepted. in0_ready = 0.
// Store (store = 1): each input DATA beat becomes one write request (req_write = 1,
// req_wdata = the beat's data) for the next P pieces of the walk, presented in the same cycle
// (req_valid = in0_valid for a DATA beat, in0_ready = req_ready); DATA beats beyond the end
// of the walk are dropped. STOP beats are consumed; the context finishes when DONE is
// consumed. No output beats.
//
// Timing: start (or the previous context's finish) in cycle t -> INIT in t+1 -> the first
// load request is valid in cycle t+2. A response present in cycle c gives an output beat
// valid in cycle c+1 (if out_ready kept up). Steady state: one request and one beat per
// cycle, limited by OUTSTANDING and the DRAM's responses. DONE is valid the cycle after
// the last data beat left the output register.
//
// Random load (store = 0, random = 1): in0 is an address stream (after the in0 stop map:
// out level = map[3*s +: 3] on STOP beats and on DATA beats with last = 1). The index of a
// DATA beat is the uint32 in word idx_word; index 0xFFFFFFFF is padding. Each address
// element runs the whole walk above with base' = base + index*idx_stride (AB bits, wraps);
// a padding element runs the same walk without DRAM requests, its beats leave as all-zero
// DATA beats (same last / stops), in order with the other elements' data.
//   per_group = 0: a DATA beat with last = 1 is an element (DATA beats with last = 0 are
//     consumed without effect); its walk's last beat gets stop rank + s (s = the element's
//     stop; the tiles inside the walk keep their walk stops). A STOP beat of level s >= 1
//     becomes an output STOP beat of level rank + s, in order.
//   per_group = 1 (expert weight addresses from an EagerMerge selector): a group is the
//     beats up to and including the first with stop >= 1 (a DATA beat with last = 1 and
//     stop >= 1, or a STOP beat); its index comes from its first DATA beat, the other beats
//     are consumed without effect; the walk runs once per group and its last beat gets
//     stop rank + s - 1 (s = the closing stop). A STOP beat of level s while no group is
//     open is an empty group: nothing for s = 1, an output STOP of level rank + s - 1 for
//     s >= 2.
//   count = 1 (a run load, with per_group = 0): each element also gives its walk's level-0
//     count n0, the low 16 bits of word cnt_word (the configured n0 is not used); an element
//     with count 0 produces nothing (the mapper's graphs never have one).
//   STOP beats mapped to level 0 are consumed without effect. Output stop levels saturate
//   at 7 (the mapper keeps them <= 7). DONE on in0 is consumed (in0_ready = 0 afterwards
//   until the context finishes); the output DONE follows everything else, and the context
//   finishes when it is accepted. A group still open at DONE is dropped; with an empty walk
//   (n = 0 at a used level, rows = 0, ppr = 0) elements produce nothing.
//   Jobs: an accepted element / group-closing beat / STOP beat that produces output becomes
//   a job in a 2-entry queue (the lookahead: up to 2 jobs wait while a walk issues); the
//   beats that need a queue entry wait (in0_ready = 0) while the queue is full, all other
//   beats are accepted at once, one per cycle. The walk engine takes the queue head:
//     * a WALK job is taken in cycle t (the walk state loads at the edge of t, the base
//       product is computed from the queue register) and its first request / padding beat
//       issues in cycle t+1;
//     * a STOP job is taken and issued in the same cycle t (it takes one entry of the
//       OUTSTANDING budget, like a request, and no DRAM request).
//   Taking: a job accepted on in0 in cycle a can be taken in cycle a+1 at the earliest; a
//   WALK job can be taken in the cycle of the previous walk's last issue (no bubble between
//   walks), a STOP job only in a later cycle (the engine must be idle); after a STOP job
//   taken in cycle t the next job can be taken in t+1. So with an idle engine and an empty
//   queue: element accepted in cycle a -> first request in a+2; STOP accepted in a -> issued
//   in a+1. Back to back: walk B's first request in c+1 if walk A's last issue is in c and B
//   was accepted in c-1 or earlier.
//   Issue rate: one per cycle, request or padding beat, while fewer than OUTSTANDING output
//   beats are in flight (a request also needs req_ready; a padding beat does not). Entries
//   leave in order: a request's beat as a linear load's (response in c -> output valid in
//   c+1); a padding beat or a STOP job issued in cycle c is at the head of the in-flight
//   queue in c+1 at the earliest, i.e. valid at the output in c+2 when nothing older waits
//   and the output register is free. Unstalled padding walk: one zero beat per cycle.
//   DONE: valid the cycle after the last beat left the output register, at the earliest
//   two cycles after the in0 DONE was accepted.
// Random store (store = 1, random = 1): in1 is the address stream (in1_stopmap; elements,
// groups, padding and the job queue as for a random load, except that STOP beats on in1 are
// consumed without producing anything), in0 the data. Each element's walk takes the next
// DATA beats of in0, one per write request as a linear store does (request in the cycle the
// beat is taken, req_valid = in0_valid); a padding element's beats are consumed without a
// request (one per cycle). in0 DATA beats wait (in0_ready = 0) while no walk is loaded; once
// the in1 DONE was consumed, nothing is queued and no walk runs they are dropped. in0 STOP
// beats are consumed at any time. The in0 DONE is consumed only after the in1 DONE, with
// the queue empty and no walk running; the context finishes when it is consumed. No output
// beats (no write acknowledgements). Walk timing: as for a load (a job accepted on in1 in
// cycle a is taken in a+1 at the earliest, its first write can be taken in a+2).
//
// Ports: out_valid / out_beat come from registers. req_valid / req_addr in load mode are
// functions of registers only; in store mode they follow in0_valid / in0_beat. The ready of
// the address port (in0 of a random load, in1 of a random store) is combinational from its
// beat (kind, last, stop) and registers, not from its valid; in0_ready of a random store
// from in0_beat's kind, req_ready and registers. in1_ready = 0 unless random store.
module sg_ag #(
  parameter int W = 16,
  parameter int P = 1,
  parameter int AB = 32,
  parameter int OUTSTANDING = 16
) (
  input  logic clk,
  input  logic rst_n,
  // Whole configuration vector (all contexts). Only the fields of the running context are
  // read; the source select belongs to the generated top.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [sg_cfg_pkg::CONTEXTS*sg_cfg_pkg::AG_BITS-1:0] cfg,
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic start,
  input  logic sectioned,  // 1 in a fabric: sg_sec_seq starts each context (sg_ctx_seq)
  input  logic [((sg_cfg_pkg::CONTEXTS > 1) ? $clog2(sg_cfg_pkg::CONTEXTS) : 1)-1:0] start_ctx,
  output logic busy,       // INIT or RUN (sg_ctx_seq)
  output logic done,
  output logic [((sg_cfg_pkg::CONTEXTS > 1) ? $clog2(sg_cfg_pkg::CONTEXTS) : 1)-1:0] ctx,
  input  logic [32*W+sg_beat_pkg::HDR_W-1:0] in0_beat,
  input  logic in0_valid,
  output logic in0_ready,
  input  logic [32*W+sg_beat_pkg::HDR_W-1:0] in1_beat,   // random store: addresses
  input  logic in1_valid,
  output logic in1_ready,
  output logic [32*W+sg_beat_pkg::HDR_W-1:0] out_beat,
  output logic out_valid,
  input  logic out_ready,
  output logic req_valid,
  input  logic req_ready,
  output logic req_write,
  output logic [P*AB-1:0] req_addr,
  output logic [32*W-1:0] req_wdata,
  input  logic resp_valid,
  input  logic [32*W-1:0] resp_data
);
  localparam int NCTX = sg_cfg_pkg::CONTEXTS;
  localparam int CB = sg_cfg_pkg::AG_BITS;
  localparam int DW = 32 * W;
  localparam int BW = DW + sg_beat_pkg::HDR_W;
  localparam int OW = (OUTSTANDING > 1) ? $clog2(OUTSTANDING) : 1;  // FIFO pointer bits
  localparam int OC = $clog2(OUTSTANDING + 1);                       // 0..OUTSTANDING
  localparam logic [OW-1:0] O_LAST = OW'(OUTSTANDING - 1);
  localparam logic [1:0] K_DATA = sg_beat_pkg::K_DATA, K_STOP = sg_beat_pkg::K_STOP,
                         K_DONE = sg_beat_pkg::K_DONE;
  // in-flight entry types: a DRAM response, a padding (all-zero) DATA beat, a STOP beat
  localparam logic [1:0] T_RESP = 2'd0, T_ZERO = 2'd1, T_STOP = 2'd2;

  // ---------------------------------------------------------------- context sequencing
  logic [NCTX-1:0] en;
  logic fin;
  logic run;
  always_comb
    for (int c = 0; c < NCTX; c++) en[c] = cfg[c * CB + sg_cfg_pkg::AG_ENABLE_LSB];
  /* verilator lint_off PINCONNECTEMPTY */
  sg_ctx_seq #(.NCTX(NCTX)) u_seq (.clk, .rst_n, .en, .sectioned, .start, .start_ctx, .fin, .ctx, .run, .busy, .done, .go(), .go_ctx());
  /* verilator lint_on PINCONNECTEMPTY */

  // ---------------------------------------------------------------- configuration
  // cc: the running context's vector; enable is read for all contexts through `en`, the
  // in0 fields are not used by an AG (see the header).
  /* verilator lint_off UNUSEDSIGNAL */
  logic [CB-1:0] cc;
  /* verilator lint_on UNUSEDSIGNAL */
  logic cf_store;
  logic [2:0] cf_rank;
  logic [AB-1:0] cf_base, cf_rstride;
  logic [15:0] cf_rows, cf_ppr;
  logic [4*16-1:0] cf_neff;   // n0..n3, levels above rank forced to 1
  logic [4*AB-1:0] cf_s;      // s0..s3
  logic cf_empty;             // the walk has no tile
  logic cf_random, cf_pgroup;
  logic [5:0] cf_iword;
  logic [AB-1:0] cf_istride;
  logic cf_count;             // run load: level 0's count from the address element
  logic [5:0] cf_cword;
  logic [23:0] cf_map;

  assign cc = cfg[32'(ctx) * CB +: CB];
  always_comb begin
    cf_store = cc[sg_cfg_pkg::AG_STORE_LSB];
    cf_rank = cc[sg_cfg_pkg::AG_RANK_LSB +: 3];
    cf_base = AB'(cc[sg_cfg_pkg::AG_BASE_LSB +: sg_cfg_pkg::AG_BASE_W]);
    cf_rstride = AB'(cc[sg_cfg_pkg::AG_ROW_STRIDE_LSB +: sg_cfg_pkg::AG_ROW_STRIDE_W]);
    cf_rows = cc[sg_cfg_pkg::AG_ROWS_LSB +: 16];
    cf_ppr = cc[sg_cfg_pkg::AG_PPR_LSB +: 16];
    cf_neff[0 +: 16] = cc[sg_cfg_pkg::AG_N0_LSB +: 16];
    cf_neff[16 +: 16] = (cf_rank >= 3'd1) ? cc[sg_cfg_pkg::AG_N1_LSB +: 16] : 16'd1;
    cf_neff[32 +: 16] = (cf_rank >= 3'd2) ? cc[sg_cfg_pkg::AG_N2_LSB +: 16] : 16'd1;
    cf_neff[48 +: 16] = (cf_rank >= 3'd3) ? cc[sg_cfg_pkg::AG_N3_LSB +: 16] : 16'd1;
    cf_s[0 +: AB] = AB'(cc[sg_cfg_pkg::AG_S0_LSB +: sg_cfg_pkg::AG_S0_W]);
    cf_s[AB +: AB] = AB'(cc[sg_cfg_pkg::AG_S1_LSB +: sg_cfg_pkg::AG_S1_W]);
    cf_s[2*AB +: AB] = AB'(cc[sg_cfg_pkg::AG_S2_LSB +: sg_cfg_pkg::AG_S2_W]);
    cf_s[3*AB +: AB] = AB'(cc[sg_cfg_pkg::AG_S3_LSB +: sg_cfg_pkg::AG_S3_W]);
    cf_random = cc[sg_cfg_pkg::AG_RANDOM_LSB];
    cf_pgroup = cc[sg_cfg_pkg::AG_PER_GROUP_LSB];
    cf_iword = cc[sg_cfg_pkg::AG_IDX_WORD_LSB +: 6];
    cf_istride = AB'(cc[sg_cfg_pkg::AG_IDX_STRIDE_LSB +: sg_cfg_pkg::AG_IDX_STRIDE_W]);
    cf_count = cc[sg_cfg_pkg::AG_COUNT_LSB];
    cf_cword = cc[sg_cfg_pkg::AG_CNT_WORD_LSB +: 6];
    cf_map = cf_store ? cc[sg_cfg_pkg::AG_IN1_STOPMAP_LSB +: 24] : cc[sg_cfg_pkg::AG_IN0_STOPMAP_LSB +: 24];
    cf_empty = (cf_rows == 16'd0) || (cf_ppr == 16'd0);
    for (int k = 0; k < 4; k++)
      if (cf_neff[16*k +: 16] == 16'd0) cf_empty = 1'b1;
  end

  // ---------------------------------------------------------------- walk state
  logic [4*16-1:0] idx_q;     // i0..i3
  logic [4*AB-1:0] lbase_q;   // level k: base + sum_{j>=k} i_j*s_j (level 0 = tile base)
  logic [15:0] r_q, q_q;      // row and piece of the next piece
  logic [AB-1:0] row_q;       // address of row r_q of the tile
  logic [AB-1:0] pa_q;        // address of the next piece
  logic wdone_q;              // no piece left
  logic [15:0] n0_q;          // run load: level 0's count of the running walk
  logic [4*16-1:0] w_neff;    // the running walk's counts
  assign w_neff = {cf_neff[16 +: 48], cf_count ? n0_q : cf_neff[0 +: 16]};

  // Pieces of the next beat (combinational chain of P steps) and the state after it.
  logic [P*AB-1:0] c_addr;
  logic [15:0] c_r, c_q;
  logic [AB-1:0] c_row, c_pa;
  logic c_tend;               // the beat ends its tile
  always_comb begin
    c_r = r_q;
    c_q = q_q;
    c_row = row_q;
    c_pa = pa_q;
    c_tend = 1'b0;
    for (int k = 0; k < P; k++) begin
      c_addr[k*AB +: AB] = c_pa;
      c_tend = 1'b0;
      if (c_q + 16'd1 >= cf_ppr) begin
        c_q = 16'd0;
        c_row = c_row + cf_rstride;
        c_pa = c_row;
        if (c_r + 16'd1 >= cf_rows) begin
          c_r = 16'd0;
          c_tend = 1'b1;
        end else begin
          c_r = c_r + 16'd1;
        end
      end else begin
        c_q = c_q + 16'd1;
        c_pa = c_pa + AB'(64);
      end
    end
  end

  // Loop-nest advance after a tile: levels that wrap (consecutive from level 0), the level
  // that increments, and the new level bases.
  logic [4*16-1:0] n_idx;
  logic [4*AB-1:0] n_lbase;
  logic [AB-1:0] n_tile;      // next tile base
  logic n_end;                // every level wrapped: the walk is over
  logic [2:0] n_wraps;
  logic [2:0] n_stop;         // stop of the tile just finished
  logic [2:0] n_lvl;          // level that increments (4 = none)
  logic carry;
  always_comb begin
    carry = 1'b1;
    n_wraps = 3'd0;
    n_lvl = 3'd4;
    for (int k = 0; k < 4; k++) begin
      if (carry) begin
        if (idx_q[16*k +: 16] + 16'd1 >= w_neff[16*k +: 16]) begin
          n_wraps = n_wraps + 3'd1;
        end else begin
          carry = 1'b0;
          n_lvl = 3'(k);
        end
      end
    end
    n_end = carry;
    n_stop = (n_wraps > cf_rank) ? cf_rank : n_wraps;
    n_tile = carry ? cf_base : lbase_q[AB*32'(n_lvl[1:0]) +: AB] + cf_s[AB*32'(n_lvl[1:0]) +: AB];
    n_idx = idx_q;
    n_lbase = lbase_q;
    for (int k = 0; k < 4; k++) begin
      if (k < 32'(n_lvl)) begin
        n_idx[16*k +: 16] = 16'd0;
        n_lbase[AB*k +: AB] = n_tile;
      end else if (k == 32'(n_lvl)) begin
        n_idx[16*k +: 16] = idx_q[16*k +: 16] + 16'd1;
        n_lbase[AB*k +: AB] = n_tile;
      end
    end
  end

  // ---------------------------------------------------------------- random: address input, jobs
  // Address beat (in0 of a load, in1 of a store) after the stop map, its index word, and
  // what it does (see the header).
  logic [BW-1:0] a_beat;
  logic a_valid;
  logic [1:0] i_kind;
  logic i_last;
  logic [2:0] i_stop;
  logic [31:0] i_idx;
  logic [15:0] i_cnt;         // run load: the element's count (low 16 bits of word cf_cword)
  always_comb begin
    a_beat = cf_store ? in1_beat : in0_beat;
    a_valid = cf_store ? in1_valid : in0_valid;
    {i_kind, i_last, i_stop} = sg_beat_pkg::map_stop(a_beat[DW +: sg_beat_pkg::HDR_W], cf_map);
    i_idx = a_beat[31:0];
    i_cnt = a_beat[15:0];
    for (int k = 0; k < W; k++) begin
      if (32'(cf_iword) == k) i_idx = a_beat[32*k +: 32];
      if (32'(cf_cword) == k) i_cnt = a_beat[32*k +: 16];
    end
  end

  function automatic logic [2:0] sat3(input logic [3:0] v);
    sat3 = (v > 4'd7) ? 3'd7 : v[2:0];  // assignment form: Yosys 0.23 rejects `return`
  endfunction

  // Job queue (2 entries): kind (0 = WALK, 1 = STOP), index (WALK), stop (WALK: added to the
  // walk's final stop; STOP: the output level).
  logic jq_kind_q [0:1];
  logic [31:0] jq_idx_q [0:1];
  logic [2:0] jq_s_q [0:1];
  logic [15:0] jq_n_q [0:1];  // run load: the walk's level-0 count
  logic jq_rd_q, jq_wr_q;
  logic [1:0] jq_cnt_q;
  logic in_done_q;            // in0 DONE accepted
  logic grp_open_q;           // per_group: a group's first DATA beat was seen
  logic [31:0] grp_idx_q;     // ... and its index
  logic cur_pad_q;            // the running walk is a padding walk
  logic [2:0] cur_add_q;      // added to the stop of the running walk's last beat

  logic is_rload, is_rand;
  logic a_ready;              // the address beat is taken
  logic in_idle;              // random: address stream done, nothing queued, no walk
  logic i_push;               // the beat needs a job entry
  logic i_push_kind;
  logic [31:0] i_push_idx;
  logic [2:0] i_push_s;
  logic i_open;               // per_group: the beat opens a group
  logic i_close;              // per_group: the beat closes the open group
  logic i_fire;
  logic jq_head_kind;
  logic [31:0] jq_head_idx;
  logic [2:0] jq_head_s;
  logic [15:0] jq_head_n;
  logic [AB-1:0] jq_base;     // base of the head job's walk
  logic pad_fire;             // a padding beat issues
  logic walk_fire;            // a request or a padding beat issues
  logic walk_last;            // ... and it is the walk's last
  logic take_walk, take_stop; // the engine takes the queue head
  logic [2:0] w_stop;         // stop of the issuing beat (if it ends a tile)

  always_comb begin
    i_push = 1'b0;
    i_push_kind = 1'b0;
    i_push_idx = i_idx;
    i_push_s = 3'd0;
    i_open = 1'b0;
    i_close = 1'b0;
    if (i_kind == K_DATA) begin
      if (!cf_pgroup) begin
        i_push = i_last;
        i_push_s = i_stop;
      end else if (i_last && i_stop != 3'd0) begin
        i_push = 1'b1;
        i_close = 1'b1;
        i_push_s = i_stop - 3'd1;
        if (grp_open_q) i_push_idx = grp_idx_q;
      end else begin
        i_open = !grp_open_q;
      end
    end else if (i_kind == K_STOP && i_stop != 3'd0) begin
      if (!cf_pgroup) begin
        i_push = !cf_store;
        i_push_kind = 1'b1;
        i_push_s = sat3({1'b0, cf_rank} + {1'b0, i_stop});
      end else if (grp_open_q) begin
        i_push = 1'b1;
        i_close = 1'b1;
        i_push_idx = grp_idx_q;
        i_push_s = i_stop - 3'd1;
      end else if (i_stop != 3'd1) begin
        i_push = !cf_store;
        i_push_kind = 1'b1;
        i_push_s = sat3({1'b0, cf_rank} + {1'b0, i_stop - 3'd1});
      end
    end
  end

  assign is_rload = run && !cf_store && cf_random;
  assign is_rand = run && cf_random;
  assign a_ready = is_rand && !in_done_q && (!i_push || (jq_cnt_q != 2'd2));
  assign in_idle = in_done_q && (jq_cnt_q == 2'd0) && wdone_q;
  assign jq_head_kind = jq_kind_q[jq_rd_q];
  assign jq_head_idx = jq_idx_q[jq_rd_q];
  assign jq_head_s = jq_s_q[jq_rd_q];
  assign jq_head_n = jq_n_q[jq_rd_q];
  assign jq_base = cf_base + AB'(jq_head_idx) * cf_istride;

  // ---------------------------------------------------------------- load: FIFOs, output
  logic [5:0] meta_q [0:OUTSTANDING-1];   // {type, last, stop} per in-flight entry, in order
  logic [DW-1:0] dq_q [0:OUTSTANDING-1];  // responses waiting for the output register
  logic [OW-1:0] mt_wr_q, mt_rd_q, dq_wr_q, dq_rd_q;
  logic [OC-1:0] dq_cnt_q;                // responses queued
  logic [OC-1:0] infl_q;                  // issued, not yet in the output register
  logic [BW-1:0] out_q;
  logic ov_q;
  logic dsent_q;                          // DONE loaded into the output register

  logic is_load, is_store;
  logic in_kind_data;
  logic fire_req;       // a request is accepted this cycle
  logic room;           // fewer than OUTSTANDING entries in flight
  logic can_out;
  logic ld_resp;        // a response moves to the output register
  logic ld_data;        // an in-flight entry moves to the output register
  logic ld_done;        // DONE moves to the output register
  logic byp;            // ... directly from resp_data
  logic resp_q;         // the response is queued
  logic [5:0] meta_head;
  logic head_resp;

  assign is_load = run && !cf_store;
  assign is_store = run && cf_store;
  assign in_kind_data = (in0_beat[DW + sg_beat_pkg::KIND_LSB +: 2] == K_DATA);
  assign can_out = !ov_q || out_ready;
  assign meta_head = meta_q[mt_rd_q];
  assign head_resp = (meta_head[5:4] == T_RESP);
  assign room = (infl_q < OC'(OUTSTANDING));

  always_comb begin
    in1_ready = 1'b0;
    if (is_store) begin
      req_valid = in0_valid && in_kind_data && !wdone_q && !cur_pad_q;
      if (!cf_random) begin
        in0_ready = !in_kind_data || wdone_q || req_ready;
      end else begin
        in1_ready = a_ready;
        case (in0_beat[DW + sg_beat_pkg::KIND_LSB +: 2])
          K_DATA: in0_ready = wdone_q ? in_idle : (cur_pad_q || req_ready);
          K_DONE: in0_ready = in_idle;
          default: in0_ready = 1'b1;
        endcase
      end
    end else begin
      req_valid = is_load && !wdone_q && !cur_pad_q && room;
      in0_ready = a_ready;
    end
  end
  assign req_write = cf_store;
  assign req_addr = c_addr;
  assign req_wdata = cf_store ? in0_beat[DW-1:0] : '0;
  assign fire_req = req_valid && req_ready;
  assign i_fire = a_valid && a_ready;

  assign pad_fire = !wdone_q && cur_pad_q && (is_store ? (in0_valid && in_kind_data) : (is_load && room));
  assign walk_fire = fire_req || pad_fire;
  assign walk_last = walk_fire && c_tend && n_end;
  assign take_walk = is_rand && (wdone_q || walk_last) && (jq_cnt_q != 2'd0) && !jq_head_kind;
  assign take_stop = is_rload && wdone_q && (jq_cnt_q != 2'd0) && jq_head_kind && room;
  assign w_stop = !c_tend ? 3'd0 : n_end ? sat3({1'b0, n_stop} + {1'b0, cur_add_q}) : n_stop;

  assign byp = (dq_cnt_q == '0);
  assign ld_resp = is_load && can_out && (infl_q != '0) && head_resp && (!byp || resp_valid);
  assign ld_data = ld_resp || (is_load && can_out && (infl_q != '0) && !head_resp);
  assign ld_done = is_load && can_out && wdone_q && (infl_q == '0) && !dsent_q &&
                   (!cf_random || (in_done_q && (jq_cnt_q == 2'd0)));
  assign resp_q = is_load && resp_valid && !(ld_resp && byp);
  assign fin = run && (cf_store ? (in0_valid && in0_ready && (in0_beat[DW + sg_beat_pkg::KIND_LSB +: 2] == K_DONE))
                                : (ov_q && out_ready && (out_q[DW + sg_beat_pkg::KIND_LSB +: 2] == K_DONE)));
  assign out_beat = out_q;
  assign out_valid = ov_q;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      ov_q <= 1'b0;
      wdone_q <= 1'b1;
      dsent_q <= 1'b0;
      infl_q <= '0;
      dq_cnt_q <= '0;
      jq_cnt_q <= '0;
      cur_pad_q <= 1'b0;
    end else if (!run) begin
      // Idle or INIT: start the walk of the (next) running context (a random load waits
      // for its first job).
      ov_q <= 1'b0;
      dsent_q <= 1'b0;
      infl_q <= '0;
      dq_cnt_q <= '0;
      mt_wr_q <= '0;
      mt_rd_q <= '0;
      dq_wr_q <= '0;
      dq_rd_q <= '0;
      idx_q <= '0;
      lbase_q <= {4{cf_base}};
      r_q <= 16'd0;
      q_q <= 16'd0;
      row_q <= cf_base;
      pa_q <= cf_base;
      wdone_q <= cf_empty || cf_random;
      jq_cnt_q <= '0;
      jq_rd_q <= 1'b0;
      jq_wr_q <= 1'b0;
      in_done_q <= 1'b0;
      grp_open_q <= 1'b0;
      cur_pad_q <= 1'b0;
      cur_add_q <= 3'd0;
      n0_q <= 16'd1;
    end else begin
      // ---- walk
      if (take_walk) begin
        // the next job's walk (an empty walk leaves the engine idle: the job is dropped)
        idx_q <= '0;
        lbase_q <= {4{jq_base}};
        r_q <= 16'd0;
        q_q <= 16'd0;
        row_q <= jq_base;
        pa_q <= jq_base;
        wdone_q <= cf_empty || (cf_count && jq_head_n == 16'd0);
        n0_q <= jq_head_n;
        cur_pad_q <= (jq_head_idx == 32'hFFFF_FFFF);
        cur_add_q <= jq_head_s;
      end else if (walk_fire) begin
        if (c_tend) begin
          idx_q <= n_idx;
          lbase_q <= n_lbase;
          r_q <= 16'd0;
          q_q <= 16'd0;
          row_q <= n_tile;
          pa_q <= n_tile;
          if (n_end) wdone_q <= 1'b1;
        end else begin
          r_q <= c_r;
          q_q <= c_q;
          row_q <= c_row;
          pa_q <= c_pa;
        end
      end
      if ((walk_fire && !cf_store) || take_stop) begin
        meta_q[mt_wr_q] <= take_stop ? {T_STOP, 1'b0, jq_head_s}
                                     : {cur_pad_q ? T_ZERO : T_RESP, c_tend, w_stop};
        mt_wr_q <= (mt_wr_q == O_LAST) ? '0 : mt_wr_q + 1'b1;
      end
      // ---- random load: input beats, job queue
      if (i_fire) begin
        if (i_kind == K_DONE) in_done_q <= 1'b1;
        if (i_open) begin
          grp_open_q <= 1'b1;
          grp_idx_q <= i_idx;
        end
        if (i_close) grp_open_q <= 1'b0;
        if (i_push) begin
          jq_kind_q[jq_wr_q] <= i_push_kind;
          jq_idx_q[jq_wr_q] <= i_push_idx;
          jq_s_q[jq_wr_q] <= i_push_s;
          jq_n_q[jq_wr_q] <= i_cnt;
          jq_wr_q <= !jq_wr_q;
        end
      end
      if (take_walk || take_stop) jq_rd_q <= !jq_rd_q;
      jq_cnt_q <= jq_cnt_q + 2'(i_fire && i_push) - 2'(take_walk || take_stop);
      // ---- responses, output register
      if (resp_q) begin
        dq_q[dq_wr_q] <= resp_data;
        dq_wr_q <= (dq_wr_q == O_LAST) ? '0 : dq_wr_q + 1'b1;
      end
      dq_cnt_q <= dq_cnt_q + OC'(resp_q) - OC'(ld_resp && !byp);
      infl_q <= infl_q + OC'((walk_fire && !cf_store) || take_stop) - OC'(ld_data);
      if (ld_data) begin
        out_q <= {(meta_head[5:4] == T_STOP) ? K_STOP : K_DATA, meta_head[3:0],
                  !ld_resp ? {DW{1'b0}} : byp ? resp_data : dq_q[dq_rd_q]};
        ov_q <= 1'b1;
        mt_rd_q <= (mt_rd_q == O_LAST) ? '0 : mt_rd_q + 1'b1;
        if (ld_resp && !byp) dq_rd_q <= (dq_rd_q == O_LAST) ? '0 : dq_rd_q + 1'b1;
      end else if (ld_done) begin
        out_q <= {sg_beat_pkg::H_DONE, {DW{1'b0}}};
        ov_q <= 1'b1;
        dsent_q <= 1'b1;
      end else if (out_ready) begin
        ov_q <= 1'b0;
      end
    end
  end
endmodule
