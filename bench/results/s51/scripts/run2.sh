#!/usr/bin/env bash
# Call 2 (session 51). Session 50's finish-two-ctas-bound.patch (s51c)
# against main (s51a = b0c45c7) through its call script.
OUT=${OUT:-/tmp} bash bench/results/s51/scripts/finish_two_ctas_bound.sh s51a s51c
