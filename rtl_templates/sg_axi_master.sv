// sg_axi_master: one address generator's DRAM port (docs/hardware.md section 6) as an AXI4
// master with 512-bit data (one 64-byte DRAM piece per data beat). Part of the AXI wrapper
// sg_axi_top (docs/axi.md).
//
// A request of the AG (P piece addresses, write flag, P pieces of write data) enters a
// 2-entry FIFO, so the AG can issue one request per cycle. The head request is sent as
// INCR bursts: consecutive pieces whose addresses follow each other (+64) form one burst,
// which ends at the request's last piece or before a 4 KiB boundary (AXI forbids a burst
// across one). Read bursts go out on AR while fewer than MAX_RD are outstanding; all reads
// use ID 0, so their data returns in order and the P beats of one request are gathered
// into one response, offered to the AG in the cycle after the last beat (the AG accepts a
// response in any cycle). A write burst's W beats start in the cycle its AW is offered
// (AXI lets W lead AW; with an always-ready slave they go out together, one request per cycle).
// wr_idle: no accepted write request is waiting and every write burst has its B response,
// which is what the fabric's section barrier asks of `dram_wr_idle`. A response other than
// OKAY on R or B (no exclusive access is made, so EXOKAY is an error too) sets `err` until
// reset; the data is used as it came.
//
// Every AXI valid comes from registers and the FIFO's registered head, and stays up with
// stable payload until its ready (AXI4 A3.2.1). rready and bready are always 1.
module sg_axi_master #(
  parameter int P = 1,          // 64-byte pieces per fabric beat
  parameter int AB = 32,        // address bits
  parameter int MAX_RD = 8      // read bursts in flight (1..255)
) (
  input  logic            clk,
  input  logic            rst_n,
  // fabric side: one AG
  input  logic            req_valid,
  output logic            req_ready,
  input  logic            req_write,
  input  logic [P*AB-1:0] req_addr,
  input  logic [P*512-1:0] req_wdata,
  output logic            resp_valid,
  output logic [P*512-1:0] resp_data,
  output logic            wr_idle,
  output logic            err,
  // AXI4 master
  output logic [AB-1:0]   m_axi_awaddr,
  output logic [7:0]      m_axi_awlen,
  output logic [2:0]      m_axi_awsize,
  output logic [1:0]      m_axi_awburst,
  output logic            m_axi_awvalid,
  input  logic            m_axi_awready,
  output logic [511:0]    m_axi_wdata,
  output logic [63:0]     m_axi_wstrb,
  output logic            m_axi_wlast,
  output logic            m_axi_wvalid,
  input  logic            m_axi_wready,
  input  logic [1:0]      m_axi_bresp,
  input  logic            m_axi_bvalid,
  output logic            m_axi_bready,
  output logic [AB-1:0]   m_axi_araddr,
  output logic [7:0]      m_axi_arlen,
  output logic [2:0]      m_axi_arsize,
  output logic [1:0]      m_axi_arburst,
  output logic            m_axi_arvalid,
  input  logic            m_axi_arready,
  input  logic [511:0]    m_axi_rdata,
  input  logic [1:0]      m_axi_rresp,
  input  logic            m_axi_rlast,
  input  logic            m_axi_rvalid,
  output logic            m_axi_rready
);
  // (No int'() casts: Yosys 0.23 does not parse them.)
  localparam int QW = 1 + P * AB + P * 512;  // FIFO entry: write flag, addresses, data
  localparam int KW = $clog2(P + 1);         // piece index 0..P
  localparam int OW = $clog2(MAX_RD + 1);    // read bursts in flight 0..MAX_RD

  // ---------------------------------------------------------------- request FIFO
  logic h_valid, h_pop;
  logic [QW-1:0] h_data;
  sg_fifo #(.WIDTH(QW), .DEPTH(2)) u_req (
    .clk(clk), .rst_n(rst_n),
    .in_valid(req_valid), .in_ready(req_ready), .in_data({req_write, req_addr, req_wdata}),
    .out_valid(h_valid), .out_ready(h_pop), .out_data(h_data),
    /* verilator lint_off PINCONNECTEMPTY */  // out_next: only block RAM readers need it
    .out_next());
    /* verilator lint_on PINCONNECTEMPTY */
  logic h_write;
  logic [P*AB-1:0] h_addr;
  logic [P*512-1:0] h_wdata;
  assign {h_write, h_addr, h_wdata} = h_data;

  // ---------------------------------------------------------------- bursts of the head
  // brk[i]: the burst holding piece i ends with it.
  logic [P-1:0] brk;
  always_comb
    for (int i = 0; i < P; i++)
      if (i == P - 1) brk[i] = 1'b1;
      else brk[i] = (h_addr[(i+1)*AB +: AB] != h_addr[i*AB +: AB] + AB'(64)) ||
                    (h_addr[(i+1)*AB +: 12] == 12'd0);

  logic [KW-1:0] ka_q, kw_q;          // next piece to address (AR / AW) and to send on W
  logic [KW-1:0] blen;                // pieces in the burst starting at ka_q, minus 1
  logic [AB-1:0] a_addr;              // its address
  always_comb begin
    blen = '0;
    for (int i = P - 1; i >= 0; i--)
      if (KW'(i) >= ka_q && brk[i]) blen = KW'(i) - ka_q;
    a_addr = '0;
    for (int i = 0; i < P; i++)
      if (KW'(i) == ka_q) a_addr = h_addr[i*AB +: AB];
  end

  logic [OW-1:0] rd_out_q;            // read bursts issued, last beat not yet back
  logic [15:0] wr_out_q;              // write bursts issued, B not yet back
  logic [1:0] wq_q;                   // write requests in the FIFO
  logic a_more;
  assign a_more = h_valid && (ka_q < KW'(P));

  assign m_axi_arvalid = a_more && !h_write && (rd_out_q < OW'(MAX_RD));
  assign m_axi_araddr = a_addr;
  assign m_axi_arlen = 8'(blen);
  assign m_axi_arsize = 3'd6;         // 64 bytes per beat
  assign m_axi_arburst = 2'b01;       // INCR
  assign m_axi_awvalid = a_more && h_write;
  assign m_axi_awaddr = a_addr;
  assign m_axi_awlen = 8'(blen);
  assign m_axi_awsize = 3'd6;
  assign m_axi_awburst = 2'b01;

  always_comb begin
    m_axi_wdata = '0;
    m_axi_wlast = 1'b0;
    for (int i = 0; i < P; i++)
      if (KW'(i) == kw_q) begin
        m_axi_wdata = h_wdata[i*512 +: 512];
        m_axi_wlast = brk[i];
      end
  end
  assign m_axi_wstrb = '1;
  assign m_axi_wvalid = h_valid && h_write && (kw_q < ka_q || (kw_q == ka_q && a_more));
  assign m_axi_bready = 1'b1;
  assign m_axi_rready = 1'b1;

  logic ar_fire, aw_fire, w_fire, r_fire, b_fire;
  assign ar_fire = m_axi_arvalid && m_axi_arready;
  assign aw_fire = m_axi_awvalid && m_axi_awready;
  assign w_fire = m_axi_wvalid && m_axi_wready;
  assign r_fire = m_axi_rvalid;
  assign b_fire = m_axi_bvalid;

  logic [KW-1:0] ka_n, kw_n;
  always_comb begin
    ka_n = (ar_fire || aw_fire) ? ka_q + blen + KW'(1) : ka_q;
    kw_n = w_fire ? kw_q + KW'(1) : kw_q;
    // A read is done when every burst is out; a write when every W beat is out too.
    h_pop = h_valid && (ka_n == KW'(P)) && (!h_write || kw_n == KW'(P));
  end

  // ---------------------------------------------------------------- read data
  logic [KW-1:0] rc_q;                // pieces of the current response gathered
  logic [P*512-1:0] rbuf_q, rnext;
  always_comb begin
    rnext = rbuf_q;
    for (int i = 0; i < P; i++)
      if (KW'(i) == rc_q) rnext[i*512 +: 512] = m_axi_rdata;
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      ka_q <= '0;
      kw_q <= '0;
      rd_out_q <= '0;
      wr_out_q <= '0;
      wq_q <= '0;
      rc_q <= '0;
      resp_valid <= 1'b0;
      err <= 1'b0;
    end else begin
      ka_q <= h_pop ? '0 : ka_n;
      kw_q <= h_pop ? '0 : kw_n;
      rd_out_q <= rd_out_q + OW'(ar_fire) - OW'(r_fire && m_axi_rlast);
      wr_out_q <= wr_out_q + 16'(aw_fire) - 16'(b_fire);
      wq_q <= wq_q + 2'(req_valid && req_ready && req_write) - 2'(h_pop && h_write);
      resp_valid <= 1'b0;
      if (r_fire) begin
        if (rc_q == KW'(P - 1)) begin
          resp_valid <= 1'b1;
          resp_data <= rnext;
          rc_q <= '0;
        end else begin
          rbuf_q <= rnext;
          rc_q <= rc_q + KW'(1);
        end
      end
      if ((r_fire && m_axi_rresp != 2'b00) || (b_fire && m_axi_bresp != 2'b00)) err <= 1'b1;
    end
  end
  assign wr_idle = (wq_q == 2'd0) && (wr_out_q == 16'd0);
endmodule
