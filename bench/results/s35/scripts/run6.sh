#!/usr/bin/env bash
# Call 6 (session 35, H200). f35 = 8960fe9 (fast-memory defaults, first
# set); f35c = + RMSNorm and the fused forms (call 5's bests). The new
# defaults against the CPU reference (lntune bench, cache off), then both
# builds' defaults against each other, two rounds.
source bench/gpu_call.sh
L=$B/f35c/lntune
s "check the new defaults (lntune bench)"
BQ="--min-reps 3 --max-reps 10 --max-seconds 0.2"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/f35c
timeout 60 $L bench $BQ --kernel fwd,bwd --dtype bf16 --op rmsnorm --n 65536,50001,262144,200000 --m 600 > $O/check_call6.log 2>&1; echo "rms rc=$?"
timeout 40 $L bench $BQ --kernel bwd --dtype fp32 --op rmsnorm --n 262144,200000 --m 300 >> $O/check_call6.log 2>&1; echo "rms32 rc=$?"
timeout 60 $L bench $BQ --kernel bwd --dtype bf16 --residual --op layernorm,rmsnorm --n 262144,200000 --m 300 >> $O/check_call6.log 2>&1; echo "add16 rc=$?"
timeout 40 $L bench $BQ --kernel bwd --dtype fp32 --residual --op rmsnorm --n 262144 --m 300 >> $O/check_call6.log 2>&1; echo "addrms32 rc=$?"
timeout 40 $L bench $BQ --kernel fwd --dtype fp32 --residual --op rmsnorm --n 16384,12000 --m 8200 >> $O/check_call6.log 2>&1; echo "addrms32 fwd rc=$?"
grep -cE " ok " $O/check_call6.log; grep -E "^(fwd|bwd)" $O/check_call6.log | grep -vc " ok "
unset LD_LIBRARY_PATH
s "A/B f35 -> f35c"
R=LNTUNE_SWEEP_OP=rmsnorm; A=LNTUNE_SWEEP_RESIDUAL=1
timeout 300 bash bench/gpu_ab.sh ab_call6 2 $B/f35 $B/f35c -- \
  "rmsf|$R|fwd bf16 65536 262144" "rmsb|$R|bwd bf16 262144" "rmsb32|$R|bwd fp32 262144" \
  "addln|$A|bwd bf16 262144" "addrms|$A $R|bwd bf16 262144" "addrms32|$A $R|bwd fp32 262144" \
  "addrmsf32|$A $R|fwd fp32 16384" "ctl||bwd bf16 262144"
s done
