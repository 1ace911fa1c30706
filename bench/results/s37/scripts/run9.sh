#!/usr/bin/env bash
# Call 9 (session 37). The fused and RMSNorm backwards with the row slots'
# own barriers (s37g) against session 36's build (s36g): x = 512 MiB and
# M = 4096; then the norms table (RMSNorm and the fused forms against
# PyTorch at x = 512 MiB) of s37g.
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab_call9 2 $B/s36g $B/s37g -- \
  "addln|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 1024 4096 8192" \
  "addrms|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 1024 4096 8192" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 2048 8192" \
  "trainrms|LNTUNE_SWEEP_OP=rmsnorm|train bf16 1024 2048 4096" \
  "trainadd|LNTUNE_SWEEP_RESIDUAL=1|train bf16 1024 2048 4096" > /dev/null 2>&1; echo "ab rc=$?"
grep -E "default " $O/ab_call9.log | grep -v "dwdb alone" | sed -E 's/ +/ /g' | awk '{for(i=1;i<=NF;i++) if ($i ~ /%$/) {n=""; for(j=1;j<=NF;j++) if ($j ~ /^N=/) n=$j; print $3,n,$1,$2,$i; break}}' | sort -k1,2 -k3,4 | awk '{k=$1" "$2; v[k]=v[k]" "$3"/"$4"="$5} END {for (k in v) print k, v[k]}' | sort
s "norms table"
STEP_SECONDS=150 TABLES="ext norms" OUT=$O timeout 280 bash bench/gpu_tables.sh $B/s37g call9; echo "tables rc=$?"
cat $O/norms_call9.md 2>/dev/null | grep -E "^\|" | head -40
s done
