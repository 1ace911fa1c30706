#!/usr/bin/env bash
# Call 11 (session 48). Call 10's host-time window put lntune.torch's
# training step at 1.16x PyTorch's at M = 1, N = 2048 (one window; session
# 47's max was 1.09): the host section again, twice, to see the drift.
source bench/gpu_call.sh
use s48c
ext
for r in 1 2; do
  s "host round $r"
  timeout 150 python3 bench/bench_layernorm.py --no-plots --section host --dtypes bf16 --providers lntune-default,torch \
    --out $O/host_$r > $O/host_$r.log 2>&1; echo "rc=$?"
  grep -E "Host ratio" $O/host_$r/results.md
  grep -E "^\| (1|4096) \| (1024|2048) \|" $O/host_$r/results.md | cut -d'|' -f2,3,7,8
done
s done
