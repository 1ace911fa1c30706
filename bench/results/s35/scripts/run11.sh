#!/usr/bin/env bash
# Call 11 (session 35, H200; the last ~4 device minutes). f35g = ac81e68,
# f35h = + the fused 16-bit backward at 16384 columns in 16 warps on a
# fast-memory GPU. Its default checked against the CPU reference, then one
# round of both builds' defaults.
source bench/gpu_call.sh
s "check"
LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/f35h timeout 40 $B/f35h/lntune bench --min-reps 3 --max-reps 10 --max-seconds 0.2 \
  --kernel bwd --dtype bf16 --residual --op layernorm,rmsnorm --n 16384,12000 --m 8200 > $O/check_call11.log 2>&1
echo "check rc=$?"; grep -cE " ok " $O/check_call11.log
s "A/B"
timeout 60 bash bench/gpu_ab.sh ab_call11 1 $B/f35g $B/f35h -- "addln|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 16384" \
  "addrms|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 16384"
s done
