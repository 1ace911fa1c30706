#!/usr/bin/env bash
# Call 8 (session 34, H200). h34 = 91f0e8b. Every forward config at the
# 16-bit LayerNorm's last sub-target cells (N = 256, 512: 95% of copy).
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/h34
LNTUNE_SWEEP_EVERY=1 timeout 100 $B/h34/lntune_sweep fwd bf16 256 512 > $O/every_fwd_small_call8.log 2>&1; echo "rc=$?"
grep default $O/every_fwd_small_call8.log
