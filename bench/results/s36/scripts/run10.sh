#!/usr/bin/env bash
# Call 10 (session 36, H200). s36g. The tables: LayerNorm at x = 512 MiB
# against PyTorch, RMSNorm and the fused forms, the M = 4096 backward.
source bench/gpu_call.sh
s "tables"
STEP_SECONDS=150 TABLES="ext bandwidth norms train" OUT=$O bash bench/gpu_tables.sh $B/s36g call10
s done
