#!/usr/bin/env bash
# Call 14 (session 46; run inline). s46i: the Python table's 16384 column
# for RMSNorm and LayerNorm + add after call 13's forward defaults.
source bench/gpu_call.sh
use s46i
export LNTUNE_LIBRARY="$D/liblntune.so" PYTHONPATH="$PWD/python" TORCH_EXTENSIONS_DIR=/tmp/te
timeout 150 python3 bench/bench_norms.py --section bandwidth --ops rms,add_ln --dtypes bf16,fp32 --bandwidth-ns 16384 --out $O/n16k > $O/n16k.log 2>&1; echo rc=$?
grep "| 16384 |" $O/n16k/norms.md
