#!/usr/bin/env bash
# Call 9 (session 48). s48c = s48b + the 16-bit LayerNorm forward of 512
# columns on 16 threads a row from default_m_bound rows on (calls 7-8: bf16
# 97.8 against 96.6, fp16 98.6 against 97.8). A/B against s48b, two rounds
# (RMSNorm and M = 4096 unchanged: controls), then the Python harness's
# bandwidth rows at 256-1024 on s48c.
source bench/gpu_call.sh
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s48b $B/s48c -- "ln||fwd bf16 512" "lnh||fwd fp16 512" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 512" "m4k|LNTUNE_SWEEP_M=4096|fwd bf16 512" | grep -v copy
use s48c
ext
s harness
timeout 150 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes fp16,bf16 \
  --bandwidth-ns 256,512,1024 --providers lntune-default,torch --out $O/harness > $O/harness.log 2>&1; echo "rc=$?"
grep -E "copy:|bandwidth" $O/harness.log | cut -c1-150
s done
