#!/usr/bin/env bash
# A study through a real Slurm (scripts/slurm_local.sh: single node, Debian's packages):
# random graphs 1 .. 3 on arch/default.yaml at link FIFO depths 2 and 8 (6 RTL points, 2
# fabric builds as a build array, the points' arrays after it). One build job is cancelled
# while it runs (scancel); the run must then show it without a result, `jobs run --resume`
# must submit exactly that job again, and the merged CSV must equal the serial study's.
# usage: slurm.sh <stepgen> <work dir>   (from the repository root; needs root or a user
# that may start munged and the Slurm daemons)
set -euo pipefail
sg="$(realpath "$1")"; w="$2"
rm -rf "$w"; mkdir -p "$w/work" "$w/serial"
state="$w/slurm-state"
bash scripts/slurm_local.sh start "$state" > "$w/slurm_start.out"
trap 'bash scripts/slurm_local.sh stop "$state" > /dev/null' EXIT
export SLURM_CONF="$state/slurm.conf"
ln -sfn ../work/build "$w/serial/build"   # the serial study reuses the fabrics the jobs built

study=(study random --first 1 --seeds 3 --random-archs 0 --fifo-depths 2 8)
"$sg" "${study[@]}" -o "$w/work" --csv "$w/jobs.csv" --plan "$w/plan"
builds=$(grep -c '"kind": "build"' "$w/plan/jobs.json" || true)
[ "$builds" = 2 ] || { echo "FAIL: expected 2 build jobs, got $builds"; exit 1; }
# Points are jobs 0 .. 5, builds 6 and 7; the depth-8 fabric's build is job 7, array task 1.
"$sg" jobs run "$w/plan" --backend slurm --mem 4G --no-wait > "$w/submit.out"
build_array=$(head -n 1 "$w/plan/slurm/submitted.txt" | cut -d, -f1)
for _ in $(seq 1 1200); do
  if [ -e "$w/plan/logs/7.log" ]; then break; fi
  sleep 0.1
done
[ -e "$w/plan/logs/7.log" ] || { echo "FAIL: build job 7 never started"; squeue; exit 1; }
sleep 2  # inside its Verilator build
[ ! -e "$w/plan/results/7.json" ] || { echo "FAIL: build job 7 finished before it could be cancelled"; exit 1; }
scancel "${build_array}_1"
ids=$(cat "$w/plan/slurm/submitted.txt")
for _ in $(seq 1 900); do
  [ -z "$(squeue -h -o %i -j "$ids" 2> /dev/null)" ] && break
  sleep 1
done
[ ! -e "$w/plan/results/7.json" ] || { echo "FAIL: the cancelled build left a result"; exit 1; }
rc=0; "$sg" jobs status "$w/plan" > "$w/status.out" || rc=$?
cat "$w/status.out"
[ $rc = 4 ] || { echo "FAIL: jobs status exited $rc after a cancelled job (want 4)"; exit 1; }
grep -q "7 with a result" "$w/status.out" || { echo "FAIL: want the 7 other jobs with a result"; exit 1; }

"$sg" jobs run "$w/plan" --backend slurm --mem 4G --resume > "$w/resume.out" 2> "$w/resume.err"
cat "$w/resume.err"
grep -q "submitting 1 of 8 job(s)" "$w/resume.err" || { echo "FAIL: resume did not submit exactly the cancelled job"; exit 1; }
"$sg" jobs merge "$w/plan" > "$w/merge.out"
"$sg" "${study[@]}" -o "$w/serial" --csv "$w/serial.csv" > "$w/serial.out"
grep -q ",ok," "$w/jobs.csv" || { echo "FAIL: no RTL point finished"; cat "$w/jobs.csv"; exit 1; }
cmp "$w/serial.csv" "$w/jobs.csv" || { diff "$w/serial.csv" "$w/jobs.csv"; echo "FAIL: merged CSV differs"; exit 1; }
echo "PASS: 6 points through Slurm, one build cancelled and resumed; merged CSV equals the serial study's"
