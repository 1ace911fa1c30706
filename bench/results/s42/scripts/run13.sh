#!/usr/bin/env bash
# Call 13 (session 42; the last device minutes). s42x = main with
# the patch committed as aadfa85 (the forward's single tile, in
# registers or a slab in shared memory, of any multiple of its threads'
# accesses; not in the space): such configs timed one at a time
# (LNTUNE_SWEEP_CONFIG; the sweep prints the default beside each) at the
# 16-bit forward's holes. Timing only: their correctness is for the next
# session's tests.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s42x
S=$B/s42x/lntune_sweep
one() { LNTUNE_SWEEP_CONFIG="block_size=$2 num_warps=$3 rows_per_cta=$4 group_size_m=0" timeout 20 $S fwd bf16 $1 2>&1 | grep -E "^fwd " | sed "s|^|[$2 w$3 r$4] |"; }
one 5120 5120 8 1; one 5120 5120 4 1; one 5120 5120 16 2
one 4608 4608 8 1; one 4608 4608 4 1; one 4608 4608 16 1
one 9216 9216 16 1; one 9216 9216 8 1
one 2560 2560 4 1; one 2560 2560 2 1
one 12288 12288 16 1; one 12288 12288 8 1
LNTUNE_SWEEP_OP=rmsnorm one 5632 5632 8 1
s done
