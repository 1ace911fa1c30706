#!/usr/bin/env bash
# Call 4 (session 45). s45d = s45c with the fused 16-bit backward's rows of
# other than a power of two of threads as defaults at 2304, 2560 and 4608
# columns over more than 48 rows an SM (call 3's sweep). The cases and
# memcheck, the A/B s45c -> s45d (LayerNorm and RMSNorm + add, bf16 and
# fp16), g = 1 or 2 CTAs a SM for the 16-bit backward's slabs (call 3's
# loop printed nothing: the sweep prints a config's line only with
# LNTUNE_SWEEP_EVERY=1), every fused config at more N.
source bench/gpu_call.sh
use s45d
s "cases"
cases 100 '*M6401*' '*M6401*'
s "A/B"
A=LNTUNE_SWEEP_RESIDUAL=1
OUT=$O bash bench/gpu_ab.sh ab4 2 $B/s45c $D -- "addln|$A|bwd bf16 2304 2560 4608" \
  "addrms|$A LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 2304 2560 4608" "addln16|$A|bwd fp16 2304 4608" | grep -v copy; echo "ab rc=$?"
s "groups of the 16-bit backward's slabs"
cfg() { echo "r$1 $2 $3 | $4: $(LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_CONFIG="$4" timeout 30 $S bwd $2 $3 2>&1 | grep -E 'of copy' | grep block_size | tail -1 | grep -oE '[0-9.]+ us .*')"; }
for r in 1 2; do
  for g in 132 66; do cfg $r bf16 16384 "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=$g cluster_size=2"; done
  for g in 132 66; do cfg $r fp16 16384 "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=$g cluster_size=2"; done
  for g in 66 33; do cfg $r bf16 32768 "block_size=8192 num_warps=8 rows_per_cta=3 group_size_m=$g cluster_size=4"; done
done
s "every fused config at more N"
(export LNTUNE_SWEEP_RESIDUAL=1; sw addseg2 90 bwd bf16 1280 1536 3072 5120 6144)
s done
