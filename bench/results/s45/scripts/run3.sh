#!/usr/bin/env bash
# Call 3 (session 45). s45c = s45b with LayerNorm + add fp32 of 4097-8192
# columns in 16 warps (its rows staged, 192 KB; call 2: 98.8 against the
# default's 86.0) and the fused backward's rows of other than a power of
# two of threads in the space. The cases and memcheck; the A/B s45b ->
# s45c; g = 1 or 2 CTAs a SM for the 16-bit backward's slabs (call 2: bf16
# 16384 g66 92.2 against g132 89.4, one process); every fused config at
# 1152-4608.
source bench/gpu_call.sh
use s45c
s "cases"
cases 140 '*M8193*:*v1_N2304_bwd*:*v0_N1152_bwd*' '*v1_N2304_bwd*:*resfp32_M8193_N5001*'
s "A/B"
A=LNTUNE_SWEEP_RESIDUAL=1
OUT=$O bash bench/gpu_ab.sh ab3 2 $B/s45b $D -- "addln32|$A|bwd fp32 5000 6144 8192" \
  "addrms32|$A LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 8192" | grep -v copy; echo "ab rc=$?"
s "groups of the 16-bit backward's slabs"
cfg() { echo "r$1 $2 $3 | $4: $(LNTUNE_SWEEP_CONFIG="$4" timeout 30 $S bwd $2 $3 2>&1 | grep -E '% of copy' | tail -1 | grep -oE '[0-9.]+ us .*')"; }
for r in 1 2; do
  for g in 132 66; do cfg $r bf16 16384 "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=$g cluster_size=2"; done
  for g in 132 66; do cfg $r fp16 16384 "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=$g cluster_size=2"; done
  for g in 132 66; do cfg $r bf16 12288 "block_size=6144 num_warps=8 rows_per_cta=3 group_size_m=$g cluster_size=2"; done
  for g in 66 33; do cfg $r bf16 32768 "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=$g cluster_size=4"; done
done
s "every fused config at 1152-4608"
(export LNTUNE_SWEEP_RESIDUAL=1; sw addseg 100 bwd bf16 1152 2304 2560 4608)
s done
