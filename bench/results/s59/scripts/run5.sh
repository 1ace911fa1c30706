# s59 call 5: the A/B of s59d (main + five training-size rules from
# session 58's cold tune, with Variants cases) against main (s59b), then
# the gtest suites on s59d.
source bench/gpu_call.sh
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s59b $B/s59d -- \
  "m4096|LNTUNE_SWEEP_M=4096|fwd bf16 1280" "m4096h|LNTUNE_SWEEP_M=4096|fwd fp16 1280" \
  "m2200|LNTUNE_SWEEP_M=2200|fwd bf16 1280" "m4224|LNTUNE_SWEEP_M=4224|fwd bf16 1280" \
  "b4096|LNTUNE_SWEEP_M=4096|bwd bf16 1280 10240 11264" "b4096h|LNTUNE_SWEEP_M=4096|bwd fp16 1280 10240" \
  "b4096r|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 1280 10240 11264" \
  "b2200|LNTUNE_SWEEP_M=2200|bwd bf16 1280 10240" "b6000|LNTUNE_SWEEP_M=6000|bwd bf16 1280 10240" \
  "b4096ar|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 1280 2560 4608 5120" \
  "b4096al|LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 1280 2560 4608 5120" \
  "b2200ar|LNTUNE_SWEEP_M=2200 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 1280 4608" \
  "b6000ar|LNTUNE_SWEEP_M=6000 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 1280 4608"
s suites
OUT=$O bash bench/gpu_suites.sh $B/s59d s59d
s done
