#!/usr/bin/env bash
# Call 10 (session 48). s48c (the session's kernels and defaults): end to
# end at M = 4096 through lntune.torch with autograd (RMSNorm and the fused
# forms), and LayerNorm's tutorial grid, small M and host time per call,
# with the harness's reading L2 flush.
source bench/gpu_call.sh
STEP_SECONDS=200 TABLES="ext normsgrid grid" OUT=$O bash bench/gpu_tables.sh $B/s48c s48c; echo "tables rc=$?"
for f in $O/*_s48c.md; do echo "== $f"; grep -E "Summary|target|host time|Host ratio|geomean|lowest|least" $f | head -12; done 2>/dev/null
