// sg_mu: memory unit, Bufferize(b) + Streamify(repeat) (docs/hardware.md section 2).
// RepeatStatic(n) is b = 0, repeat = n. With ROUTE = 1 also the route mode (sg_route) and the
// combine mode (sg_combine), below: the two halves of a Mixture-of-Experts layer.
//
// Parameters: W words per beat, WORDS words of buffer (two halves), CPB cycles per beat on
// the write side and on the read side (= ceil(W*4 / mu.bytes_per_cycle)), ROUTE (0/1,
// arch memory_unit.route): 1 = the unit contains an sg_route and an sg_combine for the route
// and combine modes; 0 = it does not (neither is instantiated, the `route` and `combine`
// fields are ignored, in1_ready = 0).
//
// Per-context configuration (sg_cfg_pkg MU_*): enable, b, repeat, half_words,
// in0_stopmap, keep, replay, for the route mode route, n_exp, k, tile_rows, row_beats, out_meta,
// in1_stopmap, and for the combine mode combine, k, row_beats, in1_stopmap (in0_src /
// in1_src are used by the generated top, not here). A context has at most one of route and
// combine set (both set: out of contract).
//
// Buffer mode (route = 0 and combine = 0, or ROUTE = 0): everything below up to "Route
// mode"; in1 is unused (in1_ready = 0).
//
// Behaviour
// * Input beats (after the in0 stop map: out level = map[3*s +: 3] on STOP beats and on
//   DATA beats with last = 1) fill the write half. A DATA beat with last and stop s >= b, or
//   a STOP beat with s >= b, closes the half (s_ref = s - b); a STOP beat with s < b is kept
//   in the buffer as written (it closes an empty inner group). DONE closes the half as a
//   DONE token. A closed half is read out while the other half fills.
// * Half h starts at word h*half_words (beat h*half_words/W; half_words must be a multiple
//   of W and a buffer must fit in half_words words -- the mapper guarantees both).
// * Read-out: the stored beats `repeat` times. The last stored beat of each read-out gets
//   stop b (a DATA beat also gets last = 1) except in the last read-out, where it gets
//   b + 1 + s_ref; earlier beats keep their stops (< b). An empty buffer (closed by a STOP
//   with nothing stored), or repeat = 0, emits one STOP beat of level b + 1 + s_ref.
//   Stop levels are 3 bits; the mapper keeps b + 1 + s_ref <= 7.
// * A DONE token is emitted as DONE; the context finishes when that beat is accepted.
//
// Timing (cycle 0 = the cycle the first input beat is accepted; input and output never
// stalled): the write side accepts one beat every CPB cycles (beats at 0, CPB, 2*CPB, ...).
// A half closed by the beat accepted in cycle c is read from cycle c+1: its first output
// beat is valid in cycle c+2, then one beat every CPB cycles. For a buffer of n beats the
// first output beat is at (n-1)*CPB + 2; steady state per buffer max(n, repeat*n)*CPB.
// A context switch costs one idle cycle (INIT) after the DONE beat is accepted.
//
// Keep and replay (buffer mode with keep = 1 or replay = 1): the carry of a stream from one
// section to a later one in this unit's buffer (map/sections.hpp: a Bufferize in the
// producing section, its Streamify in the consuming one). The buffer contents, the kept beat
// count and the kept flag survive context switches; only reset clears them.
// * keep: every input beat but DONE (after the in0 stop map, stops as they come) is stored
//   at beats 0, 1, 2, ... of the buffer (no halves; the mapper keeps the stream within
//   WORDS words). Nothing is emitted; the context finishes when its DONE is accepted. Same
//   write timing as above (a beat every CPB cycles).
// * replay: the kept beats are emitted as stored, in order, then DONE; the context finishes
//   when that DONE is accepted. The input is never ready. Timing: the first beat is valid 1
//   cycle after the first RUN cycle (3 cycles after the context's start), then one beat every
//   CPB cycles while the output is not stalled.
// * held_words counts the kept beats from the end of the keep context to the end of the
//   replay context.
//
// Route mode (ROUTE = 1 and the running context has route = 1): the context runs
// rtl_templates/sg_route.sv (Partition -> Reshape(tile_rows)/Promote -> retile ->
// EagerMerge of MoE token rows; behaviour, beat formats and timing: that file's header).
// in0 = token rows (data mode), in1 = routing rows, out = sg_route's output. Configuration
// fields go to sg_route's ports of the same names: n_exp, k, tile_rows, row_beats,
// out_meta (each field's low bits; the fields are wider than the ports, values above the
// limits below are out of contract). The buffer side stays idle.
// * Fixed limits of the built-in sg_route: MAXT = 64 tokens (and x rows), MAXE = 128
//   experts, MAXK = min(8, W/2) slots per token, ROWW = the smallest multiple of W >= 64
//   words per token row (row_beats <= ROWW/W). ROUTE = 1 needs W >= 4 and even.
// * Stop maps: in0_stopmap / in1_stopmap are applied to in0 / in1 exactly as in the buffer
//   mode (STOP beats and DATA beats with last = 1) before sg_route; sg_route ignores the
//   stop field of DATA beats and drops STOP beats, so the maps have no effect on the result.
// * No register stage is added: sg_route's in0/in1/out handshakes are sg_mu's ports through
//   a multiplexer selected by the running context's `route` bit. sg_route is started in the
//   cycle sg_mu's context sequencer starts a route context (the `start` cycle, or the cycle
//   the previous context's DONE beat is accepted), i.e. its cycle S is sg_mu's: it accepts
//   inputs from S+2, as the buffer mode does, and all sg_route timing formulas hold as
//   written with S = that cycle. (Its configuration ports follow the running context, which
//   holds the new context from S+1; sg_route reads them from S+2 on: S+1 is its INIT.)
//   The context finishes when sg_route's DONE beat is accepted (as in the buffer mode); the
//   next context, or `done`, follows as in the buffer mode (sg_mu's `done` rises in the
//   same cycle as sg_route's would). sg_route's `done` is not used; its
//   `peak_words` is `held_words` while the route context runs.
//
// Combine mode (ROUTE = 1 and the running context has combine = 1): the context runs
// rtl_templates/sg_combine.sv (Partition(expert outputs) -> FlatMap(drop padding) -> Flatten
// -> Reassemble by token; behaviour, beat formats and timing: that file's header). in0 =
// expert output rows, in1 = the entries (sg_route's meta output), out = sg_combine's output;
// k and row_beats go to sg_combine's ports of the same names (low bits, as above). Limits of
// the built-in sg_combine: MAXT = 64 tokens, MAXK = min(8, W/2), ROWW as sg_route's, MAXENT =
// 16384 entries (in1 DATA beats, padding included; sg_route emits at most 64*8 + 128*63 =
// 8576). Everything said above for the route mode holds for the combine mode with sg_combine
// in place of sg_route: same stop maps (no effect on the result: sg_combine reads no stop
// field), same multiplexer without a register stage (selected by `combine`), started in the
// same cycle S, so its timing formulas hold with S = that cycle, same end of the context
// (sg_combine's `done` is not used; its `peak_words` is `held_words` while the combine
// context runs). The buffer side stays idle.
//
// Ports: out_valid / out_beat are functions of registers only (the mode multiplexer, whose
// select is a function of registers and the configuration); in0_ready and in1_ready are
// combinational from registers and configuration only (no path from any valid; sg_route's
// and sg_combine's readies are functions of their registers).
module sg_mu #(
  parameter int W = 16,
  parameter int WORDS = 16384,
  parameter int CPB = 1,
  parameter int ROUTE = 0
) (
  input  logic clk,
  input  logic rst_n,
  // Whole configuration vector (all contexts). Only the fields of the running context are
  // read, and the source selects (in0_src) belong to the generated top.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [sg_cfg_pkg::CONTEXTS*sg_cfg_pkg::MU_BITS-1:0] cfg,
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
  // in1: routing rows of the route mode, entries of the combine mode; not read when
  // ROUTE = 0 (in1_ready = 0 then).
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [32*W+sg_beat_pkg::HDR_W-1:0] in1_beat,
  input  logic in1_valid,
  /* verilator lint_on UNUSEDSIGNAL */
  output logic in1_ready,
  output logic [32*W+sg_beat_pkg::HDR_W-1:0] out_beat,
  output logic out_valid,
  input  logic out_ready,
  // Words the unit holds now: the buffer halves being filled or read out, or the route /
  // combine storage (their peak_words, which only grows until the context ends). A
  // statistic for the harness's on-chip peak (docs/hardware.md section 6), no function.
  output logic [31:0] held_words
);
  localparam int NCTX = sg_cfg_pkg::CONTEXTS;
  localparam int CB = sg_cfg_pkg::MU_BITS;
  localparam int CTXW = (NCTX > 1) ? $clog2(NCTX) : 1;
  localparam int DW = 32 * W;
  localparam int BW = DW + sg_beat_pkg::HDR_W;
  localparam int NB = WORDS / W;                 // beat entries in the buffer
  localparam int BI = (NB > 1) ? $clog2(NB) : 1; // beat index bits
  localparam int TW = (CPB > 1) ? $clog2(CPB) : 1;
  localparam int RW = sg_cfg_pkg::MU_REPEAT_W;
  localparam int HW = sg_cfg_pkg::MU_HALF_WORDS_W;
  localparam logic [1:0] K_DATA = sg_beat_pkg::K_DATA, K_STOP = sg_beat_pkg::K_STOP,
                         K_DONE = sg_beat_pkg::K_DONE;
  localparam logic [TW-1:0] T_RELOAD = TW'(CPB - 1);

  // ---------------------------------------------------------------- context sequencing
  logic [NCTX-1:0] en;
  logic fin;
  logic run;
  logic rmode;  // the running context is in route mode (always 0 when ROUTE = 0)
  logic cmode;  // the running context is in combine mode (always 0 when ROUTE = 0)
  always_comb
    for (int c = 0; c < NCTX; c++) en[c] = cfg[c * CB + sg_cfg_pkg::MU_ENABLE_LSB];
  // go / go_ctx: the context entering INIT (route and combine start with it)
  /* verilator lint_off UNUSEDSIGNAL */
  logic seq_go;
  logic [CTXW-1:0] seq_ctx;
  /* verilator lint_on UNUSEDSIGNAL */
  sg_ctx_seq #(.NCTX(NCTX)) u_seq (.clk, .rst_n, .en, .sectioned, .start, .start_ctx, .fin, .ctx, .run, .busy, .done,
                                   .go(seq_go), .go_ctx(seq_ctx));

  // ---------------------------------------------------------------- configuration
  // cc: the running context's vector. Its enable bit is read for all contexts through `en`
  // and in0_src belongs to the generated top, so those bits are unused here.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [CB-1:0] cc;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [2:0] cf_b;
  logic [RW-1:0] cf_rep;
  logic [HW-1:0] cf_hw;
  logic [23:0] cf_map;
  assign cc = cfg[32'(ctx) * CB +: CB];
  assign cf_b = cc[sg_cfg_pkg::MU_B_LSB +: 3];
  assign cf_rep = cc[sg_cfg_pkg::MU_REPEAT_LSB +: RW];
  assign cf_hw = cc[sg_cfg_pkg::MU_HALF_WORDS_LSB +: HW];
  assign cf_map = cc[sg_cfg_pkg::MU_IN0_STOPMAP_LSB +: 24];
  logic cf_keep, cf_replay;
  assign cf_keep = cc[sg_cfg_pkg::MU_KEEP_LSB];
  assign cf_replay = cc[sg_cfg_pkg::MU_REPLAY_LSB];

  // ---------------------------------------------------------------- input (stop map)
  logic [1:0] m_kind;
  logic m_last;
  logic [2:0] m_stop;
  logic [BW-1:0] m_beat;
  always_comb begin
    {m_kind, m_last, m_stop} = sg_beat_pkg::map_stop(in0_beat[DW +: sg_beat_pkg::HDR_W], cf_map);
    m_beat = {m_kind, m_last, m_stop, in0_beat[DW-1:0]};
  end

  // ---------------------------------------------------------------- state
  logic [BW-1:0] mem [0:NB-1];
  logic [BI-1:0] hb1_q;           // first beat of half 1 (= half_words / W)
  // write side
  logic [TW-1:0] wt_q;            // write-side busy cycles left
  logic wh_q;                     // half being filled
  logic [BI:0] wcnt_q;            // beats stored in it
  logic eos_q;                    // DONE taken in
  // halves
  logic [1:0] full_q;             // closed, waiting for / being read out
  logic [1:0] tokdone_q;          // the half is the DONE token
  logic [BI:0] cnt_q [0:1];       // stored beats
  logic [2:0] sref_q [0:1];       // s_ref of the closing stop
  // read side
  logic [TW-1:0] rt_q;            // read-side busy cycles left
  logic rh_q;                     // half being read
  logic [BI:0] rcnt_q;            // next beat of the read-out
  logic [RW-1:0] rrep_q;          // read-out number
  logic [BW-1:0] out_q;
  logic ov_q;
  // keep / replay: what the last keep context stored (reset only by rst_n)
  logic [BI:0] kcnt_q;            // beats kept
  logic kval_q;                   // kept beats not yet replayed
  logic pend_q;                   // replay: DONE emitted

  logic b_in0_ready;              // the buffer side takes an in0 beat
  logic r_in0_ready, r_in1_ready, r_out_valid;  // sg_route's handshakes (0 if ROUTE = 0)
  logic [BW-1:0] r_out_beat;
  logic c_in0_ready, c_in1_ready, c_out_valid;  // sg_combine's handshakes (0 if ROUTE = 0)
  logic [BW-1:0] c_out_beat;
  logic wfire, can_out, rgo;
  logic [BI-1:0] widx, ridx;
  logic r_lastbeat, r_lastrep;
  logic [2:0] r_endstop;          // b + 1 + s_ref of the half being read

  assign b_in0_ready = run && !rmode && !cmode && !cf_replay && !eos_q && (wt_q == '0) && (cf_keep || !full_q[wh_q]);
  logic [31:0] b_held;            // buffer mode: beats in the filling half and in closed halves, in words
  logic [31:0] k_held;            // beats kept for a replay, in words
  assign b_held = 32'(W) * (32'(wcnt_q) + (full_q[0] ? 32'(cnt_q[0]) : 0) + (full_q[1] ? 32'(cnt_q[1]) : 0));
  assign k_held = kval_q ? 32'(W) * 32'(kcnt_q) : '0;
  assign wfire = in0_valid && b_in0_ready;
  assign can_out = !ov_q || out_ready;
  assign rgo = run && full_q[rh_q] && (rt_q == '0) && can_out;
  logic pgo;                      // replay: emit the next kept beat or DONE
  assign pgo = run && cf_replay && !pend_q && (rt_q == '0) && can_out;
  assign widx = (wh_q ? hb1_q : '0) + wcnt_q[BI-1:0];
  assign ridx = (rh_q ? hb1_q : '0) + rcnt_q[BI-1:0];
  // Mode multiplexer (the buffer side is idle in route and combine mode: b_in0_ready = 0,
  // nothing fills).
  assign in0_ready = rmode ? (run && r_in0_ready) : cmode ? (run && c_in0_ready) : b_in0_ready;
  assign in1_ready = run && ((rmode && r_in1_ready) || (cmode && c_in1_ready));
  // The buffer's one read port is registered like a block RAM's output: rd_en reads
  // mem[ridx] at the edge into rdata_q, and while rsel_q the output beat is rdata_q with the
  // read-out's stop rewrite (registered beside it); otherwise out_q (DONE and STOP beats).
  // The cycles are those of a read into out_q; FPGA tools map mem to block RAM.
  logic rd_en, rsel_q, rfix_q;
  logic [2:0] rstop_q;
  logic [BW-1:0] rdata_q, b_out;
  assign rd_en = (pgo && rcnt_q != kcnt_q) || (rgo && !tokdone_q[rh_q] && cnt_q[rh_q] != '0 && cf_rep != '0);
  always_ff @(posedge clk)
    if (rd_en) rdata_q <= mem[ridx];
  always_comb begin
    b_out = out_q;
    if (rsel_q) begin
      b_out = rdata_q;
      if (rfix_q) begin
        b_out[DW + sg_beat_pkg::STOP_LSB +: 3] = rstop_q;
        if (rdata_q[DW + sg_beat_pkg::KIND_LSB +: 2] == K_DATA) b_out[DW + sg_beat_pkg::LAST_BIT] = 1'b1;
      end
    end
  end
  assign out_beat = rmode ? r_out_beat : cmode ? c_out_beat : b_out;
  assign out_valid = rmode ? (run && r_out_valid) : cmode ? (run && c_out_valid) : ov_q;
  // The context ends when its DONE beat is accepted (either mode).
  // ... and a keep context when its input DONE is taken in (it emits nothing).
  assign fin = run && ((out_valid && out_ready && (out_beat[DW + sg_beat_pkg::KIND_LSB +: 2] == K_DONE)) ||
                       (cf_keep && wfire && m_kind == K_DONE));

  always_comb begin
    r_lastbeat = (rcnt_q + 1'b1 == cnt_q[rh_q]);
    r_lastrep = ({1'b0, rrep_q} + 1'b1 == {1'b0, cf_rep});
    r_endstop = cf_b + 3'd1 + sref_q[rh_q];
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      kcnt_q <= '0;
      kval_q <= 1'b0;
    end else if (run && cf_keep && wfire) begin
      if (m_kind == K_DONE) begin
        kcnt_q <= wcnt_q;
        kval_q <= 1'b1;
      end
    end else if (pgo && rcnt_q == kcnt_q) begin
      kval_q <= 1'b0;
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n || !run) begin
      // Reset, idle or INIT: an empty unit for the next context.
      ov_q <= 1'b0;
      rsel_q <= 1'b0;
      full_q <= '0;
      tokdone_q <= '0;
      eos_q <= 1'b0;
      wt_q <= '0;
      rt_q <= '0;
      wh_q <= 1'b0;
      rh_q <= 1'b0;
      wcnt_q <= '0;
      rcnt_q <= '0;
      rrep_q <= '0;
      pend_q <= 1'b0;
      hb1_q <= BI'(32'(cf_hw) / 32'(W));
    end else begin
      // ---- write side
      if (wfire) wt_q <= T_RELOAD;
      else if (wt_q != '0) wt_q <= wt_q - 1'b1;
      if (wfire && cf_keep) begin
        // keep: everything but DONE is stored in order; DONE ends the context (fin)
        if (m_kind == K_DONE) eos_q <= 1'b1;
        else begin
          mem[wcnt_q[BI-1:0]] <= m_beat;
          wcnt_q <= wcnt_q + 1'b1;
        end
      end else if (wfire) begin
        if (m_kind == K_DONE) begin
          full_q[wh_q] <= 1'b1;
          tokdone_q[wh_q] <= 1'b1;
          cnt_q[wh_q] <= '0;
          sref_q[wh_q] <= 3'd0;
          wh_q <= !wh_q;
          wcnt_q <= '0;
          eos_q <= 1'b1;
        end else if (m_kind == K_STOP && m_stop >= cf_b) begin
          // closes the buffer; nothing stored (possibly an empty buffer)
          full_q[wh_q] <= 1'b1;
          cnt_q[wh_q] <= wcnt_q;
          sref_q[wh_q] <= m_stop - cf_b;
          wh_q <= !wh_q;
          wcnt_q <= '0;
        end else begin
          // DATA, or STOP below b: stored as written
          mem[widx] <= m_beat;
          if (m_kind == K_DATA && m_last && m_stop >= cf_b) begin
            full_q[wh_q] <= 1'b1;
            cnt_q[wh_q] <= wcnt_q + 1'b1;
            sref_q[wh_q] <= m_stop - cf_b;
            wh_q <= !wh_q;
            wcnt_q <= '0;
          end else begin
            wcnt_q <= wcnt_q + 1'b1;
          end
        end
      end
      // ---- read side
      if (rgo || pgo) rt_q <= T_RELOAD;
      else if (rt_q != '0) rt_q <= rt_q - 1'b1;
      if (pgo) begin
        // replay: the kept beats as stored, then DONE
        ov_q <= 1'b1;
        if (rcnt_q == kcnt_q) begin
          out_q <= {sg_beat_pkg::H_DONE, {DW{1'b0}}};
          rsel_q <= 1'b0;
          pend_q <= 1'b1;
        end else begin
          rsel_q <= 1'b1;  // rdata_q: the kept beat at ridx = rcnt_q (rh_q stays 0), as stored
          rfix_q <= 1'b0;
          rcnt_q <= rcnt_q + 1'b1;
        end
      end else if (rgo) begin
        ov_q <= 1'b1;
        if (tokdone_q[rh_q]) begin
          out_q <= {sg_beat_pkg::H_DONE, {DW{1'b0}}};
          rsel_q <= 1'b0;
          full_q[rh_q] <= 1'b0;
          tokdone_q[rh_q] <= 1'b0;
          rh_q <= !rh_q;
        end else if (cnt_q[rh_q] == '0 || cf_rep == '0) begin
          out_q <= {K_STOP, 1'b0, r_endstop, {DW{1'b0}}};
          rsel_q <= 1'b0;
          full_q[rh_q] <= 1'b0;
          rh_q <= !rh_q;
        end else begin
          // rdata_q: the stored beat; the last beat of a read-out gets stop b, or b + 1 + s_ref
          // in the last read-out (and last = 1 on a DATA beat)
          rsel_q <= 1'b1;
          rfix_q <= r_lastbeat;
          rstop_q <= r_lastrep ? r_endstop : cf_b;
          if (r_lastbeat) begin
            rcnt_q <= '0;
            if (r_lastrep) begin
              rrep_q <= '0;
              full_q[rh_q] <= 1'b0;
              rh_q <= !rh_q;
            end else begin
              rrep_q <= rrep_q + 1'b1;
            end
          end else begin
            rcnt_q <= rcnt_q + 1'b1;
          end
        end
      end else if (out_ready) begin
        ov_q <= 1'b0;
      end
    end
  end

  // ---------------------------------------------------------------- route and combine modes
  if (ROUTE != 0) begin : g_route
    localparam int R_MAXT = 64;
    localparam int R_MAXE = 128;
    localparam int R_MAXK = (W / 2 < 8) ? W / 2 : 8;
    localparam int R_ROWW = ((64 + W - 1) / W) * W;
    localparam int C_MAXENT = 16384;  // >= the entries sg_route can emit (64*8 + 128*63)
    logic seq_route;              // the context being started is a route context
    logic seq_combine;            // ... a combine context
    logic r_start, c_start;
    logic [23:0] cf_map1;
    logic [BW-1:0] m1_beat;       // in1 after its stop map
    // The context's end is its accepted DONE beat (as in the buffer mode), so sg_route's
    // `done` is not needed; peak_words becomes held_words.
    /* verilator lint_off UNUSEDSIGNAL */
    logic r_done, c_done;
    /* verilator lint_on UNUSEDSIGNAL */
    logic [31:0] r_peak, c_peak;
    assign held_words = k_held + (!run ? '0 : rmode ? r_peak : cmode ? c_peak : b_held);

    assign rmode = cc[sg_cfg_pkg::MU_ROUTE_LSB];
    assign cmode = cc[sg_cfg_pkg::MU_COMBINE_LSB];
    assign seq_route = cfg[32'(seq_ctx) * CB + sg_cfg_pkg::MU_ROUTE_LSB +: 1] == 1'b1;
    assign seq_combine = cfg[32'(seq_ctx) * CB + sg_cfg_pkg::MU_COMBINE_LSB +: 1] == 1'b1;
    assign r_start = seq_go && seq_route;
    assign c_start = seq_go && seq_combine;
    assign cf_map1 = cc[sg_cfg_pkg::MU_IN1_STOPMAP_LSB +: 24];
    assign m1_beat = {sg_beat_pkg::map_stop(in1_beat[DW +: sg_beat_pkg::HDR_W], cf_map1), in1_beat[DW-1:0]};

    sg_route #(.W(W), .MAXT(R_MAXT), .MAXE(R_MAXE), .MAXK(R_MAXK), .ROWW(R_ROWW)) u_route (
      .clk(clk), .rst_n(rst_n),
      .n_exp(cc[sg_cfg_pkg::MU_N_EXP_LSB +: $clog2(R_MAXE + 1)]),
      .k(cc[sg_cfg_pkg::MU_K_LSB +: $clog2(R_MAXK + 1)]),
      .tile_rows(cc[sg_cfg_pkg::MU_TILE_ROWS_LSB +: $clog2(R_MAXT + 1)]),
      .row_beats(cc[sg_cfg_pkg::MU_ROW_BEATS_LSB +: $clog2(R_ROWW / W + 1)]),
      .out_meta(cc[sg_cfg_pkg::MU_OUT_META_LSB]),
      .start(r_start), .done(r_done), .peak_words(r_peak),
      .in0_beat(m_beat), .in0_valid(in0_valid && rmode && run), .in0_ready(r_in0_ready),
      .in1_beat(m1_beat), .in1_valid(in1_valid && rmode && run), .in1_ready(r_in1_ready),
      .out_beat(r_out_beat), .out_valid(r_out_valid), .out_ready(out_ready && rmode && run));

    sg_combine #(.W(W), .MAXT(R_MAXT), .MAXK(R_MAXK), .ROWW(R_ROWW), .MAXENT(C_MAXENT)) u_combine (
      .clk(clk), .rst_n(rst_n),
      .k(cc[sg_cfg_pkg::MU_K_LSB +: $clog2(R_MAXK + 1)]),
      .row_beats(cc[sg_cfg_pkg::MU_ROW_BEATS_LSB +: $clog2(R_ROWW / W + 1)]),
      .start(c_start), .done(c_done), .peak_words(c_peak),
      .in0_beat(m_beat), .in0_valid(in0_valid && cmode && run), .in0_ready(c_in0_ready),
      .in1_beat(m1_beat), .in1_valid(in1_valid && cmode && run), .in1_ready(c_in1_ready),
      .out_beat(c_out_beat), .out_valid(c_out_valid), .out_ready(out_ready && cmode && run));
  end else begin : g_no_route
    assign held_words = k_held + (run ? b_held : '0);
    assign rmode = 1'b0;
    assign cmode = 1'b0;
    assign r_in0_ready = 1'b0;
    assign r_in1_ready = 1'b0;
    assign r_out_valid = 1'b0;
    assign r_out_beat = '0;
    assign c_in0_ready = 1'b0;
    assign c_in1_ready = 1'b0;
    assign c_out_valid = 1'b0;
    assign c_out_beat = '0;
  end
endmodule
