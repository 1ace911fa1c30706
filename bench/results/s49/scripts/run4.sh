#!/usr/bin/env bash
# Call 4 (session 49), s49c. The fused backward at training sizes: its
# default (fused_bwd_default: 4 warps, one row a CTA, 4 CTAs a SM, so 528
# partial rows and bwd_dwdb after it) against the configs that now finish
# in the kernel (two CTAs a SM or one), add + LayerNorm and add + RMSNorm
# bf16 at M = 4096, every config listed in one process. Then the M = 4096
# kernel table (train) and the end-to-end grid (grid) of s49c.
source bench/gpu_call.sh
use s49c
c() { echo "block_size=$1 num_warps=$2 rows_per_cta=$3 group_size_m=$4 cluster_size=1"; }
s fused
C1024="$(c 1024 4 1 528);$(c 1024 4 2 264);$(c 1024 8 4 132);$(c 1024 8 2 264);$(c 1024 4 1 264);$(c 1024 2 1 264);$(c 1024 8 2 132);$(c 1024 4 1 528)"
C2048="$(c 2048 8 1 264);$(c 2048 8 2 132);$(c 2048 4 1 264);$(c 2048 16 2 132);$(c 2048 8 1 264)"
C512="$(c 512 2 1 528);$(c 512 4 2 264);$(c 512 4 4 132);$(c 512 8 4 264);$(c 512 2 1 264);$(c 512 2 1 528)"
for op in layernorm rmsnorm; do
  (export LNTUNE_SWEEP_OP=$op LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=4096
   LNTUNE_SWEEP_CONFIG="$C1024" sw res_${op}_1024 60 bwd bf16 1024
   LNTUNE_SWEEP_CONFIG="$C2048" sw res_${op}_2048 60 bwd bf16 2048
   LNTUNE_SWEEP_CONFIG="$C512" sw res_${op}_512 60 bwd bf16 512)
done
(export LNTUNE_SWEEP_RESIDUAL=fp32 LNTUNE_SWEEP_M=4096; LNTUNE_SWEEP_CONFIG="$C1024" sw res32_1024 60 bwd bf16 1024)
cat $O/sw_res*.log > $O/fused_all.log
s tables
STEP_SECONDS=200 TABLES="ext train grid" OUT=$O bash bench/gpu_tables.sh $D s49c; echo "tables rc=$?"
s done
