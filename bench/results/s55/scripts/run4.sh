#!/usr/bin/env bash
# Call 4 (session 55). RMSNorm and the fused forms' bandwidth-regime table
# in the Python harness on s55b, as session 53's call 6 (its second half).
source bench/gpu_call.sh
use s55b
ext
s "norms match"
timeout 280 python3 bench/bench_norms.py --section bandwidth --dtypes fp16,bf16,fp32 --providers lntune \
  --copy-mib match --out $O/norms_match > $O/norms_match.log 2>&1; echo "rc=$?"
grep -E "copy" $O/norms_match.log | head -60
s done
