// sg_cu: compute unit -- Map(matmul) over Zip(a, b), Map(silu / mul / add), Accum(add, b),
// Accum retile (docs/hardware.md section 2).
//
// Parameters: W words per beat, LANES multiply-accumulate lanes, BUF_WORDS words of local
// memory (word addresses BUF_ADDR_BITS wide in the configuration), BF16 = 1 for the
// bf16_fp32 multiply format (operands truncated to bf16, exact product, fp32 add), 0 for
// fp32. Arithmetic: sg_fp_pkg (bit-exact with sim/common/fp.hpp).
//
// Per-context configuration (sg_cfg_pkg CU_*): enable, func, accum_b, mn, k, log2n, passes,
// a_beats, b_beats, o_beats, a_base0/1, b_base0/1, o_base0/1, in0_stopmap, in1_stopmap
// (inN_src belongs to the generated top). in0 goes through its stop map first: out level =
// map[3*s +: 3] on STOP beats and on DATA beats with last = 1. Every output stop comes from
// in0 (Zip: a pair carries its first stream's stops; in1 only contributes data and its beat
// kind), so in1_stopmap has no observable effect and is not read.
// func: 1 matmul, 2 silu, 3 mul, 4 add, 5 accum, 6 retile; any other value finishes an
// enabled context at once.
//
// matmul (in0 = a, M x K, a_beats beats; in1 = b, K x N, b_beats beats; N = 1 << log2n;
//   mn = M*N; passes = ceil(mn / LANES); o_beats = mn / W):
//   * Loader: a and b beats are written (W words each, independently, one per cycle per
//     port) to input bank L (a at a_baseL, b at b_baseL, row-major). The bank is full when
//     both tiles are in; its stop is a's last-beat stop. A STOP or DONE on both inputs at a
//     tile boundary is queued in a bank as a token instead (in order with the tiles).
//   * MAC: when the next full input bank X and the next output bank Y (o_baseY) are free,
//     passes x K cycles; in pass p lane l owns o = p*LANES + l, active if o < mn,
//     i = o >> log2n, j = o & (N-1); cycle k does acc = fp32_add(k == 0 ? +0 : acc,
//     mul(a[i*K+k], b[k*N+j])) with mul = bf16_mul if BF16 else fp32_mul; at k = K-1 the
//     lane writes acc to word o of bank Y. A token takes one cycle here.
//   * Drain: bank Y leaves as o_beats DATA beats (beat t = words t*W .. t*W+W-1), one per
//     cycle, `last` + stop on the final one; a token leaves as one STOP (same level) or DONE.
//   Banks alternate 0,1,0,... in every stage, so tiles and tokens keep their order.
// silu / mul / add: one beat per cycle, one register stage; mul / add need both inputs
//   valid and take both (kind, last and stop from in0). silu(x) = fp32_mul(x, sigmoid(x)).
// accum (b = accum_b; tile = o_beats beats; banks o_base0 / o_base1): beat t of a tile is
//   added word-wise into beat t of the accumulating bank (first tile of a group: +0 + x).
//   A tile whose stop s >= b closes the group (output stop s - b); s < b is absorbed.
//   STOP s < b is absorbed; STOP s >= b closes the group, or, if nothing was accumulated,
//   emits a zero tile with stop s - b. The closed bank drains (as for matmul) while the
//   other bank accumulates. DONE is queued behind the groups and emitted.
// retile (b = accum_b): DATA beats pass through one register stage; `last` is kept only
//   on a beat with last and stop s >= b, whose stop becomes s - b (all other beats: last 0,
//   stop 0). STOP s > b becomes STOP s - b; STOP s <= b is absorbed (an empty group cannot
//   be written as a tile). DONE passes.
// Every function ends the context when its DONE beat is accepted at the output.
//
// Timing (cycle 0 = the cycle the first beat of the tile is accepted, inputs and output
// never stalled):
//   matmul: a tile's beats come in cycles 0 .. La-1, La = max(a_beats, b_beats); MAC cycles
//     La .. La+C-1 with C = passes*K; drain reads in cycles La+C .. La+C+o_beats-1; output
//     beat t is valid in cycle La+C+1+t. Steady state max(a_beats, b_beats, C, o_beats)
//     cycles per tile.
//   silu / mul / add / retile: a beat accepted in cycle c is valid at the output in c+1;
//     one beat per cycle.
//   accum: a group closed by the beat accepted in cycle c drains from cycle c+1, its first
//     beat valid in c+2, one beat per cycle; one input beat per cycle (stalls only when the
//     other bank still drains, e.g. groups of one tile with a blocked output).
//   A context switch costs one idle cycle (INIT) after the DONE beat is accepted.
//
// Ports: out_valid / out_beat come from registers. inN_ready are combinational from
// registers, from the input's own beat kind, from out_ready (silu / mul / add / retile),
// and for mul / add / matmul tokens from the other input's valid and beat kind.
//
// Implementation note: the local memory `mem` and the lane accumulators `acc` are private to
// the one always_ff block below and are written with blocking assignments. Verilator 5.006
// rejects non-blocking writes to an array inside a loop it does not unroll (BLKLOOPINIT),
// and the MAC loop must stay a loop (LANES can be 2048). Every read of mem in the block
// comes before every write of it (phase 1 / phase 2 below), so the blocking order is the
// register semantics. acc[32*l +: 32] is lane l's running sum: its k step reads and
// rewrites it, and at k = K-1 phase 2 stores the updated value into the output bank.
module sg_cu #(
  parameter int W = 16,
  parameter int LANES = 16,
  parameter int BUF_WORDS = 4096,
  parameter int BF16 = 1
) (
  input  logic clk,
  input  logic rst_n,
  // Whole configuration vector (all contexts). Only the fields of the running context are
  // read; the source selects belong to the generated top.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [sg_cfg_pkg::CONTEXTS*sg_cfg_pkg::CU_BITS-1:0] cfg,
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic start,
  output logic done,
  output logic [((sg_cfg_pkg::CONTEXTS > 1) ? $clog2(sg_cfg_pkg::CONTEXTS) : 1)-1:0] ctx,
  input  logic [32*W+5:0] in0_beat,
  input  logic in0_valid,
  output logic in0_ready,
  // in1 carries b (matmul) or the second operand (mul, add); its last bit and stop are not
  // used (Zip: in0's are authoritative) apart from the kind.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [32*W+5:0] in1_beat,
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic in1_valid,
  output logic in1_ready,
  output logic [32*W+5:0] out_beat,
  output logic out_valid,
  input  logic out_ready
);
  localparam int NCTX = sg_cfg_pkg::CONTEXTS;
  localparam int CB = sg_cfg_pkg::CU_BITS;
  localparam int CTXW = (NCTX > 1) ? $clog2(NCTX) : 1;
  localparam int DW = 32 * W;
  localparam int BW = DW + 6;
  localparam int MI = (BUF_WORDS > 1) ? $clog2(BUF_WORDS) : 1;  // memory index bits
  localparam int BA = sg_cfg_pkg::BUF_ADDR_BITS;
  localparam int FW = sg_cfg_pkg::CU_FUNC_W;
  localparam logic [FW-1:0] F_MATMUL = FW'(sg_cfg_pkg::CU_FUNC_MATMUL);
  localparam logic [FW-1:0] F_SILU = FW'(sg_cfg_pkg::CU_FUNC_SILU);
  localparam logic [FW-1:0] F_MUL = FW'(sg_cfg_pkg::CU_FUNC_MUL);
  localparam logic [FW-1:0] F_ADD = FW'(sg_cfg_pkg::CU_FUNC_ADD);
  localparam logic [FW-1:0] F_ACCUM = FW'(sg_cfg_pkg::CU_FUNC_ACCUM);
  localparam logic [FW-1:0] F_RETILE = FW'(sg_cfg_pkg::CU_FUNC_RETILE);
  localparam logic [1:0] K_DATA = 2'd0, K_STOP = 2'd1, K_DONE = 2'd2;
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
    for (int c = 0; c < NCTX; c++) en[c] = cfg[c * CB + sg_cfg_pkg::CU_ENABLE_LSB];
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
  // source selects are not used here, nor is in1_stopmap (Zip: the stop levels of a tile
  // are in0's, so in1's mapped stop would be dropped anyway).
  /* verilator lint_off UNUSEDSIGNAL */
  logic [CB-1:0] cc;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [FW-1:0] cf_func;
  logic [2:0] cf_b;
  logic [31:0] cf_mn;
  logic [15:0] cf_k, cf_passes, cf_abeats, cf_bbeats, cf_obeats;
  logic [4:0] cf_log2n;
  logic [BA-1:0] cf_abase0, cf_abase1, cf_bbase0, cf_bbase1, cf_obase0, cf_obase1;
  logic [23:0] cf_map0;

  assign cc = cfg[32'(ctx_q) * CB +: CB];
  always_comb begin
    cf_func = cc[sg_cfg_pkg::CU_FUNC_LSB +: FW];
    cf_b = cc[sg_cfg_pkg::CU_ACCUM_B_LSB +: 3];
    cf_mn = cc[sg_cfg_pkg::CU_MN_LSB +: 32];
    cf_k = cc[sg_cfg_pkg::CU_K_LSB +: 16];
    cf_log2n = cc[sg_cfg_pkg::CU_LOG2N_LSB +: 5];
    cf_passes = cc[sg_cfg_pkg::CU_PASSES_LSB +: 16];
    cf_abeats = cc[sg_cfg_pkg::CU_A_BEATS_LSB +: 16];
    cf_bbeats = cc[sg_cfg_pkg::CU_B_BEATS_LSB +: 16];
    cf_obeats = cc[sg_cfg_pkg::CU_O_BEATS_LSB +: 16];
    cf_abase0 = cc[sg_cfg_pkg::CU_A_BASE0_LSB +: BA];
    cf_abase1 = cc[sg_cfg_pkg::CU_A_BASE1_LSB +: BA];
    cf_bbase0 = cc[sg_cfg_pkg::CU_B_BASE0_LSB +: BA];
    cf_bbase1 = cc[sg_cfg_pkg::CU_B_BASE1_LSB +: BA];
    cf_obase0 = cc[sg_cfg_pkg::CU_O_BASE0_LSB +: BA];
    cf_obase1 = cc[sg_cfg_pkg::CU_O_BASE1_LSB +: BA];
    cf_map0 = cc[sg_cfg_pkg::CU_IN0_STOPMAP_LSB +: 24];
  end

  logic is_mm, is_ew1, is_ew2, is_acc, is_rt, bad_func;
  assign is_mm = run && (cf_func == F_MATMUL);
  assign is_ew1 = run && (cf_func == F_SILU);
  assign is_ew2 = run && (cf_func == F_MUL || cf_func == F_ADD);
  assign is_acc = run && (cf_func == F_ACCUM);
  assign is_rt = run && (cf_func == F_RETILE);
  assign bad_func = run && !(is_mm || is_ew1 || is_ew2 || is_acc || is_rt);

  // ---------------------------------------------------------------- inputs (stop maps)
  logic [1:0] k0, k1;
  logic l0;
  logic [2:0] s0;             // in0 stop after the map
  logic [DW-1:0] d0, d1;
  always_comb begin
    k0 = in0_beat[DW + 4 +: 2];
    l0 = in0_beat[DW + 3];
    s0 = in0_beat[DW +: 3];
    if (k0 == K_STOP || (k0 == K_DATA && l0)) s0 = cf_map0[32'(s0) * 3 +: 3];
    d0 = in0_beat[DW-1:0];
    k1 = in1_beat[DW + 4 +: 2];
    d1 = in1_beat[DW-1:0];
  end
  // ---------------------------------------------------------------- state
  logic [31:0] mem [0:BUF_WORDS-1];   // local memory (private to the main block)
  logic [32*LANES-1:0] acc;           // lane accumulators, lane l at [32*l +: 32] (main block)
  logic eos_q;                        // the input DONE has been taken
  logic [BW-1:0] out_q;
  logic ov_q;
  // input banks (matmul)
  logic [1:0] ib_full_q;
  logic [1:0] ib_kind_q [0:1];
  logic [2:0] ib_stop_q [0:1];
  logic ld_sel_q;
  logic [15:0] a_cnt_q, b_cnt_q;
  logic [2:0] a_stop_q;
  logic cp_sel_q, cp_osel_q;
  logic [15:0] p_q, k_q;
  logic [31:0] pbase_q;               // p_q * LANES
  // output banks (matmul, accum)
  logic [1:0] ob_full_q;
  logic [1:0] ob_kind_q [0:1];
  logic [2:0] ob_stop_q [0:1];
  logic [1:0] ob_zero_q;
  logic dr_sel_q;
  logic [15:0] dr_cnt_q;
  // accum
  logic acc_sel_q, acc_has_q;
  logic [15:0] acc_cnt_q;

  // ---------------------------------------------------------------- handshakes
  logic can_out, mm_tok, mm_free, fire0, fire1, fin_ev;
  assign can_out = !ov_q || out_ready;
  assign mm_tok = (a_cnt_q == 16'd0) && (b_cnt_q == 16'd0) && in0_valid && in1_valid &&
                  (k0 != K_DATA) && (k1 != K_DATA);
  assign mm_free = is_mm && !eos_q && !ib_full_q[ld_sel_q];

  always_comb begin
    in0_ready = 1'b0;
    in1_ready = 1'b0;
    if (is_mm) begin
      in0_ready = mm_free && (mm_tok || (k0 == K_DATA && a_cnt_q < cf_abeats));
      in1_ready = mm_free && (mm_tok || (k1 == K_DATA && b_cnt_q < cf_bbeats));
    end else if (is_ew1 || is_rt) begin
      in0_ready = !eos_q && can_out;
    end else if (is_ew2) begin
      in0_ready = !eos_q && can_out && in1_valid;
      in1_ready = !eos_q && can_out && in0_valid;
    end else if (is_acc) begin
      in0_ready = !eos_q && !ob_full_q[acc_sel_q];
    end
  end
  assign fire0 = in0_valid && in0_ready;
  assign fire1 = in1_valid && in1_ready;
  assign fin_ev = ov_q && out_ready && (out_q[DW + 4 +: 2] == K_DONE);
  assign fin = fin_ev || bad_func;
  assign out_beat = out_q;
  assign out_valid = ov_q;

  // ---------------------------------------------------------------- stage controls
  logic mm_go;                  // the MAC array works this cycle (tile or token)
  logic mm_data;                // ... on a data tile
  logic kfirst, klast, plast;
  logic [31:0] abase_x, bbase_x, obase_y, nmask;
  logic acc_go;                 // accum takes an input beat
  logic wu_go;                  // the W-word unit (accum / silu / mul / add) works
  logic dr_go;                  // the drain loads the output register
  logic [31:0] ld_abase, ld_bbase, acc_base, dr_base;
  logic [15:0] a_nxt, b_nxt;    // loader counts after this cycle's beats
  logic a_done_now;             // a's tile completes this cycle
  logic [2:0] a_st;             // a's stop if its last beat comes now
  always_comb begin
    // The MAC array and the drain are gated by the bank flags alone: only matmul fills input
    // banks and only matmul / accum fill output banks (INIT clears them), so adding is_mm /
    // is_acc would change nothing -- but it would let Yosys prove these arithmetic cells
    // exclusive with the elementwise ones, and its `share` pass then merges them into cells
    // whose select depends on their own results (a combinational loop in Yosys 0.23).
    mm_go = ib_full_q[cp_sel_q] && !ob_full_q[cp_osel_q];
    mm_data = (ib_kind_q[cp_sel_q] == K_DATA);
    kfirst = (k_q == 16'd0);
    klast = ({1'b0, k_q} + 17'd1 >= {1'b0, cf_k});
    plast = ({1'b0, p_q} + 17'd1 >= {1'b0, cf_passes});
    abase_x = cp_sel_q ? 32'(cf_abase1) : 32'(cf_abase0);
    bbase_x = cp_sel_q ? 32'(cf_bbase1) : 32'(cf_bbase0);
    obase_y = cp_osel_q ? 32'(cf_obase1) : 32'(cf_obase0);
    nmask = (32'd1 << cf_log2n) - 32'd1;
    acc_go = is_acc && fire0;
    wu_go = (acc_go || ((is_ew1 || is_ew2) && fire0)) && (k0 == K_DATA);
    dr_go = ob_full_q[dr_sel_q] && can_out;
    ld_abase = (ld_sel_q ? 32'(cf_abase1) : 32'(cf_abase0)) + 32'(a_cnt_q) * 32'(W);
    ld_bbase = (ld_sel_q ? 32'(cf_bbase1) : 32'(cf_bbase0)) + 32'(b_cnt_q) * 32'(W);
    acc_base = (acc_sel_q ? 32'(cf_obase1) : 32'(cf_obase0)) + 32'(acc_cnt_q) * 32'(W);
    dr_base = (dr_sel_q ? 32'(cf_obase1) : 32'(cf_obase0)) + 32'(dr_cnt_q) * 32'(W);
    a_nxt = a_cnt_q + 16'(fire0);
    b_nxt = b_cnt_q + 16'(fire1);
    a_done_now = fire0 && (a_nxt == cf_abeats);
    a_st = l0 ? s0 : 3'd0;
  end

  // ---------------------------------------------------------------- main block
  // Phase 1 reads mem (drain, accum, MAC operands) and phase 2 writes it (loader, accum,
  // MAC results): every read sees the values of the previous cycle, as with non-blocking
  // writes, and Yosys can keep mem a memory (a read after a blocking write in the same
  // process would force it into registers).
  logic ld_out;                 // load out_q this cycle
  logic [BW-1:0] nb;            // ... with this beat
  logic [DW-1:0] dtmp;          // drained words
  logic [DW-1:0] wtmp;          // W-word unit results
  logic [31:0] x, y, sm;        // word temporaries
  logic [31:0] mo, av, bv, pr;  // operand / product temporaries
  logic tend;
  logic [2:0] st;

  /* verilator lint_off BLKSEQ */
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      ov_q <= 1'b0;
      eos_q <= 1'b0;
      ib_full_q <= '0;
      ob_full_q <= '0;
    end else if (st_q != S_RUN) begin
      // Idle or INIT: an empty unit for the next context.
      ov_q <= 1'b0;
      eos_q <= 1'b0;
      ib_full_q <= '0;
      ob_full_q <= '0;
      ob_zero_q <= '0;
      ld_sel_q <= 1'b0;
      cp_sel_q <= 1'b0;
      cp_osel_q <= 1'b0;
      dr_sel_q <= 1'b0;
      a_cnt_q <= 16'd0;
      b_cnt_q <= 16'd0;
      a_stop_q <= 3'd0;
      p_q <= 16'd0;
      k_q <= 16'd0;
      pbase_q <= 32'd0;
      dr_cnt_q <= 16'd0;
      acc_sel_q <= 1'b0;
      acc_has_q <= 1'b0;
      acc_cnt_q <= 16'd0;
    end else begin
      ld_out = 1'b0;
      nb = '0;

      // ================================================ phase 1: reads of mem
      // drain
      if (dr_go && ob_kind_q[dr_sel_q] == K_DATA) begin
        for (int w = 0; w < W; w++)
          dtmp[32*w +: 32] = ob_zero_q[dr_sel_q] ? 32'h0 : mem[MI'(dr_base + 32'(w))];
      end
      // W-word unit: one fp32_add and one fp32_mul per word, shared by accum (old + x, the
      // first tile of a group +0 + x), add (x + y), mul (x * y) and silu (x * sigmoid(x)).
      if (wu_go) begin
        for (int w = 0; w < W; w++) begin
          x = d0[32*w +: 32];
          y = d1[32*w +: 32];
          av = (is_acc && acc_has_q) ? mem[MI'(acc_base + 32'(w))] : 32'h0;
          sm = sg_fp_pkg::fp32_add(is_acc ? av : x, is_acc ? x : y);
          bv = (cf_func == F_SILU) ? sg_sigmoid_lut::sg_sigmoid_lut(sg_fp_pkg::sigmoid_index(x)) : y;
          pr = sg_fp_pkg::fp32_mul(x, bv);
          wtmp[32*w +: 32] = (cf_func == F_SILU || cf_func == F_MUL) ? pr : sm;
        end
      end
      // MAC array: one k step of one pass, every active lane
      if (mm_go && mm_data) begin
        for (int l = 0; l < LANES; l++) begin
          mo = pbase_q + 32'(l);
          if (mo < cf_mn) begin
            av = mem[MI'(abase_x + (mo >> cf_log2n) * 32'(cf_k) + 32'(k_q))];
            bv = mem[MI'(bbase_x + (32'(k_q) << cf_log2n) + (mo & nmask))];
            if (BF16 != 0) pr = sg_fp_pkg::bf16_mul(av, bv);
            else pr = sg_fp_pkg::fp32_mul(av, bv);
            acc[32*l +: 32] = sg_fp_pkg::fp32_add(kfirst ? 32'h0 : acc[32*l +: 32], pr);
          end
        end
      end

      // ================================================ phase 2: writes of mem
      // matmul loader: a and b beats into input bank ld_sel
      if (is_mm && fire0 && !mm_tok) begin
        for (int w = 0; w < W; w++) mem[MI'(ld_abase + 32'(w))] = d0[32*w +: 32];
      end
      if (is_mm && fire1 && !mm_tok) begin
        for (int w = 0; w < W; w++) mem[MI'(ld_bbase + 32'(w))] = d1[32*w +: 32];
      end
      // accum
      if (acc_go && k0 == K_DATA) begin
        for (int w = 0; w < W; w++) mem[MI'(acc_base + 32'(w))] = wtmp[32*w +: 32];
      end
      // MAC results at the end of a pass: lane l -> word o of output bank cp_osel
      if (mm_go && mm_data && klast) begin
        for (int l = 0; l < LANES; l++) begin
          mo = pbase_q + 32'(l);
          if (mo < cf_mn) mem[MI'(obase_y + mo)] = acc[32*l +: 32];
        end
      end

      // ================================================ control (non-blocking)
      // ---- matmul loader
      if (is_mm && fire0 && fire1 && mm_tok) begin
        ib_full_q[ld_sel_q] <= 1'b1;
        ib_kind_q[ld_sel_q] <= k0;
        ib_stop_q[ld_sel_q] <= s0;
        ld_sel_q <= !ld_sel_q;
        if (k0 == K_DONE) eos_q <= 1'b1;
      end else if (is_mm && (fire0 || fire1)) begin
        if (a_done_now) a_stop_q <= a_st;
        if ((a_nxt == cf_abeats) && (b_nxt == cf_bbeats)) begin
          ib_full_q[ld_sel_q] <= 1'b1;
          ib_kind_q[ld_sel_q] <= K_DATA;
          ib_stop_q[ld_sel_q] <= a_done_now ? a_st : a_stop_q;
          ld_sel_q <= !ld_sel_q;
          a_cnt_q <= 16'd0;
          b_cnt_q <= 16'd0;
        end else begin
          a_cnt_q <= a_nxt;
          b_cnt_q <= b_nxt;
        end
      end

      // ---- matmul MAC sequencing: passes x K cycles per tile, one cycle per token
      if (mm_go) begin
        if (!mm_data || (klast && plast)) begin
          ib_full_q[cp_sel_q] <= 1'b0;
          ob_full_q[cp_osel_q] <= 1'b1;
          ob_kind_q[cp_osel_q] <= ib_kind_q[cp_sel_q];
          ob_stop_q[cp_osel_q] <= ib_stop_q[cp_sel_q];
          ob_zero_q[cp_osel_q] <= 1'b0;
          cp_sel_q <= !cp_sel_q;
          cp_osel_q <= !cp_osel_q;
          k_q <= 16'd0;
          p_q <= 16'd0;
          pbase_q <= 32'd0;
        end else if (klast) begin
          k_q <= 16'd0;
          p_q <= p_q + 16'd1;
          pbase_q <= pbase_q + 32'(LANES);
        end else begin
          k_q <= k_q + 16'd1;
        end
      end

      // ---- accum
      if (acc_go) begin
        if (k0 == K_DATA) begin
          tend = ({1'b0, acc_cnt_q} + 17'd1 >= {1'b0, cf_obeats});
          st = l0 ? s0 : 3'd0;
          if (!tend) begin
            acc_cnt_q <= acc_cnt_q + 16'd1;
          end else begin
            acc_cnt_q <= 16'd0;
            if (st >= cf_b) begin
              ob_full_q[acc_sel_q] <= 1'b1;
              ob_kind_q[acc_sel_q] <= K_DATA;
              ob_stop_q[acc_sel_q] <= st - cf_b;
              ob_zero_q[acc_sel_q] <= 1'b0;
              acc_sel_q <= !acc_sel_q;
              acc_has_q <= 1'b0;
            end else begin
              acc_has_q <= 1'b1;
            end
          end
        end else if (k0 == K_STOP) begin
          if (s0 >= cf_b) begin
            ob_full_q[acc_sel_q] <= 1'b1;
            ob_kind_q[acc_sel_q] <= K_DATA;
            ob_stop_q[acc_sel_q] <= s0 - cf_b;
            ob_zero_q[acc_sel_q] <= !acc_has_q;
            acc_sel_q <= !acc_sel_q;
            acc_has_q <= 1'b0;
          end
        end else begin
          ob_full_q[acc_sel_q] <= 1'b1;
          ob_kind_q[acc_sel_q] <= K_DONE;
          ob_stop_q[acc_sel_q] <= 3'd0;
          ob_zero_q[acc_sel_q] <= 1'b0;
          acc_sel_q <= !acc_sel_q;
          eos_q <= 1'b1;
        end
      end

      // ---- drain of the output banks (matmul, accum)
      if (dr_go) begin
        ld_out = 1'b1;
        if (ob_kind_q[dr_sel_q] != K_DATA) begin
          nb = {ob_kind_q[dr_sel_q], 1'b0, ob_stop_q[dr_sel_q], {DW{1'b0}}};
          ob_full_q[dr_sel_q] <= 1'b0;
          dr_sel_q <= !dr_sel_q;
        end else begin
          tend = ({1'b0, dr_cnt_q} + 17'd1 >= {1'b0, cf_obeats});
          nb = {K_DATA, tend, tend ? ob_stop_q[dr_sel_q] : 3'd0, dtmp};
          if (tend) begin
            ob_full_q[dr_sel_q] <= 1'b0;
            dr_sel_q <= !dr_sel_q;
            dr_cnt_q <= 16'd0;
          end else begin
            dr_cnt_q <= dr_cnt_q + 16'd1;
          end
        end
      end

      // ---- elementwise: silu / mul / add (results from the W-word unit)
      if ((is_ew1 || is_ew2) && fire0) begin
        ld_out = 1'b1;
        if (k0 == K_DATA) begin
          nb = {K_DATA, l0, l0 ? s0 : 3'd0, wtmp};
        end else begin
          nb = {k0, 1'b0, (k0 == K_STOP) ? s0 : 3'd0, {DW{1'b0}}};
          if (k0 == K_DONE) eos_q <= 1'b1;
        end
      end

      // ---- retile
      if (is_rt && fire0) begin
        if (k0 == K_DATA) begin
          ld_out = 1'b1;
          if (l0 && s0 >= cf_b) nb = {K_DATA, 1'b1, s0 - cf_b, d0};
          else nb = {K_DATA, 1'b0, 3'd0, d0};
        end else if (k0 == K_STOP) begin
          if (s0 > cf_b) begin
            ld_out = 1'b1;
            nb = {K_STOP, 1'b0, s0 - cf_b, {DW{1'b0}}};
          end
        end else begin
          ld_out = 1'b1;
          nb = {K_DONE, 1'b0, 3'd0, {DW{1'b0}}};
          eos_q <= 1'b1;
        end
      end

      // ---- output register
      if (ld_out) begin
        out_q <= nb;
        ov_q <= 1'b1;
      end else if (out_ready) begin
        ov_q <= 1'b0;
      end
    end
  end
  /* verilator lint_on BLKSEQ */
endmodule
