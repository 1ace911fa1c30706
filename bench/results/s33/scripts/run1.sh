#!/usr/bin/env bash
# Call 1 (session 33, H200: no H100 is lent this session). s33m = main at
# the start (e6d5b09); s33p = that + bench/experiments/wide-bwd-clamped-dy.patch.
# Phase 1, alone on the GPU: the patch's A/B (two rounds, builds alternated,
# each against its own process's copy). Phase 2, side by side (nothing
# timed): the patch's correctness (every wide config, the long-row norm
# variants), memcheck/synccheck on its fp32 default, and synccheck on the
# pieces of the wide case that reports "Missing wait" (checklist item 3).
set -uo pipefail
B=$PWD/.devbuild
P=$B/s33p
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s "A/B clamped dy"
timeout 300 bash bench/gpu_ab.sh ab_call1 2 $B/s33m $P -- \
  "ln||bwd fp32 262144" "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 262144" \
  "ln16||bwd bf16 65536 262144" "addln|LNTUNE_SWEEP_RESIDUAL=1|bwd fp32 262144"
s "correctness and sanitizers, side by side"
export LNTUNE_CACHE=off
T=/tmp/p2; mkdir -p $T
(LD_LIBRARY_PATH=/usr/local/cuda/lib64:$P timeout 200 $P/gpu_test --gtest_filter='Gpu.WideBackward*' --gtest_brief=1 > $T/wide.log 2>&1; echo "gpu_test wide rc=$?") &
(LD_LIBRARY_PATH=/usr/local/cuda/lib64:$P timeout 200 $P/gpu_norms_test --gtest_filter='*262144*' --gtest_brief=1 > $T/norms.log 2>&1; echo "norms 262144 rc=$?") &
san() {  # dir label tool env... -- sweep args
  local d=$1 lab=$2 tool=$3; shift 3
  local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  env LD_LIBRARY_PATH=/usr/local/cuda/lib64:$d "${envs[@]}" timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 3 $d/lntune_sweep "$@" > $T/san_$lab.log 2>&1
  echo "$lab exit $?: $(grep -E 'SUMMARY' $T/san_$lab.log | tr '\n' ' ')"
}
(san $P ln_mem memcheck LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=9 -- bwd fp32 262144
 san $P addln_mem memcheck LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=9 LNTUNE_SWEEP_RESIDUAL=1 -- bwd fp32 262144
 san $P ln_sync synccheck LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=9 -- bwd fp32 262144) > $T/san_p.txt 2>&1 &
M=$B/s33m
(san $M wide37_sync synccheck "LNTUNE_SWEEP_CONFIG=block_size=4096 num_warps=8 rows_per_cta=3 group_size_m=8 cluster_size=16" LNTUNE_SWEEP_M=37 -- bwd bf16 65536
 san $M fwd37_sync synccheck LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=37 -- fwd bf16 65536
 san $M wide37c1_sync synccheck "LNTUNE_SWEEP_CONFIG=block_size=4096 num_warps=8 rows_per_cta=3 group_size_m=1 cluster_size=16" LNTUNE_SWEEP_M=5 -- bwd bf16 65536) > $T/sync37.txt 2>&1 &
wait
cp $T/wide.log $O/gpu_test_wide_call1.log; cp $T/norms.log $O/gpu_norms_test_262144_call1.log
grep -hE "PASSED|FAILED|wide " $O/gpu_test_wide_call1.log $O/gpu_norms_test_262144_call1.log
cat $T/san_p.txt $T/sync37.txt | tee $O/sanitizer_call1.log
for f in $T/san_wide37_sync.log $T/san_fwd37_sync.log $T/san_wide37c1_sync.log; do echo "--- $f"; head -c 3000 $f; done > $O/synccheck_pieces_call1.log
s done
