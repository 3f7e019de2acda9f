#!/usr/bin/env bash
# Bad input through the command line: each case exits non-zero, prints a located error with
# its id, and leaves no output folder (nor a partial one) behind.
set -uo pipefail
stepgen="$1"; out="$2"; root="$(cd "$(dirname "$0")/../.." && pwd)"
rm -rf "$out"; mkdir -p "$out"
fail=0
check() {  # name, expected id, args...
  local name="$1" id="$2"; shift 2
  "$stepgen" "$@" -o "$out/$name" > "$out/$name.log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ]; then echo "FAIL $name: exit 0"; fail=1; fi
  if ! grep -q "error\[$id\]" "$out/$name.log"; then echo "FAIL $name: no error[$id]"; cat "$out/$name.log"; fail=1; fi
  if ! grep -qE ':[0-9]+:[0-9]+: error|\.npy: error' "$out/$name.log"; then echo "FAIL $name: no location"; fail=1; fi
  if ls -a "$out" | grep -q "^\.\?$name\(\.partial.*\)\?$"; then echo "FAIL $name: output left behind"; fail=1; fi
  echo "ok $name ($id, exit $rc)"
}
g="$root/examples/swiglu/graph.yaml"; a="$root/arch/default.yaml"
check malformed_yaml Y-001 compile --arch "$root/tests/data/bad/arch_malformed.yaml" --graph "$g"
check unknown_op G-101 compile --arch "$a" --graph "$root/tests/data/bad/graph_unknown_op.yaml"
check dangling G-104 compile --arch "$a" --graph "$root/tests/data/bad/graph_dangling.yaml"
check double_consumer G-103 compile --arch "$a" --graph "$root/tests/data/bad/graph_double_consumer.yaml"
check too_big M-301 compile --arch "$root/tests/data/arch_no_cu.yaml" --graph "$g"
check unroutable M-303 compile --arch "$root/tests/data/arch_reach1.yaml" --graph "$g"
# Shape mismatch: the up-projection weights loaded as [D, 2*tf] tiles, so Zip/matmul
# shapes no longer agree with the gate branch (S-2xx, naming the op and both shapes).
sed '/name: load_wu/s/tile: \[D, tf\]/tile: [D, 2*tf]/' "$g" > "$out/shape_mismatch.yaml"
grep -q '2\*tf' "$out/shape_mismatch.yaml" || { echo "FAIL: could not build the shape-mismatch graph"; exit 1; }
check shape_mismatch S-213 compile --arch "$a" --graph "$out/shape_mismatch.yaml"
check missing_input R-401 verify --arch "$a" --graph "$g" --inputs "$out/no_such_folder" --model-only
# A KV-length file with a negative and with a non-numeric length (gqa-decode --example).
hdr="source_file,batch,stdev_label,start_row_1based,end_row_1based,slot,context_tokens"
printf '%s\nb2.npy,2,1,1,2,0,100\nb2.npy,2,1,1,2,1,-5\n' "$hdr" > "$out/kv_negative.csv"
printf '%s\nb2.npy,2,1,1,2,0,100\nb2.npy,2,1,1,2,1,12x\n' "$hdr" > "$out/kv_text.csv"
check kv_negative R-407 graph gqa-decode --kv-lengths "$out/kv_negative.csv" --example "$out/kv_negative_ex"
check kv_text R-407 graph gqa-decode --kv-lengths "$out/kv_text.csv" --example "$out/kv_text_ex"
for d in kv_negative_ex kv_text_ex; do [ -e "$out/$d" ] && { echo "FAIL $d: example folder left behind"; fail=1; }; done
# A feedback cycle without initial tokens (S-205) and selects of the wrong arity for their
# Partition (S-240); a cycle that stops at run time (R-408): tests/unit/test_feedback.cpp.
fb="$root/tests/data/graphs/feedback.yaml"; aa="$root/arch/attention.yaml"
sed 's/value: 1, n: 2, initial: 1/value: 1, n: 2, initial: 0/' "$fb" > "$out/fb_noinit.yaml"
sed 's/value: \([01]\), n: 2,/value: \1, n: 3,/' "$fb" > "$out/fb_arity.yaml"
check feedback_noinit S-205 compile --arch "$aa" --graph "$out/fb_noinit.yaml"
check feedback_arity S-240 compile --arch "$aa" --graph "$out/fb_arity.yaml"
exit $fail
