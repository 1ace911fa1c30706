#!/usr/bin/env bash
# Call 7 (session 36, H200). s36f = the RMSNorm and add + LayerNorm 16-bit
# backward at 65536 in clusters of 4. Checked against the CPU reference
# (cache off), then A/B s36e -> s36f.
source bench/gpu_call.sh
L=$B/s36f/lntune
s "check the new defaults (lntune bench)"
BQ="--min-reps 3 --max-reps 10 --max-seconds 0.2"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s36f
timeout 90 $L bench $BQ --kernel bwd --dtype bf16,fp16 --op rmsnorm --n 65536,65535 --m 300,40 > $O/check_call7.log 2>&1; echo "rms rc=$?"
timeout 90 $L bench $BQ --kernel bwd --dtype bf16,fp16 --residual --n 65536,65535 --m 300,40 >> $O/check_call7.log 2>&1; echo "addln rc=$?"
grep -cE " ok " $O/check_call7.log; grep -E "^(fwd|bwd)" $O/check_call7.log | grep -vc " ok "
unset LD_LIBRARY_PATH
s "A/B s36e -> s36f"
R=LNTUNE_SWEEP_OP=rmsnorm; A=LNTUNE_SWEEP_RESIDUAL=1
timeout 240 bash bench/gpu_ab.sh ab_call7 2 $B/s36e $B/s36f -- \
  "rmsb|$R|bwd bf16 65536" "rmsb16|$R|bwd fp16 65536" "addln|$A|bwd bf16 65536" "ctl||bwd bf16 65536"
s done
