#!/usr/bin/env bash
# Call 8 (session 38). s38g = main (add + LayerNorm back on the guarded
# passes). The training size at N = 8192-16384 (the new wide rule has no M
# bound) against session 37's last build (s37h), two rounds; add + LayerNorm
# and LayerNorm at x = 512 MiB.
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab_call8 2 $B/s37h $B/s38g -- \
  "train||train bf16 16384 12288" "trainh||train fp16 16384" \
  "addln|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 16384" "ln||bwd bf16 16384"
s done
