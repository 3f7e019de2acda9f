// Hand-written stand-in for a generated fabric, used to test the Verilator harness
// (sim/harness/harness_main.cpp) without the generator. Same flat top-level ports as a
// generated `sg_top` (docs/hardware.md section 6), fixed to NAG = 2, P = 1, LB = 512,
// AB = 32, NPORT = 2.
//
// Configuration words (cfg_addr):
//   0: read base (bytes, 64-aligned)   1: N = number of 64-byte pieces
//   2: write base (bytes, 64-aligned)  3: bit 0 = stall: the writer never drains its FIFO
// Behaviour (all outputs registered; "edge c" = the rising edge that ends cycle c):
//   * AG 0 (reader): at edge c, if the run has started (start or running), fewer than N
//     reads were issued, and issued - written < DEPTH (credit for a FIFO slot), it presents
//     read request i (address rbase + 64*i) for cycle c+1. A request is held until ready.
//   * port 0 = the writer's input FIFO (DEPTH beats): a read response delivered in cycle c is
//     pushed at edge c (dbg_port_fire[0] = dram_resp_valid[0]).
//   * AG 1 (writer): at edge c, if the FIFO is non-empty (count during cycle c) and stall is
//     0, it pops the head and presents write j (address wbase + 64*j, the popped data) for
//     cycle c+1.
//   * done rises at the edge where all N writes have been accepted (visible the cycle after).
//   * port 1 is a dummy that never holds data.
/* verilator lint_off DECLFILENAME */
module sg_top #(
    parameter int NAG = 2, P = 1, LB = 512, AB = 32,  // the widths run.json must describe
    parameter int NPORT = 2, NMU = 1, DEPTH = 4
) (
    input  logic                clk, rst_n, cfg_we,
    input  logic [23:0]         cfg_addr,
    input  logic [31:0]         cfg_wdata,
    input  logic                start,
    output logic                done,
    output logic [NAG-1:0]      dram_req_valid,
    input  logic [NAG-1:0]      dram_req_ready,
    output logic [NAG-1:0]      dram_req_write,
    output logic [NAG*P*AB-1:0] dram_req_addr,
    output logic [NAG*LB-1:0]   dram_req_wdata,
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic [NAG-1:0]      dram_resp_valid,   // AG 1 never reads
    input  logic [NAG*LB-1:0]   dram_resp_data,
    input  logic                dram_wr_idle,      // one section only: no barrier to hold
    /* verilator lint_on UNUSEDSIGNAL */
    output logic [NPORT-1:0]    dbg_port_valid,
    output logic [NPORT-1:0]    dbg_port_full,
    output logic [NPORT-1:0]    dbg_port_fire,
    output logic [NMU*32-1:0]   dbg_mu_held,
    output logic [15:0]         dbg_section,
    output logic                dbg_cfg_wait
);
    localparam int PW = $clog2(DEPTH);

    logic [31:0] rbase, npieces, wbase;
    logic        stall;
    logic        running;
    logic [31:0] issued, written;

    logic          r_valid;
    logic [AB-1:0] r_addr;
    logic          w_valid;
    logic [AB-1:0] w_addr;
    logic [LB-1:0] w_data;

    logic [LB-1:0] fifo[DEPTH];
    logic [PW-1:0] wptr, rptr;
    logic [PW:0]   count;

    wire go     = running | start;
    wire push   = dram_resp_valid[0];
    wire r_free = !r_valid || dram_req_ready[0];
    wire w_free = !w_valid || dram_req_ready[1];
    wire credit = (issued - written) < 32'(DEPTH);
    wire issue  = go && r_free && (issued < npieces) && credit;
    wire pop    = go && w_free && (count != 0) && !stall;

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            rbase <= '0;
            npieces <= '0;
            wbase <= '0;
            stall <= 1'b0;
        end else if (cfg_we) begin
            if (cfg_addr == 24'd0) rbase <= cfg_wdata;
            if (cfg_addr == 24'd1) npieces <= cfg_wdata;
            if (cfg_addr == 24'd2) wbase <= cfg_wdata;
            if (cfg_addr == 24'd3) stall <= cfg_wdata[0];
        end
    end

    always_ff @(posedge clk) begin
        if (!rst_n) begin
            running <= 1'b0;
            done <= 1'b0;
            issued <= '0;
            written <= '0;
            r_valid <= 1'b0;
            r_addr <= '0;
            w_valid <= 1'b0;
            w_addr <= '0;
            w_data <= '0;
            wptr <= '0;
            rptr <= '0;
            count <= '0;
        end else begin
            if (start) running <= 1'b1;
            // Reader (AG 0).
            if (issue) begin
                r_valid <= 1'b1;
                r_addr <= rbase + {issued[25:0], 6'd0};
                issued <= issued + 32'd1;
            end else if (r_free) begin
                r_valid <= 1'b0;
            end
            // FIFO (port 0).
            if (push) begin
                fifo[wptr] <= dram_resp_data[0 +: LB];
                wptr <= wptr + 1'b1;
            end
            // Writer (AG 1).
            if (pop) begin
                w_valid <= 1'b1;
                w_addr <= wbase + {written[25:0], 6'd0};
                w_data <= fifo[rptr];
                rptr <= rptr + 1'b1;
                written <= written + 32'd1;
            end else if (w_free) begin
                w_valid <= 1'b0;
            end
            count <= count + (PW+1)'(push) - (PW+1)'(pop);
            if (running && written == npieces && w_free) done <= 1'b1;
        end
    end

    assign dram_req_valid = {w_valid, r_valid};
    assign dram_req_write = 2'b10;
    assign dram_req_addr  = {w_addr, r_addr};
    assign dram_req_wdata = {w_data, {LB{1'b0}}};

    assign dbg_port_valid = {1'b0, count != 0};
    assign dbg_port_full  = {1'b0, count == (PW+1)'(DEPTH)};
    assign dbg_port_fire  = {1'b0, push};
    assign dbg_mu_held    = '0;
    assign dbg_section    = '0;
    assign dbg_cfg_wait   = 1'b0;
endmodule
