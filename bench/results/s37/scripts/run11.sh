#!/usr/bin/env bash
# Call 11 (session 37; the change measured here was not kept: call 11 in
# bench/results/s37/README.md). s37i = main + the backward's warp rows (a 16-bit
# row of 1024 columns a warp, 32 elements a thread, one CTA a SM;
# gen::is_bwd_warp_row) in the search space. Every config at M = 4096 for
# bf16 768 / 1024 and fp16 1024; the space's configs against the reference.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s37i
s "every config, train"
LNTUNE_SWEEP_EVERY=1 timeout 80 $B/s37i/lntune_sweep train bf16 768 1024 > $O/every_train_call11.log 2>&1; echo "rc=$?"
python3 bench/sweep_top.py $O/every_train_call11.log 5
s "tests"
timeout 90 $B/s37i/gpu_test --gtest_filter='Gpu.EverySearchSpaceConfigIsCorrect' > $O/tests_call11.log 2>&1; echo "gpu_test rc=$?"
grep -E "OK \]|FAILED|Failure|configs  " $O/tests_call11.log | head -5
timeout 90 $B/s37i/gpu_norms_test --gtest_filter='*VariantSpace*N1000_bwd*' > $O/norms_call11.log 2>&1; echo "gpu_norms_test rc=$?"
grep -E "PASSED|FAILED|Failure" $O/norms_call11.log | head -5
s done
