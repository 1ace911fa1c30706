#!/usr/bin/env bash
# Call 6 (session 42), s42d. Every config at the holes call 5's scan found
# (rows just above a power of two: the backward 69-81% of copy at 1152,
# 2304, 4608, 9216, 17408; the fp32 backward at 30720 69%; the bf16 forward
# at 640, 4608, 17408, 22528), then configs outside the space at 9216 and
# 17408: the wide backward over three equal slabs (3072 columns) and others.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s42d
S=$B/s42d/lntune_sweep
s "backward"
sw bwd16 120 bwd bf16 1152 2304 4608 9216 17408
sw bwd32 100 bwd fp32 1152 2304 9216 30720
s "forward"
sw fwd16 90 fwd bf16 640 4608 17408 22528
LNTUNE_SWEEP_OP=rmsnorm sw rms16 30 fwd bf16 4608
s "outside the space"
one() { LNTUNE_SWEEP_CONFIG="$1" timeout 20 $S ${@:2} 2>&1 | grep -E "^(bwd|fwd) "; }
for c in 3072,4,2,88,3 3072,4,3,88,3 3072,4,4,88,3 1024,4,3,44,9 6144,8,3,132,2 4096,8,3,88,3; do
  IFS=, read b w r g k <<< "$c"; echo "bf16 9216 $c: $(one "block_size=$b num_warps=$w rows_per_cta=$r group_size_m=$g cluster_size=$k" bwd bf16 9216)"; done
for c in 3072,8,2,88,3 3072,8,3,88,3 3072,4,3,88,3 4096,8,3,88,3; do
  IFS=, read b w r g k <<< "$c"; echo "fp32 9216 $c: $(one "block_size=$b num_warps=$w rows_per_cta=$r group_size_m=$g cluster_size=$k" bwd fp32 9216)"; done
for c in 6144,8,3,44,3 6144,8,2,44,3 4096,8,3,26,5; do
  IFS=, read b w r g k <<< "$c"; echo "bf16 17408 $c: $(one "block_size=$b num_warps=$w rows_per_cta=$r group_size_m=$g cluster_size=$k" bwd bf16 17408)"; done
for c in 6144,16,3,26,5 6144,8,3,26,5 10240,16,2,44,3; do
  IFS=, read b w r g k <<< "$c"; echo "fp32 30720 $c: $(one "block_size=$b num_warps=$w rows_per_cta=$r group_size_m=$g cluster_size=$k" bwd fp32 30720)"; done
s done
