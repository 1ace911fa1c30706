#!/usr/bin/env bash
# Call 7 (session 34, H200). h34 = 91f0e8b (this session's kernel and
# default changes). The tables with the default heuristic (no cache):
# LayerNorm, RMSNorm and the fused forms at x = 512 MiB against PyTorch, and
# the M = 4096 backward kernels.
source bench/gpu_call.sh
STEP_SECONDS=150 TABLES="ext bandwidth norms train" OUT=$O timeout 500 bash bench/gpu_tables.sh $B/h34 call7
