// Validation of a call's arguments into a normalised problem description.
// Every rule lives here, with the message a user sees when it is broken.
#pragma once

#include <cstdint>

#include "lntune/lntune.hpp"

namespace lntune::rt {

struct FwdProblem {
  Traits traits;
  std::int64_t M = 0, N = 0, x_stride = 0, y_stride = 0;
  std::int64_t residual_stride = 0, z_stride = 0;  // with a residual
  int vec = 1;  // widest access every pointer, stride and N allow
};

struct BwdProblem {
  Traits traits;  // kernel = bwd_dx; has_bias = dB wanted
  std::int64_t M = 0, N = 0, dy_stride = 0, x_stride = 0, dx_stride = 0;
  std::int64_t dz_stride = 0;         // with a residual
  std::int64_t dresidual_stride = 0;  // with a residual and a dresidual
  int vec = 1;
  bool want_dw = false, want_db = false;
  // dW and dB (those wanted) 16-byte aligned: written with vec-wide stores
  // where the dx kernel writes them itself (rt::finish_path: alone).
  bool grads_aligned = false;
};

// Throw lntune::Error("lntune: forward: <what is wrong>") on invalid input.
FwdProblem check_forward(const ForwardArgs& a);
BwdProblem check_backward(const BackwardArgs& a);

}  // namespace lntune::rt
