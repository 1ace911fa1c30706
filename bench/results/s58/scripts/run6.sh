#!/usr/bin/env bash
# Call 6 (session 58). 16-bit add + RMSNorm forward of 8193-12287 columns on
# the 12288-column tile in 16 warps (s58d) against main's 8192-column tiles in
# 32 warps (s58c), from 16 rows an SM: session 57's cold tune had the tile
# 1.09-1.22x ahead at M = 4096; x = 512 MiB not measured. Each build's
# lntune_sweep default in its own process against its copy, two rounds.
source bench/gpu_call.sh
s ab
OUT=$O bash bench/gpu_ab.sh addrms_ab 2 $B/s58c $B/s58d -- \
  "m4096|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 8704 9216 10240 11264" \
  "big|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 8704 10240 11264" 2>&1 | tail -30
s done
