#!/usr/bin/env bash
# Call 3 (session 46). s46b (dz staged in the wide backward where it fits;
# = the tree after call 2, c78b... without s46c's unguarded add + LayerNorm):
# every config of the fused 16-bit backward where 8192-column slabs could
# take the row with dz staged: add + RMSNorm 65536, add + LayerNorm 32768
# and 131072, add + LayerNorm fp16 65536.
source bench/gpu_call.sh
use s46b
s "every config"
(export LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm; sw rms65k 80 bwd bf16 65536)
(export LNTUNE_SWEEP_RESIDUAL=1; sw ln32k 75 bwd bf16 32768)
(export LNTUNE_SWEEP_RESIDUAL=1; sw ln128k 75 bwd bf16 131072)
(export LNTUNE_SWEEP_RESIDUAL=1; sw ln65kh 75 bwd fp16 65536)
s done
