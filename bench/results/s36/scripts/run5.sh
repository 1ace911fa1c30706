#!/usr/bin/env bash
# Call 5 (session 36, H200). s36e = the 16-bit LayerNorm forward of
# 229377-262144 columns as a slab in shared memory over clusters of 8 (a
# fitted persistent wave); clusters of 4 only at 65536. The new defaults
# against the CPU reference (cache off), then A/B s36d -> s36e.
source bench/gpu_call.sh
L=$B/s36e/lntune
s "check the new defaults (lntune bench)"
BQ="--min-reps 3 --max-reps 10 --max-seconds 0.2"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s36e
timeout 90 $L bench $BQ --kernel fwd --dtype bf16,fp16 --n 262144,240000,229384,262143,65536,63488 --m 300,40 > $O/check_call5.log 2>&1; echo "check rc=$?"
grep -cE " ok " $O/check_call5.log; grep -E "^(fwd|bwd)" $O/check_call5.log | grep -vc " ok "
unset LD_LIBRARY_PATH
s "A/B s36d -> s36e"
timeout 200 bash bench/gpu_ab.sh ab_call5 2 $B/s36d $B/s36e -- \
  "fwd||fwd bf16 262144 240000" "fwd16||fwd fp16 262144" "ctl||fwd bf16 131072"
s done
