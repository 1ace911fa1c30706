#!/usr/bin/env bash
# Call 3 (session 42). s42b = s42a + the backward defaults from calls 1-2:
# the wide backward's fine split for rows of 131073-245760 columns
# (gen::wide_bwd_fine_split), fp32 rows of 4097-6144 columns on the register
# kernel's whole row. A/B s42a -> s42b (2 rounds, LayerNorm and RMSNorm,
# bf16, fp16, fp32); then every config of the 16-bit forward at 1025-3840
# and 24577-32768 columns (N = 1536, 2560 and 28672 were 82-91% of copy in
# call 1) and of the fp32 backward at 6145-8191 (the split's limit).
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab3 2 $B/s42a $B/s42b -- "bwd||bwd bf16 140000 150000 170000 180000" "bwd||bwd fp16 150000 180000" \
  "bwd||bwd fp32 140000 150000 160000 170000 190000 200000 5120 6144" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 150000 180000" "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 150000 180000 5120"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s42b
S=$B/s42b/lntune_sweep
s "forward 16-bit"
sw fwd16s 100 fwd bf16 1152 1280 1536 1792 2304 2560 2816 3072 3328 3840
sw fwd16l 80 fwd bf16 24576 26000 28672 30000 32768
s "backward fp32"
sw bwd32 60 bwd fp32 6656 7168 7680
s done
