# Sourced first by a device call's script (bench/results/*/scripts/runN.sh,
# run from the repository root): strict mode, B (the carried builds,
# .devbuild), O (the folder that comes back: $OUT, else /tmp), s "step" (a
# timestamped header), use (a carried build) and sw (every config of one
# sweep), both below, the GPU's name and driver on stdout, and the cache off
# (the default heuristic unless a step asks for a cache). The per-call
# scripts copied these lines each time until session 34 (use and sw until
# session 43).
#   source bench/gpu_call.sh
set -uo pipefail
B=$PWD/.devbuild
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export LNTUNE_CACHE=off
# sw TAG SECONDS ARGS...: every config of `lntune_sweep ARGS` ($S: the
# build's lntune_sweep, set by the script) within SECONDS, appended to
# $O/sweeps.log under a line "### sw TAG: ARGS", then each shape's three
# fastest (bench/sweep_top.py). One file for every sweep of a call: the
# device tool returns at most 8 files (sessions 48-49 lost sweep logs to
# one file a sweep).
sw() {
  local tag=$1 t=$2 log
  shift 2
  log=$(mktemp)
  LNTUNE_SWEEP_EVERY=1 timeout $t $S "$@" > $log 2>&1
  local rc=$?
  { echo "### sw $tag: $*"; cat $log; } >> $O/sweeps.log
  echo "$tag rc=$rc"
  python3 bench/sweep_top.py $log 3
  rm -f $log
}
# use NAME: the carried build $B/NAME as D (its binaries and liblntune.so
# on LD_LIBRARY_PATH) and S (its lntune_sweep).
use() { D=$B/$1; S=$D/lntune_sweep; export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D; }
# cases SECONDS FILTER MEMCHECK_FILTER: $D/gpu_norms_test --gtest_filter=FILTER
# beside compute-sanitizer memcheck on MEMCHECK_FILTER, each within SECONDS
# ($O/cases.log, $O/san_memcheck.log), then their summary lines (the call
# scripts of sessions 43-44 wrote these lines out each time).
cases() {
  local t=$1 f=$2 m=$3
  timeout $t $D/gpu_norms_test --gtest_filter="$f" > $O/cases.log 2>&1 & local p1=$!
  timeout $t compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 5 $D/gpu_norms_test --gtest_filter="$m" --gtest_brief=1 > $O/san_memcheck.log 2>&1 & local p2=$!
  wait $p1; echo "cases rc=$?"; wait $p2; echo "memcheck rc=$?"
  grep -hE "configs checked|FAILED|PASSED|ERROR SUMMARY|Failure" $O/cases.log $O/san_memcheck.log | head -30
}
# ext: lntune.torch over the carried build $D (LNTUNE_LIBRARY, PYTHONPATH,
# the C++ extension's build folder), the extension built once and reported
# (session 45's call 8 and session 46's call 1 wrote these lines out).
ext() {
  export LNTUNE_LIBRARY="$D/liblntune.so" PYTHONPATH="$PWD/python" TORCH_EXTENSIONS_DIR=/tmp/te
  timeout 120 python3 -c "import torch, lntune.torch as lt
x = torch.randn(4, 64, device='cuda', requires_grad=True)
lt.RMSNorm(64).cuda()(x).sum().backward()
print('extension', 'built' if lt._ext is not None else 'absent (ctypes path)')"
}
# sw_ab ROUNDS "BUILD..." SECONDS -- "TAG|VAR=value&VAR=value|ARGS" ...:
# configs in one process a build, builds alternated: for each round, each
# build (use), each spec in order, `sw BUILD_rROUND_TAG SECONDS ARGS` with
# the spec's variables exported ('&' apart: a value may hold spaces and
# ';', as LNTUNE_SWEEP_CONFIG's list does). Session 49's call 2 and session
# 50's call 2 wrote this loop out.
sw_ab() {
  local rounds=$1 builds=$2 t=$3 r b spec tag vars args
  shift 3
  [ "${1:-}" = "--" ] && shift
  for ((r = 1; r <= rounds; ++r)); do
    for b in $builds; do
      use $b
      for spec in "$@"; do
        IFS='|' read -r tag vars args <<< "$spec"
        # shellcheck disable=SC2086  # args is a word list
        (IFS='&' read -ra kv <<< "$vars"
         for v in "${kv[@]}"; do [ -n "$v" ] && export "$v"; done
         sw ${b}_r${r}_$tag $t $args)
      done
    done
  done
}
# gtests SECONDS FILTER: $D/gpu_test --gtest_filter=FILTER within SECONDS
# ($O/gpu_test_finish.log), then its summary lines (sessions 49-50's call
# scripts wrote these lines out).
gtests() {
  timeout $1 $D/gpu_test --gtest_filter="$2" > $O/gpu_test_finish.log 2>&1
  echo "gpu_test rc=$?"
  grep -hE "configs checked|FAILED|PASSED|Failure" $O/gpu_test_finish.log | head
}
# cold_tune: the cold tune of the default grid with $D's lntune
# (bench/tune_scale.sh step 1, at most 200 s), its trace's keys by state and
# candidates by status (a cold tune wants no failed key and no `wrong`
# candidate), the keys and non-ok candidates kept as
# $O/cold_keys_and_wrong.jsonl.gz, the keys ahead of their default in
# $O/cold_gaps.txt (bench/tune_gaps.py, the bwd_dwdb keys that serve only as
# the fallback of a dx kernel finishing dW/dB apart); the caches and the
# whole trace removed
# (too large to come back). Sessions 57-58's call scripts had these lines.
cold_tune() {
  OUT=$O STEPS=1 COLD_S=200 TOTAL_S=210 bash bench/tune_scale.sh $D 2>&1 | tail -25
  python3 bench/tune_trace_stats.py $O/cold.trace --keep $O/cold_keys_and_wrong.jsonl.gz
  python3 bench/tune_gaps.py $O/cold.log --trace $O/cold_keys_and_wrong.jsonl.gz > $O/cold_gaps.txt
  head -n 1 $O/cold_gaps.txt; grep "only as the fallback" $O/cold_gaps.txt
  rm -f $O/*.db $O/*.db-* $O/cold.trace 2>/dev/null
  ls -la $O
}
# patch_ab MAIN PATCHED FILTER MEMCHECK_FILTER SPEC...: a bench/experiments
# patch's call: `cases 200 FILTER MEMCHECK_FILTER` on the carried build
# PATCHED, then bench/gpu_ab.sh against MAIN, two rounds, over the SPECs
# (label|VAR=value ...|sweep arguments).
patch_ab() {
  local main=$1 patched=$2 filter=$3 mem=$4
  shift 4
  use "$patched"
  s tests
  cases 200 "$filter" "$mem"
  s ab
  OUT=$O bash bench/gpu_ab.sh ab 2 "$B/$main" "$B/$patched" -- "$@"
  s done
}
