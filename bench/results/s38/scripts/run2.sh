#!/usr/bin/env bash
# Call 2 (session 38). s38b = s38a + the wide backward's space at two CTAs a
# SM (twice the grid where twice the stages fit; the launcher fits it to the
# clusters that run at once). Every wide config at x = 512 MiB: LayerNorm
# bf16 N = 16384 to 262144, RMSNorm and the fused forms (bf16) at 16384 and
# 65536, each with the co-resident cluster count.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s38b
S=$B/s38b/lntune_sweep
s "LayerNorm bf16"
LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_WIDE=1 timeout 260 $S bwd bf16 16384 65536 32768 131072 > $O/wide_ln_call2.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/wide_ln_call2.log 6
for v in "rms|LNTUNE_SWEEP_OP=rmsnorm" "addln|LNTUNE_SWEEP_RESIDUAL=1" "addrms|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1"; do
  name=${v%%|*}; vars=${v#*|}
  s "$name bf16"
  env $vars LNTUNE_SWEEP_EVERY=1 LNTUNE_SWEEP_WIDE=1 timeout 100 $S bwd bf16 65536 16384 > $O/wide_${name}_call2.log 2>&1; echo "rc=$?"
  python3 bench/sweep_top.py $O/wide_${name}_call2.log 5
done
s done
