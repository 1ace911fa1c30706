#!/usr/bin/env bash
# Call 8 (session 41; the last device minutes): the RMSNorm and fused-form
# table at x = 512 MiB against PyTorch with main (s41t).
source bench/gpu_call.sh
STEP_SECONDS=110 TABLES="ext norms" OUT=$O bash bench/gpu_tables.sh $B/s41t s41t; echo "tables rc=$?"
s done
