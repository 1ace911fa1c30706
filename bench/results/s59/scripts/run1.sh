# s59 call 1: the patched build's new Variants cases (and every Variants
# case) beside memcheck on the new ones, then the forward A/B of
# fwd-training-rules.patch (main s59a against s59b).
source bench/gpu_call.sh
patch_ab s59a s59b '*Variants*' '*Variants*N777:*N800_pad8:*N7001_pad8:*N18433:*N20000_pad8:*N2560:*N2816_pad4:*N3200' \
  "m4096|LNTUNE_SWEEP_M=4096|fwd bf16 768 896 1000 6656 7168 7680 8000" \
  "m4096h|LNTUNE_SWEEP_M=4096|fwd fp16 768 7168" \
  "m4096f|LNTUNE_SWEEP_M=4096|fwd fp32 768 1000" \
  "m4096r|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 768 1000" \
  "m4096a|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 768" \
  "m2200|LNTUNE_SWEEP_M=2200|fwd bf16 768 7168" \
  "m4224|LNTUNE_SWEEP_M=4224|fwd bf16 768" \
  "m8192|LNTUNE_SWEEP_M=8192|fwd bf16 6656 7168"
