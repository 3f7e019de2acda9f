// sg_ctx_seq: the context sequencer every unit (sg_ag, sg_cu, sg_mu) runs its contexts with
// (docs/hardware.md section 2).
//
// Two modes, chosen by the `sectioned` input:
// - sectioned = 0 (a unit on its own, as in the RTL unit tests): `start` picks the lowest
//   enabled context, and `fin` (the running context has finished) the next enabled one
//   after it; with none left the unit is idle and `done` rises.
// - sectioned = 1 (inside a fabric, driven by sg_sec_seq): `start` runs exactly context
//   `start_ctx` if it is enabled (otherwise the unit stays idle for that section), and `fin`
//   returns to idle: the fabric's section barrier decides when the next context runs.
// A chosen context enters INIT for one cycle, then RUN until `fin`. So `start` in cycle t
// gives RUN from t+2, and a unit-local context switch costs one idle cycle (INIT).
//
// Ports: `go` / `go_ctx` are combinational from start, start_ctx, fin and registers (the
// context that enters INIT at this edge); everything else comes from registers.
module sg_ctx_seq #(
  parameter int NCTX = 1
) (
  input  logic clk,
  input  logic rst_n,
  input  logic [NCTX-1:0] en,   // enable bit of every context
  input  logic sectioned,       // 1: the fabric's section barrier drives this unit
  input  logic start,
  input  logic [((NCTX > 1) ? $clog2(NCTX) : 1)-1:0] start_ctx,  // sectioned: the context `start` runs
  input  logic fin,             // the running context ends in this cycle
  output logic [((NCTX > 1) ? $clog2(NCTX) : 1)-1:0] ctx,  // the running (or last run) context
  output logic run,             // RUN: the context's datapath works (not IDLE, not INIT)
  output logic busy,            // INIT or RUN
  output logic done,
  output logic go,
  output logic [((NCTX > 1) ? $clog2(NCTX) : 1)-1:0] go_ctx
);
  localparam int CTXW = (NCTX > 1) ? $clog2(NCTX) : 1;
  localparam logic [1:0] S_IDLE = 2'd0, S_INIT = 2'd1, S_RUN = 2'd2;

  logic [1:0] st_q;
  logic [CTXW-1:0] ctx_q;
  logic done_q;
  logic [CTXW:0] from;
  logic exact;  // sectioned start: only context `from` itself
  logic found;

  always_comb begin
    exact = sectioned && start;
    from = start ? (sectioned ? {1'b0, start_ctx} : '0) : {1'b0, ctx_q} + 1'b1;
    found = 1'b0;
    go_ctx = '0;
    for (int c = NCTX - 1; c >= 0; c--) begin
      if (en[c] && (exact ? (c == 32'(from)) : (c >= 32'(from)))) begin
        found = 1'b1;
        go_ctx = CTXW'(c);
      end
    end
    if (sectioned && !start) found = 1'b0;  // fin: back to idle, the barrier chooses
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      st_q <= S_IDLE;
      ctx_q <= '0;
      done_q <= 1'b0;
    end else if (start || fin) begin
      done_q <= 1'b0;
      if (found) begin
        ctx_q <= go_ctx;
        st_q <= S_INIT;
      end else begin
        st_q <= S_IDLE;
        done_q <= 1'b1;
      end
    end else if (st_q == S_INIT) begin
      st_q <= S_RUN;
    end
  end

  assign go = (start || fin) && found;
  assign done = done_q;
  assign ctx = ctx_q;
  assign run = (st_q == S_RUN);
  assign busy = (st_q != S_IDLE);
endmodule
