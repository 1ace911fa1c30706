#!/usr/bin/env bash
# Call 12 (session 46; call 11 was the LayerNorm tables, run inline:
# `STEP_SECONDS=150 TABLES="bandwidth train" OUT=$O bash bench/gpu_tables.sh
# $D s46h` after `use s46h`). s46h: every config of the forwards that
# call 10's table left under the targets (RMSNorm bf16 16384 94.5, add +
# LayerNorm bf16 16384 95.5, fp32 16384 93.3, RMSNorm fp32 16384 95.6, add +
# LayerNorm fp32 8192 96.4, RMSNorm bf16 65536 91.0).
source bench/gpu_call.sh
use s46h
s "every config"
(export LNTUNE_SWEEP_OP=rmsnorm; sw rms16k 40 fwd bf16 16384)
(export LNTUNE_SWEEP_RESIDUAL=1; sw add16k 40 fwd bf16 16384)
(export LNTUNE_SWEEP_RESIDUAL=1; sw addf16k 40 fwd fp32 16384)
(export LNTUNE_SWEEP_OP=rmsnorm; sw rmsf16k 40 fwd fp32 16384)
(export LNTUNE_SWEEP_RESIDUAL=1; sw addf8k 40 fwd fp32 8192)
(export LNTUNE_SWEEP_OP=rmsnorm; sw rms64k 50 fwd bf16 65536)
s done
