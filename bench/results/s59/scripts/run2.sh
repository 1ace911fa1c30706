# s59 call 2: the backward A/B (main s59a against s59b): the fused 16-bit
# backward of 16385-24576 columns over three 8192-column slabs, and fp32
# 2305-3584 columns at training rows.
source bench/gpu_call.sh
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s59a $B/s59b -- \
  "m4096ar|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 18432 20000 24576" \
  "m4096al|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_RESIDUAL=1|bwd fp16 18432" \
  "bigar|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 18432 24576" \
  "bigal|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 20000" \
  "m4096f|LNTUNE_SWEEP_M=4096|bwd fp32 2560 2816 3072 3200 3584" \
  "m4096fr|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 2560 3072" \
  "m2200f|LNTUNE_SWEEP_M=2200|bwd fp32 2560 3584" \
  "m6000f|LNTUNE_SWEEP_M=6000|bwd fp32 3072"
s done
