// Prints the layout of the public argument structs of include/lntune/lntune.h,
// one line per field: "<struct> <field> <offset> <size>", then
// "<struct> sizeof <size>". tests/python/test_import.py compares the Python
// ctypes mirrors (python/lntune/_ffi.py) with this output, so a field added,
// moved or retyped in the C header without the Python change fails CPU CI.
// Built as C++ (the project enables only CXX): these are plain C structs, laid
// out the same by a C and a C++ compiler of one ABI.
#include <cstddef>
#include <cstdio>

#include "lntune/lntune.h"

#define FIELD(S, F) std::printf("%s %s %zu %zu\n", #S, #F, offsetof(S, F), sizeof(S::F))
#define SIZE(S) std::printf("%s sizeof %zu\n", #S, sizeof(S))

// The fields lntune_forward_args and lntune_norm_forward_args share (same names, same order).
#define FORWARD_FIELDS(S) \
  FIELD(S, x);            \
  FIELD(S, weight);       \
  FIELD(S, bias);         \
  FIELD(S, y);            \
  FIELD(S, mean);         \
  FIELD(S, rstd);         \
  FIELD(S, M);            \
  FIELD(S, N);            \
  FIELD(S, x_row_stride); \
  FIELD(S, y_row_stride); \
  FIELD(S, x_dtype);      \
  FIELD(S, w_dtype);      \
  FIELD(S, eps);          \
  FIELD(S, stream)

#define BACKWARD_FIELDS(S)   \
  FIELD(S, dy);              \
  FIELD(S, x);               \
  FIELD(S, weight);          \
  FIELD(S, mean);            \
  FIELD(S, rstd);            \
  FIELD(S, dx);              \
  FIELD(S, dweight);         \
  FIELD(S, dbias);           \
  FIELD(S, M);               \
  FIELD(S, N);               \
  FIELD(S, dy_row_stride);   \
  FIELD(S, x_row_stride);    \
  FIELD(S, dx_row_stride);   \
  FIELD(S, x_dtype);         \
  FIELD(S, w_dtype);         \
  FIELD(S, workspace);       \
  FIELD(S, workspace_bytes); \
  FIELD(S, stream)

int main() {
  FORWARD_FIELDS(lntune_forward_args);
  SIZE(lntune_forward_args);

  BACKWARD_FIELDS(lntune_backward_args);
  SIZE(lntune_backward_args);

  FORWARD_FIELDS(lntune_norm_forward_args);
  FIELD(lntune_norm_forward_args, norm);
  FIELD(lntune_norm_forward_args, zero_centered_weight);
  FIELD(lntune_norm_forward_args, residual);
  FIELD(lntune_norm_forward_args, residual_out);
  FIELD(lntune_norm_forward_args, residual_row_stride);
  FIELD(lntune_norm_forward_args, residual_out_row_stride);
  FIELD(lntune_norm_forward_args, residual_dtype);
  FIELD(lntune_norm_forward_args, y_dtype);
  SIZE(lntune_norm_forward_args);

  BACKWARD_FIELDS(lntune_norm_backward_args);
  FIELD(lntune_norm_backward_args, norm);
  FIELD(lntune_norm_backward_args, zero_centered_weight);
  FIELD(lntune_norm_backward_args, residual);
  FIELD(lntune_norm_backward_args, dresidual_out);
  FIELD(lntune_norm_backward_args, dresidual_out_row_stride);
  FIELD(lntune_norm_backward_args, residual_dtype);
  FIELD(lntune_norm_backward_args, y_dtype);
  FIELD(lntune_norm_backward_args, dresidual);
  FIELD(lntune_norm_backward_args, dresidual_row_stride);
  SIZE(lntune_norm_backward_args);
  return 0;
}
