#!/usr/bin/env bash
# A study through the local backend (docs/cluster.md) against the same study run serially:
# plan, run with a time limit that the jobs exceed, run with -j 2 and kill one job while it runs (SIGTERM to its `jobs exec`), check that the
# run, `jobs status` and `jobs merge` report it (exit 4, naming it), resume (only that job
# runs again), merge, and compare every table byte for byte with the serial run's.
# usage: kill_resume.sh <stepgen> <work dir>   (from the repository root)
set -euo pipefail
sg="$1"; w="$2"
rm -rf "$w"; mkdir -p "$w"
# Two timing-only points at true dimensions, batch 1024: Mixtral (about 4.4 s alone, the one
# killed) and Qwen3 (about 2.5 s). (A study's points take what the model takes: a regions
# point that took 13 s took 0.6 s once the shape checker stopped asking Z3 the same question
# per expert region, and this test then failed for want of a slow job.)
study=(study tiling-full --batches 1024 --tiles 0)
"$sg" "${study[@]}" -o "$w/serial" --csv "$w/serial.csv" --md "$w/serial.md" > "$w/serial.out"

"$sg" "${study[@]}" -o "$w/work" --csv "$w/jobs.csv" --md "$w/jobs.md" --plan "$w/plan"
[ ! -e "$w/jobs.csv" ] || { echo "FAIL: --plan wrote the table"; exit 1; }
[ "$(wc -l < "$w/plan/commands.txt")" = 2 ] || { echo "FAIL: expected 2 jobs"; cat "$w/plan/commands.txt"; exit 1; }

# A time limit of 1 s, below what either job takes: both are stopped, say so, and leave no
# result (a limit between the two jobs' times would depend on the machine's load).
rc=0; "$sg" jobs run "$w/plan" -j 2 --timeout 1 > "$w/run0.out" 2>&1 || rc=$?
[ $rc = 4 ] || { cat "$w/run0.out"; echo "FAIL: jobs run with timed-out jobs exited $rc (want 4)"; exit 1; }
for j in 0 1; do
  grep -q '"timed_out":true' "$w/plan/status/$j.json" || { echo "FAIL: status of timed-out job $j:"; cat "$w/plan/status/$j.json"; exit 1; }
  [ ! -e "$w/plan/results/$j.json" ] || { echo "FAIL: timed-out job $j left a result"; exit 1; }
done

rc=0
rm -f "$w/plan/logs/"* "$w/plan/status/"*   # the last run's: the wait below must see this run's (jobs run removes them too)
"$sg" jobs run "$w/plan" -j 2 > "$w/run1.out" 2>&1 &
runner=$!
# Kill job 0 (Mixtral) once it is running: its log exists (the child process writes it
# after the runner has its handlers), its result does not.
for _ in $(seq 1 600); do
  if [ -e "$w/plan/logs/0.log" ]; then break; fi
  sleep 0.05
done
[ ! -e "$w/plan/results/0.json" ] || { echo "FAIL: job 0 finished before it could be killed"; exit 1; }
pkill -TERM -f "jobs exec --timeout 0 $w/plan 0\$"
wait $runner || rc=$?
cat "$w/run1.out"
[ $rc = 4 ] || { echo "FAIL: jobs run exited $rc with a killed job (want 4)"; exit 1; }
grep -q '"signal":15' "$w/plan/status/0.json" || { echo "FAIL: status of the killed job:"; cat "$w/plan/status/0.json"; exit 1; }
[ ! -e "$w/plan/results/0.json" ] || { echo "FAIL: the killed job left a result"; exit 1; }

rc=0; "$sg" jobs status "$w/plan" > "$w/status.out" || rc=$?
cat "$w/status.out"
[ $rc = 4 ] || { echo "FAIL: jobs status exited $rc (want 4)"; exit 1; }
grep -q "1 with a result, 1 failed or killed" "$w/status.out"

rc=0; "$sg" jobs merge "$w/plan" > "$w/merge1.out" 2> "$w/merge1.err" || rc=$?
cat "$w/merge1.err"
[ $rc = 4 ] || { echo "FAIL: merge with a missing job exited $rc (want 4)"; exit 1; }
grep -q "job 0 (.*mixtral_b1024_dynamic/graph.yaml): status" "$w/merge1.err" || { echo "FAIL: merge does not name the missing job"; exit 1; }

"$sg" jobs run "$w/plan" --resume > "$w/run2.out" 2>&1
cat "$w/run2.out"
grep -q "running 1 of 2 job(s)" "$w/run2.out" || { echo "FAIL: resume did not rerun exactly the killed job"; exit 1; }
"$sg" jobs merge "$w/plan" > "$w/merge2.out"
# The model's wall seconds differ per run (the last column of each row); the rest must not.
for f in csv md; do
  sed -i 's/,[0-9.]*$//; s/| [0-9.]* |$//' "$w/serial.$f" "$w/jobs.$f"
  cmp "$w/serial.$f" "$w/jobs.$f" || { echo "FAIL: merged $f differs from the serial study's"; diff "$w/serial.$f" "$w/jobs.$f" | head; exit 1; }
done
echo "PASS: killed, resumed and merged; CSV and markdown equal the serial study's (wall seconds aside)"
