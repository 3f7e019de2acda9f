#!/usr/bin/env bash
# End-to-end test of the Verilator harness (sim/harness/harness_main.cpp, DramModel, npy,
# flows/verilator_build.sh) on the hand-written fake fabric tests/rtl/fake_fabric.sv.
#
# usage: tests/rtl/run_fake_fabric.sh <work_dir> [--no-trace]
#
# Cases:
#   ok        N = 8 pieces copied from byte 0 to byte 1024; checks output == input, offchip
#             bytes = 2*N*64 and the hand-computed cycle count below.
#   deadlock  same, but the writer is stalled (config word 3 = 1): exit 3, port 0 named.
#   timeout   max_cycles = 20: exit 4.
#   error     missing input .npy: exit 2, message names the file.
#   baddr     the reader's base is outside the DRAM image: exit 2, message names AG and cycle.
#   big       N = 65536 pieces (4 MiB each way): data and byte counts; reports cycles/s.
#   trace     a --trace build writes an FST file (skipped with --no-trace).
#
# Hand computation of the "ok" case. DRAM: channels 2, latency 10, ii 2, startup 5; piece p
# is on channel p % 2 (read pieces 0..7, write pieces 16..23, so write j is on channel j % 2).
# Fake: FIFO depth 4, reads need a credit (issued - written < 4); the reader presents read i
# in the cycle after the edge that issued it; responses are pushed at the edge of their
# delivery cycle; the writer pops at the next edge and presents the write one cycle later.
# "edge c" ends cycle c; cycle 0 is the start cycle.
#   reads r0..r3 issued at edges 0..3 -> accepted at t = 1,2,3,4:
#     r0 t1 ch0 start max(1,0,5)=5 nf0=7 done 15 | r1 t2 ch1 start 5 nf1=7 done 15
#     r2 t3 ch0 start 7 nf0=9 done 17            | r3 t4 ch1 start 7 nf1=9 done 17
#   delivered (one per cycle, in order) at 15, 16, 17, 18; popped by the writer at edges
#   16, 17, 18, 19 -> writes w0..w3 accepted at t = 17, 18, 19, 20.
#   credits come back at edges 16..19, so r4..r7 are issued at edges 17..20 -> t = 18..21.
#   Same-cycle requests are scheduled AG 0 (reader) first:
#     t17 w0 ch0 start max(17,9)=17 nf0=19 done 27
#     t18 r4 ch0 start 19 nf0=21 done 29 ; w1 ch1 start 18 nf1=20 done 28
#     t19 r5 ch1 start 20 nf1=22 done 30 ; w2 ch0 start 21 nf0=23 done 31
#     t20 r6 ch0 start 23 nf0=25 done 33 ; w3 ch1 start 22 nf1=24 done 32
#     t21 r7 ch1 start 24 nf1=26 done 34
#   r4..r7 delivered at 29, 30, 33, 34; popped at edges 30, 31, 34, 35 -> w4..w7 at t = 31,
#   32, 35, 36:
#     w4 ch0 start max(31,25)=31 nf0=33 done 41 ; w5 ch1 start max(32,26)=32 nf1=34 done 42
#     w6 ch0 start max(35,33)=35 done 45        ; w7 ch1 start max(36,34)=36 done 46
#   written reaches 8 at edge 35; at edge 36 the last write is accepted and done <= 1, so done
#   is seen in cycle 37. cycles = max(37, 46) = 46.
# Deadlock case: the same four reads are delivered at 15..18, the FIFO fills (port 0 valid and
# full), nothing moves afterwards; cycle 18 is the last active one, so with watchdog 1000 the
# harness stops at cycle 18 + 1000 = 1018.
set -euo pipefail

work="${1:?usage: $0 <work_dir> [--no-trace]}"
notrace=0
[ "${2:-}" = "--no-trace" ] && notrace=1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
mkdir -p "$work"
work="$(realpath "$work")"

fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== lint"
verilator --lint-only -Wall "$here/fake_fabric.sv" || fail "lint of fake_fabric.sv"

echo "== build"
bin="$("$root/flows/verilator_build.sh" "$work/build" "$here/fake_fabric.sv")" || fail "build"
echo "binary: $bin"

# make_case <dir> <n_pieces> <stall> <max_cycles> <watchdog> [trace]
make_case() {
  python3 - "$@" <<'EOF'
import json, os, struct, sys
d, n, stall, maxc, wd = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
trace = sys.argv[6] if len(sys.argv) > 6 else ""
os.makedirs(os.path.join(d, "inputs"), exist_ok=True)
rbase, wbase = 0, max(1024, n * 64)
rows, cols = n, 16                      # one 64-byte piece = 16 fp32 per row
with open(os.path.join(d, "fabric.bin"), "wb") as f:
    f.write(struct.pack("<4I", rbase, n, wbase, stall))
# .npy v1.0 by hand: magic, version, uint16 header length, dict padded to a multiple of 64.
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
vals = [((i * 7919) % 100003) * 0.25 - 1000.0 for i in range(rows * cols)]
with open(os.path.join(d, "inputs", "x.npy"), "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
    f.write(struct.pack("<%df" % len(vals), *vals))
run = {"bitstream": "fabric.bin", "n_ag": 2, "pieces_per_beat": 1, "link_bits": 512, "addr_bits": 32,
       "dram": {"channels": 2, "latency": 10, "ii": 2, "startup": 5}, "dram_bytes": 2 * wbase + 4096,
       "inputs": [{"name": "x", "npy": "inputs/x.npy", "base": rbase, "rows": rows, "cols": cols}],
       "outputs": [{"name": "out", "npy": "rtl/out.npy", "base": wbase, "rows": rows, "cols": cols}],
       "ports": ["u_wr.in0 (stream x)", "u_dummy.in0 (stream unused)"],
       "max_cycles": maxc, "watchdog_cycles": wd, "trace": trace, "result": "rtl/result.json"}
with open(os.path.join(d, "run.json"), "w") as f:
    json.dump(run, f, indent=1)
EOF
}

# check <dir> <python expression over r (result dict), same (output == input)>
check() {
  python3 - "$1" "$2" <<'EOF' || fail "check '$2' in $1"
import json, os, sys
d, expr = sys.argv[1], sys.argv[2]
r = json.load(open(os.path.join(d, "rtl", "result.json")))
out = os.path.join(d, "rtl", "out.npy")
same = os.path.exists(out) and open(out, "rb").read() == open(os.path.join(d, "inputs", "x.npy"), "rb").read()
ok = eval(expr)
if not ok:
    print("result:", json.dumps(r), "same:", same, file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
}

runbin() {  # runbin <bin> <dir> <expected exit code>
  local rc=0
  "$1" "$2/run.json" >"$2/stdout.txt" 2>"$2/stderr.txt" || rc=$?
  cat "$2/stdout.txt" "$2/stderr.txt"
  [ "$rc" = "$3" ] || fail "$2: exit code $rc, expected $3"
}

echo "== ok"
make_case "$work/ok" 8 0 100000 1000
runbin "$bin" "$work/ok" 0
check "$work/ok" 'r["status"] == "ok" and same'
check "$work/ok" 'r["offchip_read_bytes"] == 8*64 and r["offchip_write_bytes"] == 8*64'
check "$work/ok" 'r["done_cycle"] == 37 and r["last_write_done"] == 46 and r["cycles"] == 46'
check "$work/ok" 'r["stuck"] == [] and r["outstanding_reads"] == 0 and r["config_words"] == 4'

echo "== deadlock"
make_case "$work/deadlock" 8 1 100000 1000
runbin "$bin" "$work/deadlock" 3
check "$work/deadlock" 'r["status"] == "deadlock" and r["cycles"] == 1018'
check "$work/deadlock" 'r["stuck"] == ["u_wr.in0 (stream x)"]'
check "$work/deadlock" 'r["stuck_detail"] == [{"index": 0, "port": "u_wr.in0 (stream x)", "valid": True, "full": True}]'
check "$work/deadlock" 'r["offchip_read_bytes"] == 4*64 and r["offchip_write_bytes"] == 0'
grep -q "u_wr.in0 (stream x)" "$work/deadlock/stderr.txt" || fail "deadlock message does not name the port"

echo "== timeout"
make_case "$work/timeout" 8 0 20 1000
runbin "$bin" "$work/timeout" 4
check "$work/timeout" 'r["status"] == "timeout" and r["cycles"] == 20 and r["sim_cycles"] == 20'

echo "== error"
make_case "$work/error" 8 0 100000 1000
rm "$work/error/inputs/x.npy"
runbin "$bin" "$work/error" 2
check "$work/error" 'r["status"] == "error" and "x.npy" in r["message"] and "cannot open" in r["message"]'

echo "== bad address"
make_case "$work/baddr" 8 0 100000 1000
python3 -c "import struct,sys; open(sys.argv[1],'wb').write(struct.pack('<4I', 1 << 30, 8, 1024, 0))" "$work/baddr/fabric.bin"
runbin "$bin" "$work/baddr" 2
check "$work/baddr" 'r["status"] == "error" and "read request of AG 0 at cycle 1" in r["message"] and "outside" in r["message"]'

echo "== big"
make_case "$work/big" 65536 0 100000000 1000
runbin "$bin" "$work/big" 0
check "$work/big" 'r["status"] == "ok" and same'
check "$work/big" 'r["offchip_read_bytes"] == 65536*64 == r["offchip_write_bytes"]'
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('big: %d cycles, %.2f s, %.3g cycles/s' % (r['cycles'], r['wall_seconds'], r['cycles_per_second']))" "$work/big/rtl/result.json"

if [ "$notrace" = 0 ]; then
  echo "== trace"
  tbin="$("$root/flows/verilator_build.sh" "$work/build_trace" "$here/fake_fabric.sv" --trace)" || fail "trace build"
  make_case "$work/trace" 8 0 100000 1000 rtl/wave.fst
  runbin "$tbin" "$work/trace" 0
  check "$work/trace" 'r["status"] == "ok" and r["cycles"] == 46 and same'
  [ -s "$work/trace/rtl/wave.fst" ] || fail "no FST written"
  # The non-trace binary refuses a trace request.
  runbin "$bin" "$work/trace" 2
fi

echo "PASS"
