#!/usr/bin/env bash
# Call 4: 8cc4b88 (bwd_dwdb as a programmatic dependent of bwd_dx). First the
# GPU suites and the binding's pytest (CUDA graphs included), then, alone on
# the GPU, the default backward pair against the copy: the build before it
# (s29b, cf92e13) and this one (s29c), alternated, each its own process.
set -uo pipefail
B=$PWD/.devbuild/s29b
D=$PWD/.devbuild/s29c
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
wait
cat /tmp/norms_*.log > $O/gpu_norms_test_call4.log; cp /tmp/gpu_test.log $O/gpu_test_call4.log
grep -hE "PASSED|FAILED|\[ finish|\[ regs" $O/gpu_norms_test_call4.log $O/gpu_test_call4.log | head -20
s "sanitizers"
for tool in memcheck racecheck synccheck; do
  for c in "4096 bf16 1024" "300 fp32 4095" "64 bf16 65536"; do
    set -- $c
    LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$1 timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $D/lntune_sweep bwd $2 $3 > /tmp/san.log 2>&1
    echo "$tool M=$1 $2 N=$3 exit $?: $(grep -E 'SUMMARY' /tmp/san.log)"
  done
done > $O/sanitizer_call4.log 2>&1
cat $O/sanitizer_call4.log
s "A/B default pair, M = 4096 and x = 512 MiB"
for round in 1 2; do
  for build in $B $D; do
    tag=$(basename $build)
    for dt in bf16 fp32; do
      LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=4096 $build/lntune_sweep bwd $dt 1024 2048 4096 8192 16384 | sed "s/^/$tag r$round m4096 /"
      LNTUNE_SWEEP_CONFIG=default $build/lntune_sweep bwd $dt 1024 16384 262144 | sed "s/^/$tag r$round big /"
    done
  done
done > $O/ab_pdl_call4.log 2>&1
grep -E " bwd " $O/ab_pdl_call4.log | awk '{print $1, $2, $3, $5, $6, $9, $13}' | sort -k3,3 -k4,4 -k5,5V -k1,1 -k2,2
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
s "pytest"
python3 -c "import torch, lntune.torch as lt; x = torch.randn(4, 64, device='cuda', requires_grad=True); m = lt.LayerNorm(64).cuda(); m(x).sum().backward(); print('binding ok (extension built)')" 2>&1 | tail -1
python3 -m pytest -q -p no:cacheprovider --collect-only tests/python/test_lntune_torch_norms.py 2>/dev/null | grep "::" > /tmp/ids.txt
split -n r/4 /tmp/ids.txt /tmp/shard_
for f in /tmp/shard_*; do
  ( timeout 240 python3 -m pytest -q -p no:cacheprovider $(cat $f) > /tmp/pytest_norms_$(basename $f).log 2>&1; echo "$(basename $f) rc=$?" ) &
done
( timeout 240 python3 -m pytest -q -p no:cacheprovider tests/python/test_lntune_torch.py > /tmp/pytest_torch.log 2>&1; echo "test_lntune_torch rc=$?" ) &
wait
cat /tmp/pytest_norms_shard_*.log > $O/pytest_norms_call4.log; cp /tmp/pytest_torch.log $O/pytest_torch_call4.log
tail -qn 1 /tmp/pytest_norms_shard_*.log /tmp/pytest_torch.log
s done
