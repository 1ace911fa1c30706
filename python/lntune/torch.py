"""PyTorch binding: lntune's LayerNorm as an autograd function and an nn.Module.

Loads the C ABI through ctypes (lntune._ffi); nothing is compiled against
torch. Kernels run on the current CUDA stream of the input's device, and every
buffer (outputs, saved statistics, the backward workspace) comes from torch's
caching allocator, so calls are stream-ordered and CUDA-graph capturable.

    import torch, lntune.torch
    y = lntune.torch.layer_norm(x, (N,), weight, bias, eps=1e-5)   # like F.layer_norm
    ln = lntune.torch.LayerNorm(N, device="cuda", dtype=torch.bfloat16)  # like nn.LayerNorm

Supported: x in float32, float16, bfloat16 on a CUDA device; weight and bias
(each optional) in x's dtype or float32 (both in the same dtype). The
normalized dimensions are the last ones (as in torch); an input whose rows are
not unit-stride is copied to a contiguous one first. Double backward is not
supported.
"""

from __future__ import annotations

import ctypes
import math
import numbers
from typing import Optional, Sequence, Tuple, Union

try:
    import torch
except ImportError as _e:  # pragma: no cover - exercised by tests/python/test_import.py
    raise ImportError(
        "lntune.torch needs PyTorch, which could not be imported (%s). "
        "`import lntune` itself works without it." % (_e,)
    ) from _e

from torch.autograd.function import once_differentiable

from . import _ffi

__all__ = ["layer_norm", "LayerNorm", "DTYPES"]

ShapeLike = Union[int, Sequence[int], torch.Size]

# torch dtype -> lntune_dtype
DTYPES = {
    torch.float32: _ffi.DType.FP32,
    torch.float16: _ffi.DType.FP16,
    torch.bfloat16: _ffi.DType.BF16,
}

# Hot-path helpers. A warm call costs a few attribute reads, one allocation
# (two with autograd), one ctypes call and a launch; everything derivable from
# the dtypes and normalized_shape alone is validated once and memoised.
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
_get_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
_CONTIGUOUS = torch.contiguous_format
_byref = ctypes.byref
_fns = None  # (lntune_forward, lntune_backward, lntune_backward_workspace_size)


def _functions():
    global _fns
    if _fns is None:
        lib = _ffi.library()
        _fns = (lib.lntune_forward, lib.lntune_backward, lib.lntune_backward_workspace_size)
    return _fns


def _current_stream(dev: int) -> int:
    """The CUstream handle of device `dev`'s current stream (0 = legacy default)."""
    if _raw_stream is not None:
        return _raw_stream(dev)
    return torch.cuda.current_stream(dev).cuda_stream


def _call(fn, args, dev: int, *extra):
    """fn(&args, *extra) with device `dev` current (lntune uses the calling
    thread's current context); raises LntuneError on failure."""
    if _get_device() == dev:
        status = fn(_byref(args), *extra)
    else:
        with torch.cuda.device(dev):
            status = fn(_byref(args), *extra)
    if status:
        _ffi.check(status, fn.__name__)


def _normalized(normalized_shape: ShapeLike) -> Tuple[int, ...]:
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(d) for d in normalized_shape)


def _rows(t: torch.Tensor, M: int, N: int) -> Tuple[torch.Tensor, int]:
    """t as rows lntune can read, and the row stride in elements: t itself
    when contiguous; else an (M, N) view when its rows are unit-stride and do
    not overlap; else a contiguous copy."""
    if t.is_contiguous():
        return t, N
    t2 = t.reshape(M, N)
    if (N == 1 or t2.stride(1) == 1) and (M <= 1 or t2.stride(0) >= N):
        return t2, (t2.stride(0) if M > 1 else N)
    return t2.contiguous(), N


def _dense(t: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
    """weight/bias with unit-stride elements."""
    return t if t is None or t.is_contiguous() else t.contiguous()


class _Signature:
    """What one (x dtype, weight dtype, bias dtype, normalized_shape) implies."""

    __slots__ = ("shape", "k", "N", "x_dtype", "w_dtype", "w_torch_dtype")

    def __init__(self, x_dtype, w_dtype, b_dtype, shape):
        xd = DTYPES.get(x_dtype)
        if xd is None:
            raise TypeError("lntune.torch.layer_norm: x must be float32, float16 or bfloat16, got %s" % x_dtype)
        if len(shape) == 0:
            raise ValueError("lntune.torch.layer_norm: normalized_shape must not be empty")
        N = math.prod(shape)
        if N <= 0:
            raise ValueError("lntune.torch.layer_norm: normalized_shape %s has no elements" % (list(shape),))
        wt = None
        for name, d in (("weight", w_dtype), ("bias", b_dtype)):
            if d is None:
                continue
            if d != x_dtype and d != torch.float32:
                raise TypeError(
                    "lntune.torch.layer_norm: %s must be %s (x's dtype) or float32, got %s" % (name, x_dtype, d))
            if wt is not None and d != wt:
                raise TypeError("lntune.torch.layer_norm: weight (%s) and bias (%s) must have the same dtype" % (wt, d))
            wt = d
        self.shape = shape
        self.k = len(shape)
        self.N = N
        self.x_dtype = int(xd)
        self.w_dtype = int(xd if wt is None else DTYPES[wt])
        self.w_torch_dtype = x_dtype if wt is None else wt


_signatures = {}


def _check(x, normalized_shape, weight, bias):
    """Validates one call; returns (signature, device index)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError("lntune.torch.layer_norm: x must be a torch.Tensor, got %s" % type(x).__name__)
    if not x.is_cuda:
        raise TypeError(
            "lntune.torch.layer_norm: x must be a CUDA tensor, got one on %s "
            "(lntune runs on NVIDIA GPUs only; use torch.nn.functional.layer_norm on the CPU)" % x.device)
    t = type(normalized_shape)
    shape = (normalized_shape,) if t is int else normalized_shape if t is tuple else _normalized(normalized_shape)
    try:
        key = (x.dtype, None if weight is None else weight.dtype, None if bias is None else bias.dtype, shape)
    except AttributeError:
        raise TypeError("lntune.torch.layer_norm: weight and bias must be torch.Tensors or None") from None
    sig = _signatures.get(key)
    if sig is None:
        sig = _Signature(key[0], key[1], key[2], _normalized(shape))
        _signatures[key] = sig
    xs = x.shape
    if len(xs) < sig.k or xs[len(xs) - sig.k:] != sig.shape:
        raise ValueError(
            "lntune.torch.layer_norm: normalized_shape %s must be the last dimensions of x, whose shape is %s"
            % (list(sig.shape), list(xs)))
    dev = x.get_device()
    for name, p in (("weight", weight), ("bias", bias)):
        if p is None:
            continue
        if p.get_device() != dev or not p.is_cuda:
            raise TypeError("lntune.torch.layer_norm: %s is on %s but x is on %s" % (name, p.device, x.device))
        if p.shape != sig.shape:
            raise ValueError("lntune.torch.layer_norm: %s must have shape %s (normalized_shape), got %s"
                             % (name, list(sig.shape), list(p.shape)))
    return sig, dev


def _forward(x, weight, bias, eps: float, sig: _Signature, dev: int, with_stats: bool):
    """Runs lntune_forward. Returns (y, x2, x_row_stride, w, stats), stats being
    a float32 [2, M] tensor (mean, rstd) or None."""
    N = sig.N
    M = x.numel() // N
    y = torch.empty_like(x, memory_format=_CONTIGUOUS)
    x2, xs = _rows(x, M, N)
    w = _dense(weight)
    b = _dense(bias)
    stats = x.new_empty((2, M), dtype=torch.float32) if with_stats else None
    if M > 0:
        sp = None if stats is None else stats.data_ptr()
        args = _ffi.ForwardArgs(
            x2.data_ptr(), None if w is None else w.data_ptr(), None if b is None else b.data_ptr(),
            y.data_ptr(), sp, None if sp is None else sp + 4 * M,
            M, N, xs, N, sig.x_dtype, sig.w_dtype, eps, _current_stream(dev))
        _call(_functions()[0], args, dev)
    return y, x2, xs, w, stats


class _LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps, sig, dev):
        y, x2, xs, w, stats = _forward(x, weight, bias, eps, sig, dev, with_stats=True)
        ctx.save_for_backward(x2, w, stats)
        ctx.sig = sig
        ctx.dev = dev
        ctx.x_row_stride = xs
        ctx.x_shape = x.shape
        ctx.has_weight = weight is not None
        ctx.has_bias = bias is not None
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, dy):
        x2, w, stats = ctx.saved_tensors
        sig = ctx.sig
        dev = ctx.dev
        need_dx, need_dw, need_db = ctx.needs_input_grad[:3]
        need_dw = need_dw and ctx.has_weight
        need_db = need_db and ctx.has_bias
        N = sig.N
        M = stats.shape[1]
        dx = x2.new_empty(ctx.x_shape)
        dw = x2.new_empty((N,), dtype=sig.w_torch_dtype) if need_dw else None
        db = x2.new_empty((N,), dtype=sig.w_torch_dtype) if need_db else None
        if M == 0:
            # dW and dB of zero rows are zero (no launch needed).
            for g in (dw, db):
                if g is not None:
                    g.zero_()
        else:
            if dy.dtype != x2.dtype:
                dy = dy.to(x2.dtype)
            dy2, dys = _rows(dy, M, N)
            sp = stats.data_ptr()
            args = _ffi.BackwardArgs(
                dy2.data_ptr(), x2.data_ptr(), None if w is None else w.data_ptr(), sp, sp + 4 * M,
                dx.data_ptr(), None if dw is None else dw.data_ptr(), None if db is None else db.data_ptr(),
                M, N, dys, ctx.x_row_stride, N, sig.x_dtype, sig.w_dtype,
                None, 0, _current_stream(dev))
            fwd, bwd, wss = _functions()
            ws = None
            if need_dw or need_db:
                # The workspace (fp32 partial dW/dB rows) comes from torch's caching
                # allocator: stream-ordered, and from the graph's pool under capture.
                nbytes = ctypes.c_size_t(0)
                _call(wss, args, dev, _byref(nbytes))
                if nbytes.value:
                    ws = x2.new_empty((nbytes.value,), dtype=torch.uint8)
                    args.workspace = ws.data_ptr()
                    args.workspace_bytes = nbytes.value
            _call(bwd, args, dev)
            del ws  # freed after the launch: reuse is ordered on this stream
        return (dx if need_dx else None,
                dw.view(sig.shape) if need_dw else None,
                db.view(sig.shape) if need_db else None,
                None, None, None)


def layer_norm(
    x: torch.Tensor,
    normalized_shape: ShapeLike,
    weight: Optional[torch.Tensor] = None,
    bias: Optional[torch.Tensor] = None,
    eps: float = 1e-5,
) -> torch.Tensor:
    """LayerNorm over the last len(normalized_shape) dimensions of x, like
    torch.nn.functional.layer_norm, with autograd. Runs on the current CUDA
    stream of x's device. Without autograd (no input requires grad, or grad
    mode is off) the forward skips the saved statistics and the autograd node.

    Raises TypeError for non-CUDA tensors or unsupported dtypes, ValueError for
    mismatched shapes, and lntune.LntuneError when the library fails."""
    sig, dev = _check(x, normalized_shape, weight, bias)
    if torch.is_grad_enabled() and (
        x.requires_grad
        or (weight is not None and weight.requires_grad)
        or (bias is not None and bias.requires_grad)
    ):
        return _LayerNormFunction.apply(x, weight, bias, float(eps), sig, dev)
    return _forward(x, weight, bias, float(eps), sig, dev, False)[0]


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
        self.normalized_shape = _normalized(normalized_shape)
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
