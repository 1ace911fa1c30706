#!/usr/bin/env bash
# Call 6 (session 55). s55d = s55b + the 256-column rules from call 5's
# sweeps (generator/space.cpp: 16-bit LayerNorm 8 warps of 16 rows, fp32
# LayerNorm 16 warps of 16 rows, 16-bit add + LayerNorm 4 warps of 8 rows,
# from default_m_bound rows on). A/B against s55b, two rounds, the rules'
# shapes, one past the bound (M = 100000) and the controls the rules leave
# (RMSNorm, an fp32 residual stream, M = 4096); then the Python harness's
# bandwidth rows at 256 columns on s55d.
source bench/gpu_call.sh
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s55b $B/s55d -- \
  "ln||fwd bf16 256" "lnh||fwd fp16 256" "ln32||fwd fp32 256" \
  "add|LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 256" "addh|LNTUNE_SWEEP_RESIDUAL=1|fwd fp16 256" \
  "m100k|LNTUNE_SWEEP_M=100000|fwd bf16 256" "m100k32|LNTUNE_SWEEP_M=100000|fwd fp32 256" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 256" "add32|LNTUNE_SWEEP_RESIDUAL=fp32|fwd bf16 256" \
  "m4k|LNTUNE_SWEEP_M=4096|fwd bf16 256"
use s55d
ext
s "layernorm 256"
timeout 120 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes fp16,bf16,fp32 --bandwidth-ns 256 \
  --providers lntune-default --copy-mib match --out $O/ln256 > $O/ln256.log 2>&1; echo "rc=$?"
grep -E "^\| 256" $O/ln256/results.md
s done
