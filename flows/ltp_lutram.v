// Read-only views of the Xilinx LUT-RAM cells, for the logic-depth report of
// flows/fpga_synth_one.sh only (after the statistics are written).
//
// Yosys's `ltp` takes every input of a cell to every output. A LUT-RAM's write (WE, WCLK, the
// data inputs) is clocked, so a path through it is false: it made a bank's write enable, and
// the input handshake in front of it, look like the start of the next cycle's read address in
// the compute unit's depth report. The flow retypes each LUT-RAM cell to the module of the
// same ports without the write side; `ltp` sees ports a module does not declare as neither
// input nor output, so only the read paths (read address -> data out) are left.
// Ports as in Yosys 0.23's techlibs/xilinx/cells_sim.v.
(* blackbox *) module SG_LTP_RAM16X1S (output O, input A0, A1, A2, A3); endmodule
(* blackbox *) module SG_LTP_RAM32X1S (output O, input A0, A1, A2, A3, A4); endmodule
(* blackbox *) module SG_LTP_RAM64X1S (output O, input A0, A1, A2, A3, A4, A5); endmodule
(* blackbox *) module SG_LTP_RAM128X1S (output O, input A0, A1, A2, A3, A4, A5, A6); endmodule
(* blackbox *) module SG_LTP_RAM256X1S (output O, input [7:0] A); endmodule
(* blackbox *) module SG_LTP_RAM512X1S (output O, input [8:0] A); endmodule
(* blackbox *) module SG_LTP_RAM16X1D (output DPO, SPO, input A0, A1, A2, A3, DPRA0, DPRA1, DPRA2, DPRA3); endmodule
(* blackbox *) module SG_LTP_RAM32X1D (output DPO, SPO, input A0, A1, A2, A3, A4, DPRA0, DPRA1, DPRA2, DPRA3, DPRA4); endmodule
(* blackbox *) module SG_LTP_RAM64X1D (output DPO, SPO, input A0, A1, A2, A3, A4, A5,
                                       input DPRA0, DPRA1, DPRA2, DPRA3, DPRA4, DPRA5); endmodule
(* blackbox *) module SG_LTP_RAM128X1D (output DPO, SPO, input [6:0] A, DPRA); endmodule
(* blackbox *) module SG_LTP_RAM256X1D (output DPO, SPO, input [7:0] A, DPRA); endmodule
(* blackbox *) module SG_LTP_RAM32M (output [1:0] DOA, DOB, DOC, DOD, input [4:0] ADDRA, ADDRB, ADDRC, ADDRD); endmodule
(* blackbox *) module SG_LTP_RAM64M (output DOA, DOB, DOC, DOD, input [5:0] ADDRA, ADDRB, ADDRC, ADDRD); endmodule
(* blackbox *) module SG_LTP_RAM32M16 (output [1:0] DOA, DOB, DOC, DOD, DOE, DOF, DOG, DOH,
                                       input [4:0] ADDRA, ADDRB, ADDRC, ADDRD, ADDRE, ADDRF, ADDRG, ADDRH); endmodule
(* blackbox *) module SG_LTP_RAM64M8 (output DOA, DOB, DOC, DOD, DOE, DOF, DOG, DOH,
                                      input [5:0] ADDRA, ADDRB, ADDRC, ADDRD, ADDRE, ADDRF, ADDRG, ADDRH); endmodule
(* blackbox *) module SG_LTP_RAM32X16DR8 (output DOA, DOB, DOC, DOD, DOE, DOF, DOG, output [1:0] DOH,
                                          input [5:0] ADDRA, ADDRB, ADDRC, ADDRD, ADDRE, ADDRF, ADDRG,
                                          input [4:0] ADDRH); endmodule
(* blackbox *) module SG_LTP_RAM64X8SW (output [7:0] O, input [5:0] A); endmodule
