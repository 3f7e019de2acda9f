// sg_fp_pkg: bit-exact fp32 arithmetic shared with the C++ model (sim/common/fp.cpp).
//
// Rules (docs/hardware.md section 3), identical to x86 SSE with MXCSR.FTZ|DAZ set:
//   * IEEE-754 binary32, round to nearest, ties to even;
//   * subnormal inputs are read as zero of the same sign (DAZ);
//   * a result whose magnitude, rounded to 24 bits with an unbounded exponent, is below
//     2^-126 becomes a zero with the sign of the exact result (FTZ, tininess after rounding);
//   * overflow gives infinity; every NaN result is the canonical quiet NaN 32'h7FC00000;
//   * inf - inf and 0 * inf give the canonical NaN; x + (-x) = +0, (-0) + (-0) = -0.
//
// Tool subset (docs/architecture.md#sv-subset): no `return`, results are assigned to
// the function name; no import, callers write sg_fp_pkg::fp32_add(...); no '{} patterns,
// no packed 2-D arrays, no loops (leading zeros are counted by an explicit tree or a 5-stage
// log shifter), so the functions stay small when inlined into a for loop over many lanes.
package sg_fp_pkg;

  localparam logic [31:0] FP32_QNAN = 32'h7FC0_0000;

  // Sigmoid table key (mirrors kSigmoidELo/kSigmoidEHi/... in sim/common/fp.hpp; the unit
  // test "sg_fp_pkg sigmoid constants match C++" checks SIG_E_LO .. SIG_ROW_SAT).
  // index = {sign, row[3:0], top 6 mantissa bits}; row = exponent - SIG_E_LO for
  // 2^SIG_E_LO <= |x| < 2^(SIG_E_HI+1); row SIG_ROW_SMALL (|x| < 2^SIG_E_LO, incl. zero and
  // subnormals: value 0.5) and row SIG_ROW_SAT (|x| >= 2^(SIG_E_HI+1), inf, NaN: value 1.0
  // for sign 0, 0.0 for sign 1) use mantissa field 0.
  localparam int SIG_E_LO = -10;
  localparam int SIG_E_HI = 3;
  localparam int SIG_MANT_BITS = 6;
  localparam int SIG_IDX_W = 1 + 4 + SIG_MANT_BITS;
  localparam logic [3:0] SIG_ROW_SMALL = 4'd14;
  localparam logic [3:0] SIG_ROW_SAT = 4'd15;
  localparam logic [7:0] SIG_BEXP_LO = 8'(127 + SIG_E_LO);      // first biased exponent in the table
  localparam logic [7:0] SIG_BEXP_SAT = 8'(127 + SIG_E_HI + 1); // first saturated biased exponent

  // {zero, inf, nan} of an operand; a subnormal reads as zero (DAZ).
  function automatic logic [2:0] fp32_class(input logic [30:0] x);  // x = the operand's [30:0]
    fp32_class = {x[30:23] == 8'd0, x[30:23] == 8'hFF && x[22:0] == 23'd0,
                  x[30:23] == 8'hFF && x[22:0] != 23'd0};
  endfunction

  // Rounds a normalised significand 1.frac (plus guard bit grd and sticky bit stk, the OR
  // of everything below grd) to nearest even and packs it. ex is the biased exponent of the
  // leading 1, unbounded (may be <= 0 or >= 255 here; those flush to zero / overflow).
  // The rounding carry (frac all ones, rounded up) and the range checks are formed beside
  // the increment rather than after it, which keeps them off the increment's carry chain.
  function automatic logic [31:0] fp32_round_pack(input logic sgn, input logic signed [9:0] ex,
                                                  input logic [22:0] frac, input logic grd,
                                                  input logic stk);
    logic rnd, cy;
    logic [22:0] m;
    logic [7:0] e1;
    rnd = grd & (stk | frac[0]);
    m = frac + {22'd0, rnd};
    // Carry out of rounding: the significand becomes 1.000..0 (m is already zero).
    cy = rnd & (&frac);
    e1 = ex[7:0] + 8'd1;
    if (ex >= 10'sd255 || (ex == 10'sd254 && cy)) fp32_round_pack = {sgn, 8'hFF, 23'd0};
    else if (ex < 10'sd0 || (ex == 10'sd0 && !cy)) fp32_round_pack = {sgn, 31'd0};
    else fp32_round_pack = {sgn, cy ? e1 : ex[7:0], m};
  endfunction

  // Leading zeros (0 .. 3) of a nonzero nibble from its top three bits (a nibble that is
  // zero above bit 0 has 3; a zero nibble's count is not read).
  function automatic logic [1:0] lzc4(input logic [3:1] v);
    lzc4 = {v[3:2] == 2'd0, !v[3] & (v[2] | !v[1])};
  endfunction

  // Leading zeros of the 32-bit value {v, 1'b1} (0 .. 31), as a tree of 4-bit counts: every
  // count bit comes from v itself, not from a shifted copy, so the count is a few LUTs deep.
  function automatic logic [4:0] lzc32(input logic [31:1] v);
    logic [7:1] z;              // nibble i (bits 4i+3..4i) is zero (nibble 0 never is)
    logic [15:0] c;             // its count, 2 bits per nibble
    logic [3:1] z8;             // byte j is zero (byte 0's flag is not needed)
    logic [11:0] c8;            // its count, 3 bits per byte
    logic z16;                  // the upper half is zero
    logic [7:0] c16;
    z = {v[31:28] == 4'd0, v[27:24] == 4'd0, v[23:20] == 4'd0, v[19:16] == 4'd0,
         v[15:12] == 4'd0, v[11:8] == 4'd0, v[7:4] == 4'd0};
    c = {lzc4(v[31:29]), lzc4(v[27:25]), lzc4(v[23:21]), lzc4(v[19:17]),
         lzc4(v[15:13]), lzc4(v[11:9]), lzc4(v[7:5]), lzc4(v[3:1])};
    z8 = {z[7] & z[6], z[5] & z[4], z[3] & z[2]};
    c8 = {z[7] ? {1'b1, c[13:12]} : {1'b0, c[15:14]}, z[5] ? {1'b1, c[9:8]} : {1'b0, c[11:10]},
          z[3] ? {1'b1, c[5:4]} : {1'b0, c[7:6]}, z[1] ? {1'b1, c[1:0]} : {1'b0, c[3:2]}};
    z16 = z8[3] & z8[2];
    c16 = {z8[3] ? {1'b1, c8[8:6]} : {1'b0, c8[11:9]}, z8[1] ? {1'b1, c8[2:0]} : {1'b0, c8[5:3]}};
    lzc32 = z16 ? {1'b1, c16[3:0]} : {1'b0, c16[7:4]};
  endfunction

  // a + b where an operand is a NaN, an infinity or a zero (a subnormal reads as zero);
  // `normal`, the sum of two normal numbers, otherwise.
  function automatic logic [31:0] fp32_add_special(input logic [31:0] a, input logic [31:0] b,
                                                   input logic [31:0] normal);
    logic a_zero, b_zero, a_inf, b_inf, a_nan, b_nan;
    {a_zero, a_inf, a_nan} = fp32_class(a[30:0]);
    {b_zero, b_inf, b_nan} = fp32_class(b[30:0]);
    if (a_nan || b_nan || (a_inf && b_inf && (a[31] ^ b[31]))) fp32_add_special = FP32_QNAN;
    else if (a_inf) fp32_add_special = a;
    else if (b_inf) fp32_add_special = b;
    else if (a_zero && b_zero) fp32_add_special = {a[31] & b[31], 31'd0};
    else if (a_zero) fp32_add_special = b;
    else if (b_zero) fp32_add_special = a;
    else fp32_add_special = normal;
  endfunction

  // a + b (binary32 bit patterns in and out). Two paths, computed side by side and one
  // chosen (the near/far or dual-path split of fast fp adders): the far path aligns the
  // smaller operand by the exponent difference and adds, with at most one bit of
  // normalisation before rounding; the near path subtracts operands whose exponents differ by
  // 0 or 1, whose difference is exact (no rounding) but may cancel many leading bits. Each
  // path is much shallower than one adder doing both shifts in series (fp32_add_sp); the
  // result is the same bit pattern.
  function automatic logic [31:0] fp32_add(input logic [31:0] a, input logic [31:0] b);
    logic sub, a_ge, eq, a1, b1, use_near;
    logic [8:0] dab, dba;       // ea - eb, eb - ea (bit 8: borrow)
    logic [31:0] x;             // far path: the operand with the larger exponent
    logic [22:0] yf;            // ... and the other's fraction
    logic [7:0] d;
    logic [4:0] dsh;
    logic [25:0] yh;
    logic [26:0] xm, ym;
    logic [27:0] s;
    logic [31:0] far, near;
    logic [25:0] n_ab;          // near path differences (n_ab[25]: b's significand is larger)
    logic [24:0] n_ba, n_aq, n_bp, r;
    logic [22:0] nf;            // the near result's fraction
    logic [4:0] lz;
    logic signed [9:0] ne;
    logic nsgn;
    sub = a[31] ^ b[31];
    dab = {1'b0, a[30:23]} - {1'b0, b[30:23]};
    dba = {1'b0, b[30:23]} - {1'b0, a[30:23]};
    a_ge = !dab[8];
    // Far path: align y (24-bit significand, then guard, round and sticky bits; the sticky
    // bit is the OR of the bits the shift drops, masked beside the shift, not after it).
    x = a_ge ? a : b;
    yf = a_ge ? b[22:0] : a[22:0];
    // AND-OR selects, not ?:, where the choices come from adders: Yosys's share and opt_share
    // merge adders whose results one mux chooses between into a single adder behind the
    // select, which puts the select logic (here the whole near path) in series with a carry
    // chain.
    d = ({8{a_ge}} & dab[7:0]) | ({8{!a_ge}} & dba[7:0]);
    dsh = (d > 8'd26) ? 5'd26 : d[4:0];
    yh = {1'b1, yf, 2'b00};
    ym = {yh >> dsh, |(yh & ~({26{1'b1}} << dsh))};
    xm = {1'b1, x[22:0], 3'b000};
    s = sub ? ({1'b0, xm} - {1'b0, ym}) : ({1'b0, xm} + {1'b0, ym});
    // Normalise by at most one bit (carry out: right; one bit of cancellation: left). The
    // three cases are rounded side by side and the carry-out picks one: rounding after a
    // normalisation mux is 5 LUT levels deeper on xc7 (about 115 LUTs fewer).
    if (s[27]) far = fp32_round_pack(x[31], $signed({2'b00, x[30:23]}) + 10'sd1, s[26:4], s[3], |s[2:0]);
    else if (s[26]) far = fp32_round_pack(x[31], $signed({2'b00, x[30:23]}), s[25:3], s[2], |s[1:0]);
    else far = fp32_round_pack(x[31], $signed({2'b00, x[30:23]}) - 10'sd1, s[24:2], s[1], s[0]);
    // Near path (sub, exponents equal or one apart): 25-bit fixed point, the larger
    // exponent's leading 1 at bit 24; all four differences at once, one chosen.
    n_ab = {2'b01, a[22:0], 1'b0} - {2'b01, b[22:0], 1'b0};
    n_ba = {1'b1, b[22:0], 1'b0} - {1'b1, a[22:0], 1'b0};
    n_aq = {1'b1, a[22:0], 1'b0} - {1'b0, 1'b1, b[22:0]};
    n_bp = {1'b1, b[22:0], 1'b0} - {1'b0, 1'b1, a[22:0]};
    eq = (a[30:23] == b[30:23]);
    a1 = (dab == 9'd1);
    b1 = (dba == 9'd1);
    r = ({25{eq & !n_ab[25]}} & n_ab[24:0]) | ({25{eq & n_ab[25]}} & n_ba) |
        ({25{!eq & a1}} & n_aq) | ({25{!eq & !a1}} & n_bp);
    nsgn = (eq ? n_ab[25] : !a1) ? b[31] : a[31];
    lz = lzc32({r, 6'd0});
    nf = 23'((r << lz) >> 1);  // the leading 1 to bit 24; bit 0 is 0 (an exact result)
    ne = $signed({2'b00, x[30:23]}) - $signed({5'd0, lz});
    if (r == 25'd0) near = 32'd0;  // exact cancellation: +0
    else if (ne <= 10'sd0) near = {nsgn, 31'd0};
    else near = {nsgn, ne[7:0], nf};
    // With exponents one apart and no cancellation the difference has 25 significant bits
    // and must round: the far path's case.
    use_near = sub && (eq || ((a1 || b1) && !r[24]));
    fp32_add = fp32_add_special(a, b, ({32{use_near}} & near) | ({32{!use_near}} & far));
  endfunction

  // a + b, the same function as fp32_add with one path: align, add, normalise by a log
  // shifter, round, all in series: 594 LUTs and 44 levels on xc7 against fp32_add's 860 and 29
  // (docs/results/fpga_lane.csv); the compute unit's choice with NEAR_FAR = 0 (arch
  // compute_unit.fp_adder: single_path), for parts where area is the limit.
  function automatic logic [31:0] fp32_add_sp(input logic [31:0] a, input logic [31:0] b);
    logic a_zero, b_zero, a_inf, b_inf, a_nan, b_nan;
    logic swap, sub;
    logic [31:0] x, y;
    logic [7:0] d;
    logic [4:0] dsh;
    logic [49:0] yw;
    logic [26:0] xm, ym, n;
    logic [27:0] s;
    logic [4:0] lz;
    logic signed [9:0] e;
    // Normal path: x is the operand of larger magnitude (integer compare of |bits|).
    swap = (b[30:0] > a[30:0]);
    x = swap ? b : a;
    y = swap ? a : b;
    sub = x[31] ^ y[31];
    d = x[30:23] - y[30:23];
    dsh = (d > 8'd26) ? 5'd26 : d[4:0];
    // Align y: 24-bit significand, then guard, round and sticky bits.
    yw = {1'b1, y[22:0], 26'd0} >> dsh;
    ym = {yw[49:24], |yw[23:0]};
    xm = {1'b1, x[22:0], 3'b000};
    s = sub ? ({1'b0, xm} - {1'b0, ym}) : ({1'b0, xm} + {1'b0, ym});
    // Normalise: carry out shifts right by one, cancellation shifts left (log shifter).
    n = s[26:0];
    lz = 5'd0;
    if (n[26:11] == 16'd0) begin n = {n[10:0], 16'd0}; lz = lz + 5'd16; end
    if (n[26:19] == 8'd0) begin n = {n[18:0], 8'd0}; lz = lz + 5'd8; end
    if (n[26:23] == 4'd0) begin n = {n[22:0], 4'd0}; lz = lz + 5'd4; end
    if (n[26:25] == 2'd0) begin n = {n[24:0], 2'd0}; lz = lz + 5'd2; end
    if (!n[26]) begin n = {n[25:0], 1'b0}; lz = lz + 5'd1; end
    e = $signed({2'b00, x[30:23]}) - $signed({5'd0, lz});
    // The special cases inline, not through fp32_add_special: that small change in the
    // netlist left nextpnr unable to route test fpga_pnr_ice40's compute unit (88 % of an
    // HX8K) in 600 s, where this form routes in about 90 s.
    {a_zero, a_inf, a_nan} = fp32_class(a[30:0]);
    {b_zero, b_inf, b_nan} = fp32_class(b[30:0]);
    if (a_nan || b_nan || (a_inf && b_inf && (a[31] ^ b[31]))) fp32_add_sp = FP32_QNAN;
    else if (a_inf) fp32_add_sp = a;
    else if (b_inf) fp32_add_sp = b;
    else if (a_zero && b_zero) fp32_add_sp = {a[31] & b[31], 31'd0};
    else if (a_zero) fp32_add_sp = b;
    else if (b_zero) fp32_add_sp = a;
    else if (s == 28'd0) fp32_add_sp = 32'd0;  // exact cancellation: +0
    else if (s[27])
      fp32_add_sp = fp32_round_pack(x[31], $signed({2'b00, x[30:23]}) + 10'sd1, s[26:4], s[3], |s[2:0]);
    else fp32_add_sp = fp32_round_pack(x[31], e, n[25:3], n[2], |n[1:0]);
  endfunction

  // a + b, the simulation body of the adders (fp32_add_by and, through it, every adder of the
  // compute unit under SG_SIM_BODY): the function of fp32_add_sp written for a simulator that
  // evaluates every statement it reaches: the special operands first, so the normal path runs
  // only for two normal numbers, no helper calls, and rounding as one add into the packed
  // exponent and fraction (a carry out of the fraction bumps the exponent, 254 -> 255 gives
  // the infinity). Yosys proves it equal to fp32_add and fp32_add_sp (tests/formal/equiv_prims.sh).
  function automatic logic [31:0] fp32_add_sim(input logic [31:0] a, input logic [31:0] b);
    logic [31:0] x, y;
    logic [7:0] d;
    logic [49:0] yw;
    logic [26:0] xm, ym;
    logic [27:0] s;
    logic [9:0] e;             // the leading 1's biased exponent + 32 (7 .. 287: never below 0)
    logic [22:0] f;
    logic g, t;
    logic [30:0] r;
    if (a[30:23] == 8'hFF || b[30:23] == 8'hFF) begin
      if ((a[30:23] == 8'hFF && a[22:0] != 23'd0) || (b[30:23] == 8'hFF && b[22:0] != 23'd0) ||
          (a[30:0] == b[30:0] && a[31] != b[31])) fp32_add_sim = FP32_QNAN;
      else fp32_add_sim = (a[30:23] == 8'hFF) ? a : b;
    end else if (a[30:23] == 8'd0) fp32_add_sim = (b[30:23] == 8'd0) ? {a[31] & b[31], 31'd0} : b;
    else if (b[30:23] == 8'd0) fp32_add_sim = a;
    else begin
      if (b[30:0] > a[30:0]) begin x = b; y = a; end
      else begin x = a; y = b; end
      d = x[30:23] - y[30:23];
      yw = {1'b1, y[22:0], 26'd0} >> ((d > 8'd26) ? 8'd26 : d);
      ym = {yw[49:24], yw[23:0] != 24'd0};
      xm = {1'b1, x[22:0], 3'b000};
      s = (x[31] != y[31]) ? {1'b0, xm} - {1'b0, ym} : {1'b0, xm} + {1'b0, ym};
      e = {2'b00, x[30:23]} + 10'd32;
      if (s[27]) begin f = s[26:4]; g = s[3]; t = s[2:0] != 3'd0; e = e + 10'd1; end
      else begin
        if (s[26:11] == 16'd0) begin s = s << 16; e = e - 10'd16; end
        if (s[26:19] == 8'd0) begin s = s << 8; e = e - 10'd8; end
        if (s[26:23] == 4'd0) begin s = s << 4; e = e - 10'd4; end
        if (s[26:25] == 2'd0) begin s = s << 2; e = e - 10'd2; end
        if (!s[26]) begin s = s << 1; e = e - 10'd1; end
        f = s[25:3]; g = s[2]; t = s[1:0] != 2'd0;
      end
      r = {8'(e - 10'd32), f} + {30'd0, g & (t | f[0])};
      if (s == 28'd0) fp32_add_sim = 32'd0;                    // exact cancellation: +0
      else if (e >= 10'd287 || (e >= 10'd32 && r[30:23] == 8'hFF)) fp32_add_sim = {x[31], 8'hFF, 23'd0};
      else if (e < 10'd32 || (e == 10'd32 && r[30:23] == 8'd0)) fp32_add_sim = {x[31], 31'd0};
      else fp32_add_sim = {x[31], r};
    end
  endfunction

  // a + b by the adder a compute unit's NEAR_FAR parameter chooses (the two give the same bit
  // patterns; sg_cu.sv header). The simulation body (SG_SIM_BODY, flows/verilator_build.sh)
  // is fp32_add_sim whatever NEAR_FAR says: Verilator evaluates both of fp32_add's paths,
  // and Yosys proves all three adders equal (tests/formal/equiv_prims.sh).
  /* verilator lint_off UNUSEDSIGNAL */  // near_far: not read by the simulation body
  function automatic logic [31:0] fp32_add_by(input int near_far, input logic [31:0] a, input logic [31:0] b);
  /* verilator lint_on UNUSEDSIGNAL */
`ifdef SG_SIM_BODY
    fp32_add_by = fp32_add_sim(a, b);
`else
    fp32_add_by = (near_far != 0) ? fp32_add(a, b) : fp32_add_sp(a, b);
`endif
  endfunction

  // a * b, the simulation bodies of fp32_mul and bf16_mul (SG_SIM_BODY), written as
  // fp32_add_sim is: special operands first, no helper calls, rounding as one add into the
  // packed exponent and fraction. e is the product's biased exponent + 128 (3 .. 511). The
  // significand product is the same expression as fp32_mul's, so that Yosys, proving the two
  // equal (tests/formal/equiv_prims.sh), finds one multiplier on both sides.
  function automatic logic [31:0] fp32_mul_sim(input logic [31:0] a, input logic [31:0] b);
    logic [47:0] p;
    logic [9:0] e;
    logic [22:0] f;
    logic g, t;
    logic [30:0] r;
    if (a[30:23] == 8'hFF || b[30:23] == 8'hFF)  // an infinity times zero, or a NaN: NaN
      fp32_mul_sim = ((a[30:23] == 8'hFF && a[22:0] != 23'd0) || (b[30:23] == 8'hFF && b[22:0] != 23'd0) ||
                      a[30:23] == 8'd0 || b[30:23] == 8'd0) ? FP32_QNAN : {a[31] ^ b[31], 8'hFF, 23'd0};
    else if (a[30:23] == 8'd0 || b[30:23] == 8'd0) fp32_mul_sim = {a[31] ^ b[31], 31'd0};
    else begin
      p = {24'd0, 1'b1, a[22:0]} * {24'd0, 1'b1, b[22:0]};
      e = {2'b00, a[30:23]} + {2'b00, b[30:23]} + 10'd1;
      if (p[47]) begin f = p[46:24]; g = p[23]; t = p[22:0] != 23'd0; e = e + 10'd1; end
      else begin f = p[45:23]; g = p[22]; t = p[21:0] != 22'd0; end
      r = {8'(e - 10'd128), f} + {30'd0, g & (t | f[0])};
      if (e >= 10'd383 || (e >= 10'd128 && r[30:23] == 8'hFF)) fp32_mul_sim = {a[31] ^ b[31], 8'hFF, 23'd0};
      else if (e < 10'd128 || (e == 10'd128 && r[30:23] == 8'd0)) fp32_mul_sim = {a[31] ^ b[31], 31'd0};
      else fp32_mul_sim = {a[31] ^ b[31], r};
    end
  endfunction
  // bf16 operands: the 8 x 8-bit significand product is exact, so nothing rounds.
  /* verilator lint_off UNUSEDSIGNAL */  // the low 16 bits of each operand: not read (bf16)
  function automatic logic [31:0] bf16_mul_sim(input logic [31:0] a, input logic [31:0] b);
  /* verilator lint_on UNUSEDSIGNAL */
    logic [15:0] p;
    logic [9:0] e;
    if (a[30:23] == 8'hFF || b[30:23] == 8'hFF)
      bf16_mul_sim = ((a[30:23] == 8'hFF && a[22:16] != 7'd0) || (b[30:23] == 8'hFF && b[22:16] != 7'd0) ||
                      a[30:23] == 8'd0 || b[30:23] == 8'd0) ? FP32_QNAN : {a[31] ^ b[31], 8'hFF, 23'd0};
    else if (a[30:23] == 8'd0 || b[30:23] == 8'd0) bf16_mul_sim = {a[31] ^ b[31], 31'd0};
    else begin
      p = {8'd0, 1'b1, a[22:16]} * {8'd0, 1'b1, b[22:16]};
      e = {2'b00, a[30:23]} + {2'b00, b[30:23]} + 10'd1 + {9'd0, p[15]};
      if (e >= 10'd383) bf16_mul_sim = {a[31] ^ b[31], 8'hFF, 23'd0};
      else if (e <= 10'd128) bf16_mul_sim = {a[31] ^ b[31], 31'd0};
      else bf16_mul_sim = {a[31] ^ b[31], 8'(e - 10'd128), p[15] ? {p[14:0], 8'd0} : {p[13:0], 9'd0}};
    end
  endfunction

  // a * b (binary32 bit patterns in and out).
  function automatic logic [31:0] fp32_mul(input logic [31:0] a, input logic [31:0] b);
`ifdef SG_SIM_BODY
    fp32_mul = fp32_mul_sim(a, b);
`else
    logic a_zero, b_zero, a_inf, b_inf, a_nan, b_nan, sgn;
    logic [47:0] p;
    logic signed [9:0] e;
    {a_zero, a_inf, a_nan} = fp32_class(a[30:0]);
    {b_zero, b_inf, b_nan} = fp32_class(b[30:0]);
    sgn = a[31] ^ b[31];
    p = {24'd0, 1'b1, a[22:0]} * {24'd0, 1'b1, b[22:0]};
    e = $signed({2'b00, a[30:23]}) + $signed({2'b00, b[30:23]}) - 10'sd127;
    if (a_nan || b_nan || (a_inf && b_zero) || (a_zero && b_inf)) fp32_mul = FP32_QNAN;
    else if (a_inf || b_inf) fp32_mul = {sgn, 8'hFF, 23'd0};
    else if (a_zero || b_zero) fp32_mul = {sgn, 31'd0};
    else if (p[47]) fp32_mul = fp32_round_pack(sgn, e + 10'sd1, p[46:24], p[23], |p[22:0]);
    else fp32_mul = fp32_round_pack(sgn, e, p[45:23], p[22], |p[21:0]);
`endif
  endfunction

  // The low 16 bits of bf16_mul's operands and the low 17 bits of sigmoid_index's argument
  // are ignored by definition (bf16 truncation, 6-bit table key), so UNUSEDSIGNAL is waived
  // for these two functions only.
  /* verilator lint_off UNUSEDSIGNAL */

  // bfloat16 product: both operands keep only their upper 16 bits, then fp32_mul (the
  // 8-bit x 8-bit significand product is exact; only range over/underflow rounds).
  function automatic logic [31:0] bf16_mul(input logic [31:0] a, input logic [31:0] b);
`ifdef SG_SIM_BODY
    bf16_mul = bf16_mul_sim(a, b);
`else
    bf16_mul = fp32_mul({a[31:16], 16'd0}, {b[31:16], 16'd0});
`endif
  endfunction

  // Index of x in the sigmoid table (layout at SIG_* above); the value is
  // sg_sigmoid_lut::sg_sigmoid_lut(sigmoid_index(x)).
  function automatic logic [SIG_IDX_W-1:0] sigmoid_index(input logic [31:0] x);
    logic [3:0] row;
    row = x[26:23] - SIG_BEXP_LO[3:0];  // low 4 bits of (biased exponent - SIG_BEXP_LO)
    if (x[30:23] >= SIG_BEXP_SAT) sigmoid_index = {x[31], SIG_ROW_SAT, {SIG_MANT_BITS{1'b0}}};
    else if (x[30:23] < SIG_BEXP_LO) sigmoid_index = {x[31], SIG_ROW_SMALL, {SIG_MANT_BITS{1'b0}}};
    else sigmoid_index = {x[31], row, x[22-:SIG_MANT_BITS]};
  endfunction

  /* verilator lint_on UNUSEDSIGNAL */

  // exp (docs/hardware.md section 3; sim/common/fp.cpp fp32Exp): the integer steps after
  // t = fp32_mul(x, EXP_LOG2E), in two functions so that the compute unit can register
  // between them (sg_cu g_ahead): exp_key(exp_shift(xnan, t)) = {kind[1:0], biased
  // exponent[7:0], table row}: kind 0 = {1'b0, be, sg_attn_lut::exp_mant(row)}, 1 = +0,
  // 2 = +inf, 3 = the canonical NaN (x NaN; the caller passes x's NaN-ness as xnan); be and
  // the row mean nothing for kinds 1 to 3.
  // EXP_ROW_W mirrors kExpIndexBits.
  localparam int EXP_ROW_W = 10;
  // The compute unit multiplies by EXP_LOG2E with the multiplier it shares with silu and mul;
  // other users of this package (tests, the lane flow) do not: an explained UNUSEDPARAM waiver.
  /* verilator lint_off UNUSEDPARAM */
  localparam logic [31:0] EXP_LOG2E = 32'h3FB8_AA3B;
  /* verilator lint_on UNUSEDPARAM */
  // exp_shift: {kind[1:0] (0, 1 for t <= -128, 2 for t >= 128, 3 for NaN), tf}, tf the bits
  // 23 .. 16 - EXP_ROW_W of floor(t * 2^16): floor(t)'s eight bits and the row, nothing
  // below them. With M t's 24-bit significand (0 when t is 0 or subnormal) and sh = 134 - t's
  // exponent, floor(t * 2^16) is M >> sh for t >= 0 and -ceil(M / 2^sh) = ~((M - 1) >> sh)
  // for t < 0 (ceil(M / 2^s) - 1 = floor((M - 1) / 2^s) for M >= 1), so neither step has
  // the 24-bit negation of fp32Exp's -(mag + lost). The row comes out of a register in
  // sg_cu, so Yosys reads the table from block RAM.
  localparam int EXP_SH_W = EXP_ROW_W + 10;
  function automatic logic [EXP_SH_W-1:0] exp_shift(input logic xnan, input logic [31:0] t);
    logic [23:0] m;
    logic [EXP_ROW_W+7:0] q;
    logic [7:0] sh;
    logic neg;
    if (xnan) exp_shift = {2'd3, {(EXP_SH_W-2){1'b0}}};
    else if (t[30:23] >= 8'd134) exp_shift = {t[31] ? 2'd1 : 2'd2, {(EXP_SH_W-2){1'b0}}};
    else begin
      m = (t[30:23] == 8'd0) ? 24'd0 : {1'b1, t[22:0]};
      neg = t[31] && m != 24'd0;
      sh = 8'd134 - t[30:23];
      // sh <= 134: the shift by sh + 16 - EXP_ROW_W fits 8 bits, and 0 comes out from 24 on.
      q = (EXP_ROW_W + 8)'((neg ? m - 24'd1 : m) >> (sh + 8'(16 - EXP_ROW_W)));
      exp_shift = {2'd0, neg ? ~q : q};
    end
  endfunction
  // exp_key: |t| < 128 here, so floor(t) is the signed 8-bit value of floor(t * 2^16)'s bits
  // 23 .. 16 (-128 .. 127) and be = floor(t) + 127 lies in -1 .. 254. The row is s's row bits
  // whatever the kind (only kind 0 reads it), so that nothing stands between the register
  // and the table's address.
  function automatic logic [EXP_ROW_W+9:0] exp_key(input logic [EXP_SH_W-1:0] s);
    logic signed [9:0] be;
    be = $signed({{2{s[EXP_ROW_W+7]}}, s[EXP_ROW_W+7 -: 8]}) + 10'sd127;
    exp_key = {(s[EXP_SH_W-1 -: 2] != 2'd0) ? s[EXP_SH_W-1 -: 2] : (be <= 10'sd0) ? 2'd1 : 2'd0,
               be[7:0], s[EXP_ROW_W-1:0]};
  endfunction
  // exp's result from exp_key's kind and biased exponent (its top 10 bits) and the table's
  // mantissa at its row, sg_attn_lut::exp_mant(row): the caller reads the generated table.
  function automatic logic [31:0] exp_pack(input logic [9:0] kb, input logic [22:0] mant);
    exp_pack = (kb[9:8] == 2'd3) ? FP32_QNAN : (kb[9:8] == 2'd2) ? 32'h7F80_0000 :
               (kb[9:8] == 2'd1) ? 32'h0 : {1'b0, kb[7:0], mant};
  endfunction

  // recip (sim/common/fp.cpp fp32Recip) after its first multiply: 1/x from x, the seed r0
  // of x's significand y and p = fp32_mul(y, r0) (sg_cu computes p a cycle ahead). It is
  // fp32Recip's r1 = fp32_mul(r0, fp32_sub(2, p)) and packing, each written for the values
  // that occur, because as general fp32 operators they made the attention unit's longest
  // path (docs/results/fpga.md):
  // - p lies in [0.5, 1.5) (r0 is within 2^-9 of 1/y): 2 - p is an integer subtraction
  //   of p's significand, exact for p >= 1 and rounded to nearest even (one bit) for p < 1;
  // - r1 lies in [0.25, 1) (it is near 1/y, in (0.5, 1]; a few significands next to 2 give
  //   r1 just below 0.5): the result's exponent is 252 - x's or 253 - x's, chosen by r1's
  //   exponent bit 0, never above 252, so only the zero below 2^-126 remains to check.
  // tests/rtl/test_rtl_fp.cpp checks the whole function against fp32Recip for every
  // significand and every exponent; other p or r1 give wrong results. p's and r1's sign
  // bits and exponent bits other than the ones named are not read (explained UNUSEDSIGNAL).
  // recip_q and recip_pack are the two halves around the multiply r1 = fp32_mul(r0, q), which
  // sg_cu_word shares with rsqrt; recip_finish composes them for the tests.
  /* verilator lint_off UNUSEDSIGNAL */
  function automatic logic [31:0] recip_q(input logic [31:0] p);  // 2 - p
    logic [23:0] t;
    logic [22:0] f;
    t = 24'h80_0000 - {1'b0, p[22:0]};
    f = t[23:1] + {22'd0, t[1] & t[0]};
    if (p[23] == 1'b0) recip_q = {9'h07F, f};                       // p in [0.5, 1): 2 - p in (1, 1.5]
    else if (p[22:0] == 23'd0) recip_q = 32'h3F80_0000;             // p = 1
    else recip_q = {9'h07E, 23'(24'h80_0000 - {p[22:0], 1'b0})};    // p in (1, 1.5): 2 - p in (0.5, 1)
  endfunction
  function automatic logic [31:0] recip_pack(input logic [31:0] x, input logic [31:0] r1);
    logic [7:0] e_125, e_126;
    logic z_125, z_126;
    // Both exponents and both zero tests come from x alone, beside the multiply; r1's
    // exponent bit 0 picks (1: r1 in [0.25, 0.5), biased 125; 0: [0.5, 1), 126).
    e_125 = 8'd252 - x[30:23];
    e_126 = 8'd253 - x[30:23];
    z_125 = x[30:23] >= 8'd252;
    z_126 = x[30:23] >= 8'd253;
    if (x[30:23] == 8'hFF) recip_pack = (x[22:0] != 23'd0) ? FP32_QNAN : {x[31], 31'd0};
    else if (x[30:23] == 8'd0) recip_pack = {x[31], 8'hFF, 23'd0};
    else if (r1[23] ? z_125 : z_126) recip_pack = {x[31], 31'd0};
    else recip_pack = {x[31], r1[23] ? e_125 : e_126, r1[22:0]};
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */
  function automatic logic [31:0] recip_finish(input logic [31:0] x, input logic [31:0] r0, input logic [31:0] p);
    recip_finish = recip_pack(x, fp32_mul(r0, recip_q(p)));
  endfunction

  // rsqrt (sim/common/fp.cpp fp32Rsqrt) after its first multiply p = fp32_mul(z, h) (z: x's
  // significand scaled to [1, 4) by its exponent's parity, h: the row's half square
  // sg_attn_lut::rsqrt_hsq; sg_cu computes p a cycle ahead): r1 = fp32_mul(r0, rsqrt_q(p))
  // and rsqrt_pack(x, r1). Written for the values that occur, as recip's:
  // - p lies in [0.25, 1) (z r0^2 is within 2^-7 of 1, so p is near 0.5): 1.5 - p is exact
  //   in units of 2^-25, rounded once to nearest even (two bits from 1 up, one bit below);
  // - r1 is near 1/sqrt(z), in (0.5, 1], below by the Newton step (its exponent is 125, 126
  //   or 127 and is used whole): the result's exponent is r1's + 64 - (e + e[0]) / 2 for x's
  //   biased exponent e, 62 .. 190, so no result overflows or flushes.
  // tests/rtl/test_rtl_fp.cpp checks the whole function against fp32Rsqrt for every
  // significand at both parities and every exponent.
  /* verilator lint_off UNUSEDSIGNAL */
  function automatic logic [31:0] rsqrt_q(input logic [31:0] p);  // 1.5 - p
    logic [25:0] d;             // 1.5 - p in units of 2^-25 (1.5 = 3 * 2^24)
    logic [24:0] h;             // d / 2 rounded (q < 1)
    logic [23:0] g;             // d / 4 rounded (q >= 1)
    d = 26'h300_0000 - (p[23] ? {2'd0, 1'b1, p[22:0]} : {1'b0, 1'b1, p[22:0], 1'b0});
    h = d[25:1] + {24'd0, d[0] & d[1]};
    g = d[25:2] + {23'd0, d[1] & (d[0] | d[2])};
    if (d[25]) rsqrt_q = {9'h07F, g[22:0]};                         // q in [1, 1.5)
    else if (h[24]) rsqrt_q = 32'h3F80_0000;                        // rounds up to 1
    else rsqrt_q = {9'h07E, h[22:0]};                               // q in [0.5, 1)
  endfunction
  function automatic logic [31:0] rsqrt_pack(input logic [31:0] x, input logic [31:0] r1);
    logic [8:0] a;              // e + e[0]: even, 2 .. 254 for a normal x
    a = {1'b0, x[30:23]} + {8'd0, x[23]};
    if (x[30:23] == 8'hFF) rsqrt_pack = (x[22:0] != 23'd0 || x[31]) ? FP32_QNAN : 32'h0;
    else if (x[30:23] == 8'd0) rsqrt_pack = {x[31], 8'hFF, 23'd0};
    else if (x[31]) rsqrt_pack = FP32_QNAN;
    else rsqrt_pack = {1'b0, 8'(9'(r1[30:23]) + 9'd64 - {1'b0, a[8:1]}), r1[22:0]};
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // max (sim/common/fp.cpp fp32Max): canonical NaN if either is NaN, else the larger by
  // value on an order-preserving key (negatives reversed below the positives: -0 < +0).
  function automatic logic [31:0] fp32_max(input logic [31:0] a, input logic [31:0] b);
    logic [31:0] ka, kb;
    ka = a[31] ? ~a : {1'b1, a[30:0]};
    kb = b[31] ? ~b : {1'b1, b[30:0]};
    if ((a[30:23] == 8'hFF && a[22:0] != 23'd0) || (b[30:23] == 8'hFF && b[22:0] != 23'd0)) fp32_max = FP32_QNAN;
    else fp32_max = (ka >= kb) ? a : b;
  endfunction

endpackage
