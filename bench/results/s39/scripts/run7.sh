#!/usr/bin/env bash
# Call 7 (session 39). s39e = main. Every wide backward config at 262144
# columns (bf16, fp16, fp32; RMSNorm bf16) against the defaults (16-bit
# 69-73%, fp32 67%: target 75), and every forward config of bf16 at 16384
# and 65536 columns (96 / 90%: targets 97 / 92).
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s39e
S=$B/s39e/lntune_sweep
s "bwd 262144"
for dt in bf16 fp16 fp32; do
  LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_WIDE=1 timeout 150 $S bwd $dt 262144 >> $O/bwd256k_call7.log 2>&1; echo "$dt rc=$?"
done
LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_WIDE=1 timeout 150 $S bwd bf16 262144 >> $O/bwd256k_call7.log 2>&1; echo "rms rc=$?"
python3 bench/sweep_top.py $O/bwd256k_call7.log 5
s "fwd 16384 65536"
LNTUNE_SWEEP_EVERY=1 timeout 200 $S fwd bf16 16384 65536 > $O/fwd_call7.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/fwd_call7.log 6
s done
