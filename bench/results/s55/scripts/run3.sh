#!/usr/bin/env bash
# Call 3 (session 55). s55b (main + fwd-cta-stats.patch) passed the gtest
# suites in call 2; here the pytest suites through lntune.torch, then
# LayerNorm's bandwidth-regime table in the Python harness (each record
# against a copy of its own bytes, same process), the defaults, cache off.
source bench/gpu_call.sh
PYTEST=1 GTEST=0 OUT=$O bash bench/gpu_suites.sh .devbuild/s55b s55b
use s55b
ext
s "layernorm match"
timeout 170 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes fp16,bf16,fp32 \
  --providers lntune-default --copy-mib match --out $O/ln_match > $O/ln_match.log 2>&1; echo "rc=$?"
grep -E "copy" $O/ln_match.log | head -40
s done
