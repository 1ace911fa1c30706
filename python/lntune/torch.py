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

_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _current_stream(device: torch.device) -> int:
    """The CUstream handle of the current stream on `device` (0 = legacy default)."""
    if _raw_stream is not None:
        return _raw_stream(device.index)
    return torch.cuda.current_stream(device).cuda_stream


def _call(fn, args, device: torch.device):
    """fn(args) with `device` current (lntune uses the thread's current context)."""
    if device.index == torch.cuda.current_device():
        return fn(args)
    with torch.cuda.device(device):
        return fn(args)


def _ptr(t: Optional[torch.Tensor]) -> Optional[int]:
    return None if t is None else t.data_ptr()


def _normalized(normalized_shape: ShapeLike) -> Tuple[int, ...]:
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(d) for d in normalized_shape)


def _rows(t: torch.Tensor, M: int, N: int) -> Tuple[torch.Tensor, int]:
    """t as an (M, N) matrix lntune can read, and its row stride in elements.

    A view when the rows are unit-stride and do not overlap, else a
    contiguous copy."""
    t2 = t.reshape(M, N)
    if (N == 1 or t2.stride(1) == 1) and (M <= 1 or t2.stride(0) >= N):
        return t2, (t2.stride(0) if M > 1 else N)
    return t2.contiguous(), N


def _vector(t: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
    """weight/bias as a unit-stride vector of N elements."""
    if t is None:
        return None
    v = t.reshape(-1)
    return v if v.stride(0) == 1 or v.numel() <= 1 else v.contiguous()


class _Problem:
    """Validated arguments of one layer_norm call."""

    __slots__ = ("shape", "N", "x_dtype", "w_dtype", "w_torch_dtype")

    def __init__(self, x, normalized_shape, weight, bias):
        if not isinstance(x, torch.Tensor):
            raise TypeError("lntune.torch.layer_norm: x must be a torch.Tensor, got %s" % type(x).__name__)
        if x.device.type != "cuda":
            raise TypeError(
                "lntune.torch.layer_norm: x must be a CUDA tensor, got one on %s "
                "(lntune runs on NVIDIA GPUs only; use torch.nn.functional.layer_norm on the CPU)" % x.device
            )
        xd = DTYPES.get(x.dtype)
        if xd is None:
            raise TypeError(
                "lntune.torch.layer_norm: x must be float32, float16 or bfloat16, got %s" % x.dtype
            )
        shape = _normalized(normalized_shape)
        k = len(shape)
        if k == 0 or x.dim() < k or tuple(x.shape[x.dim() - k:]) != shape:
            raise ValueError(
                "lntune.torch.layer_norm: normalized_shape %s must be the last dimensions of x, "
                "whose shape is %s" % (list(shape), list(x.shape))
            )
        N = math.prod(shape)
        if N == 0:
            raise ValueError("lntune.torch.layer_norm: normalized_shape %s has no elements" % (list(shape),))
        wd = None
        wt = None
        for name, p in (("weight", weight), ("bias", bias)):
            if p is None:
                continue
            if not isinstance(p, torch.Tensor):
                raise TypeError("lntune.torch.layer_norm: %s must be a torch.Tensor or None" % name)
            if p.device != x.device:
                raise TypeError(
                    "lntune.torch.layer_norm: %s is on %s but x is on %s" % (name, p.device, x.device)
                )
            if tuple(p.shape) != shape:
                raise ValueError(
                    "lntune.torch.layer_norm: %s must have shape %s (normalized_shape), got %s"
                    % (name, list(shape), list(p.shape))
                )
            if p.dtype != x.dtype and p.dtype != torch.float32:
                raise TypeError(
                    "lntune.torch.layer_norm: %s must be %s (x's dtype) or float32, got %s"
                    % (name, x.dtype, p.dtype)
                )
            if wt is not None and p.dtype != wt:
                raise TypeError(
                    "lntune.torch.layer_norm: weight (%s) and bias (%s) must have the same dtype" % (wt, p.dtype)
                )
            wt = p.dtype
            wd = DTYPES[p.dtype]
        self.shape = shape
        self.N = N
        self.x_dtype = xd
        self.w_dtype = xd if wd is None else wd
        self.w_torch_dtype = x.dtype if wt is None else wt


def _forward(x, weight, bias, eps: float, prob: _Problem, with_stats: bool):
    """Runs lntune_forward. Returns (y, x2, x_row_stride, w, mean, rstd)."""
    N = prob.N
    M = x.numel() // N
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    x2, xs = _rows(x, M, N)
    w = _vector(weight)
    b = _vector(bias)
    mean = rstd = None
    if with_stats:
        mean = torch.empty((M,), dtype=torch.float32, device=x.device)
        rstd = torch.empty((M,), dtype=torch.float32, device=x.device)
    if M > 0:
        args = _ffi.ForwardArgs(
            x2.data_ptr(), _ptr(w), _ptr(b), y.data_ptr(), _ptr(mean), _ptr(rstd),
            M, N, xs, N,
            int(prob.x_dtype), int(prob.w_dtype), float(eps),
            _current_stream(x.device),
        )
        _call(_ffi.forward, args, x.device)
    return y, x2, xs, w, mean, rstd


class _LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps, prob):
        y, x2, xs, w, mean, rstd = _forward(x, weight, bias, eps, prob, with_stats=True)
        ctx.save_for_backward(x2, w, mean, rstd)
        ctx.prob = prob
        ctx.x_row_stride = xs
        ctx.x_shape = x.shape
        ctx.has_weight = weight is not None
        ctx.has_bias = bias is not None
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, dy):
        x2, w, mean, rstd = ctx.saved_tensors
        prob = ctx.prob
        need_dx, need_dw, need_db = ctx.needs_input_grad[0], ctx.needs_input_grad[1], ctx.needs_input_grad[2]
        need_dw = need_dw and ctx.has_weight
        need_db = need_db and ctx.has_bias
        device = x2.device
        M, N = x2.shape
        dx = torch.empty((M, N), dtype=x2.dtype, device=device)
        dw = torch.empty((N,), dtype=prob.w_torch_dtype, device=device) if need_dw else None
        db = torch.empty((N,), dtype=prob.w_torch_dtype, device=device) if need_db else None
        if M == 0:
            # dW and dB of zero rows are zero (no launch needed).
            for g in (dw, db):
                if g is not None:
                    g.zero_()
        else:
            if dy.dtype != x2.dtype:
                dy = dy.to(x2.dtype)
            dy2, dys = _rows(dy, M, N)
            args = _ffi.BackwardArgs(
                dy2.data_ptr(), x2.data_ptr(), _ptr(w), mean.data_ptr(), rstd.data_ptr(),
                dx.data_ptr(), _ptr(dw), _ptr(db),
                M, N, dys, ctx.x_row_stride, N,
                int(prob.x_dtype), int(prob.w_dtype),
                None, 0,
                _current_stream(device),
            )
            # The workspace (fp32 partial dW/dB rows) comes from torch's caching
            # allocator: stream-ordered, and from the graph's pool under capture.
            ws_bytes = _call(_ffi.backward_workspace_size, args, device) if (need_dw or need_db) else 0
            ws = None
            if ws_bytes > 0:
                ws = torch.empty((ws_bytes,), dtype=torch.uint8, device=device)
                args.workspace = ws.data_ptr()
                args.workspace_bytes = ws_bytes
            _call(_ffi.backward, args, device)
            del ws  # freed after the launch: reuse is ordered on this stream
        gx = dx.view(ctx.x_shape) if need_dx else None
        gw = dw.view(prob.shape) if need_dw else None
        gb = db.view(prob.shape) if need_db else None
        return gx, gw, gb, None, None


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
    prob = _Problem(x, normalized_shape, weight, bias)
    if torch.is_grad_enabled() and (
        x.requires_grad
        or (weight is not None and weight.requires_grad)
        or (bias is not None and bias.requires_grad)
    ):
        return _LayerNormFunction.apply(x, weight, bias, float(eps), prob)
    return _forward(x, weight, bias, eps, prob, with_stats=False)[0]


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
