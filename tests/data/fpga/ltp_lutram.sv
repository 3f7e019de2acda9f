// A 16 x 8 LUT-RAM with a deep write enable (test fpga_ltp_lutram): the write is clocked,
// so the depth report must not chain the enable's logic into the read data's adder.
module ltp_lutram (
  input  logic clk,
  input  logic [15:0] a, b,
  input  logic [3:0] ra, wa,
  output logic [7:0] q
);
  logic [7:0] m [0:15];
  logic we;
  assign we = (a + b) > 16'd1000 && (a - b) < 16'd77;
  always_ff @(posedge clk) if (we) m[wa] <= a[7:0] ^ b[7:0];
  assign q = m[ra] + a[7:0];
endmodule
