#!/usr/bin/env bash
# Call 10 (session 51). The tables on s51g: the M = 4096 backward kernels,
# LayerNorm at x = 512 MiB against PyTorch, the tutorial grid end to end,
# small M and host time (interleaved since this session).
source bench/gpu_call.sh
STEP_SECONDS=150 TABLES="ext train bandwidth grid" OUT=$O timeout 420 bash bench/gpu_tables.sh $B/s51g s51g; echo "tables rc=$?"
