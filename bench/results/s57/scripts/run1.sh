#!/usr/bin/env bash
# Call 1 (session 57). Session 56's fixes on a GPU: tuner_gpu_test whole
# (its TunerGpu.DwdbSearchAfterInKernelFinishesAndFittedClusters tunes 768
# and 18432 columns at M = 4096, where the bwd_dwdb search's bugs were), then
# the cold tune of the default grid (bench/tune_scale.sh step 1): 0 failed
# keys, 0 `wrong` candidates, no failed compilation wanted. (Session 57 ran
# cold_tune's lines inline; bench/gpu_call.sh has them since session 58.)
source bench/gpu_call.sh
use s57a
s tuner_gpu_test
timeout 200 $D/tuner_gpu_test > $O/tuner_gpu_test.log 2>&1; echo "tuner_gpu_test rc=$?"
grep -hE "^\[  (PASSED|FAILED) |Failure|tests ran" $O/tuner_gpu_test.log | head -20
s cold
cold_tune
s done
