// sg_sec_seq: the fabric's section barrier (docs/hardware.md section 2, "Sections").
//
// A graph larger than the fabric runs in sections; section k runs from context k mod NCTX
// of every unit. Section k+1 starts only when section k has finished everywhere: no unit
// is busy (each has finished its context of section k, or had none) and every DRAM write
// accepted so far has completed (`wr_idle`, so the next section reads what this one
// stored). It also needs its configuration: `loaded` counts the sections whose context
// words are in the fabric. The host writes a later section into the context of a finished
// one while the fabric runs, then raises `loaded` (the configuration words SECTIONS_LOADED
// and SECTIONS of sg_top).
//
// Timing: `start` in cycle t starts section 0 in the same cycle (ustart, units RUN from
// t+2, as without sections). The barrier releases section k+1 (ustart) in the first cycle
// in which no unit is busy, wr_idle holds and section k+1 is loaded; `settle_q` skips the
// cycle after a start, whose busy bits do not show it yet. `done` (combinational) is the
// first cycle in which the last section has no busy unit. `cfg_wait`: the barrier would
// release but the next section is not loaded (cycles a reload exposes).
module sg_sec_seq #(
  parameter int NCTX = 1,
  parameter int NU = 1
) (
  input  logic clk,
  input  logic rst_n,
  input  logic start,
  input  logic [NU-1:0] busy,     // sg_ctx_seq busy of every unit
  input  logic wr_idle,           // no DRAM write in flight
  input  logic [15:0] sections,   // sections of the program (0 counts as 1)
  input  logic [15:0] loaded,     // sections whose configuration is in the fabric
  output logic ustart,            // start every unit's context `uctx`
  output logic [((NCTX > 1) ? $clog2(NCTX) : 1)-1:0] uctx,
  output logic done,
  output logic cfg_wait,
  output logic [15:0] sec         // the section running now
);
  localparam int CTXW = (NCTX > 1) ? $clog2(NCTX) : 1;

  logic [15:0] sec_q;
  logic [CTXW-1:0] ctx_q, nxt_ctx;
  logic run_q, settle_q;
  logic idle, last, adv;

  assign idle = run_q && !settle_q && !start && (busy == '0);
  assign last = ({16'd0, sec_q} + 32'd1) >= {16'd0, sections};
  assign adv = idle && !last && wr_idle && (({16'd0, sec_q} + 32'd1) < {16'd0, loaded});
  assign nxt_ctx = (32'(ctx_q) == NCTX - 1) ? '0 : ctx_q + 1'b1;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      sec_q <= '0;
      ctx_q <= '0;
      run_q <= 1'b0;
      settle_q <= 1'b0;
    end else if (start) begin
      sec_q <= '0;
      ctx_q <= '0;
      run_q <= 1'b1;
      settle_q <= 1'b1;
    end else if (adv) begin
      sec_q <= sec_q + 16'd1;
      ctx_q <= nxt_ctx;
      settle_q <= 1'b1;
    end else begin
      settle_q <= 1'b0;
    end
  end

  assign ustart = start || adv;
  assign uctx = start ? '0 : nxt_ctx;
  assign done = idle && last;
  assign cfg_wait = idle && !last && wr_idle && !adv;
  assign sec = sec_q;
endmodule
