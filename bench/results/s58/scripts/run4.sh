#!/usr/bin/env bash
# Call 4 (session 58). The cold tune of the default grid on s58b (the new
# bwd_dwdb default for wide rows; bench/tune_scale.sh step 1), as session
# 57's run1.sh: 0 failed keys, 0 `wrong` candidates, no failed compilation
# wanted; its per-key and per-bucket tuned-over-default gains against the
# new default.
source bench/gpu_call.sh
use s58b
s cold
cold_tune
s done
