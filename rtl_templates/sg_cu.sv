// sg_cu: compute unit -- Map(matmul) over Zip(a, b), Map(silu / mul / add), Accum(add, b),
// Accum retile, Map(mul) with Expand ("rowscale"), Scan(add, b), Expand(b), Parallelize,
// Partition(b 0), EagerMerge(b 0), Map(select) (docs/hardware.md sections 2 and 7).
//
// Parameters: W words per beat, LANES multiply-accumulate lanes, BUF_WORDS words of local
// memory (word addresses BUF_ADDR_BITS wide in the configuration), BF16 = 1 for the
// bf16_fp32 multiply format (operands truncated to bf16, exact product, fp32 add), 0 for
// fp32. ATTN = 1 builds exp, recip and rsqrt (the generator sets it only when the arch lists
// one): per word a 1024-entry exp table and 256-entry seed tables with two more multipliers
// for recip and rsqrt (sg_attn_lut); with ATTN = 0 funcs 12 .. 16, 18 and 23 are unknown functions. DYN = 1 builds
// the dynamic-tile datapath (dyn_m, bt, rowscale, scan, expand, parallelize, partition,
// merge, select; the generator sets it only when the arch lists matmul_t, rowscale, a scan,
// expand, parallelize, partition, merge or select): with DYN = 0 those fields read as 0,
// their funcs are unknown functions (the list below), and the extra logic folds away (it
// halves simulation speed). SILU = 1 builds silu's sigmoid table (W/2 dual-port
// block RAMs; the generator sets it when the arch lists silu); with SILU = 0 func 2 is
// unknown. MUL = 1 builds the W-word unit's fp32 multipliers (silu, mul, rowscale, exp and
// accum rescale use them; the generator sets it when the arch lists one of these); with
// MUL = 0 those funcs are unknown (an FPGA without DSP blocks, such as an iCE40 HX part,
// builds each multiplier from about 1,750 LUT4s). BANKED = 1 (compute_unit.memory: banked)
// builds the local memory as W banks an FPGA maps to block RAM, 0 as one flat array
// (sg_cu_mem.sv). A_COPIES = 2 (compute_unit.memory:
// banked_ragged) holds the banked a memory twice so that a matmul's K need not be whole beats.
// NEAR_FAR = 1 (compute_unit.fp_adder: near_far, the default) builds every fp32 adder (the MAC
// lanes', the W-word unit's, rowsum's) as sg_fp_pkg::fp32_add, two paths side by side; 0
// (single_path) as fp32_add_sp: 70 % of the LUTs, 1.5 to 2 times the depth (fpga_lane.csv).
// The results are the same bit patterns, so the timing and every output are the same either way.
// Arithmetic: sg_fp_pkg (bit-exact with sim/common/fp.hpp).
//
// Tile packing: a tile of R x C words travels row-major, flattened, in ceil(R*C / W) DATA
// beats (beat t = words t*W .. t*W+W-1); the unused words of a final partial beat are zero.
// Static tiles are whole beats (the mapper requires R*C % W == 0 unless dyn_m or bt is set);
// dynamic tiles (dyn_m) and bt outputs with N not a multiple of W may end in a partial beat.
//
// Per-context configuration (sg_cfg_pkg CU_*): enable, func, accum_b, mn, k, log2n, passes,
// a_beats, b_beats, o_beats, a_base0/1, b_base0/1, o_base0/1, dyn_m, bt, n, idx_word,
// in0_stopmap, in1_stopmap (inN_src belongs to the generated top). dyn_m = bt = 0 (and func
// 1..6) is the static behaviour, bit- and cycle-identical to the unit before these fields.
// in0 goes through its stop map first: out level = map[3*s +: 3] on STOP beats and on DATA
// beats with last = 1. Every output stop comes from in0 (Zip: a pair carries its first
// stream's stops; in1 only contributes data and its beat kind), so in1_stopmap has no
// observable effect and is not read -- except in expand, where in1 is the ref, whose stops
// are the output's: in1 goes through in1_stopmap the same way.
// func (5 bits): 1 matmul, 2 silu, 3 mul, 4 add, 5 accum, 6 retile, 7 rowscale, 8 scan,
// 9 expand, 10 parallelize, 11 sub, 12 exp, 13 recip, 14 rowmax, 15 rowsum, 16 accum max,
// 17 scan max, 18 accum rescale, 19 scan max exclusive, 20 partition, 21 merge, 22 select,
// 23 rsqrt, 24 topk, 25 topk_logits; any other value (and 7..10, 17 and 19..22 with DYN = 0, 12..16, 18 and 23
// with ATTN = 0, 2 with SILU = 0, 2, 3, 7, 12 and 18 with MUL = 0, 24 and 25 with TOPK = 0) finishes an enabled
// context at once.
//
// matmul (in0 = a, M x K, a_beats beats; in1 = b, K x N, b_beats beats; N = 1 << log2n;
//   mn = M*N; passes = ceil(mn / LANES); o_beats = mn / W):
//   * Loader: a and b beats are written (W words each, independently, one per cycle per
//     port) to input bank L (a at a_baseL, b at b_baseL, row-major). The bank is full when
//     both tiles are in; its stop is a's last-beat stop. A STOP or DONE on both inputs at a
//     tile boundary is queued in a bank as a token instead (in order with the tiles).
//   * MAC: when the next full input bank X and the next output bank Y (o_baseY) are free,
//     passes x K cycles; in pass p lane l owns o = p*LANES + l, active if o < mn,
//     i = o >> log2n, j = o & (N-1); cycle k does acc = fp32_add(k == 0 ? +0 : acc,
//     mul(a[i*K+k], b[k*N+j])) with mul = bf16_mul if BF16 else fp32_mul; at k = K-1 the
//     lane writes acc to word o of bank Y. A token takes one cycle here.
//   * Drain: bank Y leaves as o_beats DATA beats (beat t = words t*W .. t*W+W-1), one per
//     cycle, `last` + stop on the final one; a token leaves as one STOP (same level) or DONE.
//   Banks alternate 0,1,0,... in every stage, so tiles and tokens keep their order.
//   matmul with dyn_m = 1 (dynamic row count M, e.g. the tokens routed to one expert):
//   * the a tile is however many beats arrive up to and including its `last` beat (a_beats
//     is not read; the a bank must hold the largest tile). With K >= W (the mapper
//     guarantees it) M = floor(a_beats*W / K) is exact; the loader counts it as the beats
//     arrive (words of the open row += W per a beat; a row is complete when they reach K,
//     at most one row per beat, no divider) and keeps mn = M*N for the bank. N = n if bt,
//     else 1 << log2n. b is static (b_beats beats).
//   * passes = ceil(mn / LANES): the pass with p*LANES + LANES >= mn is the last (the
//     `passes` field is not read); o_beats = ceil(mn / W): the drain ends with the beat that
//     reaches word mn (the `o_beats` field is not read); words >= mn of the final beat are 0.
//     mn is not read either (the bank's own mn is used).
//   matmul with bt = 1 (in1 = b transposed: an N x K row-major tile, weights stored
//   [out, in] as in nn.Linear): N = field n, any value >= 1 (log2n is not read); lane l
//   tracks its (i, j) = (o / N, o % N) incrementally: per pass j += LANES % N, i += LANES / N
//   (+1 when j wraps past N); cycle k does acc = fp32_add(k == 0 ? +0 : acc,
//   mul(a[i*K+k], b[j*K+k])). The per-lane start values (l / N, l % N) and (LANES / N,
//   LANES % N) come from LANES+1 restoring dividers (one compare-subtract each per cycle)
//   that run once per context, for SU = $clog2(LANES+1) cycles from the context's first
//   cycle in RUN; the MAC stage starts nothing (tile or token) before they finish. The
//   drain zeroes the words >= mn of the final beat (mn = M*N not a multiple of W). bt
//   without dyn_m takes mn, passes and o_beats from the configuration (o_beats =
//   ceil(mn / W)); bt with dyn_m computes them as above.
// topk (TOPK = 1, the MoE router's choice, docs/step_semantics.md#topk): as silu below, each
//   in0 DATA beat (one row of k <= W gate logits) leaves as a routing row: the n chosen
//   experts' indices ascending in words 0 .. n-1, every other word 0 (sg_cu_word). topk_logits:
//   the same, with the chosen logits in words 0 .. n-1 and -inf in every other word.
// silu / exp / recip / rsqrt / mul / add / sub: one beat per cycle, one register stage; mul / add /
//   sub need both inputs valid and take both (kind, last and stop from in0). silu(x) =
//   fp32_mul(x, sigmoid(x)); sub(x, y) = fp32_add(x, y with its sign flipped); exp(x) from t =
//   fp32_mul(x, log2 e), sg_fp_pkg::exp_shift and exp_key, sg_attn_lut::exp_mant; recip(x) = a seed
//   from sg_attn_lut::recip_seed, one Newton step (sg_fp_pkg::recip_q, recip_pack); rsqrt(x) =
//   a seed and half square from sg_attn_lut::rsqrt_seed / rsqrt_hsq, one Newton step
//   (rsqrt_q, rsqrt_pack; docs/hardware.md section 3). They work word by word, so a partial
//   final beat passes (its zero words give +0 for silu(+0), +0 * +0, +0 + +0 and +0 - +0, 1.0
//   for exp(+0) and +inf for recip(+0) and rsqrt(+0)).
//   silu's table read, exp's multiply and exp_shift, and recip's and rsqrt's first multiply work a cycle
//   ahead, on in0_next (sg_cu_word): the head cycle only finishes them.
// rowscale (Map(mul) with Expand: row r of each tile times a per-row scalar): in0 = a tile
//   R x C, C = k (a multiple of W: k / W beats per row); in1 = a tile R x C2 of n = C2 / W
//   beats per row (n = 0 acts as 1), the scalar of row r is word idx_word of its first beat
//   (an fp32). Each in0 DATA beat needs the current row's first in1 beat at in1's head and
//   leaves as fp32_mul(x, scalar) word by word (fp32 even when BF16 = 1; one register stage,
//   one beat per cycle, kind / last / stop from in0). That in1 beat is consumed together
//   with the row's last beat (words of the row reach k, or in0's `last`); the row's other
//   n - 1 in1 beats are then dropped one per cycle, in0 waiting (rs_drop_q). in0 STOP beats pass through (after the stop map) without
//   touching in1; a STOP at in1's head is dropped in the cycle it is presented (in1's stops
//   are ignored); in0's DONE waits for in1's DONE and both are consumed together.
// rowmax / rowsum (ATTN = 1; k = words per row, n = k / W beats per row, W a power of two):
//   each in0 DATA beat's W words are reduced by a pairwise tree (sg_fp_pkg::fp32_max or
//   fp32_add; heap order: words 0 op 1, 2 op 3, ...), the beats of a row folded in order
//   (first beat's value, then acc op beat); every word of the row's n output beats is the
//   row's value (sim/common/fp.hpp rowReduce). A row's last beat (words reach k, or in0's
//   `last`) is taken only when no earlier row is still leaving and the output register frees;
//   its first output beat leaves with it, the other n - 1 one per cycle after; the tile's
//   `last` and stop go on its final output beat. Other beats of a row are taken one per
//   cycle meanwhile. STOP and DONE pass once no row is left to send. The tree is pipelined,
//   one level per stage (RP = log2 W stages in front of the fold; all beats pass through them).
// accum (b = accum_b; tile = o_beats beats; banks o_base0 / o_base1): beat t of a tile is
//   added word-wise into beat t of the accumulating bank (first tile of a group: +0 + x).
//   accum max (func 16, ATTN = 1): the same with sg_fp_pkg::fp32_max, the group's first
//   tile taken as it is. accum rescale (func 18, ATTN = 1; the online-softmax rescale):
//   in1 carries a tile of scales a like in0's, beat for beat in lockstep (both inputs'
//   beats, STOP and DONE taken together); beat t becomes fp32_add(fp32_mul(old, a), x)
//   (old = +0 for a group's first tile), the multiply in the cycle the beat is taken, the add
//   and the write in the next (rs2_*). One-beat tiles: the next beat, and the drain of a
//   closed group, wait a cycle for that write (they read the word it writes).
//   A tile whose stop s >= b closes the group (output stop s - b); s < b is absorbed.
//   STOP s < b is absorbed; STOP s >= b closes the group, or, if nothing was accumulated,
//   emits a zero tile with stop s - b. The closed bank drains (as for matmul) while the
//   other bank accumulates. DONE is queued behind the groups and emitted.
//   accum with dyn_m = 1: a tile ends with its `last` beat (all tiles of a group have the
//   same length, the mapper's promise) and the result drains with the length of the
//   group's tiles; an empty group gives a zero tile of max(o_beats, 1) beats.
// retile (b = accum_b): DATA beats pass through one register stage; `last` is kept only
//   on a beat with last and stop s >= b, whose stop becomes s - b (all other beats: last 0,
//   stop 0). STOP s > b becomes STOP s - b; STOP s <= b is absorbed (an empty group cannot
//   be written as a tile). DONE passes.
// scan (Scan(add, b), b = accum_b; tile = o_beats beats, with dyn_m = 1 up to its `last`
//   beat as for accum; one running tile in bank o_base0): beat t of a DATA tile leaves as
//   fp32_add(first tile of its group ? +0 : running beat t, x) word by word and that sum
//   becomes running beat t (the model's scanAdd: the same fp32_add as accum). The output
//   keeps the input beat's `last` and stop (after in0's map). A tile with stop s >= b or a
//   STOP s >= b ends the group: the next tile starts again from +0. STOP beats pass (s < b
//   inside a group changes nothing); DONE passes. in1 is not read. scan max (func 17): the same
//   with sg_fp_pkg::fp32_max, a group's first tile leaving as it is. scan max exclusive
//   (func 19): the running tile is scan max's, but beat t leaves as the running beat before
//   this tile (-inf words for a group's first tile).
// expand (Expand(b), b = accum_b; in0 = data, in1 = ref, equal rank, data's inner b dims of
//   size 1; the model's `expand`). The current data element is either a tile, loaded whole
//   into bank a_base0 (its beats up to `last`, any length the bank holds, partial final beat
//   kept as it is), or a STOP at in0's head (an empty data group). ref drives the output:
//   * ref DATA tile: a copy of the data tile (its D beats, read back raw) with `last` and the
//     ref tile's stop on the final beat; the ref tile's beats other than the last are
//     dropped as they come once the data tile is held (only the stop of its last beat is
//     used), the last is consumed with the copy's final beat. The ref tile's shape does not matter.
//   * ref STOP s: forwarded as STOP s (s < b: an empty inner group; s >= b: an empty group
//     at level >= b, or a stop-only beat closing a non-empty one).
//   * A ref tile or STOP with stop s >= b closes the group: the data element is used up (a
//     held tile is released, a data STOP is consumed) and the next data element is taken.
//     An empty ref group (STOP s >= b with no tile) thus consumes one data element and emits
//     only the STOP; with b = 0 every ref tile uses up one data tile and every ref STOP one
//     data STOP.
//   * ref DONE waits for in0's DONE; both are consumed and DONE leaves.
//   Every ref beat that emits waits for the current data element. A well-formed pair (the
//   model's checks: data stops = the closing stops of ref's groups) never blocks; a ref tile
//   against a data STOP, or a DONE against a data tile, is malformed and stalls the unit.
//   Data stops are not read (in0_stopmap has no effect); the data tile must fit the bank.
// parallelize (round robin of the outermost dim; n = field n, this unit's output i = field
//   idx_word, L = accum_b = the stop level that closes one outermost element, i.e. the
//   stream's rank; L = 0: every tile is an element): elements are counted from 0 and close
//   at a tile's last beat or a STOP with stop >= L (an empty element is one STOP). The beats
//   of element e pass unchanged (after in0's map) iff e mod n == i; the others are dropped.
//   DONE passes. Output i is the model's parallelize(x, n)[i]: the same stops, shape
//   [ceil((D-i)/n), inner dims]. n = 0 acts as n = 1; i >= n passes only DONE. One fabric
//   output = one CU (the fabric Broadcasts the input to n units). in1 is not read.
// partition (Partition(b 0), one CU per output, this unit's output i = field idx_word; in0 =
//   data, in1 = selector: one-hot routing rows of one beat, the output in word 0): a
//   selector DATA beat is taken while no element is open (it opens one); the next data
//   element's beats (up to its last) then pass with stop 0 iff word 0 == i, else are dropped
//   without waiting for the output. Data STOPs (outer stops) and selector STOPs are
//   dropped. The data DONE at in0's head leaves as the output DONE (when the output register
//   can take it) without waiting for the selector, whose DONE, if at in1's head in that
//   cycle, is taken with it. Otherwise the selector is longer than the data (a fed-back
//   selector: spare "region free" tokens, its DONE only after the regions downstream of
//   this unit finished): from the next cycle every selector beat (DATA or STOP) is taken and
//   dropped, one per cycle, up to its DONE, and the context ends only once both the output
//   DONE was accepted and the selector DONE taken. A selector DATA beat taken while the data
//   DONE is at in0's head (no element follows) is such a spare too. Output i is the model's
//   partition(data, sel, n, 0, &starved)[i] (starved = 0: a shorter selector stalls).
// merge (EagerMerge(b 0) of two inputs, data output only): whole tiles of in0 and in1 in the
//   order they come: while no tile is open, in0's DATA beat at the head goes first, else
//   in1's; the chosen tile's beats pass (stop 0) up to its last. STOPs on either input are
//   dropped; the two DONEs leave together as the output DONE once no tile is open.
// select (Map(select): the "region v is free" signal of a feedback cycle; v = field
//   idx_word, c = field n, the number of initial tokens of the cycle): first c beats, one
//   per cycle whenever the output register can take one, each a routing row as partition
//   reads its selector: DATA, last = 1, stop 0, word 0 = v (32 bits), the other words 0;
//   in0 is not taken before they are out. Then in0: a DATA beat that is not its tile's last
//   is taken and dropped (one per cycle, even while the output is blocked); a tile's last
//   beat is taken when the output register can take a beat and leaves as one such row; a
//   STOP is dropped; the DONE passes. The model's selectSignals(in, v, n, c) with the
//   selector element {v} written as word 0 = v. in1 is not read.
// Every function ends the context when its DONE beat is accepted at the output.
//
// Timing (cycle 0 = the cycle the first beat of the tile is accepted, inputs and output
// never stalled):
//   matmul: a tile's beats come in cycles 0 .. La-1, La = max(a_beats, b_beats); MAC cycles
//     La .. La+C-1 with C = passes*K (stage 1; stage 2 adds the last products in La+C);
//     drain reads in cycles La+C+1 .. La+C+o_beats; output beat t is valid in cycle
//     La+C+2+t. Steady state max(a_beats, b_beats, C, o_beats) cycles per tile. A token
//     (STOP / DONE) tile takes one MAC cycle and no stage 2.
//     dyn_m: the same formulas with a_beats = the beats of this a tile (up to `last`),
//     passes = ceil(M*N / LANES), o_beats = ceil(M*N / W), M = floor(a_beats*W / K): no
//     extra cycle (M and mn are counted while the tile loads).
//     bt: the same formulas, except that the MAC stage of a context starts at the earliest
//     in cycle R + SU, R = the context's first RUN cycle (start + 2 for context 0, the
//     cycle after INIT otherwise), SU = $clog2(LANES + 1). When the first beats are
//     accepted in cycle R, the first output beat is valid in max(La, SU) + C + 2.
//   rowmax / rowsum (RP = log2 W tree stages): the first beat of a row whose last beat is
//     accepted in cycle c is valid in c+1+RP, its others in c+2+RP .. c+n+RP, when the output
//     does not stall; STOP and DONE likewise in c+1+RP. The RP stages take a beat per cycle
//     whatever they hold; they stop all together when the fold cannot take the last stage's beat.
//   silu / exp / recip / mul / add / sub / retile / rowscale / scan: a beat accepted in cycle c is
//     valid at the output in c+1; one beat per cycle (rowscale: when the row's in1 beat is at in1's head;
//     a STOP dropped from in1 costs in1 one cycle).
//   parallelize: a passed beat accepted in cycle c is valid at the output in c+1; one beat
//     per cycle; a dropped beat is accepted in the cycle it is presented even while the
//     output is blocked.
//   expand: an output beat (copy beat, STOP, DONE) sent in cycle c is valid in c+1.
//     A data tile's beats are accepted one per cycle whenever no tile is held or the held
//     one is released in that cycle; the tile is held from the cycle after its last beat.
//     A copy beat is sent in every cycle in which a tile is held, in1's head is a DATA beat
//     and the output register frees, the copy's final beat only with the ref tile's last
//     beat (consumed then); ref beats before the last are accepted one per cycle while a
//     tile is held. So: one-beat data and ref tiles: a ref beat accepted in cycle c is valid at the
//     output in c+1, one per cycle, the next data tile loading in the cycle the closing ref
//     beat is accepted; a ref tile of R beats against a held tile of D beats takes max(R, D)
//     cycles; the first copy of a tile whose last beat is accepted in c is valid from c+2
//     (a D-beat tile after a release: D - 1 cycles without output).
//   partition: selector element j is taken in cycle s_j >= the cycle after data element
//     j-1's last beat was taken (s_0 from the first RUN cycle); element j's first beat is
//     taken in s_j + 1 at the earliest, then one beat per cycle; a passed beat taken in
//     cycle c is valid at the output in c+1. The data DONE is taken in the first cycle d it
//     is at in0's head with the output register free (after the last element's last beat),
//     the output DONE valid in d+1; the selector DONE in d if it is at in1's head then
//     (a selector as long as the data: the old timing), else selector beats are taken from d+1,
//     each in the first cycle it is at the head, the DONE last; the context ends in the later
//     of the output DONE's acceptance and the selector DONE's take.
//   select: initial beat k is valid in R+1+k (R the first RUN cycle, output never blocked);
//     in0's first beat is taken in R+c at the earliest; a tile's last beat taken in cycle c
//     is valid at the output in c+1 as its selector row; dropped beats take a cycle each.
//   merge: a tile's first beat is taken in the first cycle its input's head is valid with
//     no tile open and (for in1) no in0 DATA beat at the head, at the earliest the cycle
//     after the previous tile's last beat; one beat per cycle; a beat taken in cycle c is
//     valid at the output in c+1.
//   accum: a group closed by the beat accepted in cycle c drains from cycle c+1, its first
//     beat valid in c+2, one beat per cycle; one input beat per cycle (stalls only when the
//     other bank still drains, e.g. groups of one tile with a blocked output). dyn_m: the
//     same.
//   A context switch costs one idle cycle (INIT) after the DONE beat is accepted.
//
// Ports: out_valid / out_beat come from registers. inN_ready are combinational from
// registers, from the input's own beat kind, from out_ready (silu / mul / add / retile /
// rowscale / scan / expand / parallelize / partition / merge / select), and for mul / add /
// rowscale / matmul tokens, expand, partition and merge from the other input's valid and
// beat kind (expand: in0_ready also from in1's `last` and stop). The context's end (the
// sequencer's fin) is combinational from in1's valid and beat kind while a partition drains
// its selector.
//
// Implementation note: the unit is this module's control (configuration, handshakes, the
// loaders, the MAC and drain sequencing, the output register) around its parts, each a
// module with its own RTL tests and synthesis row (docs/hardware.md section 2):
//   sg_ctx_seq    the context sequencer;
//   sg_cu_mem     the local memory, driven through ports;
//   sg_cu_addr    the MAC's operand addresses (and bt's per-lane (i, j));
//   sg_cu_mac     the MAC array, two stages;
//   sg_cu_word    the W-word unit and its functions (silu's table, exp and recip ahead);
//   sg_cu_rowred  the rowmax / rowsum tree.
// The memory's reads are synchronous (block RAM): the read addresses of cycle c + 1 are
// computed in cycle c from the next values of the registers they depend on (k_d, p_d,
// pbase_d, cp_sel_d, dr_sel_d, dr_cnt_d, acc_sel_d, acc_cnt_d, ex_oc_d), and a read sees the
// writes of the cycle before. With BANKED = 1 it is one bank per word of a beat; otherwise
// one flat array (simulation only). Which banks a lane reads follows from the rows it works
// on: the loader rotates row i of a (and row j of a transposed b) by i mod W (la_rot_q,
// lb_rot_q), the MAC asks with the same rotation (sg_cu_addr). With A_COPIES = 2 a row of a
// need not be whole beats: the head of row i (the words of the beat that began in row i - 1)
// is read from a's copy 1 (sg_cu_mem header).
module sg_cu #(
  parameter int W = 16,
  parameter int LANES = 16,
  parameter int BUF_WORDS = 4096,
  parameter int BF16 = 1,
  parameter int DYN = 1,
  parameter int ATTN = 0,
  parameter int SILU = 1,
  parameter int MUL = 1,
  parameter int BANKED = 0,
  parameter int A_COPIES = 1,
  parameter int NEAR_FAR = 1,
  parameter int TOPK = 0
) (
  input  logic clk,
  input  logic rst_n,
  // Whole configuration vector (all contexts). Only the fields of the running context are
  // read; the source selects belong to the generated top.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [sg_cfg_pkg::CONTEXTS*sg_cfg_pkg::CU_BITS-1:0] cfg,
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic start,
  input  logic sectioned,  // 1 in a fabric: sg_sec_seq starts each context (sg_ctx_seq)
  input  logic [((sg_cfg_pkg::CONTEXTS > 1) ? $clog2(sg_cfg_pkg::CONTEXTS) : 1)-1:0] start_ctx,
  output logic busy,       // INIT or RUN (sg_ctx_seq)
  output logic done,
  output logic [((sg_cfg_pkg::CONTEXTS > 1) ? $clog2(sg_cfg_pkg::CONTEXTS) : 1)-1:0] ctx,
  input  logic [32*W+sg_beat_pkg::HDR_W-1:0] in0_beat,
  input  logic in0_valid,
  output logic in0_ready,
  // The beat at in0's head in the next cycle (the input FIFO's out_next): silu reads its
  // sigmoid table, a block RAM, with it one cycle ahead. Only its data words are read.
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [32*W+sg_beat_pkg::HDR_W-1:0] in0_next,
  /* verilator lint_on UNUSEDSIGNAL */
  // in1 carries b (matmul), the second operand (mul, add), the row scalars (rowscale) or the
  // ref (expand); its last bit and stop are used by expand only (Zip: in0's are
  // authoritative).
  input  logic [32*W+sg_beat_pkg::HDR_W-1:0] in1_beat,
  input  logic in1_valid,
  output logic in1_ready,
  output logic [32*W+sg_beat_pkg::HDR_W-1:0] out_beat,
  output logic out_valid,
  input  logic out_ready
);
  // Verilated once per parameter set when the fabric is built with --hier (flows/verilator_build.sh).
  /*verilator hier_block*/
  localparam int NCTX = sg_cfg_pkg::CONTEXTS;
  localparam int CB = sg_cfg_pkg::CU_BITS;
  localparam int DW = 32 * W;
  localparam int BW = DW + sg_beat_pkg::HDR_W;
  localparam int MI = (BUF_WORDS > 1) ? $clog2(BUF_WORDS) : 1;  // memory index bits
  localparam int BA = sg_cfg_pkg::BUF_ADDR_BITS;
  localparam int FW = sg_cfg_pkg::CU_FUNC_W;
  localparam logic [FW-1:0] F_MATMUL = FW'(sg_cfg_pkg::CU_FUNC_MATMUL);
  localparam logic [FW-1:0] F_SILU = FW'(sg_cfg_pkg::CU_FUNC_SILU);
  localparam logic [FW-1:0] F_MUL = FW'(sg_cfg_pkg::CU_FUNC_MUL);
  localparam logic [FW-1:0] F_ADD = FW'(sg_cfg_pkg::CU_FUNC_ADD);
  localparam logic [FW-1:0] F_ACCUM = FW'(sg_cfg_pkg::CU_FUNC_ACCUM);
  localparam logic [FW-1:0] F_RETILE = FW'(sg_cfg_pkg::CU_FUNC_RETILE);
  localparam logic [FW-1:0] F_ROWSCALE = FW'(sg_cfg_pkg::CU_FUNC_ROWSCALE);
  localparam logic [FW-1:0] F_SCAN = FW'(sg_cfg_pkg::CU_FUNC_SCAN);
  localparam logic [FW-1:0] F_EXPAND = FW'(sg_cfg_pkg::CU_FUNC_EXPAND);
  localparam logic [FW-1:0] F_PARALLELIZE = FW'(sg_cfg_pkg::CU_FUNC_PARALLELIZE);
  localparam logic [FW-1:0] F_SUB = FW'(sg_cfg_pkg::CU_FUNC_SUB);
  localparam logic [FW-1:0] F_EXP = FW'(sg_cfg_pkg::CU_FUNC_EXP);
  localparam logic [FW-1:0] F_RECIP = FW'(sg_cfg_pkg::CU_FUNC_RECIP);
  localparam logic [FW-1:0] F_RSQRT = FW'(sg_cfg_pkg::CU_FUNC_RSQRT);
  localparam logic [FW-1:0] F_ROWMAX = FW'(sg_cfg_pkg::CU_FUNC_ROWMAX);
  localparam logic [FW-1:0] F_ROWSUM = FW'(sg_cfg_pkg::CU_FUNC_ROWSUM);
  localparam logic [FW-1:0] F_ACCMAX = FW'(sg_cfg_pkg::CU_FUNC_ACCUM_MAX);
  localparam logic [FW-1:0] F_SCANMAX = FW'(sg_cfg_pkg::CU_FUNC_SCAN_MAX);
  localparam logic [FW-1:0] F_ACCRS = FW'(sg_cfg_pkg::CU_FUNC_ACCUM_RESCALE);
  localparam logic [FW-1:0] F_SCANMAXX = FW'(sg_cfg_pkg::CU_FUNC_SCAN_MAX_EXCL);
  localparam logic [FW-1:0] F_PARTITION = FW'(sg_cfg_pkg::CU_FUNC_PARTITION);
  localparam logic [FW-1:0] F_MERGE = FW'(sg_cfg_pkg::CU_FUNC_MERGE);
  localparam logic [FW-1:0] F_SELECT = FW'(sg_cfg_pkg::CU_FUNC_SELECT);
  localparam logic [FW-1:0] F_TOPK = FW'(sg_cfg_pkg::CU_FUNC_TOPK);
  localparam logic [FW-1:0] F_TOPK_LOGITS = FW'(sg_cfg_pkg::CU_FUNC_TOPK_LOGITS);
  // sg_cu_mem's banked layout needs at most W lanes, W a power of two and whole beats of
  // buffer (ArchModel::cuBankable, which the arch loader checks); without them the memory is
  // flat whatever BANKED says.
  localparam int MEM_BANKED = (BANKED != 0 && LANES <= W && W >= 2 && (W & (W - 1)) == 0 &&
                               BUF_WORDS % W == 0) ? 1 : 0;
  localparam int RB = (W > 1) ? $clog2(W) : 1;
  localparam logic [1:0] K_DATA = sg_beat_pkg::K_DATA, K_STOP = sg_beat_pkg::K_STOP,
                         K_DONE = sg_beat_pkg::K_DONE;

  // ---------------------------------------------------------------- context sequencing
  logic [NCTX-1:0] en;
  logic fin;
  logic run;
  always_comb
    for (int c = 0; c < NCTX; c++) en[c] = cfg[c * CB + sg_cfg_pkg::CU_ENABLE_LSB];
  /* verilator lint_off PINCONNECTEMPTY */
  sg_ctx_seq #(.NCTX(NCTX)) u_seq (.clk, .rst_n, .en, .sectioned, .start, .start_ctx, .fin, .ctx, .run, .busy, .done, .go(), .go_ctx());
  /* verilator lint_on PINCONNECTEMPTY */

  // ---------------------------------------------------------------- configuration
  // cc: the running context's vector; enable is read for all contexts through `en`, the
  // source selects are not used here, nor is in1_stopmap (Zip: the stop levels of a tile
  // are in0's, so in1's mapped stop would be dropped anyway).
  /* verilator lint_off UNUSEDSIGNAL */
  logic [CB-1:0] cc;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [FW-1:0] cf_func;
  logic [2:0] cf_b;
  logic [31:0] cf_mn;
  logic [15:0] cf_k, cf_passes, cf_abeats, cf_bbeats, cf_obeats;
  logic [4:0] cf_log2n;
  logic [BA-1:0] cf_abase0, cf_abase1, cf_bbase0, cf_bbase1, cf_obase0, cf_obase1;
  logic [23:0] cf_map0, cf_map1;
  logic cf_dyn, cf_bt;
  logic [15:0] cf_n;
  logic [5:0] cf_idx;
  logic [31:0] n_eff;           // N: n with bt, 1 << log2n otherwise

  assign cc = cfg[32'(ctx) * CB +: CB];
  always_comb begin
    cf_func = cc[sg_cfg_pkg::CU_FUNC_LSB +: FW];
    cf_b = cc[sg_cfg_pkg::CU_ACCUM_B_LSB +: 3];
    cf_mn = cc[sg_cfg_pkg::CU_MN_LSB +: 32];
    cf_k = cc[sg_cfg_pkg::CU_K_LSB +: 16];
    cf_log2n = cc[sg_cfg_pkg::CU_LOG2N_LSB +: 5];
    cf_passes = cc[sg_cfg_pkg::CU_PASSES_LSB +: 16];
    cf_abeats = cc[sg_cfg_pkg::CU_A_BEATS_LSB +: 16];
    cf_bbeats = cc[sg_cfg_pkg::CU_B_BEATS_LSB +: 16];
    cf_obeats = cc[sg_cfg_pkg::CU_O_BEATS_LSB +: 16];
    cf_abase0 = cc[sg_cfg_pkg::CU_A_BASE0_LSB +: BA];
    cf_abase1 = cc[sg_cfg_pkg::CU_A_BASE1_LSB +: BA];
    cf_bbase0 = cc[sg_cfg_pkg::CU_B_BASE0_LSB +: BA];
    cf_bbase1 = cc[sg_cfg_pkg::CU_B_BASE1_LSB +: BA];
    cf_obase0 = cc[sg_cfg_pkg::CU_O_BASE0_LSB +: BA];
    cf_obase1 = cc[sg_cfg_pkg::CU_O_BASE1_LSB +: BA];
    cf_map0 = cc[sg_cfg_pkg::CU_IN0_STOPMAP_LSB +: 24];
    cf_map1 = cc[sg_cfg_pkg::CU_IN1_STOPMAP_LSB +: 24];
    // DYN = 0 (no matmul_t / rowscale in the arch): the dynamic-tile datapath folds away.
    cf_dyn = DYN != 0 && cc[sg_cfg_pkg::CU_DYN_M_LSB];
    cf_bt = DYN != 0 && cc[sg_cfg_pkg::CU_BT_LSB];
    cf_n = cc[sg_cfg_pkg::CU_N_LSB +: 16];
    cf_idx = cc[sg_cfg_pkg::CU_IDX_WORD_LSB +: 6];
    n_eff = cf_bt ? 32'(cf_n) : (32'd1 << cf_log2n);
  end

  logic is_mm, is_ew1, is_ew2, is_acc, is_rt, is_rs, is_sc, is_ex, is_pl, is_pt, is_mg, is_sl, is_rr, bad_func;
  logic acc_rs;                 // accum rescale: in1 (the scales) in lockstep with in0
  assign is_mm = run && (cf_func == F_MATMUL);
  assign is_ew1 = run && ((SILU != 0 && MUL != 0 && cf_func == F_SILU) ||
                          (ATTN != 0 && ((MUL != 0 && cf_func == F_EXP) || cf_func == F_RECIP || cf_func == F_RSQRT)) ||
                          (TOPK != 0 && (cf_func == F_TOPK || cf_func == F_TOPK_LOGITS)));
  assign is_ew2 = run && ((MUL != 0 && cf_func == F_MUL) || cf_func == F_ADD || cf_func == F_SUB);
  assign acc_rs = run && ATTN != 0 && MUL != 0 && cf_func == F_ACCRS;
  assign is_acc = run && (cf_func == F_ACCUM || (ATTN != 0 && cf_func == F_ACCMAX) || acc_rs);
  assign is_rt = run && (cf_func == F_RETILE);
  assign is_rs = run && DYN != 0 && MUL != 0 && (cf_func == F_ROWSCALE);
  assign is_sc = run && DYN != 0 && (cf_func == F_SCAN || cf_func == F_SCANMAX || cf_func == F_SCANMAXX);
  assign is_ex = run && DYN != 0 && (cf_func == F_EXPAND);
  assign is_pl = run && DYN != 0 && (cf_func == F_PARALLELIZE);
  assign is_pt = run && DYN != 0 && (cf_func == F_PARTITION);
  assign is_mg = run && DYN != 0 && (cf_func == F_MERGE);
  assign is_sl = run && DYN != 0 && (cf_func == F_SELECT);
  assign is_rr = run && ATTN != 0 && (cf_func == F_ROWMAX || cf_func == F_ROWSUM);
  assign bad_func = run && !(is_mm || is_ew1 || is_ew2 || is_acc || is_rt || is_rs ||
                             is_sc || is_ex || is_pl || is_pt || is_mg || is_sl || is_rr);

  // ---------------------------------------------------------------- inputs (stop maps)
  logic [1:0] k0, k1;
  logic l0, l1;
  logic [2:0] s0, s1;         // in0 / in1 stop after the map (s1: Expand only)
  logic [DW-1:0] d0, d1;
  always_comb begin
    {k0, l0, s0} = sg_beat_pkg::map_stop(in0_beat[DW +: sg_beat_pkg::HDR_W], cf_map0);
    d0 = in0_beat[DW-1:0];
    {k1, l1, s1} = sg_beat_pkg::map_stop(in1_beat[DW +: sg_beat_pkg::HDR_W], cf_map1);
    d1 = in1_beat[DW-1:0];
  end
  // ---------------------------------------------------------------- state
  logic [32*LANES-1:0] mac_sum;       // the MAC lanes' sums after MAC stage 2 (sg_cu_mac)
  logic [15:0] lb_w_q;                // words of the b row being loaded (bank rotation)
  logic [RB-1:0] la_rot_q, lb_rot_q;  // index mod W of the a / b row being loaded (sg_cu_mem BANKED)
  logic eos_q;                        // the input DONE has been taken
  logic [BW-1:0] out_q;
  logic ov_q;
  // input banks (matmul)
  logic [1:0] ib_full_q;
  logic [1:0] ib_kind_q [0:1];
  logic [2:0] ib_stop_q [0:1];
  logic ld_sel_q;
  logic [15:0] a_cnt_q, b_cnt_q;
  logic [2:0] a_stop_q;
  logic a_fin_q;                      // dyn_m: the loading bank's a tile is complete
  logic [15:0] ld_rem_q;              // words of a's open row (dyn_m: M; banked: the row's rotation)
  logic [31:0] ld_mn_q;               // dyn_m: complete rows of a so far, times N
  logic [31:0] ib_mn_q [0:1];         // dyn_m: mn of each input bank
  logic cp_sel_q, cp_osel_q;
  logic [15:0] p_q, k_q;
  logic [31:0] pbase_q;               // p_q * LANES
  // output banks (matmul, accum)
  logic [1:0] ob_full_q;
  logic [1:0] ob_kind_q [0:1];
  logic [2:0] ob_stop_q [0:1];
  logic [1:0] ob_zero_q;
  logic [31:0] ob_words_q [0:1];      // dyn_m / bt: valid words of the bank (the rest drain
                                      // as 0; dyn_m: the drain ends at the beat reaching it)
  logic dr_sel_q;
  logic [15:0] dr_cnt_q;
  // accum
  logic acc_sel_q, acc_has_q;
  logic [15:0] acc_cnt_q;
  logic [31:0] acc_words_q;           // dyn_m: words of the group's tiles
  // accum rescale, second stage: the beat taken last cycle, its products old * a and its x,
  // is added and written back this cycle (rs2_*). rs2_hz / rs2_dhz: the accum read / the
  // drain read that this cycle's stage-1 beat or drain beat sees was addressed before that
  // write landed (a one-beat tile), so it waits a cycle.
  logic rs2_v, rs2_hz, rs2_dhz;
  logic [MI-1:0] rs2_a;
  // rowscale
  logic [15:0] rs_cnt_q;              // words of the open row already passed
  logic rs_rowend;                    // in0's beat ends its row (consumes the in1 beat)
  logic [15:0] rs_drop_q;             // beats of the in1 row still to drop (its first is used)
  // Expand: the data tile in bank a_base0 (loaded with a_cnt_q as the beat counter)
  logic ex_have_q;                    // a whole data tile is in the bank
  logic [15:0] ex_len_q;              // its beats
  logic [15:0] ex_oc_q;               // beat of the copy being sent
  // Parallelize
  logic [15:0] pl_e_q;                // outermost element index mod n
  // Partition: the open data element's selector was taken, and it names this output;
  // pt_drain_q: the data DONE has left, the selector's spare beats are dropped up to its
  // DONE; pt_odone_q: meanwhile the output DONE was accepted (the context ends with the
  // selector DONE)
  logic pt_have_q, pt_pass_q, pt_drain_q, pt_odone_q;
  // Select: initial beats emitted so far (up to field n)
  logic [15:0] sl_cnt_q;
  // EagerMerge: a tile is being forwarded (from input mg_src_q)
  logic mg_open_q, mg_src_q;
  // rowmax / rowsum: the open input row (words so far, value so far) and the row still
  // leaving (its value, beats left, whether it ends the tile and the tile's stop)
  logic [15:0] rr_w_q, rr_left_q;
  logic [31:0] rr_acc_q, rr_val_q;
  logic rr_have_q, rr_tl_q;
  logic [2:0] rr_st_q;
  logic bt_rdy;                       // bt: the lanes' (i, j) are set up (sg_cu_addr)

  // ---------------------------------------------------------------- handshakes
  logic can_out, mm_tok, mm_free, a_open, fire0, fire1, fin_ev;
  assign can_out = !ov_q || out_ready;
  assign mm_tok = (a_cnt_q == 16'd0) && (b_cnt_q == 16'd0) && in0_valid && in1_valid &&
                  (k0 != K_DATA) && (k1 != K_DATA);
  assign mm_free = is_mm && !eos_q && !ib_full_q[ld_sel_q];
  assign a_open = cf_dyn ? !a_fin_q : (a_cnt_q < cf_abeats);
  assign rs_rowend = ({1'b0, rs_cnt_q} + 17'(W) >= {1'b0, cf_k}) || l0;
  // Expand: the current data element is the tile held in the bank (ex_have_q) or, when
  // none is held, the STOP at in0's head (an empty data group). in1 (the ref) drives the
  // output: ex_emit sends copy beat ex_oc_q (its final beat waits for the ref element's
  // last beat, which it consumes), ex_stop forwards a ref STOP, ex_done pairs the DONEs.
  // ex_adv: the data element is used up (the ref closed a group at level >= b).
  logic ex_jlast, ex_tok, ex_emit, ex_stop, ex_done, ex_adv;
  assign ex_jlast = ({1'b0, ex_oc_q} + 17'd1 >= {1'b0, ex_len_q});
  assign ex_tok = !ex_have_q && in0_valid && (k0 == K_STOP);
  assign ex_emit = is_ex && !eos_q && ex_have_q && in1_valid && (k1 == K_DATA) && can_out &&
                   (!ex_jlast || l1);
  assign ex_stop = is_ex && !eos_q && in1_valid && (k1 == K_STOP) && can_out &&
                   (ex_have_q || ex_tok);
  assign ex_done = is_ex && !eos_q && in1_valid && (k1 == K_DONE) && in0_valid && (k0 == K_DONE) &&
                   can_out;
  assign ex_adv = ((ex_emit && ex_jlast) || ex_stop) && (s1 >= cf_b);
  // Parallelize: the beat belongs to an element this unit passes (DONE always passes), and
  // it closes an outermost element (stop >= accum_b on a tile's last beat or a STOP).
  logic pl_pass, pl_close;
  assign pl_pass = (k0 == K_DONE) || (pl_e_q == 16'(cf_idx));
  assign pl_close = ((k0 == K_STOP) || ((k0 == K_DATA) && l0)) && (s0 >= cf_b);
  // Partition: the data DONE leaves as the output DONE without waiting for the selector (a
  // fed-back selector's DONE comes only after the regions this output feeds have finished);
  // a selector DONE at in1's head goes with it, else pt_sdone takes it while draining.
  logic pt_done, pt_sdone;
  assign pt_done = is_pt && !eos_q && in0_valid && (k0 == K_DONE) && can_out;
  assign pt_sdone = pt_drain_q && in1_valid && (k1 == K_DONE);
  // Select: an initial beat is due (in0 waits for all of them).
  logic sl_init;
  assign sl_init = is_sl && !eos_q && (sl_cnt_q < cf_n);
  // EagerMerge: the input whose tile goes next (the open one, else in0's DATA, else in1's),
  // and the two DONEs, which leave together once no tile is open.
  logic mg_src, mg_go, mg_done;
  assign mg_src = mg_open_q ? mg_src_q : !(in0_valid && (k0 == K_DATA));
  assign mg_go = is_mg && !eos_q && can_out && (mg_src ? (in1_valid && (k1 == K_DATA)) : (in0_valid && (k0 == K_DATA)));
  assign mg_done = is_mg && !eos_q && !mg_open_q && in0_valid && (k0 == K_DONE) && in1_valid && (k1 == K_DONE) && can_out;
`ifdef SG_DECISION_LOG
  // Simulation only (the harnesses define SG_DECISION_LOG; lint and synthesis never see it):
  // each merge decision, the input whose tile goes next, goes to the harness's decision log,
  // so `stepgen verify` can replay the fabric's arbitration in the model (docs/hardware.md
  // section 6).
  import "DPI-C" function void sg_decision(input string unit, input int src);
  always_ff @(posedge clk)
    if (rst_n && mg_go && !mg_open_q) sg_decision($sformatf("%m"), int'(mg_src));
`endif

  // rowmax / rowsum: the tree in register stages (sg_cu_rowred), then the fold: a row's
  // last beat, a STOP or a DONE needs the output register and no row still leaving.
  logic rr_v, rr_l;                   // the last stage's beat: there, its last, kind and stop
  logic [1:0] rr_k;
  logic [2:0] rr_s;
  logic rr_adv, rr_take;
  logic rr_dn;                        // a DONE is in the stages or taken: nothing more this context
  logic [31:0] rr_val;
  logic rr_done;                      // the last stage's beat ends its row
  sg_cu_rowred #(.W(W), .ATTN(ATTN), .NEAR_FAR(NEAR_FAR)) u_rowred (
    .clk, .rst_n, .run, .sum(cf_func == F_ROWSUM), .adv(rr_adv), .take(is_rr && fire0), .head_v(in0_valid),
    .in_k(k0), .in_l(l0), .in_s(s0), .in_d(d0), .eos(eos_q), .first(rr_w_q == 16'd0), .acc(rr_acc_q),
    .v(rr_v), .k(rr_k), .l(rr_l), .s(rr_s), .dn(rr_dn), .val(rr_val));
  always_comb begin
    rr_done = ({1'b0, rr_w_q} + 17'(W) >= {1'b0, cf_k}) || rr_l;
    rr_take = is_rr && rr_v && !eos_q && (((rr_k == K_DATA) && !rr_done) || (!rr_have_q && can_out));
    rr_adv = !rr_v || rr_take;
  end

  always_comb begin
    in0_ready = 1'b0;
    in1_ready = 1'b0;
    if (is_mm) begin
      in0_ready = mm_free && (mm_tok || (k0 == K_DATA && a_open));
      in1_ready = mm_free && (mm_tok || (k1 == K_DATA && b_cnt_q < cf_bbeats));
    end else if (is_ew1 || is_rt || is_sc) begin
      in0_ready = !eos_q && can_out;
    end else if (is_ew2) begin
      in0_ready = !eos_q && can_out && in1_valid;
      in1_ready = !eos_q && can_out && in0_valid;
    end else if (is_acc) begin
      in0_ready = !eos_q && !ob_full_q[acc_sel_q] && (!acc_rs || (in1_valid && !rs2_hz));
      in1_ready = acc_rs && !eos_q && !ob_full_q[acc_sel_q] && in0_valid && !rs2_hz;
    end else if (is_rs) begin
      in0_ready = !eos_q && can_out &&
                  ((k0 == K_STOP) || (in1_valid && (k0 == K_DATA) && (k1 == K_DATA) && (rs_drop_q == 16'd0)) ||
                   (in1_valid && (k0 == K_DONE) && (k1 == K_DONE)));
      in1_ready = !eos_q &&
                  ((k1 == K_STOP) || ((k1 == K_DATA) && (rs_drop_q != 16'd0)) || (in0_valid && can_out &&
                   (((k0 == K_DATA) && (k1 == K_DATA) && rs_rowend && (rs_drop_q == 16'd0)) ||
                    ((k0 == K_DONE) && (k1 == K_DONE)))));
    end else if (is_ex) begin
      // A data beat loads while no tile is held or as the held one is released; a data
      // STOP is consumed when a ref STOP >= b uses it up.
      in0_ready = !eos_q && (((k0 == K_DATA) && (!ex_have_q || ex_adv)) ||
                             ((k0 == K_STOP) && ex_adv && !ex_have_q) ||
                             ((k0 == K_DONE) && ex_done));
      // A ref beat that is not a tile's last is dropped once a data tile is held (its tile's
      // copy needs only the stop of the last beat). Dropping it before would let the ref run
      // ahead of its copies: when the ref is Broadcast to a consumer that waits for the
      // copies, that consumer's FIFO fills and the ref stops before its last beat (deadlock).
      in1_ready = !eos_q && (((k1 == K_DATA) && ((!l1 && ex_have_q) || (ex_emit && ex_jlast))) ||
                             ex_stop || ex_done);
    end else if (is_pl) begin
      in0_ready = !eos_q && (can_out || !pl_pass);  // a dropped beat never waits for out
    end else if (is_pt) begin
      // A selector element is taken while none is open; the element's data beats then pass
      // (or drop, never waiting for the output); data STOPs (outer stops) are dropped.
      // A selector DATA beat at the head in the data DONE's cycle is taken as usual (a spare:
      // no element follows); after the data DONE every selector beat is dropped.
      in0_ready = !eos_q && (((k0 == K_DATA) && pt_have_q && (can_out || !pt_pass_q)) || (k0 == K_STOP) || pt_done);
      in1_ready = pt_drain_q ||
                  (!eos_q && (((k1 == K_DATA) && !pt_have_q) || (k1 == K_STOP) || (pt_done && (k1 == K_DONE))));
    end else if (is_sl) begin
      // A tile's other beats and STOPs are dropped without waiting for the output; its last
      // beat and the DONE each load the output register.
      in0_ready = !eos_q && !sl_init && (((k0 == K_DATA) && !l0) || (k0 == K_STOP) || can_out);
    end else if (is_mg) begin
      // STOPs (outer stops) are dropped whenever they are at the head.
      in0_ready = !eos_q && ((k0 == K_STOP) || (mg_go && !mg_src) || mg_done);
      in1_ready = !eos_q && ((k1 == K_STOP) || (mg_go && mg_src) || mg_done);
    end else if (is_rr) begin
      // Nothing after the DONE: the next context's beats wait for INIT.
      in0_ready = rr_adv && !rr_dn;
    end
  end
  assign fire0 = in0_valid && in0_ready;
  assign fire1 = in1_valid && in1_ready;
  assign fin_ev = ov_q && out_ready && (out_q[DW + sg_beat_pkg::KIND_LSB +: 2] == K_DONE);
  // A partition still draining its selector ends the context with the selector DONE.
  assign fin = (fin_ev && (!pt_drain_q || pt_sdone)) || (pt_odone_q && pt_sdone) || bad_func;
  assign out_beat = out_q;
  assign out_valid = ov_q;

  // ---------------------------------------------------------------- stage controls
  logic mm_go;                  // the MAC array works this cycle (tile or token)
  logic mm_data;                // ... on a data tile
  logic kfirst, klast, plast;
  logic [31:0] obase_y;
  logic [31:0] cur_mn;          // mn of the tile in the MAC stage
  logic [31:0] mm_words;        // ... its output bank's valid words (all of it when static)
  logic acc_go;                 // accum takes an input beat
  logic wu_go;                  // the W-word unit (accum / scan / silu / mul / add) works
  logic dr_go;                  // the drain loads the output register
  // Word addresses are computed in 32 bits and wrap to the memory's index bits (sg_cu_mem).
  /* verilator lint_off UNUSEDSIGNAL */
  logic [31:0] ld_abase, ld_bbase, acc_base;   // write addresses (read addresses: below)
  /* verilator lint_on UNUSEDSIGNAL */
  logic [15:0] a_nxt, b_nxt;    // loader counts after this cycle's beats
  logic a_done_now;             // a's tile completes this cycle
  logic a_complete;             // a's tile is complete after this cycle
  logic [2:0] a_st;             // a's stop if its last beat comes now
  logic [16:0] rem2;            // words of a's open row with this beat (dyn_m: M; banked: rotation)
  logic row_done;               // ... which completes the row
  logic [15:0] rem_nxt;
  logic [31:0] mn_nxt;          // dyn_m: mn after this cycle's a beat
  logic [31:0] dr_words, dr_lim;  // drain: first word of this beat, valid words of the bank
  // The MAC stage depends on registers only (its own block: the MAC's next read addresses
  // follow from it, and a simulator re-evaluates a block whenever one of its inputs changes).
  always_comb begin
    // The MAC array and the drain are gated by the bank flags alone: only matmul fills input
    // banks and only matmul / accum fill output banks (INIT clears them), so adding is_mm /
    // is_acc would change nothing -- but it would let Yosys prove these arithmetic cells
    // exclusive with the elementwise ones, and its `share` pass then merges them into cells
    // whose select depends on their own results (a combinational loop in Yosys 0.23).
    // bt: nothing enters the MAC stage before the dividers are done (bt_rdy).
    mm_go = ib_full_q[cp_sel_q] && !ob_full_q[cp_osel_q] && (!cf_bt || bt_rdy);
    mm_data = (ib_kind_q[cp_sel_q] == K_DATA);
    kfirst = (k_q == 16'd0);
    klast = ({1'b0, k_q} + 17'd1 >= {1'b0, cf_k});
    cur_mn = cf_dyn ? ib_mn_q[cp_sel_q] : cf_mn;
    mm_words = (cf_dyn || cf_bt) ? cur_mn : 32'hFFFF_FFFF;
    if (cf_dyn) plast = ({1'b0, pbase_q} + 33'(LANES) >= {1'b0, cur_mn});
    else plast = ({1'b0, p_q} + 17'd1 >= {1'b0, cf_passes});
  end
  always_comb begin
    obase_y = cp_osel_q ? 32'(cf_obase1) : 32'(cf_obase0);
    acc_go = is_acc && fire0;
    wu_go = (acc_go || ((is_ew1 || is_ew2 || is_rs || is_sc) && fire0)) && (k0 == K_DATA);
    dr_go = ob_full_q[dr_sel_q] && can_out && !rs2_dhz;
    ld_abase = (ld_sel_q ? 32'(cf_abase1) : 32'(cf_abase0)) + 32'(a_cnt_q) * 32'(W);
    ld_bbase = (ld_sel_q ? 32'(cf_bbase1) : 32'(cf_bbase0)) + 32'(b_cnt_q) * 32'(W);
    acc_base = (acc_sel_q ? 32'(cf_obase1) : 32'(cf_obase0)) + 32'(acc_cnt_q) * 32'(W);
    a_nxt = a_cnt_q + 16'(fire0);
    b_nxt = b_cnt_q + 16'(fire1);
    a_done_now = fire0 && (cf_dyn ? l0 : (a_nxt == cf_abeats));
    a_complete = cf_dyn ? (a_fin_q || a_done_now) : (a_nxt == cf_abeats);
    a_st = l0 ? s0 : 3'd0;
    rem2 = {1'b0, ld_rem_q} + 17'(W);
    row_done = (rem2 >= {1'b0, cf_k});
    rem_nxt = row_done ? 16'(rem2 - {1'b0, cf_k}) : 16'(rem2);
    mn_nxt = ld_mn_q + (row_done ? n_eff : 32'd0);
    dr_words = 32'(dr_cnt_q) * 32'(W);
    dr_lim = ob_words_q[dr_sel_q];
  end

  // ---------------------------------------------------------------- read-address state
  // The registers the local memory's read addresses come from, as they will be in the next
  // cycle: sg_cu_mem reads synchronously (block RAM), so it takes next cycle's addresses now.
  // The main block registers these values.
  logic [15:0] k_d, p_d, dr_cnt_d, acc_cnt_d, ex_oc_d;
  logic [31:0] pbase_d;
  logic cp_sel_d, dr_sel_d, acc_sel_d;
  logic acc_tend;               // accum / scan: this in0 DATA beat ends its tile
  logic dr_tend;                // drain: this beat ends the bank
  // (Separate blocks for what depends on registers only and what depends on the inputs, and
  // no rst_n here: a simulator re-evaluates a block whenever one of its inputs changes, and
  // logic on a top-level input such as rst_n at every evaluation.)
  always_comb begin
    {k_d, p_d, pbase_d, cp_sel_d} = {k_q, p_q, pbase_q, cp_sel_q};
    // MAC: passes x K cycles per tile, one cycle per token
    if (mm_go) begin
      if (!mm_data || (klast && plast)) begin
        cp_sel_d = !cp_sel_q;
        {k_d, p_d, pbase_d} = '0;
      end else if (klast) begin
        k_d = 16'd0;
        p_d = p_q + 16'd1;
        pbase_d = pbase_q + 32'(LANES);
      end else begin
        k_d = k_q + 16'd1;
      end
    end
    if (!run) {k_d, p_d, pbase_d, cp_sel_d} = '0;  // (reset: run is 0; rst_n is an input, see above)
  end
  always_comb begin
    {dr_sel_d, dr_cnt_d, acc_sel_d, acc_cnt_d, ex_oc_d} = {dr_sel_q, dr_cnt_q, acc_sel_q, acc_cnt_q, ex_oc_q};
    acc_tend = cf_dyn ? l0 : ({1'b0, acc_cnt_q} + 17'd1 >= {1'b0, cf_obeats});
    dr_tend = cf_dyn ? ({1'b0, dr_words} + 33'(W) >= {1'b0, dr_lim}) :
                       ({1'b0, dr_cnt_q} + 17'd1 >= {1'b0, cf_obeats});
    // accum: a group closes on a tile with stop >= b, a STOP >= b, or DONE (the other bank
    // accumulates next); scan: one running tile, acc_sel_q stays 0
    if (acc_go) begin
      if (k0 == K_DATA) begin
        acc_cnt_d = acc_tend ? 16'd0 : acc_cnt_q + 16'd1;
        if (acc_tend && a_st >= cf_b) acc_sel_d = !acc_sel_q;
      end else if (k0 != K_STOP || s0 >= cf_b) begin
        acc_sel_d = !acc_sel_q;
      end
    end
    if (is_sc && fire0 && k0 == K_DATA) acc_cnt_d = acc_tend ? 16'd0 : acc_cnt_q + 16'd1;
    // drain
    if (dr_go) begin
      if (ob_kind_q[dr_sel_q] != K_DATA || dr_tend) begin
        dr_sel_d = !dr_sel_q;
        dr_cnt_d = 16'd0;
      end else begin
        dr_cnt_d = dr_cnt_q + 16'd1;
      end
    end
    if (ex_emit) ex_oc_d = ex_jlast ? 16'd0 : ex_oc_q + 16'd1;
    if (!run) {dr_sel_d, dr_cnt_d, acc_sel_d, acc_cnt_d, ex_oc_d} = '0;
  end

  // ---------------------------------------------------------------- local memory
  // sg_cu_mem's ports. Writes are this cycle's; read addresses are next cycle's (the *_d
  // values), and the words a stage reads in a cycle include the previous cycle's writes
  // (a bank is read only once it is full).
  logic [LANES-1:0] lane_act;           // MAC lane l works this cycle (o < mn)
  logic [MI*LANES-1:0] ma_addr, mb_addr;  // next cycle's operand addresses (sg_cu_addr)
  logic [RB*LANES-1:0] ma_rot, mb_rot;
  logic [LANES-1:0] ma_copy, mb_copy;
  logic [32*LANES-1:0] ma_q, mb_q;
  logic [DW-1:0] md_q, mc_q;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [31:0] rd_base_d, acc_base_d;  // next cycle's drain and accum addresses (wrap to MI bits)
  /* verilator lint_on UNUSEDSIGNAL */
  sg_cu_addr #(.W(W), .LANES(LANES), .BUF_WORDS(BUF_WORDS), .DYN(DYN), .A_COPIES(A_COPIES),
               .HOLD(MEM_BANKED == 0 ? 1 : 0)) u_addr (
    .clk, .rst_n, .run, .mm(is_mm), .bt(cf_bt), .n(cf_n), .k(cf_k), .log2n(cf_log2n),
    .abase0(cf_abase0), .abase1(cf_abase1), .bbase0(cf_bbase0), .bbase1(cf_bbase1),
    .step(mm_go && mm_data), .klast, .plast, .p_q, .p_d, .pbase_q, .pbase_d, .k_d, .sel_d(cp_sel_d), .mn(cur_mn),
    .bt_rdy, .act(lane_act), .a_addr(ma_addr), .b_addr(mb_addr), .a_rot(ma_rot), .b_rot(mb_rot),
    .a_copy(ma_copy), .b_copy(mb_copy));
  always_comb begin
    // Expand reads its copy beats through the drain's port (never busy in Expand)
    rd_base_d = is_ex ? 32'(cf_abase0) + 32'(ex_oc_d) * 32'(W) :
                        (dr_sel_d ? 32'(cf_obase1) : 32'(cf_obase0)) + 32'(dr_cnt_d) * 32'(W);
    acc_base_d = (acc_sel_d ? 32'(cf_obase1) : 32'(cf_obase0)) + 32'(acc_cnt_d) * 32'(W);
  end
  sg_cu_mem #(.W(W), .LANES(LANES), .BUF_WORDS(BUF_WORDS), .BANKED(MEM_BANKED), .B_COPIES(DYN != 0 ? 2 : 1),
             .A_COPIES(A_COPIES)) u_mem (
    .clk, .mac_on(is_mm),
    // loader: a beats (and Expand's data tile, not rotated), b beats
    .a_we((is_mm && fire0 && !mm_tok) || (is_ex && fire0 && k0 == K_DATA)), .a_wbase(MI'(ld_abase)),
    .a_wrot(is_ex ? RB'(0) : la_rot_q), .a_wdata(d0),
    .b_we(is_mm && fire1 && !mm_tok), .b_wbase(MI'(ld_bbase)), .b_wrot(cf_bt ? lb_rot_q : RB'(0)), .b_wdata(d1),
    // MAC results at the end of a pass (stage 2): lane l -> word o of its output bank
    .om_we(mac_v && m2_klast), .om_wmask(mac_act), .om_wbase(m2_obase), .om_wdata(mac_sum),
    // accum, scan: the running tile
    .oc_we(acc_rs ? rs2_v : (acc_go || (is_sc && fire0)) && k0 == K_DATA),
    .oc_wbase(acc_rs ? rs2_a : MI'(acc_base)), .oc_wdata(wtmp),
    .a_raddr(ma_addr), .a_rrot(ma_rot), .a_rcopy(ma_copy), .a_rdata(ma_q),
    .b_raddr(mb_addr), .b_rrot(mb_rot), .b_rcopy(mb_copy), .b_rdata(mb_q),
    .d_from_a(is_ex), .d_rbase(MI'(rd_base_d)), .d_rdata(md_q),
    .c_rbase(MI'(acc_base_d)), .c_rdata(mc_q));

  // MAC array, two stages (sg_cu_mac): stage 1 in the k step's cycle, stage 2 (the add) in
  // the next. What stage 2 needs to know of the step goes along (m2_*): at a pass's last k
  // step the sums go to the output bank, and after a tile's last pass its bank is full.
  // Stage 1 runs the next step meanwhile: only a data tile's output is one cycle later.
  logic mac_v;                        // MAC stage 2 works this cycle ...
  logic [LANES-1:0] mac_act;          // ... on these lanes
  logic m2_klast, m2_fin, m2_osel;
  logic [MI-1:0] m2_obase;
  logic [2:0] m2_stop;
  logic [31:0] m2_words;
  sg_cu_mac #(.LANES(LANES), .BF16(BF16), .NEAR_FAR(NEAR_FAR)) u_mac (
    .clk, .rst_n, .go(run && mm_go && mm_data), .act(lane_act), .kfirst, .a(ma_q), .b(mb_q),
    .sum_v(mac_v), .sum_act(mac_act), .sum(mac_sum));
  always_ff @(posedge clk) begin
    m2_fin <= rst_n && run && mm_go && mm_data && klast && plast;
    m2_klast <= klast;
    m2_obase <= MI'(obase_y + pbase_q);
    m2_osel <= cp_osel_q;
    m2_stop <= ib_stop_q[cp_sel_q];
    m2_words <= mm_words;
  end

  // drain (and Expand's copy beats, read raw)
  logic [DW-1:0] dtmp;          // drained words
  always_comb
    for (int w = 0; w < W; w++)
      dtmp[32*w +: 32] = (!is_ex && (ob_zero_q[dr_sel_q] || (dr_words + 32'(w) >= dr_lim))) ?
                         32'h0 : md_q[32*w +: 32];

  // W-word unit and its functions (sg_cu_word): accum, scan, accum rescale (its second stage
  // the cycle after the beat is taken, rs2_*), add, sub, mul, silu, rowscale, exp, recip.
  logic [DW-1:0] wtmp;          // W-word unit results (accum rescale: of the rs2 beat)
  logic [DW-1:0] xtmp;          // scan max exclusive: the running max before the beat (-inf first)
  sg_cu_word #(.W(W), .DYN(DYN), .ATTN(ATTN), .SILU(SILU), .MUL(MUL), .NEAR_FAR(NEAR_FAR), .TOPK(TOPK)) u_word (
    .clk, .func(cf_func), .idx(cf_idx), .topk_e(cf_k), .topk_k(cf_n), .x_next(in0_next[DW-1:0]), .go(wu_go || acc_rs),
    .running(is_acc || is_sc),
    .rescale(acc_rs), .rescale_take(acc_rs && acc_go), .has(acc_has_q), .x(d0), .y(d1), .old(mc_q),
    .res(wtmp), .res_excl(xtmp));

  // accum rescale's second stage (above). The hazards compare the address the beat now taken
  // wrote with what the next cycle's accum and drain reads were addressed to (acc_base_d,
  // rd_base_d: same tile, beat 0 again, only when a tile is one beat).
  always_ff @(posedge clk) begin
    rs2_v <= rst_n && acc_rs && acc_go && k0 == K_DATA;
    rs2_hz <= rst_n && acc_rs && acc_go && k0 == K_DATA && MI'(acc_base_d) == MI'(acc_base);
    rs2_dhz <= rst_n && acc_rs && acc_go && k0 == K_DATA && MI'(rd_base_d) == MI'(acc_base);
    if (acc_rs && acc_go) rs2_a <= MI'(acc_base);
  end

  // ---------------------------------------------------------------- main block
  logic ld_out;                 // load out_q this cycle
  logic [BW-1:0] nb;            // ... with this beat

  /* verilator lint_off BLKSEQ */
  always_ff @(posedge clk) begin
    if (!rst_n || !run) begin
      // Reset, idle or INIT: an empty unit for the next context.
      ov_q <= 1'b0;
      eos_q <= 1'b0;
      ib_full_q <= '0;
      ob_full_q <= '0;
      ob_zero_q <= '0;
      ld_sel_q <= 1'b0;
      cp_sel_q <= 1'b0;
      cp_osel_q <= 1'b0;
      dr_sel_q <= 1'b0;
      a_cnt_q <= 16'd0;
      b_cnt_q <= 16'd0;
      a_stop_q <= 3'd0;
      p_q <= 16'd0;
      k_q <= 16'd0;
      pbase_q <= 32'd0;
      dr_cnt_q <= 16'd0;
      acc_sel_q <= 1'b0;
      acc_has_q <= 1'b0;
      acc_cnt_q <= 16'd0;
      acc_words_q <= 32'd0;
      a_fin_q <= 1'b0;
      ld_rem_q <= 16'd0;
      ld_mn_q <= 32'd0;
      rs_cnt_q <= 16'd0;
      rs_drop_q <= 16'd0;
      ex_have_q <= 1'b0;
      ex_oc_q <= 16'd0;
      pl_e_q <= 16'd0;
      pt_have_q <= 1'b0;
      pt_pass_q <= 1'b0;
      pt_drain_q <= 1'b0;
      pt_odone_q <= 1'b0;
      sl_cnt_q <= 16'd0;
      mg_open_q <= 1'b0;
      mg_src_q <= 1'b0;
      rr_w_q <= 16'd0;
      rr_have_q <= 1'b0;
      lb_w_q <= 16'd0;
      la_rot_q <= '0;
      lb_rot_q <= '0;
    end else begin
      ld_out = 1'b0;
      nb = '0;
      {k_q, p_q, pbase_q, cp_sel_q, dr_sel_q, dr_cnt_q, acc_sel_q, acc_cnt_q, ex_oc_q} <=
          {k_d, p_d, pbase_d, cp_sel_d, dr_sel_d, dr_cnt_d, acc_sel_d, acc_cnt_d, ex_oc_d};

      // ---- loader rows (bank rotation): a row is K words; a tile's last beat starts row 0.
      // a's open row is the loader's own count (ld_rem_q, row_done); b has no such count.
      if (is_mm && fire0 && !mm_tok) la_rot_q <= a_done_now ? '0 : la_rot_q + RB'(row_done);
      if (is_mm && fire1 && !mm_tok) begin
        if (b_nxt == cf_bbeats || {1'b0, lb_w_q} + 17'(W) >= {1'b0, cf_k}) begin
          lb_w_q <= 16'd0;
          lb_rot_q <= (b_nxt == cf_bbeats) ? '0 : lb_rot_q + RB'(1);
        end else begin
          lb_w_q <= lb_w_q + 16'(W);
        end
      end

      // ================================================ control (non-blocking)
      // ---- matmul loader
      if (is_mm && fire0 && fire1 && mm_tok) begin
        ib_full_q[ld_sel_q] <= 1'b1;
        ib_kind_q[ld_sel_q] <= k0;
        ib_stop_q[ld_sel_q] <= s0;
        ld_sel_q <= !ld_sel_q;
        if (k0 == K_DONE) eos_q <= 1'b1;
      end else if (is_mm && (fire0 || fire1)) begin
        if (a_done_now) a_stop_q <= a_st;
        if (a_complete && (b_nxt == cf_bbeats)) begin
          ib_full_q[ld_sel_q] <= 1'b1;
          ib_kind_q[ld_sel_q] <= K_DATA;
          ib_stop_q[ld_sel_q] <= a_done_now ? a_st : a_stop_q;
          ib_mn_q[ld_sel_q] <= fire0 ? mn_nxt : ld_mn_q;
          ld_sel_q <= !ld_sel_q;
          a_cnt_q <= 16'd0;
          b_cnt_q <= 16'd0;
          a_fin_q <= 1'b0;
          ld_rem_q <= 16'd0;
          ld_mn_q <= 32'd0;
        end else begin
          a_cnt_q <= a_nxt;
          b_cnt_q <= b_nxt;
          if (a_done_now) a_fin_q <= 1'b1;
          if (fire0) begin
            ld_rem_q <= rem_nxt;
            ld_mn_q <= mn_nxt;
          end
        end
      end

      // ---- matmul MAC sequencing: passes x K cycles per tile, one cycle per token
      if (mm_go) begin
        if (!mm_data || (klast && plast)) begin
          ib_full_q[cp_sel_q] <= 1'b0;
          if (!mm_data) begin       // a token tile's output bank is full at once
            ob_full_q[cp_osel_q] <= 1'b1;
            ob_kind_q[cp_osel_q] <= ib_kind_q[cp_sel_q];
            ob_stop_q[cp_osel_q] <= ib_stop_q[cp_sel_q];
            ob_zero_q[cp_osel_q] <= 1'b0;
            ob_words_q[cp_osel_q] <= mm_words;
          end
          cp_osel_q <= !cp_osel_q;
        end
      end
      // ... a data tile's once its last sums are written (MAC stage 2, the next cycle; the
      // other bank's token, if one follows at once, is set in the same cycle)
      if (m2_fin) begin
        ob_full_q[m2_osel] <= 1'b1;
        ob_kind_q[m2_osel] <= K_DATA;
        ob_stop_q[m2_osel] <= m2_stop;
        ob_zero_q[m2_osel] <= 1'b0;
        ob_words_q[m2_osel] <= m2_words;
      end

      // ---- accum (acc_cnt_q / acc_sel_q: the read-address state above)
      if (acc_go) begin
        if (k0 == K_DATA) begin
          if (acc_tend) begin
            acc_words_q <= 32'(acc_cnt_q) * 32'(W) + 32'(W);
            if (a_st >= cf_b) begin
              ob_full_q[acc_sel_q] <= 1'b1;
              ob_kind_q[acc_sel_q] <= K_DATA;
              ob_stop_q[acc_sel_q] <= a_st - cf_b;
              ob_zero_q[acc_sel_q] <= 1'b0;
              ob_words_q[acc_sel_q] <= cf_dyn ? 32'(acc_cnt_q) * 32'(W) + 32'(W) : 32'hFFFF_FFFF;
              acc_has_q <= 1'b0;
            end else begin
              acc_has_q <= 1'b1;
            end
          end
        end else if (k0 == K_STOP) begin
          if (s0 >= cf_b) begin
            ob_full_q[acc_sel_q] <= 1'b1;
            ob_kind_q[acc_sel_q] <= K_DATA;
            ob_stop_q[acc_sel_q] <= s0 - cf_b;
            ob_zero_q[acc_sel_q] <= !acc_has_q;
            ob_words_q[acc_sel_q] <= !cf_dyn ? 32'hFFFF_FFFF :
                                     acc_has_q ? acc_words_q : 32'(cf_obeats) * 32'(W);
            acc_has_q <= 1'b0;
          end
        end else begin
          ob_full_q[acc_sel_q] <= 1'b1;
          ob_kind_q[acc_sel_q] <= K_DONE;
          ob_stop_q[acc_sel_q] <= 3'd0;
          ob_zero_q[acc_sel_q] <= 1'b0;
          eos_q <= 1'b1;
        end
      end

      // ---- scan: one running tile in bank o_base0 (acc_sel_q stays 0); acc_has_q = an
      // earlier tile of the group is in it. Every beat leaves at once (elementwise below).
      if (is_sc && fire0) begin
        if (k0 == K_DATA) begin
          if (acc_tend) acc_has_q <= (a_st < cf_b);
        end else if (k0 == K_STOP && s0 >= cf_b) begin
          acc_has_q <= 1'b0;
        end
      end

      // ---- drain of the output banks (matmul, accum; dr_cnt_q / dr_sel_q: above)
      if (dr_go) begin
        ld_out = 1'b1;
        if (ob_kind_q[dr_sel_q] != K_DATA) begin
          nb = {ob_kind_q[dr_sel_q], 1'b0, ob_stop_q[dr_sel_q], {DW{1'b0}}};
          ob_full_q[dr_sel_q] <= 1'b0;
        end else begin
          nb = {K_DATA, dr_tend, dr_tend ? ob_stop_q[dr_sel_q] : 3'd0, dtmp};
          if (dr_tend) ob_full_q[dr_sel_q] <= 1'b0;
        end
      end

      // ---- elementwise: silu / mul / add / rowscale / scan (results from the W-word unit)
      if (is_rs && fire0 && k0 == K_DATA) rs_cnt_q <= rs_rowend ? 16'd0 : rs_cnt_q + 16'(W);
      if (is_rs && fire1 && k1 == K_DATA)
        rs_drop_q <= (rs_drop_q != 16'd0) ? rs_drop_q - 16'd1 : (cf_n > 16'd1) ? cf_n - 16'd1 : 16'd0;
      if ((is_ew1 || is_ew2 || is_rs || is_sc) && fire0) begin
        ld_out = 1'b1;
        if (k0 == K_DATA) begin
          nb = {K_DATA, l0, l0 ? s0 : 3'd0, (DYN != 0 && cf_func == F_SCANMAXX) ? xtmp : wtmp};
        end else begin
          nb = {k0, 1'b0, (k0 == K_STOP) ? s0 : 3'd0, {DW{1'b0}}};
          if (k0 == K_DONE) eos_q <= 1'b1;
        end
      end

      // ---- retile
      if (is_rt && fire0) begin
        if (k0 == K_DATA) begin
          ld_out = 1'b1;
          if (l0 && s0 >= cf_b) nb = {K_DATA, 1'b1, s0 - cf_b, d0};
          else nb = {K_DATA, 1'b0, 3'd0, d0};
        end else if (k0 == K_STOP) begin
          if (s0 > cf_b) begin
            ld_out = 1'b1;
            nb = {K_STOP, 1'b0, s0 - cf_b, {DW{1'b0}}};
          end
        end else begin
          ld_out = 1'b1;
          nb = {sg_beat_pkg::H_DONE, {DW{1'b0}}};
          eos_q <= 1'b1;
        end
      end

      // ---- expand
      if (is_ex && fire0 && k0 == K_DATA) begin  // a data beat into the bank
        if (l0) begin
          ex_len_q <= a_cnt_q + 16'd1;
          a_cnt_q <= 16'd0;
        end else begin
          a_cnt_q <= a_cnt_q + 16'd1;
        end
      end
      // Released (ex_adv) and refilled by a 1-beat tile in the same cycle: the later
      // assignment wins.
      if (ex_adv) ex_have_q <= 1'b0;
      if (is_ex && fire0 && k0 == K_DATA && l0) ex_have_q <= 1'b1;
      if (ex_emit) begin
        ld_out = 1'b1;
        nb = {K_DATA, ex_jlast, ex_jlast ? s1 : 3'd0, dtmp};
      end
      if (ex_stop) begin
        ld_out = 1'b1;
        nb = {K_STOP, 1'b0, s1, {DW{1'b0}}};
      end
      // expand, partition, merge: the paired input DONEs leave as the output DONE; select:
      // in0's DONE
      if (ex_done || pt_done || mg_done || (is_sl && fire0 && (k0 == K_DONE))) begin
        ld_out = 1'b1;
        nb = {sg_beat_pkg::H_DONE, {DW{1'b0}}};
        eos_q <= 1'b1;
      end

      // ---- parallelize: element pl_e_q passes iff pl_e_q == idx_word
      if (is_pl && fire0) begin
        if (pl_close) pl_e_q <= ({1'b0, pl_e_q} + 17'd1 >= {1'b0, cf_n}) ? 16'd0 : pl_e_q + 16'd1;
        if (pl_pass) begin
          ld_out = 1'b1;
          if (k0 == K_DATA) nb = {K_DATA, l0, l0 ? s0 : 3'd0, d0};
          else nb = {k0, 1'b0, (k0 == K_STOP) ? s0 : 3'd0, {DW{1'b0}}};
          if (k0 == K_DONE) eos_q <= 1'b1;
        end
      end

      // ---- partition: the selector's word 0 names the output of the element
      if (is_pt && fire1 && (k1 == K_DATA)) begin
        pt_have_q <= 1'b1;
        pt_pass_q <= (d1[31:0] == 32'(cf_idx));
      end
      if (is_pt && fire0 && (k0 == K_DATA)) begin
        if (pt_pass_q) begin
          ld_out = 1'b1;
          nb = {K_DATA, l0, 3'd0, d0};
        end
        if (l0) pt_have_q <= 1'b0;
      end
      if (pt_done && !(in1_valid && (k1 == K_DONE))) pt_drain_q <= 1'b1;
      if (pt_sdone) pt_drain_q <= 1'b0;
      if (pt_drain_q && fin_ev) pt_odone_q <= 1'b1;

      // ---- select: c = n initial beats, then one beat per input tile (at its last beat)
      if ((sl_init && can_out) || (is_sl && fire0 && (k0 == K_DATA) && l0)) begin
        ld_out = 1'b1;
        nb = {K_DATA, 1'b1, 3'd0, DW'(32'(cf_idx))};
      end
      if (sl_init && can_out) sl_cnt_q <= sl_cnt_q + 16'd1;

      // ---- EagerMerge: whole tiles in the order they come, stop 0
      if (mg_go) begin
        ld_out = 1'b1;
        nb = mg_src ? {K_DATA, l1, 3'd0, d1} : {K_DATA, l0, 3'd0, d0};
        mg_open_q <= !(mg_src ? l1 : l0);
        mg_src_q <= mg_src;
      end

      // ---- rowmax / rowsum: a row's first beat leaves with its last input beat, the rest
      // (held in rr_val_q) one per cycle after
      if (rr_have_q && can_out) begin
        ld_out = 1'b1;
        nb = {K_DATA, rr_tl_q && rr_left_q == 16'd1, (rr_tl_q && rr_left_q == 16'd1) ? rr_st_q : 3'd0, {W{rr_val_q}}};
        rr_left_q <= rr_left_q - 16'd1;
        if (rr_left_q == 16'd1) rr_have_q <= 1'b0;
      end
      if (rr_take) begin
        if (rr_k != K_DATA) begin
          ld_out = 1'b1;
          nb = {rr_k, 1'b0, (rr_k == K_STOP) ? rr_s : 3'd0, {DW{1'b0}}};
          if (rr_k == K_DONE) eos_q <= 1'b1;
        end else if (!rr_done) begin
          rr_w_q <= rr_w_q + 16'(W);
          rr_acc_q <= rr_val;
        end else begin
          rr_w_q <= 16'd0;
          ld_out = 1'b1;
          nb = {K_DATA, rr_l && cf_n <= 16'd1, (rr_l && cf_n <= 16'd1) ? rr_s : 3'd0, {W{rr_val}}};
          if (cf_n > 16'd1) begin
            rr_have_q <= 1'b1;
            rr_val_q <= rr_val;
            rr_left_q <= cf_n - 16'd1;
            rr_tl_q <= rr_l;
            rr_st_q <= rr_l ? rr_s : 3'd0;
          end
        end
      end

      // ---- output register
      if (ld_out) begin
        out_q <= nb;
        ov_q <= 1'b1;
      end else if (out_ready) begin
        ov_q <= 1'b0;
      end
    end
  end
  /* verilator lint_on BLKSEQ */
endmodule
