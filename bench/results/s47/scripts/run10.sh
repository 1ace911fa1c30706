#!/usr/bin/env bash
# Call 10 (session 47). s47h: the cases of add + RMSNorm fp32 at 262144
# columns (call 9's store path), memcheck on the default's.
source bench/gpu_call.sh
use s47h
cases 120 '*Variants*rmsnorm_fp32*resfp32*N262144*:*VariantSpace*rms_fp32_resfp32_zc_N262144*' '*Variants*rmsnorm_fp32*resfp32*N262144*'
