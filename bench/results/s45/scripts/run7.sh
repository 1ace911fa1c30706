#!/usr/bin/env bash
# Call 7 (session 45). s45f (main's kernels and defaults): RMSNorm and the
# fused forms at M = 4096 end to end, autograd through lntune.torch against
# PyTorch in the same process (bench_norms.py --section grid --quick), bf16
# and fp32.
source bench/gpu_call.sh
use s45f
s "tables"
STEP_SECONDS=170 TABLES="ext normsgrid" OUT=$O bash bench/gpu_tables.sh $D s45f; echo "tables rc=$?"
s done
