#!/usr/bin/env bash
# Call 1: ed2365e (session 28's final review, never run on a GPU): the GPU
# suites (gpu_norms_test in 4 shards beside gpu_test and tuner_gpu_test), the
# binding's pytest, compute-sanitizer on the in-kernel finish and on kernels of
# 512 threads and more (whose finish is no longer compiled), and the default
# backward at M = 4096 for those kernels, in-kernel-capable vs bwd_dwdb after.
set -uo pipefail
D=$PWD/.devbuild/s29
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s "gpu tests"
for i in 0 1 2 3; do
  ( GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 480 $D/gpu_norms_test --gtest_brief=1 > /tmp/norms_$i.log 2>&1; echo "norms shard $i rc=$?" ) &
done
( timeout 480 $D/gpu_test --gtest_brief=1 > /tmp/gpu_test.log 2>&1; echo "gpu_test rc=$?" ) &
( timeout 480 $D/tuner_gpu_test --gtest_brief=1 > /tmp/tuner_gpu.log 2>&1; echo "tuner_gpu_test rc=$?" ) &
wait
cat /tmp/norms_*.log > $O/gpu_norms_test_call1.log; cp /tmp/gpu_test.log $O/gpu_test_call1.log; cp /tmp/tuner_gpu.log $O/tuner_gpu_test_call1.log
grep -hE "PASSED|FAILED|\[ finish" $O/gpu_norms_test_call1.log $O/gpu_test_call1.log $O/tuner_gpu_test_call1.log | head -20
s "sanitizers"
export LNTUNE_SWEEP_CONFIG=default
for tool in memcheck racecheck synccheck; do
  for c in "1 bf16 4096 layernorm" "32 bf16 1000 layernorm" "8 fp32 4095 rmsnorm" "64 bf16 8192 layernorm" "64 fp32 8192 rmsnorm" "16 fp16 16384 layernorm"; do
    set -- $c
    LNTUNE_SWEEP_M=$1 LNTUNE_SWEEP_OP=$4 timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $D/lntune_sweep bwd $2 $3 > /tmp/san.log 2>&1
    echo "$tool M=$1 $2 N=$3 $4 exit $?: $(grep -E 'SUMMARY' /tmp/san.log) | $(grep -E '^bwd' /tmp/san.log | cut -c1-70)"
  done
done > $O/sanitizer_call1.log 2>&1
cat $O/sanitizer_call1.log
unset LNTUNE_SWEEP_CONFIG
s "default bwd M=4096, 512+ thread kernels"
for dt in bf16 fp32; do LNTUNE_SWEEP_FINISH=both LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=4096 $D/lntune_sweep train $dt 8192 16384; done > $O/train_default_call1.log 2>&1
grep -E "copy|^finish|train" $O/train_default_call1.log | cut -c1-160 | head -20
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
s "pytest"
python3 -c "import torch, lntune.torch as lt; x = torch.randn(4, 64, device='cuda', requires_grad=True); m = lt.LayerNorm(64).cuda(); m(x).sum().backward(); print('binding ok (extension built)')" 2>&1 | tail -1
python3 -m pytest -q -p no:cacheprovider --collect-only tests/python/test_lntune_torch_norms.py 2>/dev/null | grep "::" > /tmp/ids.txt
wc -l < /tmp/ids.txt
split -n r/4 /tmp/ids.txt /tmp/shard_
for f in /tmp/shard_*; do
  ( timeout 240 python3 -m pytest -q -p no:cacheprovider $(cat $f) > /tmp/pytest_norms_$(basename $f).log 2>&1; echo "$(basename $f) rc=$?" ) &
done
( timeout 240 python3 -m pytest -q -p no:cacheprovider tests/python/test_lntune_torch.py > /tmp/pytest_torch.log 2>&1; echo "test_lntune_torch rc=$?" ) &
wait
cat /tmp/pytest_norms_shard_*.log > $O/pytest_norms_call1.log; cp /tmp/pytest_torch.log $O/pytest_torch_call1.log
tail -n 2 /tmp/pytest_norms_shard_*.log /tmp/pytest_torch.log
s done
