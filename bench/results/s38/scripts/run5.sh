#!/usr/bin/env bash
# Call 5 (session 38). The tables of s38d (main: the two-CTAs-a-SM default):
# LayerNorm at x = 512 MiB against PyTorch, RMSNorm and the fused forms.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s38d
s "tables"
STEP_SECONDS=170 TABLES="ext bandwidth norms" OUT=$O timeout 540 bash bench/gpu_tables.sh $B/s38d call5; echo "tables rc=$?"
cat $O/bandwidth_call5.md $O/norms_call5.md 2>/dev/null | grep -E "^\|" | head -60
s done
