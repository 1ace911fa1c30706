#!/usr/bin/env bash
# Call 3 (session 41). Every config at the holes call 2's scan found (N not
# a power of two, defaults 47-65% of copy), on s41p (main with the gap
# clusters' one pass and lane sums): forward bf16/fp32 at 20000-57000 and
# 150000, backward at 70000-230000.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s41p
S=$B/s41p/lntune_sweep
sw() { local tag=$1; shift; LNTUNE_SWEEP_EVERY=1 timeout 150 $S "$@" > $O/sw_$tag.log 2>&1; echo "$tag rc=$?"; python3 bench/sweep_top.py $O/sw_$tag.log 5; }
s "forward"
sw fwd16 fwd bf16 20000 36000 57000 150000
sw fwd32 fwd fp32 20000 36000 45000 57000 150000
s "backward"
sw bwd16 bwd bf16 90000 150000 230000
sw bwd32 bwd fp32 70000 150000
s done
