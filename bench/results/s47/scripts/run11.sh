#!/usr/bin/env bash
# Call 11 (session 47). s47h (the session's kernels and defaults; later
# commits change no SASS): end to end at M = 4096 through lntune.torch with
# autograd (RMSNorm and the fused forms), and LayerNorm's tutorial grid,
# small M and host time per call.
source bench/gpu_call.sh
STEP_SECONDS=140 TABLES="ext normsgrid grid" OUT=$O bash bench/gpu_tables.sh $B/s47h s47h; echo "tables rc=$?"
for f in $O/*_s47h.md; do echo "== $f"; grep -E "^\||^#" $f | head -80; done 2>/dev/null
