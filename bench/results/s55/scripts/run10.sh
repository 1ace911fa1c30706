#!/usr/bin/env bash
# Call 10 (session 55). The bandwidth-regime tables of both Python harnesses
# on s55e (main + this session's rules: 06d9093, 8398dae and the fused rule
# of calls 7-9), each record against a copy of its own bytes and against
# PyTorch in the same process; the defaults, cache off.
source bench/gpu_call.sh
use s55e
ext
s layernorm
timeout 200 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes fp16,bf16,fp32 \
  --providers lntune-default,torch --copy-mib match --out $O/ln > $O/ln.log 2>&1; echo "rc=$?"
s norms
timeout 300 python3 bench/bench_norms.py --section bandwidth --dtypes fp16,bf16,fp32 --providers lntune,torch \
  --copy-mib match --out $O/norms > $O/norms.log 2>&1; echo "rc=$?"
s done
