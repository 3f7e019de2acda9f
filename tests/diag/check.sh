#!/usr/bin/env bash
# Golden diagnostics: every case of tests/diag/cases.txt runs stepgen on one bad input and
# must exit non-zero, leave no output folder, and print exactly the expected first line
# `file:line:col: error[ID]: message`. Prints each case, then the number of cases and of
# distinct ids. Format of cases.txt: tests/diag/README.md.
# usage: check.sh <stepgen> <work dir> [case ...]
set -uo pipefail
sg="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; work="$2"; shift 2
root="$(cd "$(dirname "$0")/../.." && pwd)"
rm -rf "$work"; mkdir -p "$work"; work="$(cd "$work" && pwd)"
only=" $* "
fail=0; n=0; ids=()
name=""; input=""; args=""; prefix=0
run_case() {
  [ -n "$name" ] || return 0
  if [ "$only" != "  " ] && [[ "$only" != *" $name "* ]]; then name=""; return 0; fi
  n=$((n + 1))
  local out="$work/$name.out" rc got
  # The case's command, from the repository root so that its files print as relative paths.
  (cd "$root" && eval "\"$sg\" ${args//@/$input}" > /dev/null 2> "$work/$name.err")
  rc=$?
  got="$(grep -m1 'error' "$work/$name.err" | sed "s|$input|@|g; s|$work/|@/|g; s|$root/||g")"
  local ok=1
  [ $rc -ne 0 ] || { echo "FAIL $name: exit 0"; ok=0; }
  local cmp="$got"; [ "$prefix" = 1 ] && cmp="${got:0:${#want}}"
  [ "$cmp" = "$want" ] || { echo "FAIL $name"; echo "  want: $want"; echo "  got:  $got"; ok=0; }
  [ ! -e "$out" ] || { echo "FAIL $name: output folder left behind"; ok=0; }
  if [ $ok = 1 ]; then
    echo "ok   $name: $(grep -o 'error\[[A-Z]-[0-9]*\]' <<< "$got")"
    ids+=("$(grep -o '[A-Z]-[0-9]*' <<< "$got" | head -1)")
  else
    fail=1
  fi
  name=""
}
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in
    "case "*) run_case; name="${line#case }"; input="$work/$name.in"; args="" ;;
    "from "*) read -r src script <<< "${line#from }"
              input="$work/$name.${src##*.}"; sed "$script" "$root/$src" > "$input"
              cmp -s "$root/$src" "$input" && { echo "FAIL $name: the edit '$script' changed nothing"; fail=1; } ;;
    "text "*) input="$work/$name.${line#text }"; : > "$input" ;;
    "line "*) printf '%s\n' "${line#line }" >> "$input" ;;
    "run "*) args="${line#run } " ; args="${args//@out/$work/$name.out}" ;;
    "want "*) want="${line#want }"; prefix=0; run_case ;;
    "wantprefix "*) want="${line#wantprefix }"; prefix=1; run_case ;;
  esac
done < "$root/tests/diag/cases.txt"
run_case
distinct=$(printf '%s\n' "${ids[@]}" | sort -u | wc -l)
echo "$n cases, $distinct distinct ids"
exit $fail
