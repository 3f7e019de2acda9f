// sg_beat_pkg: the stream beat encoding shared by every unit (docs/hardware.md section 1).
//
// A beat of W words is the packed vector {kind[1:0], last, stop[2:0], data[32*W-1:0]}: the
// six header bits sit above the data, so with DW = 32*W the kind is beat[DW + KIND_LSB +: 2],
// `last` beat[DW + LAST_BIT], the stop beat[DW + STOP_LSB +: 3] and the header beat[DW +: HDR_W].
// Referenced as sg_beat_pkg::NAME (Yosys 0.23 reads no `import`).
package sg_beat_pkg;
  localparam int HDR_W = 6;
  localparam int KIND_LSB = 4;
  localparam int LAST_BIT = 3;
  localparam int STOP_LSB = 0;

  localparam logic [1:0] K_DATA = 2'd0;  // data; `last` closes a tile, then `stop` counts
  localparam logic [1:0] K_STOP = 2'd1;  // stop-only: closes a possibly empty group
  localparam logic [1:0] K_DONE = 2'd2;  // end of the stream

  // Header of the DONE beat (its data is zero).
  localparam logic [HDR_W-1:0] H_DONE = {K_DONE, 1'b0, 3'd0};

  // A port's stop map (8 entries x 3 bits; Promote / Flatten at zero cycles) applied to a
  // header: it rewrites the stop of STOP beats and of DATA beats with last = 1 only, the
  // beats whose stop is meaningful.
  function automatic logic [HDR_W-1:0] map_stop(input logic [HDR_W-1:0] h, input logic [23:0] m);
    map_stop = h;
    if (h[KIND_LSB +: 2] == K_STOP || (h[KIND_LSB +: 2] == K_DATA && h[LAST_BIT]))
      map_stop[STOP_LSB +: 3] = m[32'(h[STOP_LSB +: 3]) * 3 +: 3];
  endfunction
endpackage
