// sg_prim_bank_arb: the read arbitration of sg_cu_mem's banked memory. Lane l asks for word
// address addr_l with rotation rot_l of copy copy_l, which is row addr_l / NB of bank
// (addr_l + rot_l) mod NB (sg_cu_mem header). Each bank of each copy reads the row of the
// lowest lane that asks for it (lanes that ask for the same word share the read), and row 0
// when no lane asks or `en` is low. A lane that asks for copy 1 of a memory held once
// (NCOPY = 1) asks for nothing.
//
// Two bodies, one function (docs/hardware.md section 6, "Two bodies"): the synthesis body
// (default) searches, for every bank and copy, the lanes from the highest down, a priority
// multiplexer per bank; the simulation body (`define SG_SIM_BODY, which flows/verilator_build.sh
// sets) lets the lanes write their rows into an array from the highest lane down, LANES steps
// where the search is NB x LANES x NCOPY. Yosys proves the two equal
// (tests/formal/equiv_prims.sh, test rtl_prims_equiv); the RTL unit tests run both.
module sg_prim_bank_arb #(
  parameter int LANES = 4,
  parameter int NB = 4,                 // banks (a power of two >= 2)
  parameter int NCOPY = 1,              // copies of the memory (1 or 2)
  parameter int MI = 6,                 // word address bits (> log2 NB)
  localparam int RB = $clog2(NB),
  localparam int DR = (MI > RB) ? MI - RB : 1  // row bits
) (
  input  logic en,
  input  logic [MI*LANES-1:0] addr,     // lane l's word address at [MI*l +: MI]
  input  logic [RB*LANES-1:0] rot,      // its rotation
  input  logic [LANES-1:0] copy,        // its copy
  output logic [DR*NB*NCOPY-1:0] bank_row  // bank b of copy c at [DR*(NB*c + b) +: DR]
);
`ifdef SG_SIM_BODY
  // (the lanes' fields read straight from the ports: packing them into a row vector first
  // cost the default fabric 12 % of its simulation speed)
  // Off (the usual case, outside a matmul): one assignment, not the array's (a function's
  // array: a temporary, not a latch).
  function automatic logic [DR*NB*NCOPY-1:0] rows(input logic [MI*LANES-1:0] ad, input logic [RB*LANES-1:0] ro,
                                                  input logic [LANES-1:0] cp);
    logic [DR-1:0] r [NB*NCOPY];
    for (int i = 0; i < NB * NCOPY; i++) r[i] = '0;
    for (int l = LANES - 1; l >= 0; l--)
      if (NCOPY > 1 || !cp[l])
        r[NB * 32'(cp[l]) + 32'(RB'(ad[MI*l +: RB] + ro[RB*l +: RB]))] = ad[MI*l + RB +: DR];
    for (int i = 0; i < NB * NCOPY; i++) rows[DR*i +: DR] = r[i];
  endfunction
  always_comb begin
    bank_row = '0;
    if (en) bank_row = rows(addr, rot, copy);
  end
`else
  // Constant slices only: a slice picked by `copy` would be a dynamic write into bank_row for
  // every bank and lane, which takes Yosys's proc_dlatch tens of minutes.
  logic [RB*LANES-1:0] lb;              // lane l's bank
  always_comb begin
    for (int l = 0; l < LANES; l++) lb[RB*l +: RB] = addr[MI*l +: RB] + rot[RB*l +: RB];
    for (int b = 0; b < NB; b++)
      for (int c = 0; c < NCOPY; c++) begin
        bank_row[DR*(NB*c + b) +: DR] = '0;
        if (en)
          for (int l = LANES - 1; l >= 0; l--)
            if (lb[RB*l +: RB] == RB'(b) && 32'(copy[l]) == 32'(c))
              bank_row[DR*(NB*c + b) +: DR] = addr[MI*l + RB +: DR];
      end
  end
`endif
endmodule
