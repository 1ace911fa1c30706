#!/usr/bin/env bash
# Call 3 (session 36, H200). s36b = 9db88de (cluster grids fitted); s36c =
# + the 16-bit forward of 49153-65536 columns in clusters of 4. The new
# default against the CPU reference (lntune bench, cache off; odd N fall
# back), then both builds' defaults, two rounds.
source bench/gpu_call.sh
L=$B/s36c/lntune
s "check the new default (lntune bench)"
BQ="--min-reps 3 --max-reps 10 --max-seconds 0.2"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s36c
timeout 90 $L bench $BQ --kernel fwd --dtype bf16,fp16 --op layernorm,rmsnorm --n 65536,60000,50001,65535,49160 --m 600 > $O/check_call3.log 2>&1; echo "check rc=$?"
timeout 30 $L bench $BQ --kernel fwd --dtype bf16 --n 65536 --m 1,7,31 >> $O/check_call3.log 2>&1; echo "small M rc=$?"
grep -cE " ok " $O/check_call3.log; grep -E "^(fwd|bwd)" $O/check_call3.log | grep -vc " ok "
unset LD_LIBRARY_PATH
s "A/B s36b -> s36c"
R=LNTUNE_SWEEP_OP=rmsnorm
timeout 300 bash bench/gpu_ab.sh ab_call3 2 $B/s36b $B/s36c -- \
  "fwd||fwd bf16 65536 57344 50000" "fwd16||fwd fp16 65536" "rmsf|$R|fwd bf16 65536" "ctl||fwd bf16 40000"
s done
