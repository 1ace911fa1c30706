#!/usr/bin/env bash
# Call 10 (session 42). Call 9 found RMSNorm's bf16 forward at N = 5120
# 0.99x PyTorch (78.7% of copy against 79.6). s42g = s42f with RMSNorm's
# 16-bit forward in 4096-column tiles up to 6143 columns (was 5119). A/B
# s42f -> s42g, 2 rounds, then s42g against PyTorch in one process.
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab10 2 $B/s42f $B/s42g -- "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 5120 5632 6000 6144" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd fp16 5120"
s "against PyTorch"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s42g LNTUNE_LIBRARY=$B/s42g/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
timeout 200 python3 bench/bench_norms.py --section bandwidth --ops rms --dtypes bf16,fp16 --bandwidth-ns 4608,5120,5632,6000 --out $O/rms > $O/rms.log 2>&1
echo "bench_norms rc=$?"; grep -E "^\| RMSNorm" $O/rms/norms.md | grep fwd
s done
