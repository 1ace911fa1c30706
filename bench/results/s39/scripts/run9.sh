#!/usr/bin/env bash
# Call 9 (session 39). The fused backwards whose cells in call 5's norms
# table fell against session 38's (add + RMSNorm bf16 8192 88.4 -> 80.4,
# add + LayerNorm bf16 1024-4096 1-3 points) run kernels this session did
# not change (the single-tile backward, bwd_dx.cuh): session 38's last
# build against main, two rounds.
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab9 2 $B/s38g $B/s39f -- \
  "addrms|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 8192" \
  "addln|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 1024 4096"
s done
