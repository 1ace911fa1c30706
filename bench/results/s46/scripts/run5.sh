#!/usr/bin/env bash
# Call 5 (session 46). s46e = s46d + the fused 16-bit backward's defaults at
# 262144 (16384-column slabs, clusters of 16, 2 stages, dz staged) and
# RMSNorm + add at 16384 (8 warps, 3 stages). New Variants cases and
# memcheck; A/B against s46a, with the fp32 fused rows whose defaults now
# stage dz too (8192-column slabs at 2 stages: 16384, 65536); the RMSNorm /
# fused grid at M = 4096 end to end with the paired ratios.
source bench/gpu_call.sh
use s46e
s "cases"
cases 120 '*Variants*res*N262144*:*Variants*rmsnorm*res*N16384*' '*Variants*rmsnorm*res*N16384*'
s "ab"
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s46a $B/s46e -- \
  "addln256k|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 262144" \
  "addrms256k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 262144" \
  "addrms16k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 16384" \
  "addlnf16k|LNTUNE_SWEEP_RESIDUAL=1|bwd fp32 16384" \
  "addlnf64k|LNTUNE_SWEEP_RESIDUAL=1|bwd fp32 65536" \
  "addrmsf64k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 65536" \
  "addlnfM4k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=4096|bwd fp32 16384"
s "grid"
export LNTUNE_LIBRARY="$D/liblntune.so" PYTHONPATH="$PWD/python" TORCH_EXTENSIONS_DIR=/tmp/te
timeout 200 python3 bench/bench_norms.py --section grid --quick --dtypes bf16,fp32 --out $O/normsgrid > $O/normsgrid.log 2>&1; echo "grid rc=$?"
grep -E "paired|Lowest" -A12 $O/normsgrid/norms.md | grep -E "^- |Lowest" | head -20
s done
