#!/usr/bin/env bash
# Call 6 (session 53). The bandwidth regime in the Python harnesses with
# `--copy-mib match` (new: each record against a copy moving its own bytes,
# timed in the same process): LayerNorm fp16 / bf16 / fp32, RMSNorm and the
# fused forms fp16 / bf16 / fp32. The defaults (cache off), main + the
# harness change (s53a: no library change). Then the option's refusals.
source bench/gpu_call.sh
use s53a
ext
s "layernorm match"
timeout 150 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes fp16,bf16,fp32 \
  --providers lntune-default --copy-mib match --out $O/ln_match > $O/ln_match.log 2>&1; echo "rc=$?"
grep -E "copy" $O/ln_match.log | head
s "norms match"
timeout 240 python3 bench/bench_norms.py --section bandwidth --dtypes fp16,bf16,fp32 --providers lntune \
  --copy-mib match --out $O/norms_match > $O/norms_match.log 2>&1; echo "rc=$?"
grep -E "copy" $O/norms_match.log | head
s refusals
python3 bench/bench_layernorm.py --copy-mib 0 2>&1 | tail -1
python3 bench/bench_norms.py --copy-mib many 2>&1 | tail -1
s done
