// sg_fifo: valid/ready FIFO of DEPTH entries of WIDTH bits (docs/hardware.md section 4).
//
// * in_ready  = !full  and out_valid = !empty, both straight from registers (full_q,
//   empty_q), so neither depends combinationally on the other side's valid or ready.
// * out_data is the head entry (a mux of registers); it is meaningful while out_valid.
// * out_next is the entry that will be at the head in the next cycle (after this cycle's
//   push and pop; meaningful if the FIFO is not empty then). A consumer that reads a block
//   RAM with the head's data addresses it with out_next one cycle ahead (sg_cu's sigmoid).
// * A beat enters on a rising edge with in_valid && in_ready and leaves with
//   out_valid && out_ready. A full FIFO does not accept even when it is popped in the same
//   cycle (in_ready is the registered !full). Latency: a beat written at edge t is visible
//   at the output in the cycle after t.
// * DEPTH >= 1 (any value, not only powers of two). Reset: active-low, synchronous.
module sg_fifo #(
  parameter int WIDTH = 8,
  parameter int DEPTH = 2
) (
  input  logic             clk,
  input  logic             rst_n,
  input  logic             in_valid,
  output logic             in_ready,
  input  logic [WIDTH-1:0] in_data,
  output logic             out_valid,
  input  logic             out_ready,
  output logic [WIDTH-1:0] out_data,
  output logic [WIDTH-1:0] out_next
);
  localparam int AW = (DEPTH > 1) ? $clog2(DEPTH) : 1;  // pointer bits
  localparam int CW = $clog2(DEPTH + 1);                // count bits (0..DEPTH)
  localparam logic [AW-1:0] LAST = AW'(DEPTH - 1);

  logic [WIDTH-1:0] mem [0:DEPTH-1];
  logic [AW-1:0] wr_ptr, rd_ptr;
  logic [CW-1:0] count, count_next;
  logic full_q, empty_q;
  logic push, pop;
  logic [AW-1:0] rd_next;                               // rd_ptr after this cycle

  assign in_ready = !full_q;
  assign out_valid = !empty_q;
  assign out_data = mem[rd_ptr];
  assign push = in_valid && !full_q;
  assign pop = out_ready && !empty_q;
  // Pointers wrap at DEPTH (any depth, not only powers of two).
  function automatic logic [AW-1:0] inc(input logic [AW-1:0] p);
    inc = (p == LAST) ? '0 : p + AW'(1);
  endfunction
  assign rd_next = pop ? inc(rd_ptr) : rd_ptr;
  // The only push that lands at rd_next is into an empty FIFO, or into one popped to empty.
  assign out_next = (push && wr_ptr == rd_next) ? in_data : mem[rd_next];

  always_comb begin
    count_next = count;
    if (push && !pop) count_next = count + CW'(1);
    else if (pop && !push) count_next = count - CW'(1);
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      wr_ptr <= '0;
      rd_ptr <= '0;
      count <= '0;
      full_q <= 1'b0;
      empty_q <= 1'b1;
    end else begin
      if (push) wr_ptr <= inc(wr_ptr);
      rd_ptr <= rd_next;
      count <= count_next;
      full_q <= (count_next == CW'(DEPTH));
      empty_q <= (count_next == '0);
    end
  end

  always_ff @(posedge clk) begin
    if (push) mem[wr_ptr] <= in_data;
  end
endmodule
