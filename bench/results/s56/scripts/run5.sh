#!/usr/bin/env bash
# Call 5 (session 56). For the closing analysis of the M = 4096 backward at
# 1024 columns: the forward and the backward at M = 4096 against the 512
# MiB copy (lntune_sweep, default configs) and, in the Python harness,
# against a copy moving each record's own bytes (--copy-mib match, bf16,
# the quick grid), beside PyTorch.
source bench/gpu_call.sh
use s56a
ext
s sweep
for k in fwd bwd; do for n in 1024 4096; do
  LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_CONFIG=default timeout 40 $S $k bf16 $n 2>&1 | grep -E "default|copy"
done; done
s grid
timeout 200 python3 bench/bench_layernorm.py --no-plots --quick --section grid --dtypes bf16 \
  --providers lntune-default,torch --copy-mib match --out $O/grid > $O/grid.log 2>&1; echo "rc=$?"
grep -iE "copy|1024|4096" $O/grid.log | head -30
s done
