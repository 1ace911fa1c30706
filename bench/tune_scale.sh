#!/usr/bin/env bash
# Issue 13's measurements on a GPU machine, in one command (<= 9 min on an
# H100 with the defaults):
#   1. cold tune of the default grid on one GPU (empty cache, staged search)
#   2. warm re-tune of the same cache (--force: same GPU, driver and NVRTC,
#      so the previous winner and its close rivals only)
#   3. pruned vs exhaustive on a sample of >= 30 keys (8 N x bf16,fp32 x
#      fwd,bwd, plus their bwd_dwdb keys): the staged search and `--full`,
#      each into its own fresh cache with the CUBINs of step 1, compared by
#      bench/compare_winners.py (the pruned winner's time measured inside the
#      exhaustive run, within 2% of the exhaustive winner's)
#   4. with two or more GPUs of one model: the cold tune again on 2 GPUs
#      (--devices 0,1), and its wall time as a fraction of step 1's
# then a summary table and the ratios the issue asks for (each step's wall
# time against its target, warm / cold, 2 GPUs / 1 GPU, and keys stored per
# second, which still compares runs that a --budget cut short), last.
# Where the time went: python3 bench/tune_trace_stats.py OUT/cold.trace --wall S
#
#   bash bench/tune_scale.sh DIR       (DIR holds lntune)
# Environment:
#   OUT       where logs, traces and caches go (default /tmp/tune_scale)
#   GRID      full (default: `lntune tune`'s default grid) or reduced (bf16
#             only: a third of the keys; say so when quoting the figures)
#   TOTAL_S   the wall-clock budget of the whole script (default 510 s); each
#             step gets a --budget from what is left (see budget()), so a
#             slow step is cut short (its log says "budget spent") instead of
#             overrunning
#   SAMPLE_N  the sample's N list (default 1024,2048,3072,4096,6144,8192,12288,16384)
#   STEPS     which steps to run (default "1 2 3 4"; 2 needs 1; 4's ratio needs 1)
#   COLD_S, WARM_S  the most seconds steps 1 and 2 (and 4) may take (default 240, 60)
set -uo pipefail
dir=${1:?usage: tune_scale.sh DIR (holding lntune)}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
lntune="$dir/lntune"
[ -x "$lntune" ] || { echo "tune_scale.sh: $lntune is not an executable" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/tune_scale}
mkdir -p "$out"
grid=${GRID:-full}
case "$grid" in
  full) grid_args=() ;;
  reduced) grid_args=(--dtype bf16) ;;
  *) echo "tune_scale.sh: GRID must be full or reduced, got '$grid'" >&2; exit 2 ;;
esac
sample_n=${SAMPLE_N:-1024,2048,3072,4096,6144,8192,12288,16384}
start=$(date +%s)
deadline=$((start + ${TOTAL_S:-510}))
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)
same_model=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -2 | sort -u | wc -l)
dual=0
[ "$gpus" -ge 2 ] && [ "$same_model" -eq 1 ] && dual=1

# budget DEFAULT RESERVE: DEFAULT seconds, or less so that RESERVE seconds
# remain for the later steps; at least 15.
budget() {
  local left=$((deadline - $(date +%s) - $2))
  local b=$1
  [ "$left" -lt "$b" ] && b=$left
  [ "$b" -lt 15 ] && b=15
  echo "$b"
}
now() { date +%s.%N; }
secs() { python3 -c "print(f'{$2 - $1:.1f}')"; }
fresh() { rm -f "$1" "$1"-wal "$1"-shm; }
# The tuner's own summary lines of a log.
keys_line() { grep -E '^[0-9]+ keys: ' "$1" 2>/dev/null | tail -1; }
search_line() { grep -E '^search: ' "$1" 2>/dev/null | tail -1; }
spent() { grep -q '(budget spent)' "$1" 2>/dev/null && echo " (budget spent)" || true; }
# Keys searched and stored (tuned, or partial) by a run, from its summary line.
tuned() { keys_line "$1" | sed -E 's/^[0-9]+ keys: ([0-9]+) tuned, ([0-9]+) partial.*/\1 \2/' | awk '{print $1 + $2}'; }
# a / b with two decimals, or "-" when either is missing or b is 0.
ratio() { python3 -c "import sys; a, b = sys.argv[1], sys.argv[2]
try:
    a, b = float(a), float(b); print(f'{a / b:.2f}' if b > 0 else '-')
except ValueError:
    print('-')" "$1" "$2"; }

steps=" ${STEPS:-1 2 3 4} "
want() { [[ "$steps" == *" $1 "* ]]; }
# What the later steps need at least (seconds), for budget().
r2=0; want 2 && r2=40
r3=0; want 3 && r3=150
r4=0; want 4 && [ $dual = 1 ] && r4=120
cold_s="-"; warm_s="-"; pruned_s="-"; full_s="-"; dual_s="-"
touch "$out/compare.txt"

if want 1; then
  echo "=== 1. cold tune, one GPU, grid: $grid"
  fresh "$out/cold.db"
  b=$(budget "${COLD_S:-240}" $((r2 + r3 + r4)))
  t0=$(now)
  "$lntune" tune --db "$out/cold.db" --budget "$b" --trace "$out/cold.trace" ${grid_args[@]+"${grid_args[@]}"} >"$out/cold.log" 2>"$out/cold.err"
  t1=$(now)
  cold_s=$(secs "$t0" "$t1")
  tail -n 8 "$out/cold.log"
fi

if want 2; then
  echo "=== 2. warm re-tune (--force: the previous winners and their rivals)"
  b=$(budget "${WARM_S:-60}" $((r3 + r4)))
  t1=$(now)
  "$lntune" tune --db "$out/cold.db" --force --budget "$b" --trace "$out/warm.trace" ${grid_args[@]+"${grid_args[@]}"} >"$out/warm.log" 2>"$out/warm.err"
  t2=$(now)
  warm_s=$(secs "$t1" "$t2")
  tail -n 8 "$out/warm.log"
fi

if want 3; then
  echo "=== 3. pruned vs exhaustive, N = $sample_n, bf16 and fp32, fwd and bwd"
  sample=(--n "$sample_n" --dtype bf16,fp32 --kernel fwd,bwd)
  fresh "$out/sample_pruned.db"
  fresh "$out/sample_full.db"
  # The CUBINs of step 1, when there are any (compiling them again is no part of the comparison).
  shipped=""
  [ -f "$out/cold.db" ] && shipped="$out/cold.db"
  b=$(budget 45 $((110 + r4)))
  t2=$(now)
  LNTUNE_CACHE_PATH="$shipped" "$lntune" tune --db "$out/sample_pruned.db" --budget "$b" --trace "$out/sample_pruned.trace" \
    "${sample[@]}" >"$out/sample_pruned.log" 2>"$out/sample_pruned.err"
  t3=$(now)
  b=$(budget 150 "$r4")
  LNTUNE_CACHE_PATH="$shipped" "$lntune" tune --db "$out/sample_full.db" --full --budget "$b" --trace "$out/sample_full.trace" \
    "${sample[@]}" >"$out/sample_full.log" 2>"$out/sample_full.err"
  t4=$(now)
  pruned_s=$(secs "$t2" "$t3")
  full_s=$(secs "$t3" "$t4")
  python3 "$here/compare_winners.py" "$out/sample_pruned.trace" "$out/sample_full.trace" | tee "$out/compare.txt"
fi

if want 4 && [ $dual = 1 ]; then
  echo "=== 4. cold tune on 2 GPUs (--devices 0,1)"
  fresh "$out/dual.db"
  b=$(budget "${COLD_S:-240}" 5)
  t5=$(now)
  "$lntune" tune --db "$out/dual.db" --devices 0,1 --budget "$b" --trace "$out/dual.trace" ${grid_args[@]+"${grid_args[@]}"} \
    >"$out/dual.log" 2>"$out/dual.err"
  t6=$(now)
  dual_s=$(secs "$t5" "$t6")
  grep -E '^gpu [0-9]+: ' "$out/dual.log" | tail -4
  tail -n 6 "$out/dual.log"
elif want 4; then
  echo "=== 4. skipped: $gpus GPU(s) of $same_model model(s); the 2-GPU run needs two of one model"
fi

echo
echo "=== summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), grid: $grid, $(date -u +%FT%TZ))"
printf '%-26s %9s  %-10s  %s\n' "step" "wall s" "target" "tuner's summary"
printf '%-26s %9s  %-10s  %s%s\n' "1. cold, 1 GPU" "$cold_s" "<= 180" "$(keys_line "$out/cold.log")" "$(spent "$out/cold.log")"
printf '%-26s %9s  %-10s  %s\n' "" "" "" "$(search_line "$out/cold.log")"
printf '%-26s %9s  %-10s  %s%s\n' "2. warm re-tune" "$warm_s" "<= 30" "$(keys_line "$out/warm.log")" "$(spent "$out/warm.log")"
printf '%-26s %9s  %-10s  %s%s\n' "3a. sample, staged" "$pruned_s" "-" "$(keys_line "$out/sample_pruned.log")" "$(spent "$out/sample_pruned.log")"
printf '%-26s %9s  %-10s  %s%s\n' "3b. sample, --full" "$full_s" "-" "$(keys_line "$out/sample_full.log")" "$(spent "$out/sample_full.log")"
if [ "$dual_s" != "-" ]; then
  printf '%-26s %9s  %-10s  %s%s\n' "4. cold, 2 GPUs" "$dual_s" "<= 0.6x" "$(ratio "$dual_s" "$cold_s")x of step 1's wall time; $(keys_line "$out/dual.log")" "$(spent "$out/dual.log")"
else
  printf '%-26s %9s  %-10s  %s\n' "4. cold, 2 GPUs" "-" "<= 0.6x" "not run ($gpus GPU(s) of $same_model model(s); STEPS=\"${STEPS:-1 2 3 4}\")"
fi
# Ratios the issue asks for. Keys per second compare runs that the budget
# cut short (then the wall-time ratio alone says little).
cold_k=$(tuned "$out/cold.log"); warm_k=$(tuned "$out/warm.log"); dual_k=$(tuned "$out/dual.log")
cold_rate=$(ratio "${cold_k:-}" "$cold_s"); warm_rate=$(ratio "${warm_k:-}" "$warm_s"); dual_rate=$(ratio "${dual_k:-}" "$dual_s")
echo "ratios: cold ${cold_s} s / 180 s target = $(ratio "$cold_s" 180); warm ${warm_s} s / 30 s target = $(ratio "$warm_s" 30);" \
  "warm / cold wall = $(ratio "$warm_s" "$cold_s"); 2 GPUs / 1 GPU wall = $(ratio "$dual_s" "$cold_s") (target <= 0.6)"
echo "keys stored per second: cold ${cold_rate}, warm ${warm_rate}, 2 GPUs ${dual_rate};" \
  "2-GPU throughput = $(ratio "$dual_rate" "$cold_rate")x one GPU's (target >= 1.67)"
tail -n 1 "$out/compare.txt"
echo "logs, traces and caches: $out; total $(( $(date +%s) - start )) s"
