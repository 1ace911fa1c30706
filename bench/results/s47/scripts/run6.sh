#!/usr/bin/env bash
# Call 6 (session 47). s47f = main at the end of the session's kernel and
# default changes: the benchmark tables at x = 512 MiB (LayerNorm against
# PyTorch; RMSNorm and the fused forms) and the M = 4096 backward kernels.
source bench/gpu_call.sh
STEP_SECONDS=200 TABLES="ext bandwidth train norms" OUT=$O bash bench/gpu_tables.sh $B/s47f s47f; echo "tables rc=$?"
for f in $O/*_s47f.md; do echo "== $f"; cat $f; done 2>/dev/null | head -150
