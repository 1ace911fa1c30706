#!/usr/bin/env bash
# Call 7: 364990b's build (in-kernel dW/dB at small M, one CTA writing dW/dB
# itself). gpu_norms_test in 4 shards beside gpu_test and tuner_gpu_test,
# then the binding's pytest (norms in 4 shards; test_lntune_torch, CUDA
# graphs included).
set -uo pipefail
D=$PWD/.devbuild/s28
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
cat /tmp/norms_*.log > $O/gpu_norms_test_call7.log; cp /tmp/gpu_test.log $O/gpu_test_call7.log; cp /tmp/tuner_gpu.log $O/tuner_gpu_test_call7.log
grep -hE "PASSED|FAILED|\[ finish" $O/gpu_norms_test_call7.log $O/gpu_test_call7.log $O/tuner_gpu_test_call7.log | head -20
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
cat /tmp/pytest_norms_shard_*.log > $O/pytest_norms_call7.log; cp /tmp/pytest_torch.log $O/pytest_torch_call7.log
tail -n 2 /tmp/pytest_norms_shard_*.log /tmp/pytest_torch.log
s done
