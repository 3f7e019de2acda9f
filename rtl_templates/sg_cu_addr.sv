// sg_cu_addr: the compute unit's MAC operand addresses (sg_cu.sv header, matmul; sg_cu_mem
// header for the banks). The local memory reads synchronously, so the addresses given in
// cycle c are those of cycle c + 1: they come from the MAC stage's next state (k_d, p_d,
// pbase_d, sel_d), which sg_cu computes. In pass p lane l owns output o = p*LANES + l:
//   * static (bt = 0): i = o >> log2n, j = o & (N-1), N = 1 << log2n; a[i*K + k] at
//     abase + i*K + k, b[k*N + j] at bbase + (k << log2n) + j;
//   * bt = 1 (b transposed, N x K): lane l tracks its (i, j) = (o / N, o % N) incrementally:
//     per pass j += LANES % N, i += LANES / N (+1 when j wraps past N); b[j*K + k] at
//     bbase + j*K + k. The per-lane start values (l / N, l % N) and (LANES / N, LANES % N)
//     come from LANES+1 restoring dividers (one compare-subtract each per cycle) that run once
//     per context, for SU = $clog2(LANES+1) cycles from its first RUN cycle; `bt_rdy` says
//     they are done (the MAC starts nothing before).
// Banked memory: row i of a is read with rotation i mod W (the loader wrote it so), row j of
// a transposed b with j mod W; with A_COPIES = 2 the head of row i (the words of the beat
// that began in row i - 1) is in a's copy 1, and with bt the lanes whose j wrapped past N
// read b's copy 1. `act` (lane l works this cycle: o < mn) is for this cycle.
// Outside a matmul context (mm = 0) every output is 0: skipping the lanes keeps a fabric's
// other units cheap to simulate. The loops are small, not one: Verilator unrolls these
// (constant slices; flows/verilator_build.sh), the one loop it did not. The bt lane state
// lives in packed vectors whose next values are computed in always_comb loops and registered
// whole (Verilator 5.006 rejects non-blocking writes to an array inside a loop it does not
// unroll, BLKLOOPINIT, and LANES can be 2048). DYN = 0: no bt tracking at all (a register
// loop nobody reads still costs simulation time).
module sg_cu_addr #(
  parameter int W = 16,
  parameter int LANES = 16,
  parameter int BUF_WORDS = 4096,
  parameter int DYN = 1,
  parameter int A_COPIES = 1,
  parameter int HOLD = 0,               // hold the addresses while their inputs stay (below)
  localparam int MI = (BUF_WORDS > 1) ? $clog2(BUF_WORDS) : 1,
  localparam int RB = (W > 1) ? $clog2(W) : 1,
  localparam int BA = sg_cfg_pkg::BUF_ADDR_BITS
) (
  // the bt lane state's (read with DYN = 1 only)
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic clk,
  input  logic rst_n,
  input  logic run,
  input  logic [15:0] n,              // field n (bt: N)
  input  logic klast, plast,          // the MAC's k step is its last, its pass the last
  input  logic [15:0] p_q, p_d,       // pass: now, next cycle
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic mm,                    // the context is a matmul
  input  logic bt,                    // ... with b transposed (field bt)
  input  logic [15:0] k,              // field k (K)
  input  logic [4:0] log2n,           // field log2n (static: N = 1 << log2n)
  input  logic [BA-1:0] abase0, abase1, bbase0, bbase1,
  input  logic step,                  // the MAC works a data tile's k step this cycle
  input  logic [31:0] pbase_q, pbase_d,  // pass * LANES: now, next cycle
  input  logic [15:0] k_d,            // k step next cycle
  input  logic sel_d,                 // input bank next cycle
  input  logic [31:0] mn,             // outputs of the tile in the MAC stage (M*N)
  output logic bt_rdy,
  output logic [LANES-1:0] act,
  output logic [MI*LANES-1:0] a_addr, b_addr,
  output logic [RB*LANES-1:0] a_rot, b_rot,
  output logic [LANES-1:0] a_copy, b_copy
);
  localparam int SU = $clog2(LANES + 1);  // bt setup cycles: bits of the dividend LANES
  logic [16*LANES-1:0] li_cn, lj_cn;  // every lane's (i, j) in the next cycle

  // Restoring division of the constant l (0 <= l <= LANES, SU bits, MSB first) by N: step
  // su (0 .. SU-1) brings down bit SU-1-su. Then per pass every lane advances its (i, j)
  // by (LANES / N, LANES % N) with one wrap of j.
  if (DYN != 0) begin : g_bt
    logic [7:0] su_q;
    logic [16*(LANES+1)-1:0] dv_rem_q, dv_quo_q, dv_rem_d, dv_quo_d;
    logic [16*LANES-1:0] li_q, lj_q, li_n, lj_n;
    logic [16*LANES-1:0] li_c, lj_c;  // every lane's (i, j) this cycle
    logic [16:0] dv_r2, lj_2;
    logic dv_ge, lj_wrap;
    logic [15:0] bt_q, bt_r;
    logic dv_step, li_step;         // the dividers step / the lanes advance this cycle
    always_comb begin
      bt_rdy = (su_q >= 8'(SU));
      for (int l = 0; l <= LANES; l++) begin
        // step 0 starts from remainder 0 and quotient 0 (no reset of these wide registers)
        dv_r2 = {(su_q == 8'd0) ? 16'd0 : dv_rem_q[16*l +: 16],
                 1'((32'(l) >> (32'(SU - 1) - 32'(su_q))) & 32'd1)};
        dv_ge = (dv_r2 >= {1'b0, n});
        dv_rem_d[16*l +: 16] = dv_ge ? 16'(dv_r2 - {1'b0, n}) : 16'(dv_r2);
        dv_quo_d[16*l +: 16] = {(su_q == 8'd0) ? 15'd0 : dv_quo_q[16*l +: 15], dv_ge};
      end
      bt_q = dv_quo_q[16*LANES +: 16];
      bt_r = dv_rem_q[16*LANES +: 16];
      for (int l = 0; l < LANES; l++) begin
        li_c[16*l +: 16] = (p_q == 16'd0) ? dv_quo_q[16*l +: 16] : li_q[16*l +: 16];
        lj_c[16*l +: 16] = (p_q == 16'd0) ? dv_rem_q[16*l +: 16] : lj_q[16*l +: 16];
        lj_2 = {1'b0, lj_c[16*l +: 16]} + {1'b0, bt_r};
        lj_wrap = (lj_2 >= {1'b0, n});
        lj_n[16*l +: 16] = lj_wrap ? 16'(lj_2 - {1'b0, n}) : 16'(lj_2);
        li_n[16*l +: 16] = li_c[16*l +: 16] + bt_q + 16'(lj_wrap);
      end
    end
    // A block of its own: p_d depends on the MAC's go, which depends on bt_rdy above.
    always_comb begin
      dv_step = run && mm && bt && !bt_rdy;  // (reset: run is 0)
      li_step = step && klast && !plast;
      for (int l = 0; l < LANES; l++) begin
        li_cn[16*l +: 16] = (p_d != 16'd0) ? (li_step ? li_n[16*l +: 16] : li_q[16*l +: 16]) :
                            dv_step ? dv_quo_d[16*l +: 16] : dv_quo_q[16*l +: 16];
        lj_cn[16*l +: 16] = (p_d != 16'd0) ? (li_step ? lj_n[16*l +: 16] : lj_q[16*l +: 16]) :
                            dv_step ? dv_rem_d[16*l +: 16] : dv_rem_q[16*l +: 16];
      end
    end
    always_ff @(posedge clk) begin
      if (!rst_n || !run) begin
        su_q <= 8'd0;
      end else if (dv_step) begin
        su_q <= su_q + 8'd1;
        dv_rem_q <= dv_rem_d;
        dv_quo_q <= dv_quo_d;
      end
      if (li_step) begin
        li_q <= li_n;
        lj_q <= lj_n;
      end
    end
  end else begin : g_no_bt
    assign bt_rdy = 1'b1;
    always_comb
      for (int l = 0; l < LANES; l++) begin  // per lane: a '0 of 16*LANES bits trips WIDTHCONCAT
        li_cn[16*l +: 16] = 16'd0;
        lj_cn[16*l +: 16] = 16'd0;
      end
  end

  // This cycle's working lanes.
  always_comb begin
    act = '0;
    if (mm && step)
      for (int l = 0; l < LANES; l++) act[l] = pbase_q + 32'(l) < mn;
  end

  // Next cycle's operand addresses, a function of `key` alone. With HOLD = 1 the unit keeps
  // last cycle's key and addresses and, while the key is the same (the MAC waits for a tile,
  // or the context is no matmul), holds the addresses instead of working them out for every
  // lane again: in the 2,048-lane units of arch/step_validation.yaml that was half of the
  // fabric's simulation time. sg_cu sets HOLD for its flat memory only, which no FPGA flow
  // synthesizes (sg_cu_mem header); a synthesized unit has no such registers.
  logic [31:0] abase_d, bbase_d, nmask;
  assign abase_d = sel_d ? 32'(abase1) : 32'(abase0);
  assign bbase_d = sel_d ? 32'(bbase1) : 32'(bbase0);
  assign nmask = (32'd1 << log2n) - 32'd1;
  localparam int OUT_W = 2 * MI * LANES + 2 * RB * LANES + 2 * LANES;
  logic hold;
  logic [OUT_W-1:0] held;
  if (HOLD != 0) begin : g_hold
    // (the lanes' (i, j) only with DYN: without, they are constant zeros, and a key of
    // 2 x 16 x LANES more bits costs its compare in every cycle)
    localparam int KEY_W = 2 + 16 + 5 + 32 + 32 + 32 + 16 + ((DYN != 0) ? 32 * LANES : 0);
    logic [KEY_W-1:0] key, key_q;
    if (DYN != 0) begin : g_key_bt
      assign key = {mm, bt, k, log2n, abase_d, bbase_d, pbase_d, k_d, li_cn, lj_cn};
    end else begin : g_key
      assign key = {mm, bt, k, log2n, abase_d, bbase_d, pbase_d, k_d};
    end
    logic held_ok;              // key_q and held are from last cycle (not the first after reset)
    always_ff @(posedge clk) begin
      key_q <= key;
      if (!hold) held <= {a_addr, b_addr, a_rot, b_rot, a_copy, b_copy};
      held_ok <= rst_n;
    end
    assign hold = held_ok && key == key_q;
  end else begin : g_no_hold
    assign hold = 1'b0;
    assign held = '0;
  end

  logic [31:0] mn_o, ai;        // lane output index (next cycle), a row
  logic [31:0] arow;            // lane's a row start, relative to the a bank (i K)
  logic [RB:0] ahead;           // ... its offset in its first beat (0: the row starts a beat)
  always_comb begin
    {a_addr, b_addr, a_rot, b_rot, a_copy, b_copy} = held;
    mn_o = 32'd0;
    ai = 32'd0;
    arow = 32'd0;
    ahead = '0;
    if (!hold) begin
      b_copy = '0;
      a_copy = '0;
      if (!mm) begin
        for (int l = 0; l < LANES; l++) begin  // per lane: a '0 of MI*LANES bits trips WIDTHCONCAT
          a_addr[MI*l +: MI] = '0;
          b_addr[MI*l +: MI] = '0;
          a_rot[RB*l +: RB] = '0;
          b_rot[RB*l +: RB] = '0;
        end
      end else begin
        // Next cycle's operands (whether or not the MAC works then: a read costs nothing).
        // One address per operand (muxed): two exclusive reads would let Yosys `share` merge
        // them into a cell that feeds its own select.
        for (int l = 0; l < LANES; l++) begin
          mn_o = pbase_d + 32'(l);
          ai = bt ? 32'(li_cn[16*l +: 16]) : (mn_o >> log2n);
          arow = ai * 32'(k);
          a_addr[MI*l +: MI] = MI'(abase_d + arow + 32'(k_d));
          // A_COPIES = 2: word k of row i is in the row's head while it shares the beat that
          // row i - 1 began (the a bank's base is whole beats)
          ahead = {1'b0, arow[RB-1:0]};
          a_copy[l] = A_COPIES > 1 && ahead != '0 && 32'(ahead) + 32'(k_d) < 32'(W);
          a_rot[RB*l +: RB] = RB'(ai);
        end
        for (int l = 0; l < LANES; l++) begin
          mn_o = pbase_d + 32'(l);
          b_addr[MI*l +: MI] = MI'(bt ? (bbase_d + 32'(lj_cn[16*l +: 16]) * 32'(k) + 32'(k_d)) :
                                        (bbase_d + (32'(k_d) << log2n) + (mn_o & nmask)));
          b_rot[RB*l +: RB] = bt ? RB'(lj_cn[16*l +: 16]) : RB'(0);
          // bt: j values below lane 0's have wrapped past N (the pass's second run of rows)
          b_copy[l] = bt && (lj_cn[16*l +: 16] < lj_cn[15:0]);
        end
      end
    end
  end
endmodule
