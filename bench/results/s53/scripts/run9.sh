#!/usr/bin/env bash
# Call 9 (session 53). gpu_norms_test in 4 shards on the final build (s53f,
# d6686d7: call 8's rule), every Variants case included; gpu_test and
# tuner_gpu_test ran on main in call 1 and no code of theirs changed.
source bench/gpu_call.sh
use s53f
s norms
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 290 $D/gpu_norms_test --gtest_brief=1 > $O/norms_$i.log 2>&1 & p[$i]=$!
done
for i in 0 1 2 3; do wait ${p[$i]}; echo "norms_$i rc=$?"; done
grep -hE "PASSED|FAILED|ms total" $O/norms_*.log
s done
