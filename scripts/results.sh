#!/usr/bin/env bash
# Regenerates the committed result tables of docs/results/ with the commands that write them,
# and records for every file the commit, the command and the date in
# docs/results/provenance.csv (one row per file; rows of tables not re-run are kept).
#
# usage: scripts/results.sh [--tier default|heavy|all] [--build DIR] [--jobs N] [--list] [NAME ...]
#   --tier default  the tables whose commands take minutes (the model-only studies and the
#                   small RTL studies); heavy: the hours-long ones (500-seed random graphs,
#                   every GQA batch in RTL, FPGA synthesis of every unit, fuzzing, bench);
#                   all: both. Default: default.
#   NAME ...        only these tables (names as --list prints them), whatever their tier.
#   --jobs N        run each study (`stepgen study`, `stepgen sweep`) as a job list, N jobs at a
#                   time on this machine: --plan, `stepgen jobs run -j N`, `stepgen jobs merge`
#                   (docs/cluster.md); the same tables, the wall seconds per job aside. A job
#                   list an interrupted run left, made by the same code (all but docs/) for the
#                   same command, is resumed (`jobs run --resume`) instead of made anew (the
#                   seconds recorded then count this sitting only).
#   --list          print the tables, their tier, files and command, and exit.
# Needs a build (cmake --build build). Exits non-zero at the first command that fails; the
# tables it had rewritten by then stay, and their provenance rows say so. Run it on a clean
# work tree: the commit it records is HEAD, marked "+dirty" otherwise.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
tier=default; build=build; list=0; only=(); jobs=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tier) tier="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --list) list=1; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    -*) echo "results.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) only+=("$1"); shift ;;
  esac
done
case "$tier" in default|heavy|all) ;; *) echo "results.sh: --tier must be default, heavy or all" >&2; exit 2 ;; esac
sg="$build/stepgen"
R=docs/results
W=out/results            # work folders of the studies
prov=$R/provenance.csv

# name | tier | files written (space-separated) | command (run with bash -c from the root).
# `stepgen synth` exits 3 when the fabric row does not fit its part, `study onnx-conformance` 2
# when a supported test misses its tolerance: results, not failures.
# fpga.csv is the rows of these `stepgen synth` runs, each a table of its own under
# $R/fpga_runs/ (the fpga entry only puts their rows in this order under one header). Their
# Yosys cache, $R/fpga_cache/, is committed beside the tables so that the hours of Yosys can
# be spread over sittings; a run on unchanged RTL takes minutes (the key: docs/fpga.md,
# "--cache"). Delete the folder to run every job again. The tops of the GQA fabrics (112 and
# 121 units) are left out: their fabric rows stay partial.
xc7="--target xc7 --timeout 7200 --mem-limit-gb 20"
small=tests/data/arch_small.yaml
nomul=tests/data/arch_small_nomul.yaml
fpga_runs=(
"xc7_default|--arch arch/default.yaml $xc7"
"xc7_small|--arch arch/small.yaml $xc7"
"xc7_moe_small|--arch arch/moe_small.yaml $xc7"
"xc7_moe|--arch arch/moe.yaml $xc7"
"xc7_attention|--arch arch/attention.yaml $xc7"
"xc7_gqa|--arch arch/gqa.yaml $xc7 --only ag,cu,mu,axi"
"xc7_gqa_dynamic|--arch arch/gqa_dynamic.yaml $xc7 --only ag,cu,mu,axi"
"xc7_step_validation|--arch arch/step_validation.yaml $xc7"
"ice40_small|--arch $small --target ice40 --part hx8k --timeout 3600"
"ice40_small_pnr_mu|--arch $small --target ice40 --part hx8k --only mu --set mu.W=4,mu.WORDS=256 --pnr"
"ice40_small_pnr_ag|--arch $small --target ice40 --part hx8k --only ag --pnr"
"ice40_nomul|--arch $nomul --target ice40 --part hx8k --timeout 3600"
"ice40_nomul_pnr|--arch $nomul --target ice40 --part hx8k --only ag,mu,cu --set ag.W=4,mu.W=4,mu.WORDS=256,cu.W=2,cu.LANES=1,cu.BUF_WORDS=128 --pnr"
)
fpga_tables=(); fpga_csvs=()
for r in "${fpga_runs[@]}"; do
  tag="${r%%|*}"; args="${r#*|}"
  fpga_csvs+=("$R/fpga_runs/$tag.csv")
  fpga_tables+=("fpga_$tag|heavy|$R/fpga_runs/$tag.csv|$sg synth $args --cache $R/fpga_cache -o $W/fpga/$tag --csv $R/fpga_runs/$tag.csv || [ \$? -eq 3 ]")
done

tables=(
"moe_tiling_full|default|$R/moe_tiling_full.csv $R/moe_tiling_full_table.md|$sg study tiling-full -o $W/tiling_full --csv $R/moe_tiling_full.csv --md $R/moe_tiling_full_table.md"
"onnx_conformance|default|$R/onnx_conformance.csv $R/onnx_conformance.md|$sg study onnx-conformance -o $W/onnx_conformance --build-cache $W/onnx_conformance_cache --csv $R/onnx_conformance.csv --md $R/onnx_conformance.md || [ \$? -eq 2 ]"
"pytorch_blocks|default|$R/pytorch_blocks.csv|bash scripts/pytorch_blocks.sh $sg $W/pytorch_blocks $R/pytorch_blocks.csv"
"decoder_layer|default|$R/decoder_layer.csv $R/decoder_layer.md|$sg study decoder-layer -o $W/decoder_layer --csv $R/decoder_layer.csv --md $R/decoder_layer.md"
"moe_tiling|default|$R/moe_tiling.csv $R/moe_tiling_table.md|$sg study tiling --rtl --arch arch/moe.yaml -o $W/tiling --csv $R/moe_tiling.csv --md $R/moe_tiling_table.md"
"sections|default|$R/sections.csv $R/sections_table.md $R/sections.svg|$sg study sections --rtl -o $W/sections --csv $R/sections.csv --md $R/sections_table.md --svg $R/sections.svg"
"timemux_regions|heavy|$R/timemux_regions.csv $R/timemux_regions_table.md $R/timemux_regions.svg|$sg study regions --rtl 32 --rtl-from $R/timemux_regions.csv -o $W/regions --csv $R/timemux_regions.csv --md $R/timemux_regions_table.md --svg $R/timemux_regions.svg"
"timemux_regions_paper|default|$R/timemux_regions_paper.csv $R/timemux_regions_paper_table.md|$sg study regions --paper --arch arch/unbounded.yaml --compare $R/timemux_regions.csv -o $W/regions_paper --csv $R/timemux_regions_paper.csv --md $R/timemux_regions_paper_table.md"
"validation_sweep|heavy|$R/validation_sweep.csv $R/validation_sweep.md|$sg sweep -o $W/sweep --csv $R/validation_sweep.csv"
"dynpar|heavy|$R/dynpar.csv $R/dynpar_table.md|$sg study dynpar --rtl-max-batch 16 --rtl-strategies dynamic --rtl-from $R/dynpar.csv -o $W/dynpar --csv $R/dynpar.csv --md $R/dynpar_table.md"
"dynpar_b64|heavy|$R/dynpar_b64.csv $R/dynpar_b64_table.md|$sg study dynpar --batches 21 22 23 --kv-scale 4 --strategies coarse interleave dynamic --rtl-max-batch 64 -o $W/dynpar_b64 --csv $R/dynpar_b64.csv --md $R/dynpar_b64_table.md"
"dynpar_paper|heavy|$R/dynpar_paper.csv $R/dynpar_paper_table.md|$sg study dynpar --paper --arch arch/unbounded.yaml --dynamic-arch arch/unbounded.yaml --compare $R/dynpar.csv -o $W/dynpar_paper --csv $R/dynpar_paper.csv --md $R/dynpar_paper_table.md"
"random_graphs|heavy|$R/random_graphs.csv $R/random_graphs_summary.md|$sg study random --seeds 500 -o $W/random --csv $R/random_graphs.csv --md $R/random_graphs_summary.md"
"random_graphs_501_1000|heavy|$R/random_graphs_501_1000.csv $R/random_graphs_501_1000_summary.md|$sg study random --first 501 --seeds 500 -o $W/random2 --csv $R/random_graphs_501_1000.csv --md $R/random_graphs_501_1000_summary.md"
"rtl_grid16|heavy|$R/rtl_grid16_mlp20.txt|$sg graph mlp --layers 20 --batch 16 --hidden 64 --ffn 128 --tile-b 8 --tile-f 32 -o $W/grid16/mlp20.yaml && $sg verify --arch tests/data/arch_grid16.yaml --graph $W/grid16/mlp20.yaml -o $W/grid16/verify --watchdog 200000 && cp $W/grid16/verify/report.txt $R/rtl_grid16_mlp20.txt"
"bench_jobs|default|$R/bench_jobs.md|$sg bench --only jobs -o $W/bench_jobs --report $R/bench_jobs.md"
"bench_large|default|$R/bench_large.md|$sg bench --only large -o $W/bench_large --report $R/bench_large.md"
"bench|heavy|$R/bench.md|$sg bench -o $W/bench --report $R/bench.md"
"verilator_idle|heavy|$R/verilator_idle_units.md|bash scripts/idle_units.sh $sg $W/idle_units $R/verilator_idle_units.md"
"verilator_profile|heavy|$R/verilator_profile_default.md $R/verilator_profile_step_validation.md|mkdir -p $W/profile && $sg graph swiglu --batch 64 --hidden 128 --ffn 512 --tile-b 16 --tile-f 32 -o $W/profile/swiglu_default.yaml && $sg graph swiglu --batch 64 --hidden 256 --ffn 512 --tile-b 32 --tile-f 64 -o $W/profile/swiglu_step_validation.yaml && bash scripts/profile_rtl.sh $sg arch/default.yaml $W/profile/swiglu_default.yaml $W/profile/default $R/verilator_profile_default.md && bash scripts/profile_rtl.sh $sg arch/step_validation.yaml $W/profile/swiglu_step_validation.yaml $W/profile/step_validation $R/verilator_profile_step_validation.md"
"${fpga_tables[@]}"
"fpga|heavy|$R/fpga.csv|bash scripts/fpga_results.sh $R/fpga.csv ${fpga_csvs[*]}"
"fpga_cu_parts|heavy|$R/fpga_cu_parts.csv|$sg synth --arch arch/default.yaml --target xc7 --only cu,cu.mem,cu.addr,cu.mac,cu.word,cu.rowred --cu-parts --cache $R/fpga_cache --timeout 7200 --mem-limit-gb 20 -o $W/fpga_cu_parts --csv $R/fpga_cu_parts.csv || [ \$? -eq 3 ]"
"fpga_lane|heavy|$R/fpga_lane.csv|bash flows/fpga_lane.sh $W/fpga_lane > $W/fpga_lane.csv && mv $W/fpga_lane.csv $R/fpga_lane.csv"
"yosys_fabric|heavy|$R/yosys_fabric.md|bash flows/synth_fabric.sh $sg $W/yosys_fabric"
"test_tiers_default|default|$R/test_tiers_default.md|bash scripts/tier_times.sh --work $W/tiers_default"
"test_tiers|heavy|$R/test_tiers.md|bash scripts/tier_times.sh --heavy --work $W/tiers"
)

if [ $list = 1 ]; then
  for t in "${tables[@]}"; do IFS='|' read -r n ti f c <<< "$t"; printf '%-24s %-8s %s\n    %s\n' "$n" "$ti" "$f" "$c"; done
  exit 0
fi
[ -x "$sg" ] || { echo "results.sh: $sg not found: build first (cmake -S . -B build -G Ninja && cmake --build build)" >&2; exit 2; }
for n in "${only[@]}"; do
  printf '%s\n' "${tables[@]}" | cut -d'|' -f1 | grep -qx -- "$n" || { echo "results.sh: no table '$n' (see --list)" >&2; exit 2; }
done

commit="$(git rev-parse --short=12 HEAD)"
[ -z "$(git status --porcelain --untracked-files=no)" ] || commit="$commit+dirty"
# The code's identity: every tracked file but docs/ as committed, and the diff of a dirty tree.
code="$({ git ls-tree -r HEAD | grep -v $'\tdocs/'; git diff HEAD -- . ':!docs'; } | sha256sum | cut -c1-16)"
[ -f "$prov" ] || echo "file,commit,command,date,seconds" > "$prov"
mkdir -p "$W"

record() {  # record <file> <command> <seconds>: replaces the file's row in provenance.csv
  # (under a lock: two results.sh runs at once, e.g. the Yosys tables beside the studies,
  # would otherwise each write back the rows it read)
  (
    flock 9
    local f="$1" cmd="$2" s="$3" tmp row
    tmp="$(mktemp)"
    # (rows of files no longer in the repository go too)
    head -n 1 "$prov" > "$tmp"
    while IFS= read -r row; do
      if [ "${row%%,*}" != "$f" ] && [ -e "${row%%,*}" ]; then echo "$row" >> "$tmp"; fi
    done < <(tail -n +2 "$prov")
    # the command is quoted (it has no double quotes); the date is UTC
    printf '%s,%s,"%s",%s,%s\n' "$f" "$commit" "$cmd" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$s" >> "$tmp"
    { head -n 1 "$tmp"; tail -n +2 "$tmp" | sort -t, -k1,1; } > "$prov"
    rm -f "$tmp"
  ) 9> "$W/provenance.lock"
}

ran=0
for t in "${tables[@]}"; do
  IFS='|' read -r n ti files cmd <<< "$t"
  if [ ${#only[@]} -gt 0 ]; then
    printf '%s\n' "${only[@]}" | grep -qx -- "$n" || continue
  elif [ "$tier" != all ] && [ "$ti" != "$tier" ]; then
    continue
  fi
  # As a job list where the command takes `--plan` (its --help says; onnx-conformance and
  # decoder-layer do not): the CLI is where that is decided.
  sub=()
  run=""  # what runs, when not the recorded command itself
  if [[ "$cmd" == "$sg "* ]]; then
    read -r -a words <<< "${cmd#"$sg "}"
    sub=("${words[0]}")
    [ "${words[0]}" != study ] || sub+=("${words[1]}")
  fi
  if [ "$jobs" -gt 0 ] && [ ${#sub[@]} -gt 0 ] && [[ "$("$sg" "${sub[@]}" --help)" == *--plan* ]]; then
    plan="$W/plans/$n"
    # A job list made by the same code (the tree but docs/, see `code` above) for the same
    # command is resumed: its finished jobs stand, so a long study can span sittings.
    stamp="$(printf '%s\n%s\n' "$code" "$cmd" | sha256sum | cut -c1-16)"
    make="rm -rf $plan $plan.stamp && $cmd --plan $plan"
    cmd="$make && $sg jobs run $plan -j $jobs && $sg jobs merge $plan"  # (as recorded)
    run="$make && echo $stamp > $plan.stamp && $sg jobs run $plan -j $jobs && $sg jobs merge $plan"
    if [ "$(cat "$plan.stamp" 2>/dev/null)" = "$stamp" ]; then
      echo "== $n: resuming the job list $plan"
      run="$sg jobs run $plan -j $jobs --resume && $sg jobs merge $plan"
    fi
  fi
  echo "== $n ($ti): $cmd"
  t0=$(date +%s)
  bash -c "${run:-$cmd}"
  s=$(( $(date +%s) - t0 ))
  for f in $files; do
    [ -s "$f" ] || { echo "results.sh: $n did not write $f" >&2; exit 1; }
    record "$f" "$cmd" "$s"
  done
  echo "== $n: $s s"
  ran=$((ran + 1))
done
echo "results.sh: $ran table(s) regenerated at commit $commit; provenance in $prov"
