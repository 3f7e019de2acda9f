// sg_ag: off-chip address generator, LinearOffChipLoad / LinearOffChipStore
// (docs/hardware.md section 2).
//
// Parameters: W words per beat, P = W*4/64 pieces of 64 bytes per beat (one DRAM request),
// AB address bits, OUTSTANDING beats in flight (response FIFO depth).
//
// Per-context configuration (sg_cfg_pkg AG_*): enable, store, rank, base, n0..n3, s0..s3,
// rows, ppr, row_stride, in0_stopmap (unused: a store consumes stops, a load has no input;
// in0_src belongs to the generated top).
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
// Ports: out_valid / out_beat come from registers. req_valid / req_addr in load mode are
// functions of registers only; in store mode they follow in0_valid / in0_beat.
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
  output logic done,
  output logic [((sg_cfg_pkg::CONTEXTS > 1) ? $clog2(sg_cfg_pkg::CONTEXTS) : 1)-1:0] ctx,
  // A store reads kind and data; last / stop of input beats do not matter to an AG.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [32*W+5:0] in0_beat,
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic in0_valid,
  output logic in0_ready,
  output logic [32*W+5:0] out_beat,
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
  localparam int CTXW = (NCTX > 1) ? $clog2(NCTX) : 1;
  localparam int DW = 32 * W;
  localparam int BW = DW + 6;
  localparam int OW = (OUTSTANDING > 1) ? $clog2(OUTSTANDING) : 1;  // FIFO pointer bits
  localparam int OC = $clog2(OUTSTANDING + 1);                       // 0..OUTSTANDING
  localparam logic [OW-1:0] O_LAST = OW'(OUTSTANDING - 1);
  localparam logic [1:0] K_DATA = 2'd0, K_DONE = 2'd2;  // beat kinds (a store consumes STOP)
  localparam logic [1:0] S_IDLE = 2'd0, S_INIT = 2'd1, S_RUN = 2'd2;

  // ---------------------------------------------------------------- context sequencing
  logic [1:0] st_q;
  logic [CTXW-1:0] ctx_q;
  logic done_q;
  logic [NCTX-1:0] en;
  logic [CTXW:0] seq_from;
  logic seq_found;
  logic [CTXW-1:0] seq_idx;
  logic fin;
  logic run;

  always_comb begin
    for (int c = 0; c < NCTX; c++) en[c] = cfg[c * CB + sg_cfg_pkg::AG_ENABLE_LSB];
    seq_from = start ? '0 : {1'b0, ctx_q} + 1'b1;
    seq_found = 1'b0;
    seq_idx = '0;
    for (int c = NCTX - 1; c >= 0; c--) begin
      if (en[c] && (c >= 32'(seq_from))) begin
        seq_found = 1'b1;
        seq_idx = CTXW'(c);
      end
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      st_q <= S_IDLE;
      ctx_q <= '0;
      done_q <= 1'b0;
    end else if (start || fin) begin
      done_q <= 1'b0;
      if (seq_found) begin
        ctx_q <= seq_idx;
        st_q <= S_INIT;
      end else begin
        st_q <= S_IDLE;
        done_q <= 1'b1;
      end
    end else if (st_q == S_INIT) begin
      st_q <= S_RUN;
    end
  end

  assign done = done_q;
  assign ctx = ctx_q;
  assign run = (st_q == S_RUN);

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

  assign cc = cfg[32'(ctx_q) * CB +: CB];
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
        if (idx_q[16*k +: 16] + 16'd1 >= cf_neff[16*k +: 16]) begin
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

  // ---------------------------------------------------------------- load: FIFOs, output
  logic [3:0] meta_q [0:OUTSTANDING-1];   // {last, stop} per request, in order
  logic [DW-1:0] dq_q [0:OUTSTANDING-1];  // responses waiting for the output register
  logic [OW-1:0] mt_wr_q, mt_rd_q, dq_wr_q, dq_rd_q;
  logic [OC-1:0] dq_cnt_q;                // responses queued
  logic [OC-1:0] infl_q;                  // requested, not yet in the output register
  logic [BW-1:0] out_q;
  logic ov_q;
  logic dsent_q;                          // DONE loaded into the output register

  logic is_load, is_store;
  logic in_kind_data;
  logic fire_req;       // a request is accepted this cycle
  logic can_out;
  logic ld_data;        // a data beat moves to the output register
  logic ld_done;        // DONE moves to the output register
  logic byp;            // ... directly from resp_data
  logic [3:0] meta_head;

  assign is_load = run && !cf_store;
  assign is_store = run && cf_store;
  assign in_kind_data = (in0_beat[DW + 4 +: 2] == K_DATA);
  assign can_out = !ov_q || out_ready;
  assign meta_head = meta_q[mt_rd_q];

  always_comb begin
    if (is_store) begin
      req_valid = in0_valid && in_kind_data && !wdone_q;
      in0_ready = !in_kind_data || wdone_q || req_ready;
    end else begin
      req_valid = is_load && !wdone_q && (infl_q < OC'(OUTSTANDING));
      in0_ready = 1'b0;
    end
  end
  assign req_write = cf_store;
  assign req_addr = c_addr;
  assign req_wdata = cf_store ? in0_beat[DW-1:0] : '0;
  assign fire_req = req_valid && req_ready;

  assign byp = (dq_cnt_q == '0);
  assign ld_data = is_load && can_out && (!byp || resp_valid);
  assign ld_done = is_load && can_out && wdone_q && (infl_q == '0) && !dsent_q;
  assign fin = run && (cf_store ? (in0_valid && in0_ready && (in0_beat[DW + 4 +: 2] == K_DONE))
                                : (ov_q && out_ready && (out_q[DW + 4 +: 2] == K_DONE)));
  assign out_beat = out_q;
  assign out_valid = ov_q;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      ov_q <= 1'b0;
      wdone_q <= 1'b1;
      dsent_q <= 1'b0;
      infl_q <= '0;
      dq_cnt_q <= '0;
    end else if (st_q != S_RUN) begin
      // Idle or INIT: start the walk of the (next) running context.
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
      wdone_q <= cf_empty;
    end else begin
      // ---- walk
      if (fire_req) begin
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
        if (!cf_store) begin
          meta_q[mt_wr_q] <= {c_tend, c_tend ? n_stop : 3'd0};
          mt_wr_q <= (mt_wr_q == O_LAST) ? '0 : mt_wr_q + 1'b1;
        end
      end
      // ---- responses, output register
      if (is_load && resp_valid && !(ld_data && byp)) begin
        dq_q[dq_wr_q] <= resp_data;
        dq_wr_q <= (dq_wr_q == O_LAST) ? '0 : dq_wr_q + 1'b1;
      end
      dq_cnt_q <= dq_cnt_q + OC'(is_load && resp_valid && !(ld_data && byp)) - OC'(ld_data && !byp);
      infl_q <= infl_q + OC'(fire_req && !cf_store) - OC'(ld_data);
      if (ld_data) begin
        out_q <= {K_DATA, meta_head, byp ? resp_data : dq_q[dq_rd_q]};
        ov_q <= 1'b1;
        mt_rd_q <= (mt_rd_q == O_LAST) ? '0 : mt_rd_q + 1'b1;
        if (!byp) dq_rd_q <= (dq_rd_q == O_LAST) ? '0 : dq_rd_q + 1'b1;
      end else if (ld_done) begin
        out_q <= {K_DONE, 1'b0, 3'd0, {DW{1'b0}}};
        ov_q <= 1'b1;
        dsent_q <= 1'b1;
      end else if (out_ready) begin
        ov_q <= 1'b0;
      end
    end
  end
endmodule
