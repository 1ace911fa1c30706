#!/usr/bin/env bash
# Call 5 (session 40). The tables with s40e (main at this call: every change
# of calls 1-4): the training-size backward, LayerNorm at x = 512 MiB against
# PyTorch, RMSNorm and the fused forms; then LayerNorm at N = 100000 and
# 200000 against PyTorch (the clusters of call 4), and every forward config
# of fp32 rows of 100000 columns (their default is not a wide one).
source bench/gpu_call.sh
s "tables"
STEP_SECONDS=170 TABLES="ext train bandwidth norms" OUT=$O bash bench/gpu_tables.sh $B/s40e s40e; echo "tables rc=$?"
s "gap N against PyTorch"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s40e LNTUNE_LIBRARY=$B/s40e/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
timeout 150 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes bf16,fp32 --bandwidth-ns 100000,200000 \
  --providers lntune-default,torch --out $O/gap > $O/gap_s40e.log 2>&1; echo "gap rc=$?"
cat $O/gap/results.md 2>/dev/null | head -40
s "fp32 forward 100000"
LNTUNE_SWEEP_EVERY=1 $B/s40e/lntune_sweep fwd fp32 100000 > $O/sw_fp32_100k.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/sw_fp32_100k.log 5
s done
