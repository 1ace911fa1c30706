#!/usr/bin/env bash
# Session 27, GPU call 1: the L2-flush probe (what a memset flush charges the
# kernel after it), lntune_sweep train at M = 4096 as the tuner times it,
# gpu_norms_test's Variants with the default heuristic forced
# (set_tuned(false), not yet run on a GPU), and the binding's pytest of the
# norms in 4 parallel shards (it ran past 150 s in one process).
set -uo pipefail
D=$PWD/.devbuild/s27
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
s probe
$D/l2_flush_probe 2>&1 | tee $O/l2_flush_probe.log
s "sweep train"
timeout 120 $D/lntune_sweep train bf16 1024 2048 4096 8192 2>&1 | tee $O/train.log | grep -E "^train"
s "Variants (default heuristic forced)"
timeout 200 $D/gpu_norms_test --gtest_brief=1 --gtest_filter='*Variant*' > $O/variants.log 2>&1; echo "rc=$?"; grep -hE "PASSED|FAILED" $O/variants.log | head
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python:$D/pylib TORCH_EXTENSIONS_DIR=/tmp/te
s "pytest norms (collect)"
python3 -m pytest -q -p no:cacheprovider --collect-only tests/python/test_lntune_torch_norms.py 2>/dev/null | grep "::" > /tmp/ids.txt
wc -l < /tmp/ids.txt
split -n r/4 /tmp/ids.txt /tmp/shard_
for f in /tmp/shard_*; do
  ( timeout 300 python3 -m pytest -q -p no:cacheprovider $(cat $f) > $O/pytest_norms_$(basename $f).log 2>&1; echo "$(basename $f) rc=$?" ) &
done
wait
tail -n 3 $O/pytest_norms_shard_*.log
s done
