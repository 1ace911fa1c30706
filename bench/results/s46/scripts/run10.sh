#!/usr/bin/env bash
# Call 10 (session 46). s46h: issue 11's bandwidth table (RMSNorm and the
# fused forms, bf16 and fp32, x = 512 MiB) and the M = 4096 grid end to end
# with the paired ratios.
source bench/gpu_call.sh
use s46h
s "tables"
STEP_SECONDS=200 TABLES="ext norms normsgrid" OUT=$O bash bench/gpu_tables.sh $D s46h; echo "tables rc=$?"
s done
