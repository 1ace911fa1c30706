#!/usr/bin/env bash
# Call 2 (session 32): s32c = main + session 31's dz prefetch, reworked
# (bulk_dz: only fp32 dz, no held row pointer; the spill-free form) + the
# 16-bit N = 6145-8192 backward default (the staged whole row in 16 warps
# instead of the split in two). Phase 1, alone on the GPU: s32b (main at the
# start) against s32c, two rounds. Phase 2, alone: the final tables of
# s32c (bandwidth regime: LayerNorm and the norm variants against PyTorch;
# the M = 4096 backward kernels, dx and dW/dB with the L2 flushed; the
# tutorial grid end to end through lntune.torch with autograd; small M and
# host time). Phase 3, side by side (nothing timed): gpu_test, gpu_norms_test
# and tuner_gpu_test in shards, compute-sanitizer on the changed kernels, and
# synccheck on the pieces of gpu_test's failing wide case (call 1).
set -uo pipefail
B=$PWD/.devbuild
D=$B/s32c
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s "A/B"
timeout 130 bash bench/gpu_ab.sh ab_call2 2 $B/s32b $D -- \
  "addln|LNTUNE_SWEEP_RESIDUAL=1|bwd fp32 262144" \
  "addrms|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 262144" \
  "big||bwd bf16 7168 8192" "big||bwd fp16 8192"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D LNTUNE_CACHE=off
s "M = 4096 backward kernels (dx + dW/dB, L2 flushed), defaults"
for dt in bf16 fp16 fp32; do LNTUNE_SWEEP_CONFIG=default timeout 30 $D/lntune_sweep train $dt 1024 2048 4096 8192 16384 2>&1 | grep "^train"; done | tee $O/train_m4096_call2.log
s "tables"
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
timeout 60 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes fp16,bf16,fp32 --providers lntune-default,torch --out /tmp/bw > $O/bandwidth_call2.log 2>&1; echo "bandwidth rc=$?"
timeout 100 python3 bench/bench_norms.py --section bandwidth --dtypes bf16,fp32 --out /tmp/nb > $O/norms_bandwidth_call2.log 2>&1; echo "norms rc=$?"
cp /tmp/nb/results.md $O/norms_call2.md 2>/dev/null
timeout 120 python3 bench/bench_layernorm.py --no-plots --section grid,small_m,host --dtypes fp16,bf16,fp32 --providers lntune-default,torch --out /tmp/gr > $O/grid_call2.log 2>&1; echo "grid rc=$?"
cp /tmp/gr/results.md $O/grid_call2.md 2>/dev/null; cp /tmp/bw/results.md $O/bandwidth_call2.md 2>/dev/null
grep -E "N=(8192|65536|262144)" $O/bandwidth_call2.log | cut -c12-220
s "suites and sanitizers, side by side"
T=/tmp/p3; mkdir -p $T
for i in 0 1 2; do
  GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i timeout 230 $D/gpu_test --gtest_brief=1 > $T/gpu_test_$i.log 2>&1 &
  GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i timeout 230 $D/gpu_norms_test --gtest_brief=1 > $T/norms_$i.log 2>&1 &
done
timeout 230 $D/tuner_gpu_test --gtest_brief=1 > $T/tuner.log 2>&1 &
san() {  # label, tool, env..., -- sweep args
  local lab=$1 tool=$2; shift 2
  local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 5 $D/lntune_sweep "$@" > $T/san_$lab.log 2>&1
  echo "$lab exit $?: $(grep -E 'SUMMARY' $T/san_$lab.log | tr '\n' ' ')"
}
(for tool in memcheck racecheck synccheck; do
  san addln_$tool $tool LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=9 LNTUNE_SWEEP_RESIDUAL=1 -- bwd fp32 262144
  san addrms_$tool $tool LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=9 LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm -- bwd fp32 262144
  san whole8192_$tool $tool "LNTUNE_SWEEP_CONFIG=block_size=8192 num_warps=16 rows_per_cta=1 group_size_m=132" LNTUNE_SWEEP_M=300 -- bwd bf16 8192
done > $T/san.txt 2>&1) &
(san wide37_sync synccheck "LNTUNE_SWEEP_CONFIG=block_size=4096 num_warps=8 rows_per_cta=3 group_size_m=8 cluster_size=16" LNTUNE_SWEEP_M=37 -- bwd bf16 65536
 san fwd37_sync synccheck LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=37 -- fwd bf16 65536
 san wide37c1_sync synccheck "LNTUNE_SWEEP_CONFIG=block_size=4096 num_warps=8 rows_per_cta=3 group_size_m=1 cluster_size=16" LNTUNE_SWEEP_M=5 -- bwd bf16 65536) > $T/sync37.txt 2>&1 &
wait
cat $T/gpu_test_*.log > $O/gpu_test_call2.log; cat $T/norms_*.log > $O/gpu_norms_test_call2.log; cp $T/tuner.log $O/tuner_gpu_test_call2.log
grep -hE "PASSED|FAILED|tests ran" $O/gpu_test_call2.log $O/gpu_norms_test_call2.log $O/tuner_gpu_test_call2.log
cat $T/san.txt $T/sync37.txt | tee $O/sanitizer_call2.log
for f in $T/san_wide37_sync.log $T/san_fwd37_sync.log $T/san_wide37c1_sync.log; do head -c 3000 $f; done > $O/synccheck_pieces_call2.log
s done
