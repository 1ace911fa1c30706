#!/usr/bin/env bash
# Call 2 (session 50). (a) The in-kernel dW/dB finish for grids of three
# and four CTAs a SM (s50e: rt::finish_path's bound at 4 CTAs a SM, main's
# at 2; s50d is main): every config of interest at M = 4096 in one process
# a build, builds alternated, two rounds. More warps a scheduler (3-4, not
# 2) over fewer passes (5.2 or 3.9 row groups a CTA, not 7.8), against a
# larger grid barrier and more partial rows. (b) Nsight Compute on main's
# default at bf16 1024 (w4 r2 g264, never profiled). (c) Every forward
# config at cells of the RMSNorm table under 97% (x = 512 MiB).
source bench/gpu_call.sh
c() { echo "block_size=$1 num_warps=$2 rows_per_cta=$3 group_size_m=$4 cluster_size=1"; }
C1024="$(c 1024 4 2 264);$(c 1024 4 2 396);$(c 1024 4 2 528);$(c 1024 4 1 396);$(c 1024 4 1 528);$(c 1024 2 1 528);$(c 1024 8 2 264);$(c 1024 8 4 264);$(c 1024 4 2 264)"
C2048="$(c 2048 8 2 132);$(c 2048 8 2 264);$(c 2048 8 1 264);$(c 2048 8 1 396);$(c 2048 8 1 528);$(c 2048 4 1 396);$(c 2048 4 1 528);$(c 2048 8 2 132)"
CF32="$(c 1024 4 1 512);$(c 1024 4 1 396);$(c 1024 4 2 264);$(c 1024 8 2 264);$(c 1024 4 2 396)"
s configs
sw_ab 2 "s50d s50e" 60 -- "bf16_1024|LNTUNE_SWEEP_CONFIG=$C1024&LNTUNE_SWEEP_M=4096|bwd bf16 1024" \
  "bf16_2048|LNTUNE_SWEEP_CONFIG=$C2048&LNTUNE_SWEEP_M=4096|bwd bf16 2048" \
  "fp32_1024|LNTUNE_SWEEP_CONFIG=$CF32&LNTUNE_SWEEP_M=4096|bwd fp32 1024" \
  "rms_1024|LNTUNE_SWEEP_CONFIG=$C1024&LNTUNE_SWEEP_OP=rmsnorm&LNTUNE_SWEEP_M=4096|bwd bf16 1024"
s ncu
use s50d
NCU="ncu -k regex:bwd_dx --launch-skip 3 --launch-count 1"
LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=4096 timeout 120 $NCU --set full --import-source no -o $O/train1k_bf16 -f $S bwd bf16 1024 > $O/ncu_run.log 2>&1; echo "ncu rc=$?"
ncu -i $O/train1k_bf16.ncu-rep --print-details all > $O/ncu_train1k_bf16.txt 2>&1
ncu -i $O/train1k_bf16.ncu-rep --page source --csv --print-source sass > $O/ncu_train1k_bf16_sass.csv 2>&1
gzip -f $O/ncu_train1k_bf16.txt $O/ncu_train1k_bf16_sass.csv; rm -f $O/train1k_bf16.ncu-rep
zcat $O/ncu_train1k_bf16.txt.gz | grep -E "^  lntune_bwd_dx|Duration|DRAM Throughput|Executed Ipc Active|Issued Warp Per|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Stall (Barrier|Wait|Short|Long|Not Sel|No Inst|IMC|Dispatch|Math)|Instructions Executed  |Registers Per|SM Frequency" | head -30
s fwd
LNTUNE_SWEEP_OP=rmsnorm sw rms_fwd 90 fwd bf16 512 8192
LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 sw addrms_fwd 60 fwd bf16 4096
s done
