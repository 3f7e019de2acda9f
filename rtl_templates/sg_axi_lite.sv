// sg_axi_lite: the AXI4-Lite control slave of the AXI wrapper sg_axi_top (docs/axi.md).
//
// Register map (byte offsets, 32-bit registers; other offsets answer SLVERR):
//   0x00 CTRL      W  bit 0 = 1: start (section 0 begins; the cycle counter restarts)
//   0x04 STATUS    R  bit 0 done, bit 1 running, bit 2 an AXI master saw an error response
//   0x08 CYCLES    R  cycles from the start pulse (cycle 0) to the first cycle in which the
//                     fabric is done and every DRAM write has its B response; counts while
//                     running
//   0x0C SECTION   R  the section running now
//   0x10 CFG_ADDR  RW configuration word address of the next CFG_DATA write
//   0x14 CFG_DATA  W  writes configuration word CFG_ADDR, then CFG_ADDR += 1 (so a host
//                     writes CFG_ADDR once and then streams the bitstream)
//   0x18 ID        R  0x53544550 ("STEP")
// A write with wstrb other than 4'hF answers SLVERR and changes nothing. A write needs AW
// and W together (both ready in the cycle both are valid and no B is
// pending); one read at a time. Configuration words may be written while the fabric runs
// (the reload of an idle context, docs/hardware.md section 5).
module sg_axi_lite (
  input  logic        clk,
  input  logic        rst_n,
  input  logic [7:0]  s_axil_awaddr,
  input  logic        s_axil_awvalid,
  output logic        s_axil_awready,
  input  logic [31:0] s_axil_wdata,
  input  logic [3:0]  s_axil_wstrb,
  input  logic        s_axil_wvalid,
  output logic        s_axil_wready,
  output logic [1:0]  s_axil_bresp,
  output logic        s_axil_bvalid,
  input  logic        s_axil_bready,
  input  logic [7:0]  s_axil_araddr,
  input  logic        s_axil_arvalid,
  output logic        s_axil_arready,
  output logic [31:0] s_axil_rdata,
  output logic [1:0]  s_axil_rresp,
  output logic        s_axil_rvalid,
  input  logic        s_axil_rready,
  // fabric side
  output logic        cfg_we,
  output logic [23:0] cfg_addr,
  output logic [31:0] cfg_wdata,
  output logic        start,
  input  logic        done,
  input  logic        wr_idle,
  input  logic [15:0] section,
  input  logic        err
);
  localparam logic [1:0] OKAY = 2'b00, SLVERR = 2'b10;
  logic [23:0] ptr_q;
  logic running_q, done_q;
  logic [31:0] cyc_q;
  logic wr;
  assign wr = s_axil_awvalid && s_axil_wvalid && !s_axil_bvalid;
  assign s_axil_awready = wr;
  assign s_axil_wready = wr;
  assign s_axil_arready = !s_axil_rvalid;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      s_axil_bvalid <= 1'b0;
      s_axil_bresp <= OKAY;
      s_axil_rvalid <= 1'b0;
      s_axil_rresp <= OKAY;
      s_axil_rdata <= '0;
      ptr_q <= '0;
      cfg_we <= 1'b0;
      cfg_addr <= '0;
      cfg_wdata <= '0;
      start <= 1'b0;
      running_q <= 1'b0;
      done_q <= 1'b0;
      cyc_q <= '0;
    end else begin
      cfg_we <= 1'b0;
      start <= 1'b0;
      if (s_axil_bvalid && s_axil_bready) s_axil_bvalid <= 1'b0;
      if (wr) begin
        s_axil_bvalid <= 1'b1;
        s_axil_bresp <= OKAY;
        // Registers are written whole: a partial write (wstrb != 4'hF) changes nothing.
        if (s_axil_wstrb != 4'hF) s_axil_bresp <= SLVERR;
        else case (s_axil_awaddr)
          8'h00: start <= s_axil_wdata[0];
          8'h10: ptr_q <= s_axil_wdata[23:0];
          8'h14: begin
            cfg_we <= 1'b1;
            cfg_addr <= ptr_q;
            cfg_wdata <= s_axil_wdata;
            ptr_q <= ptr_q + 24'd1;
          end
          default: s_axil_bresp <= SLVERR;
        endcase
      end
      if (s_axil_rvalid && s_axil_rready) s_axil_rvalid <= 1'b0;
      if (s_axil_arvalid && s_axil_arready) begin
        s_axil_rvalid <= 1'b1;
        s_axil_rresp <= OKAY;
        case (s_axil_araddr)
          8'h04: s_axil_rdata <= {29'd0, err, running_q, done_q};
          8'h08: s_axil_rdata <= cyc_q;
          8'h0C: s_axil_rdata <= {16'd0, section};
          8'h10: s_axil_rdata <= {8'd0, ptr_q};
          8'h18: s_axil_rdata <= 32'h5354_4550;
          default: begin
            s_axil_rdata <= '0;
            s_axil_rresp <= SLVERR;
          end
        endcase
      end
      // The cycle in which `start` is high is cycle 0; CYCLES holds the index of the cycle
      // that saw done with every write complete (the flat-port harness's cycle count).
      if (start) begin
        running_q <= 1'b1;
        done_q <= 1'b0;
        cyc_q <= 32'd1;
      end else if (running_q) begin
        if (done && wr_idle) begin
          running_q <= 1'b0;
          done_q <= 1'b1;
        end else begin
          cyc_q <= cyc_q + 32'd1;
        end
      end
    end
  end
endmodule
