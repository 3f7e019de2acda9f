// sg_cu_word: the compute unit's W-word unit and its functions (sg_cu.sv header: silu / exp /
// recip / rsqrt / mul / add / sub, rowscale, accum, scan, topk; docs/hardware.md sections 2 and 3). One
// fp32_add and one fp32_mul per word, shared by accum and scan (old + x; the first tile of a
// group +0 + x), accum rescale (old * y + x: the multiply in the cycle the beat is taken, the
// add on the registered products in the next), add (x + y), sub (x + -y), mul (x * y), silu
// (x * sigmoid(x)) and rowscale (x * the row's scalar, word idx of y); accum max, scan max
// and scan max exclusive take fp32_max instead of the add. Rescale's multiply and add in one
// cycle were the attention unit's longest path (67 logic levels on xc7, docs/results/fpga.md).
//
// Work a cycle ahead, on x_next (the beat at in0's head next cycle): silu's sigmoid table is
// block RAM (sg_sigmoid_rom, a copy per two words, SILU = 1), and exp's first multiply and
// exp_shift and recip's and rsqrt's first multiply (ATTN = 1) are registered from x_next, so
// that the head cycle only finishes them and the one-cycle timing stays. One multiplier per
// word serves exp, recip and rsqrt (func picks its operands; in INIT it is already the new context's).
// exp registers exp_shift of t rather than t (with the table row as register bits, so the
// table is a block RAM): with all of exp's integer steps in the head cycle they were the
// attention unit's longest path (56 levels), with all of them ahead that stage was (58).
//
// Ports: word w of a beat at [32*w +: 32]. `res` and `res_excl` are combinational on this
// cycle's inputs (all zero unless go): res is the function's result (accum rescale: of the
// beat taken last cycle), res_excl scan max exclusive's output (the running max before the
// beat, -inf words for a group's first tile). Parameters as sg_cu's (MUL = 0: the
// multipliers are absent and their funcs give 0; sg_cu does not run them).
module sg_cu_word #(
  parameter int W = 16,
  parameter int DYN = 1,
  parameter int ATTN = 0,
  parameter int SILU = 1,
  parameter int MUL = 1,
  parameter int NEAR_FAR = 1,
  parameter int TOPK = 0,
  localparam int FW = sg_cfg_pkg::CU_FUNC_W
) (
  input  logic clk,
  input  logic [FW-1:0] func,         // the running context's func (sg_cfg_pkg CU_FUNC_*)
  input  logic [5:0] idx,             // idx_word: rowscale's scalar is word idx of y
  /* verilator lint_off UNUSEDSIGNAL */  // read with TOPK only
  input  logic [15:0] topk_e,         // topk: the logits of a row (words 0 .. topk_e-1 of x)
  input  logic [15:0] topk_k,         // topk: the experts it chooses
  /* verilator lint_on UNUSEDSIGNAL */
  /* verilator lint_off UNUSEDSIGNAL */  // read with SILU or ATTN only
  input  logic [32*W-1:0] x_next,     // the data words of the beat at in0's head next cycle
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic go,                    // a DATA beat is taken, or accum rescale runs
  input  logic running,               // accum or scan: the second operand is the running tile's beat
  input  logic rescale,               // accum rescale
  input  logic rescale_take,          // ... takes a beat: its products and x go to the second stage
  input  logic has,                   // an earlier tile of the group is in the running tile
  input  logic [32*W-1:0] x,          // in0's words
  input  logic [32*W-1:0] y,          // in1's words
  input  logic [32*W-1:0] old,        // the running tile's beat (the local memory's c read)
  output logic [32*W-1:0] res,
  output logic [32*W-1:0] res_excl
);
  localparam logic [FW-1:0] F_SILU = FW'(sg_cfg_pkg::CU_FUNC_SILU);
  localparam logic [FW-1:0] F_MUL = FW'(sg_cfg_pkg::CU_FUNC_MUL);
  localparam logic [FW-1:0] F_ROWSCALE = FW'(sg_cfg_pkg::CU_FUNC_ROWSCALE);
  localparam logic [FW-1:0] F_SUB = FW'(sg_cfg_pkg::CU_FUNC_SUB);
  localparam logic [FW-1:0] F_EXP = FW'(sg_cfg_pkg::CU_FUNC_EXP);
  localparam logic [FW-1:0] F_RECIP = FW'(sg_cfg_pkg::CU_FUNC_RECIP);
  localparam logic [FW-1:0] F_RSQRT = FW'(sg_cfg_pkg::CU_FUNC_RSQRT);
  localparam logic [FW-1:0] F_ACCMAX = FW'(sg_cfg_pkg::CU_FUNC_ACCUM_MAX);
  localparam logic [FW-1:0] F_SCANMAX = FW'(sg_cfg_pkg::CU_FUNC_SCAN_MAX);
  localparam logic [FW-1:0] F_SCANMAXX = FW'(sg_cfg_pkg::CU_FUNC_SCAN_MAX_EXCL);
  localparam logic [FW-1:0] F_TOPK = FW'(sg_cfg_pkg::CU_FUNC_TOPK);
  localparam logic [FW-1:0] F_TOPK_LOGITS = FW'(sg_cfg_pkg::CU_FUNC_TOPK_LOGITS);

  // topk (TOPK = 1; generator/model/router.hpp topkSelect): word i < topk_e of x is chosen
  // when fewer than topk_k words rank before it (a larger key, or an equal key at a lower
  // index); the chosen indices leave ascending in words 0 .. topk_k-1, every other word 0 (a
  // routing row without weights: sg_route reads words 0 .. k-1). topk_logits leaves the
  // chosen words themselves there instead, and -inf in all the others (a whole beat: the
  // router's softmax over it gives them 0). The key: NaN below everything, zeros and subnormals 0, else
  // the signed magnitude. All W x W comparisons side by side: one beat per cycle, as the
  // other word functions.
  function automatic logic signed [32:0] topk_key(input logic [31:0] v);
    if (v[30:0] > 31'h7F80_0000) topk_key = {1'b1, 32'h0};  // NaN: -2^32, the least
    else if (v[30:23] == 8'd0) topk_key = 33'sd0;
    else if (v[31]) topk_key = -$signed({2'b00, v[30:0]});
    else topk_key = $signed({2'b00, v[30:0]});
  endfunction
  logic [32*W-1:0] tk_row;
  if (TOPK != 0) begin : g_topk
    logic [33*W-1:0] key;
    logic [W-1:0] chosen;
    logic [15:0] tk_n, tk_slot;
    // Evaluated only while topk runs: a simulator skips the W x W comparisons otherwise.
    always_comb begin
      tk_row = '0;
      key = '0;
      chosen = '0;
      {tk_n, tk_slot} = '0;
      if (func == F_TOPK || func == F_TOPK_LOGITS) begin
        for (int i = 0; i < W; i++) key[33*i +: 33] = topk_key(x[32*i +: 32]);
        for (int i = 0; i < W; i++) begin
          tk_n = 16'd0;
          for (int j = 0; j < W; j++)
            if (j != i && 16'(j) < topk_e &&
                ($signed(key[33*j +: 33]) > $signed(key[33*i +: 33]) || (key[33*j +: 33] == key[33*i +: 33] && j < i)))
              tk_n = tk_n + 16'd1;
          chosen[i] = 16'(i) < topk_e && tk_n < topk_k;
        end
        if (func == F_TOPK_LOGITS)
          for (int p = 0; p < W; p++)
            if (16'(p) >= topk_k) tk_row[32*p +: 32] = 32'hFF80_0000;
        tk_slot = 16'd0;  // chosen words before word i: its slot
        for (int i = 0; i < W; i++)
          if (chosen[i]) begin
            for (int p = 0; p < W; p++)
              if (16'(p) == tk_slot) tk_row[32*p +: 32] = func == F_TOPK ? 32'(i) : x[32*i +: 32];
            tk_slot = tk_slot + 16'd1;
          end
      end
    end
  end else begin : g_no_topk
    assign tk_row = '0;
  end

  // silu's sigmoid table, block RAM read a cycle ahead: one sg_sigmoid_rom (two read ports)
  // per two words of a beat; sig_q word w is sigmoid(word w of the beat at in0's head).
  localparam int NSIG = (W + 1) / 2;
  localparam int SIW = sg_fp_pkg::SIG_IDX_W;
  /* verilator lint_off UNUSEDSIGNAL */  // with W odd, the last copy's second port
  logic [64*NSIG-1:0] sig_q;
  /* verilator lint_on UNUSEDSIGNAL */
  if (SILU != 0) begin : g_silu
    // Packed: an unpacked array on these ports made Yosys 0.23 re-derive sg_cu and abort.
    // One assignment per word (constant slices: a loop indexes the wide vectors by a variable).
    logic [2*NSIG*SIW-1:0] sig_idx;
    for (genvar w = 0; w < 2 * NSIG; w++) begin : g_idx
      assign sig_idx[SIW*w +: SIW] = sg_fp_pkg::sigmoid_index(x_next[32*((w < W) ? w : W - 1) +: 32]);
    end
    for (genvar c = 0; c < NSIG; c++) begin : g_sig
      sg_sigmoid_rom u_rom (.clk(clk), .i0(sig_idx[SIW*2*c +: SIW]), .i1(sig_idx[SIW*(2*c+1) +: SIW]),
                            .q0(sig_q[64*c +: 32]), .q1(sig_q[64*c+32 +: 32]));
    end
  end else begin : g_no_silu
    assign sig_q = '0;
  end

  logic [32*W-1:0] la_q;        // word w: recip's or rsqrt's product, exp's shift of word w at in0's head
  if (ATTN != 0) begin : g_ahead
    logic [32*W-1:0] la_n;
    logic [31:0] xn, pn;
    logic la_exp, la_rs;
    always_comb begin
      la_n = '0;
      {xn, pn} = '0;
      la_exp = MUL != 0 && func == F_EXP;
      la_rs = func == F_RSQRT;
      for (int w = 0; w < W; w++) begin
        xn = x_next[32*w +: 32];
        // rsqrt: z (the significand, times 2 for an odd exponent: biased exponent bit 0
        // clear) times its row's half square
        pn = sg_fp_pkg::fp32_mul(la_exp ? xn : la_rs ? {1'b0, xn[23] ? 8'd127 : 8'd128, xn[22:0]} : {9'h07F, xn[22:0]},
                                 la_exp ? sg_fp_pkg::EXP_LOG2E :
                                 la_rs ? sg_attn_lut::rsqrt_hsq({~xn[23], xn[22:16]}) :
                                 {9'h07E, sg_attn_lut::recip_seed(xn[22:15])});
        la_n[32*w +: 32] = la_exp ? 32'(sg_fp_pkg::exp_shift(xn[30:23] == 8'hFF && xn[22:0] != 23'd0, pn)) : pn;
      end
    end
    always_ff @(posedge clk) la_q <= la_n;
  end else begin : g_no_ahead
    assign la_q = '0;
  end

  logic [31:0] sc;              // rowscale: the scalar, word idx of y
  always_comb begin
    sc = 32'h0;
    for (int w = 0; w < W; w++)
      if (32'(idx) == w) sc = y[32*w +: 32];
  end

  // accum rescale's second stage: the beat taken last cycle, its products old * y and its x
  logic [32*W-1:0] rs_pn, rs2_p, rs2_x;
  always_ff @(posedge clk)
    if (rescale_take) begin
      rs2_p <= rs_pn;
      rs2_x <= x;
    end

  logic [31:0] xw, yw, sm, av, bv, pr;  // word temporaries: operands, old, sum, product
  localparam int EK_W = sg_fp_pkg::EXP_ROW_W + 10;
  logic [EK_W-1:0] ek;          // exp: sg_fp_pkg::exp_key of g_ahead's exp_shift
  logic [31:0] r0, r1;          // recip, rsqrt: the seed, the Newton step
  logic rsq;
  always_comb begin
    res = '0;
    res_excl = '0;
    rs_pn = '0;
    {xw, yw, sm, av, bv, pr, r0, r1} = '0;
    rsq = 1'b0;
    ek = '0;
    if (go) begin
      for (int w = 0; w < W; w++) begin
        xw = x[32*w +: 32];
        yw = y[32*w +: 32];
        av = (running && has) ? old[32*w +: 32] : 32'h0;
        if (DYN != 0 && func == F_SCANMAXX) res_excl[32*w +: 32] = has ? av : 32'hFF80_0000;
        bv = (func == F_SILU) ? sig_q[32*w +: 32] : (func == F_ROWSCALE) ? sc : yw;
        pr = (MUL != 0) ? sg_fp_pkg::fp32_mul(rescale ? av : xw, bv) : 32'h0;
        rs_pn[32*w +: 32] = pr;
        sm = sg_fp_pkg::fp32_add_by(NEAR_FAR, rescale ? rs2_p[32*w +: 32] : running ? av : xw,
                                    rescale ? rs2_x[32*w +: 32] : running ? xw : {yw[31] ^ (func == F_SUB), yw[30:0]});
        if (ATTN != 0 && (func == F_RECIP || func == F_RSQRT)) begin
          // la_q holds p (recip: x's significand times its seed r0; rsqrt: z times h). r0 is
          // looked up again from x instead of being registered with la_q: the table reads
          // beside the q step, off the longest path (registering it would trade this second
          // table for 23 flip-flops a word; not measured). One multiplier serves both.
          rsq = func == F_RSQRT;
          r0 = {9'h07E, rsq ? sg_attn_lut::rsqrt_seed({~xw[23], xw[22:16]}) : sg_attn_lut::recip_seed(xw[22:15])};
          r1 = sg_fp_pkg::fp32_mul(r0, rsq ? sg_fp_pkg::rsqrt_q(la_q[32*w +: 32]) : sg_fp_pkg::recip_q(la_q[32*w +: 32]));
          res[32*w +: 32] = rsq ? sg_fp_pkg::rsqrt_pack(xw, r1) : sg_fp_pkg::recip_pack(xw, r1);
        end else if ((ATTN != 0 && func == F_ACCMAX) || (DYN != 0 && (func == F_SCANMAX || func == F_SCANMAXX))) begin
          res[32*w +: 32] = has ? sg_fp_pkg::fp32_max(av, xw) : xw;
        end else if (ATTN != 0 && func == F_EXP) begin
          ek = sg_fp_pkg::exp_key(la_q[32*w +: sg_fp_pkg::EXP_SH_W]);
          res[32*w +: 32] = sg_fp_pkg::exp_pack(ek[EK_W-1 -: 10], sg_attn_lut::exp_mant(ek[sg_fp_pkg::EXP_ROW_W-1:0]));
        end else if (TOPK != 0 && (func == F_TOPK || func == F_TOPK_LOGITS)) begin
          res[32*w +: 32] = tk_row[32*w +: 32];
        end else begin
          res[32*w +: 32] = (func == F_SILU || func == F_MUL || func == F_ROWSCALE) ? pr : sm;
        end
      end
    end
  end
endmodule
