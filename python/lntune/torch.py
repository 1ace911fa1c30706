"""PyTorch binding: lntune's LayerNorm and RMSNorm (with the fused residual
add) as torch custom ops, autograd-aware functions and nn.Modules.

    import torch, lntune.torch
    y = lntune.torch.layer_norm(x, (N,), weight, bias, eps=1e-5)   # like F.layer_norm
    ln = lntune.torch.LayerNorm(N, device="cuda", dtype=torch.bfloat16)  # like nn.LayerNorm
    y = lntune.torch.rms_norm(x, (N,), weight)                     # like F.rms_norm
    rms = lntune.torch.RMSNorm(N, device="cuda", dtype=torch.bfloat16)   # like nn.RMSNorm
    y, z = lntune.torch.fused_add_rms_norm(x, residual, (N,), weight)   # z = x + residual, y = rms_norm(z)
    y, z = lntune.torch.fused_add_layer_norm(x, residual, (N,), weight, bias)

rms_norm and the fused forms take keyword options zero_centered_weight
(y = xhat * (1 + weight) [+ bias]) and out_dtype (y's dtype; default x's).
They run through the ops torch.ops.lntune.rms_norm_fwd/bwd,
add_layer_norm_fwd/bwd and add_rms_norm_fwd/bwd (see lntune._torch_ops),
except plain eager calls, which take the C++ extension's entries for them
(the same launches, a C++ autograd node; decided as for layer_norm below).
LNTUNE_TORCH_EXT_VARIANTS=0 sends those through the ops too.

Two routes to the same kernels (the same launch code, lntune._torch_ops):

- The ops ``torch.ops.lntune.layer_norm_fwd`` / ``layer_norm_bwd``
  (torch.library, with fake implementations and a registered autograd
  formula). torch.compile (fullgraph), torch.export, FakeTensor tracing,
  functorch transforms and dispatch modes see these.
- Plain eager calls (a real CUDA torch.Tensor, no tracing, no dispatch mode)
  skip the dispatcher's Python round trips (about 50 us a call, measured):
  they run a C++ autograd node (lntune/csrc/torch_ext.cpp, built on first use
  by torch.utils.cpp_extension; see lntune._torch_ext), or, where that cannot
  be built, a Python autograd.Function over the same ctypes launch code. The
  host time of each route is measured by bench/bench_layernorm.py --section
  host against PyTorch's. LNTUNE_TORCH_EAGER=ops sends eager calls through
  the ops too.

Kernels run on the current CUDA stream of the input's device and every buffer
(outputs, statistics, the backward's workspace) comes from torch's caching
allocator, so calls are stream-ordered and CUDA-graph capturable
(torch.cuda.graph, torch.compile(mode="reduce-overhead")).

Supported: x in float32, float16, bfloat16 on a CUDA device; weight and bias
(each optional) in x's dtype or float32 (both in the same dtype); eps any
finite float (negative too, as torch allows). An input whose rows are not
unit-stride is copied to a contiguous one first. Double backward is not
supported.
"""

from __future__ import annotations

import os
from typing import Optional, Sequence, Tuple, Union

try:
    import torch
except ImportError as _e:  # pragma: no cover - exercised by tests/python/test_import.py
    raise ImportError(
        "lntune.torch needs PyTorch, which could not be imported (%s). "
        "`import lntune` itself works without it." % (_e,)
    ) from _e

from torch.autograd.function import once_differentiable

from . import _torch_ext
from . import _torch_ops as _ops
from ._torch_ops import DTYPES

__all__ = ["layer_norm", "LayerNorm", "rms_norm", "RMSNorm", "fused_add_layer_norm", "fused_add_rms_norm", "DTYPES"]

ShapeLike = Union[int, Sequence[int], torch.Size]

_EAGER_DIRECT = os.environ.get("LNTUNE_TORCH_EAGER", "direct") != "ops"

_Tensor = torch.Tensor
_is_grad_enabled = torch.is_grad_enabled
_is_compiling = torch.compiler.is_compiling
_dispatch_stack_len = torch._C._len_torch_dispatch_stack
_functorch_active = getattr(torch._C, "_are_functorch_transforms_active", lambda: False)
_layer_norm_op = torch.ops.lntune.layer_norm_fwd.default
_ext = _torch_ext.ext  # the C++ fast path, or None (then the ctypes path below)


class _LayerNormFunction(torch.autograd.Function):
    """The eager route: forward and backward call the ops' launch code directly."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps, sig, dev):
        weight = _ops._dense(weight)
        y, stats, x2, xs = _ops.forward_stats(x, weight, bias, eps, sig, dev)
        ctx.save_for_backward(x2, weight, stats)
        ctx.sig = sig
        ctx.dev = dev
        ctx.xs = xs
        ctx.has_bias = bias is not None
        ctx.x_shape = x.shape
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, dy):
        x2, w, stats = ctx.saved_tensors
        need = ctx.needs_input_grad
        sig = ctx.sig
        M = stats.shape[1]
        want_dw = need[1] and w is not None
        want_db = need[2] and ctx.has_bias
        dx, dw, db = _ops.backward_launch(dy, x2, ctx.xs, M, stats.data_ptr(), sig, ctx.dev, w, want_dw, want_db,
                                          ctx.x_shape)
        if dw is not None:
            dw = dw.view(sig.shape)
        if db is not None:
            db = db.view(sig.shape)
        return (dx if need[0] else None), dw, db, None, None, None


def _shape(normalized_shape: ShapeLike) -> Tuple[int, ...]:
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(normalized_shape)


def layer_norm(
    x: torch.Tensor,
    normalized_shape: ShapeLike,
    weight: Optional[torch.Tensor] = None,
    bias: Optional[torch.Tensor] = None,
    eps: float = 1e-5,
) -> torch.Tensor:
    """LayerNorm over the last len(normalized_shape) dimensions of x, like
    torch.nn.functional.layer_norm, with autograd. Runs on the current CUDA
    stream of x's device.

    Raises TypeError for non-CUDA tensors or unsupported dtypes, ValueError for
    mismatched shapes, and lntune.LntuneError when the library fails."""
    if (
        _EAGER_DIRECT
        and type(x) is _Tensor
        and not _is_compiling()
        and not _dispatch_stack_len()
        and not _functorch_active()
    ):
        if _ext is not None:
            try:
                y = _ext.layer_norm(x, (normalized_shape,) if type(normalized_shape) is int else normalized_shape,
                                    weight, bias, eps)
            except TypeError:  # arguments the C++ entry cannot take: the checked path below says why
                pass  # (last_failure() is not this call's: the entry never ran)
            else:
                if y is not None:
                    return y
                if _ext.last_failure()[0] > 0:
                    raise _torch_ext.failure()
            # Not taken by the fast path (a bad argument, N = 0): the checked path.
        sig, dev = _ops.check(x, normalized_shape, weight, bias)
        grad = _is_grad_enabled() and (
            x.requires_grad
            or (weight is not None and weight.requires_grad)
            or (bias is not None and bias.requires_grad)
        )
        if grad:
            return _LayerNormFunction.apply(x, weight, bias, float(eps), sig, dev)
        return _ops.forward_plain(x, weight, bias, float(eps), sig, dev)
    return _layer_norm_op(x, _shape(normalized_shape), weight, bias, float(eps))[0]


# ------------------------------------------------------------------ RMSNorm and the fused residual forms

_rms_norm_op = torch.ops.lntune.rms_norm_fwd.default
_add_layer_norm_op = torch.ops.lntune.add_layer_norm_fwd.default
_add_rms_norm_op = torch.ops.lntune.add_rms_norm_fwd.default
# F.rms_norm's eps=None: the machine epsilon of the computation type, which is
# float32 for float32, float16 and bfloat16 inputs (torch.finfo(torch.float32).eps).
_RMS_DEFAULT_EPS = torch.finfo(torch.float32).eps


def _variants_route():
    """The C++ extension when its eager entries of the variants can run
    (rms_norm, fused_add_norm: lntune/csrc/torch_ext.cpp), else None (the
    ops serve every call): not with LNTUNE_TORCH_EAGER=ops, not with
    LNTUNE_TORCH_EXT_VARIANTS=0, not without the extension or a library
    with lntune_norm_forward."""
    if _ext is None or not _EAGER_DIRECT:
        return None
    if os.environ.get("LNTUNE_TORCH_EXT_VARIANTS", "1").lower() in ("0", "off", "no"):
        return None
    if not hasattr(_ext, "has_norm_api") or not _ext.has_norm_api():
        return None
    return _ext


# Read at every call (tests switch routes by setting it to None).
_variant_ext = _variants_route()


def _variant_eager(x, zero_centered_weight, entry, *args):
    """A plain eager call through the C++ entry `entry` (a name of
    _variant_ext; taken under the conditions layer_norm takes _ext.layer_norm):
    its result (y, or (y, z)), or None when it does not take the call (bad
    arguments, no rows, N = 0, forward-mode AD, tracing, tensor subclasses):
    the op then takes it and says what is wrong. Raises the library's error
    when the entry ran and the library failed."""
    ext = _variant_ext
    if (
        ext is None
        or type(x) is not _Tensor
        or type(zero_centered_weight) is not bool
        or _is_compiling()
        or _dispatch_stack_len()
        or _functorch_active()
    ):
        return None
    try:
        out = getattr(ext, entry)(*args)
    except TypeError:  # arguments the binding cannot take: the entry never ran, so
        return None    # last_failure() is an earlier call's
    if (out[0] if type(out) is tuple else out) is not None:
        return out
    if ext.last_failure()[0] > 0:
        raise _torch_ext.failure()
    return None


def _variant_args(api, x, normalized_shape, eps, zero_centered_weight, out_dtype, residual=None, fused=False):
    """The checks a call needs before it reaches an op (whose schema would
    reject these with a less specific message); returns (shape, eps)."""
    if not isinstance(x, _Tensor):
        raise TypeError("%s: x must be a torch.Tensor, got %s" % (api, type(x).__name__))
    if x.device.type != "cuda":  # (no CPU kernel is registered: the dispatcher would say less)
        raise TypeError("%s: x must be a CUDA tensor, got one on %s (lntune runs on NVIDIA GPUs only; use %s on "
                        "the CPU)" % (api, x.device, "torch.nn.functional.rms_norm" if "rms" in api
                                      else "torch.nn.functional.layer_norm"))
    if fused and not isinstance(residual, _Tensor):
        raise TypeError("%s: residual must be a torch.Tensor, got %s" % (api, type(residual).__name__))
    if isinstance(normalized_shape, int):
        shape = (normalized_shape,)
    else:
        try:
            shape = tuple(normalized_shape)
        except TypeError:
            raise TypeError("%s: normalized_shape must be an int or a sequence of ints, got %s"
                            % (api, type(normalized_shape).__name__)) from None
    if out_dtype is not None and not isinstance(out_dtype, torch.dtype):
        raise TypeError("%s: out_dtype must be None or a torch.dtype (float32, float16, bfloat16), got %r"
                        % (api, out_dtype))
    if not isinstance(zero_centered_weight, bool):
        raise TypeError("%s: zero_centered_weight must be a bool, got %s" % (api, type(zero_centered_weight).__name__))
    return shape, _ops.check_eps(api, eps)


def rms_norm(
    x: torch.Tensor,
    normalized_shape: ShapeLike,
    weight: Optional[torch.Tensor] = None,
    eps: Optional[float] = None,
    *,
    zero_centered_weight: bool = False,
    out_dtype: Optional[torch.dtype] = None,
) -> torch.Tensor:
    """RMSNorm over the last len(normalized_shape) dimensions of x, like
    torch.nn.functional.rms_norm, with autograd: y = x * rstd * weight,
    rstd = 1/sqrt(mean(x^2) + eps). eps=None is F.rms_norm's default,
    torch.finfo(torch.float32).eps for every dtype lntune takes.

    zero_centered_weight: y = x * rstd * (1 + weight) (needs a weight).
    out_dtype: y's dtype (float32, float16, bfloat16; default x's).
    Raises TypeError for non-CUDA tensors or unsupported dtypes, ValueError
    for mismatched shapes or a non-finite eps, lntune.LntuneError when the
    library fails."""
    y = _variant_eager(x, zero_centered_weight, "rms_norm", x,
                       (normalized_shape,) if type(normalized_shape) is int else normalized_shape, weight,
                       _RMS_DEFAULT_EPS if eps is None else eps, zero_centered_weight, out_dtype)
    if y is not None:
        return y
    api = "lntune.torch.rms_norm"
    shape, eps = _variant_args(api, x, normalized_shape, _RMS_DEFAULT_EPS if eps is None else eps,
                               zero_centered_weight, out_dtype)
    return _rms_norm_op(x, shape, weight, eps, zero_centered_weight, out_dtype)[0]


def fused_add_layer_norm(
    x: torch.Tensor,
    residual: torch.Tensor,
    normalized_shape: ShapeLike,
    weight: Optional[torch.Tensor] = None,
    bias: Optional[torch.Tensor] = None,
    eps: float = 1e-5,
    *,
    zero_centered_weight: bool = False,
    out_dtype: Optional[torch.dtype] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """(y, z): z = x + residual in the residual's dtype (the next layer's
    residual), y = layer_norm(z, normalized_shape, weight, bias, eps), in one
    kernel, with autograd (the gradient of z flowing back from later layers
    is added into the gradients of x and residual in the backward kernel).

    residual has x's shape and may have another dtype (e.g. an fp32
    residual stream with bf16 x). zero_centered_weight: y = zhat * (1 +
    weight) + bias. out_dtype: y's dtype (default x's)."""
    out = _variant_eager(x, zero_centered_weight, "fused_add_norm", 0, x, residual,
                         (normalized_shape,) if type(normalized_shape) is int else normalized_shape, weight, bias,
                         eps, zero_centered_weight, out_dtype)
    if out is not None:
        return out
    api = "lntune.torch.fused_add_layer_norm"
    shape, eps = _variant_args(api, x, normalized_shape, eps, zero_centered_weight, out_dtype, residual, True)
    y, z, _mean, _rstd = _add_layer_norm_op(x, residual, shape, weight, bias, eps, zero_centered_weight, out_dtype)
    return y, z


def fused_add_rms_norm(
    x: torch.Tensor,
    residual: torch.Tensor,
    normalized_shape: ShapeLike,
    weight: Optional[torch.Tensor] = None,
    eps: Optional[float] = None,
    *,
    zero_centered_weight: bool = False,
    out_dtype: Optional[torch.dtype] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """(y, z): z = x + residual in the residual's dtype, y = rms_norm(z,
    normalized_shape, weight, eps), in one kernel, with autograd (as
    fused_add_layer_norm). eps=None as in rms_norm."""
    out = _variant_eager(x, zero_centered_weight, "fused_add_norm", 1, x, residual,
                         (normalized_shape,) if type(normalized_shape) is int else normalized_shape, weight, None,
                         _RMS_DEFAULT_EPS if eps is None else eps, zero_centered_weight, out_dtype)
    if out is not None:
        return out
    api = "lntune.torch.fused_add_rms_norm"
    shape, eps = _variant_args(api, x, normalized_shape, _RMS_DEFAULT_EPS if eps is None else eps,
                               zero_centered_weight, out_dtype, residual, True)
    y, z, _rstd = _add_rms_norm_op(x, residual, shape, weight, eps, zero_centered_weight, out_dtype)
    return y, z


class LayerNorm(torch.nn.Module):
    """Drop-in for torch.nn.LayerNorm (same constructor, parameters and
    state_dict keys) running lntune's kernels."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]
    normalized_shape: Tuple[int, ...]
    eps: float
    elementwise_affine: bool

    def __init__(
        self,
        normalized_shape: ShapeLike,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.normalized_shape = tuple(int(d) for d in _shape(normalized_shape))
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = torch.nn.Parameter(torch.empty(self.normalized_shape, **factory_kwargs))
            if bias:
                self.bias = torch.nn.Parameter(torch.empty(self.normalized_shape, **factory_kwargs))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            torch.nn.init.ones_(self.weight)
            if self.bias is not None:
                torch.nn.init.zeros_(self.bias)

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)

    @classmethod
    def from_torch(cls, module: torch.nn.LayerNorm) -> "LayerNorm":
        """An lntune LayerNorm with `module`'s configuration and parameters (copied)."""
        ref = module.weight if module.weight is not None else module.bias
        kwargs = {} if ref is None else {"device": ref.device, "dtype": ref.dtype}
        new = cls(
            module.normalized_shape,
            eps=module.eps,
            elementwise_affine=module.elementwise_affine,
            bias=getattr(module, "bias", None) is not None,
            **kwargs,
        )
        new.load_state_dict(module.state_dict())
        return new


class RMSNorm(torch.nn.Module):
    """Drop-in for torch.nn.RMSNorm (same constructor, parameters, state_dict
    keys and repr) running lntune's kernels."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]
    normalized_shape: Tuple[int, ...]
    eps: Optional[float]
    elementwise_affine: bool

    def __init__(
        self,
        normalized_shape: ShapeLike,
        eps: Optional[float] = None,
        elementwise_affine: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.normalized_shape = tuple(int(d) for d in _shape(normalized_shape))
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = torch.nn.Parameter(torch.empty(self.normalized_shape, **factory_kwargs))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            torch.nn.init.ones_(self.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)

    @classmethod
    def from_torch(cls, module: torch.nn.RMSNorm) -> "RMSNorm":
        """An lntune RMSNorm with `module`'s configuration and parameters (copied)."""
        if not isinstance(module, torch.nn.RMSNorm):
            raise TypeError("lntune.torch.RMSNorm.from_torch: expected a torch.nn.RMSNorm, got %s"
                            % type(module).__name__)
        ref = module.weight
        kwargs = {} if ref is None else {"device": ref.device, "dtype": ref.dtype}
        new = cls(module.normalized_shape, eps=module.eps, elementwise_affine=module.elementwise_affine, **kwargs)
        new.load_state_dict(module.state_dict())
        return new
