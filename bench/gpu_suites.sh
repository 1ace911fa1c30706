#!/usr/bin/env bash
# The GPU suites of one build, for a device call (the per-call scripts under
# bench/results/*/scripts copied these lines each time; call this instead):
# gpu_norms_test in 4 gtest shards beside gpu_test and tuner_gpu_test (those
# of them present in DIR), then, with PYTEST=1, the binding's pytest (the
# norms in 4 shards beside test_lntune_torch, CUDA graphs included).
#   OUT=$OUT bash bench/gpu_suites.sh DIR TAG
# DIR: stripped binaries (and liblntune.so for pytest); logs go to
# $OUT/<suite>_TAG.log. Exit status: 0 when every suite that ran passed.
# GTEST=0 leaves the gtest suites out (PYTEST=1 GTEST=0: the pytest alone).
# Since session 52 the two together outrun one 600 s device call (session
# 52's call 3 lost its norms pytest shards to the limit after about nine
# minutes): run `OUT=$OUT bash bench/gpu_suites.sh DIR TAG` in one call and
# `PYTEST=1 GTEST=0 OUT=$OUT bash bench/gpu_suites.sh DIR TAG` in the next.
set -uo pipefail
gtest=${GTEST:-1} pytest=${PYTEST:-0}
[[ $gtest =~ ^[01]$ && $pytest =~ ^[01]$ ]] || { echo "gpu_suites.sh: GTEST and PYTEST must be 0 or 1, got '$gtest' and '$pytest'" >&2; exit 2; }
[ "$gtest$pytest" != 00 ] || { echo "gpu_suites.sh: GTEST=0 without PYTEST=1 runs no suite" >&2; exit 2; }
D=$(cd "${1:?usage: gpu_suites.sh DIR TAG}" && pwd)
tag=${2:?usage: gpu_suites.sh DIR TAG}
O=${OUT:-/tmp}
T=$(mktemp -d)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
fail=0
run() {  # name, command...
  local name=$1; shift
  "$@" > "$T/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc"
  return $rc
}
pids=()
if [ "$gtest" = 1 ]; then
  if [ -x "$D/gpu_norms_test" ]; then
    for i in 0 1 2 3; do
      GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i run norms_$i timeout 480 "$D/gpu_norms_test" --gtest_brief=1 & pids+=($!)
    done
  fi
  for t in gpu_test tuner_gpu_test; do
    [ -x "$D/$t" ] && { run "$t" timeout 480 "$D/$t" --gtest_brief=1 & pids+=($!); }
  done
  for p in "${pids[@]}"; do wait "$p" || fail=1; done
  [ -x "$D/gpu_norms_test" ] && cat "$T"/norms_*.log > "$O/gpu_norms_test_$tag.log"
  for t in gpu_test tuner_gpu_test; do [ -f "$T/$t.log" ] && cp "$T/$t.log" "$O/${t}_$tag.log"; done
  grep -hE "PASSED|FAILED|^\[ [a-z]+ *\]" "$O"/gpu_*_"$tag".log "$O"/tuner_gpu_test_"$tag".log 2>/dev/null | grep -v "^\[ RUN\|^\[ *OK" | head -20
fi
if [ "$pytest" = 1 ]; then
  export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-/tmp/te}
  # Build the extension once before the shards start.
  python3 -c "import torch, lntune.torch as lt; x = torch.randn(4, 64, device='cuda', requires_grad=True); lt.LayerNorm(64).cuda()(x).sum().backward(); print('binding ok')" 2>&1 | tail -1
  python3 -m pytest -q -p no:cacheprovider --collect-only tests/python/test_lntune_torch_norms.py 2>/dev/null | grep "::" > "$T/ids.txt"
  split -n r/4 "$T/ids.txt" "$T/shard_"
  pids=()
  for f in "$T"/shard_*; do
    run "pytest_$(basename "$f")" timeout 240 python3 -m pytest -q -p no:cacheprovider $(cat "$f") & pids+=($!)
  done
  run pytest_torch timeout 240 python3 -m pytest -q -p no:cacheprovider tests/python/test_lntune_torch.py & pids+=($!)
  for p in "${pids[@]}"; do wait "$p" || fail=1; done
  cat "$T"/pytest_shard_*.log > "$O/pytest_norms_$tag.log"
  cp "$T/pytest_torch.log" "$O/pytest_torch_$tag.log"
  tail -qn 1 "$T"/pytest_shard_*.log "$T/pytest_torch.log"
fi
rm -rf "$T"
exit $fail
