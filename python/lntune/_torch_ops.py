"""lntune's torch custom ops and the launch code behind them (imported by
lntune.torch).

Ops (namespace ``lntune``, functional: no input is mutated, no output aliases
an input or another output):

    layer_norm_fwd(Tensor x, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps)
        -> (Tensor y, Tensor mean, Tensor rstd)
    layer_norm_bwd(Tensor dy, Tensor x, Tensor mean, Tensor rstd, SymInt[] normalized_shape,
                   Tensor? weight, Tensor? bias, bool[3] output_mask)
        -> (Tensor dx, Tensor dweight, Tensor dbias)

y is x's shape, contiguous; mean and rstd are float32 of x's leading
(non-normalized) shape. The backward's masked-off outputs are empty (0,)
tensors. layer_norm_fwd carries an autograd formula (register_autograd) that
calls layer_norm_bwd; both have fake implementations, so they trace under
torch.compile(fullgraph=True) and torch.export.

Adding a norm (RMSNorm, a fused residual add) takes the same four pieces: a
schema in _SCHEMAS, a CUDA implementation over the C ABI, a fake
implementation, and (for the forward) setup_context/backward; _register()
wires them. A C++ CUDA kernel (one function and one row of kNativeOps in
csrc/torch_ext.cpp) is optional: _register() takes it when it is there.

The launch code is the host path of every call, so it is kept short: what
depends only on the dtypes and normalized_shape is validated once and
memoised (_Signature), the backward's workspace size is memoised per shape,
and a call is the allocations, one ctypes call per launch and nothing else.
"""

from __future__ import annotations

import ctypes
import math
import os
import warnings
from typing import Optional, Tuple

import torch

from . import _ffi

# torch dtype -> lntune_dtype
DTYPES = {
    torch.float32: _ffi.DType.FP32,
    torch.float16: _ffi.DType.FP16,
    torch.bfloat16: _ffi.DType.BF16,
}

_FwdArgs = _ffi._RawForwardArgs
_BwdArgs = _ffi._RawBackwardArgs
_byref = ctypes.byref
_empty = torch.empty
_f32 = torch.float32
_u8 = torch.uint8
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
_get_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
_fns = None  # (lntune_forward, lntune_backward, lntune_backward_workspace_size)


def _functions():
    global _fns
    if _fns is None:
        lib = _ffi.library()
        _fns = (lib.lntune_forward, lib.lntune_backward, lib.lntune_backward_workspace_size)
    return _fns


def _stream(dev: int) -> int:
    """The CUstream of device `dev`'s current stream (0 = legacy default)."""
    if _raw_stream is not None:
        return _raw_stream(dev)
    return torch.cuda.current_stream(dev).cuda_stream


def _call(fn, dev: int, *args) -> None:
    """fn(*args) with device `dev` current (lntune launches in the calling
    thread's current context); raises LntuneError on failure."""
    if _get_device() == dev:
        status = fn(*args)
    else:
        with torch.cuda.device(dev):
            status = fn(*args)
    if status:
        _ffi.check(status, fn.__name__)


# ------------------------------------------------------------------ validation


class _Signature:
    """What one (x dtype, weight dtype, bias dtype, normalized_shape) implies."""

    __slots__ = ("shape", "k", "N", "x_dtype", "w_dtype", "w_torch_dtype")

    def __init__(self, x_dtype, w_dtype, b_dtype, shape):
        xd = DTYPES.get(x_dtype)
        if xd is None:
            raise TypeError("lntune.torch.layer_norm: x must be float32, float16 or bfloat16, got %s" % x_dtype)
        if len(shape) == 0:
            raise ValueError("lntune.torch.layer_norm: normalized_shape must not be empty")
        if any(d < 0 for d in shape):
            raise ValueError("lntune.torch.layer_norm: normalized_shape %s has a negative size" % (list(shape),))
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
        self.N = math.prod(shape)  # 0 is allowed (as in torch): nothing to launch
        self.x_dtype = int(xd)
        self.w_dtype = int(xd if wt is None else DTYPES[wt])
        self.w_torch_dtype = x_dtype if wt is None else wt


_signatures = {}


def _normalized(normalized_shape) -> Tuple[int, ...]:
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    try:
        return tuple(int(d) for d in normalized_shape)
    except TypeError:
        raise TypeError("lntune.torch.layer_norm: normalized_shape must be an int or a sequence of ints, got %s"
                        % type(normalized_shape).__name__) from None


def check(x, normalized_shape, weight, bias):
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
        sig = _signatures.get(key)
    except AttributeError:
        raise TypeError("lntune.torch.layer_norm: weight and bias must be torch.Tensors or None") from None
    except TypeError:  # unhashable: a tuple holding something odd
        key = None
        sig = None
    if sig is None:
        shape = _normalized(shape)
        sig = _Signature(x.dtype, None if weight is None else weight.dtype, None if bias is None else bias.dtype,
                         shape)
        if key is not None and len(_signatures) < 4096:
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


# ------------------------------------------------------------------ launches


def _rows(t: torch.Tensor, M: int, N: int):
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
    return t if t is None or t.is_contiguous() else t.contiguous()


def _launch_forward(x, weight, bias, eps, sig, dev, y, mean_ptr, rstd_ptr, M):
    """lntune_forward over x's rows into y (contiguous); returns (x2, row stride)."""
    N = sig.N
    x2, xs = _rows(x, M, N)
    if M > 0 and N > 0:
        args = _FwdArgs(x2.data_ptr(), None if weight is None else weight.data_ptr(),
                        None if bias is None else bias.data_ptr(), y.data_ptr(), mean_ptr, rstd_ptr,
                        M, N, xs, N, sig.x_dtype, sig.w_dtype, eps, _stream(dev))
        _call(_functions()[0], dev, _byref(args))
    return x2, xs


def forward_plain(x, weight, bias, eps, sig, dev):
    """y only (no statistics): the inference call."""
    weight = _dense(weight)
    bias = _dense(bias)
    y = _empty(x.shape, dtype=x.dtype, device=x.device)
    N = sig.N
    _launch_forward(x, weight, bias, eps, sig, dev, y, None, None, x.numel() // N if N else 0)
    return y


def forward_stats(x, weight, bias, eps, sig, dev):
    """(y, stats, x2, x row stride), stats a float32 [2, M] tensor (mean, rstd)."""
    weight = _dense(weight)
    bias = _dense(bias)
    y = _empty(x.shape, dtype=x.dtype, device=x.device)
    N = sig.N
    M = x.numel() // N if N else math.prod(x.shape[: x.dim() - sig.k])
    stats = _empty((2, M), dtype=_f32, device=x.device)
    if N == 0:
        stats.fill_(math.nan)  # torch's mean and rstd of no elements
    sp = stats.data_ptr()
    x2, xs = _launch_forward(x, weight, bias, eps, sig, dev, y, sp, sp + 4 * M, M)
    return y, stats, x2, xs


# (device, M, N, dy stride, x stride, dtypes, weight?, dW?, dB?, 16-byte alignment bits, set_tuned generation)
# -> workspace bytes. The size depends on the plan the C library picks for
# exactly these; set_tuned() bumps the generation.
_ws_sizes = {}


def backward_launch(dy, x2, xs, M, stats_ptr, sig, dev, w, want_dw, want_db, dx_shape, rstd_ptr=None):
    """dx (dx_shape, contiguous), and dW, dB ([N] or None as asked).

    x2 has unit-stride rows xs elements apart (as _rows gives); mean and rstd
    are float32 [M] at stats_ptr and rstd_ptr (default stats_ptr + 4 M); w is
    contiguous or None."""
    N = sig.N
    dx = _empty(dx_shape, dtype=x2.dtype, device=x2.device)
    wt = sig.w_torch_dtype
    dw = _empty((N,), dtype=wt, device=x2.device) if want_dw else None
    db = _empty((N,), dtype=wt, device=x2.device) if want_db else None
    if M == 0 or N == 0:
        for g in (dw, db):
            if g is not None:
                g.zero_()  # dW, dB of no rows (or of no columns: nothing) are zero
        return dx, dw, db
    if dy.dtype != x2.dtype:
        dy = dy.to(x2.dtype)
    dy2, dys = _rows(dy, M, N)
    fwd, bwd, wss = _functions()
    dyp, xp, dxp = dy2.data_ptr(), x2.data_ptr(), dx.data_ptr()
    wp = None if w is None else w.data_ptr()
    args = _BwdArgs(dyp, xp, wp, stats_ptr, stats_ptr + 4 * M if rstd_ptr is None else rstd_ptr, dxp,
                    None if dw is None else dw.data_ptr(), None if db is None else db.data_ptr(),
                    M, N, dys, xs, N, sig.x_dtype, sig.w_dtype, None, 0, _stream(dev))
    ws = None
    if want_dw or want_db:
        # The workspace (fp32 partial dW/dB rows) comes from torch's caching
        # allocator: stream-ordered, and from the graph's pool under capture.
        key = (dev, M, N, dys, xs, sig.x_dtype, sig.w_dtype, wp is None, want_dw, want_db,
               (dyp | xp | dxp | (wp or 0)) & 15, _ffi.generation)
        nbytes = _ws_sizes.get(key)
        if nbytes is None:
            n = ctypes.c_size_t(0)
            _call(wss, dev, _byref(args), _byref(n))
            nbytes = n.value
            if len(_ws_sizes) >= 4096:
                _ws_sizes.clear()
            _ws_sizes[key] = nbytes
        if nbytes:
            ws = _empty((nbytes,), dtype=_u8, device=x2.device)
            args.workspace = ws.data_ptr()
            args.workspace_bytes = nbytes
    _call(bwd, dev, _byref(args))
    del ws  # back to the caching allocator after the launch: reuse is ordered on this stream
    return dx, dw, db


# ------------------------------------------------------------------ ops

_SCHEMAS = {
    "layer_norm_fwd": "layer_norm_fwd(Tensor x, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
                      "float eps) -> (Tensor, Tensor, Tensor)",
    "layer_norm_bwd": "layer_norm_bwd(Tensor dy, Tensor x, Tensor mean, Tensor rstd, SymInt[] normalized_shape, "
                      "Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
}


def _layer_norm_fwd_cuda(x, normalized_shape, weight, bias, eps):
    sig, dev = check(x, tuple(normalized_shape), weight, bias)
    lead = x.shape[: x.dim() - sig.k]
    N = sig.N
    M = x.numel() // N if N else math.prod(lead)
    y = _empty(x.shape, dtype=x.dtype, device=x.device)
    mean = _empty(lead, dtype=_f32, device=x.device)  # separate outputs: outputs must not alias each other
    rstd = _empty(lead, dtype=_f32, device=x.device)
    if N == 0:
        mean.fill_(math.nan)
        rstd.fill_(math.nan)
    _launch_forward(x, _dense(weight), _dense(bias), eps, sig, dev, y, mean.data_ptr(), rstd.data_ptr(), M)
    return y, mean, rstd


def _check_fake(x, normalized_shape, weight, bias):
    if x.device.type != "cuda":
        raise TypeError("lntune.torch.layer_norm: x must be a CUDA tensor, got one on %s" % x.device)
    if x.dtype not in DTYPES:
        raise TypeError("lntune.torch.layer_norm: x must be float32, float16 or bfloat16, got %s" % x.dtype)
    k = len(normalized_shape)
    if k == 0 or x.dim() < k:
        raise ValueError("lntune.torch.layer_norm: normalized_shape %s must be the last dimensions of x, whose "
                         "shape is %s" % (list(normalized_shape), list(x.shape)))
    wt = None
    for name, p in (("weight", weight), ("bias", bias)):
        if p is None:
            continue
        if p.dtype != x.dtype and p.dtype != torch.float32:
            raise TypeError("lntune.torch.layer_norm: %s must be %s (x's dtype) or float32, got %s"
                            % (name, x.dtype, p.dtype))
        if wt is not None and p.dtype != wt:
            raise TypeError("lntune.torch.layer_norm: weight (%s) and bias (%s) must have the same dtype"
                            % (wt, p.dtype))
        wt = p.dtype
    torch._check(list(x.shape[x.dim() - k:]) == list(normalized_shape),
                 lambda: "lntune.torch.layer_norm: normalized_shape must be the last dimensions of x")
    return k


def _layer_norm_fwd_fake(x, normalized_shape, weight, bias, eps):
    k = _check_fake(x, normalized_shape, weight, bias)
    lead = x.shape[: x.dim() - k]
    return x.new_empty(x.shape), x.new_empty(lead, dtype=_f32), x.new_empty(lead, dtype=_f32)


def _layer_norm_bwd_cuda(dy, x, mean, rstd, normalized_shape, weight, bias, output_mask):
    sig, dev = check(x, tuple(normalized_shape), weight, bias)
    N = sig.N
    M = x.numel() // N if N else mean.numel()
    if dy.shape != x.shape:
        raise ValueError("lntune.torch.layer_norm backward: dy has shape %s, x %s" % (list(dy.shape), list(x.shape)))
    mean = mean if mean.is_contiguous() else mean.contiguous()
    rstd = rstd if rstd.is_contiguous() else rstd.contiguous()
    if mean.dtype != _f32 or rstd.dtype != _f32 or mean.numel() != M or rstd.numel() != M:
        raise ValueError("lntune.torch.layer_norm backward: mean and rstd must be float32 with %d elements" % M)
    x2, xs = _rows(x, M, N)
    want_dw = bool(output_mask[1]) and weight is not None
    want_db = bool(output_mask[2]) and bias is not None
    dx, dw, db = backward_launch(dy, x2, xs, M, mean.data_ptr(), sig, dev, _dense(weight), want_dw, want_db,
                                 x.shape, rstd_ptr=rstd.data_ptr())
    dw = dw.view(sig.shape) if dw is not None else x.new_empty((0,), dtype=sig.w_torch_dtype)
    db = db.view(sig.shape) if db is not None else x.new_empty((0,), dtype=sig.w_torch_dtype)
    return dx, dw, db


def _layer_norm_bwd_fake(dy, x, mean, rstd, normalized_shape, weight, bias, output_mask):
    _check_fake(x, normalized_shape, weight, bias)
    wt = weight.dtype if weight is not None else bias.dtype if bias is not None else x.dtype
    dw = x.new_empty(tuple(normalized_shape), dtype=wt) if output_mask[1] and weight is not None \
        else x.new_empty((0,), dtype=wt)
    db = x.new_empty(tuple(normalized_shape), dtype=wt) if output_mask[2] and bias is not None \
        else x.new_empty((0,), dtype=wt)
    return x.new_empty(x.shape), dw, db


def _layer_norm_setup_context(ctx, inputs, output):
    x, normalized_shape, weight, bias, _eps = inputs
    _y, mean, rstd = output
    ctx.save_for_backward(x, weight, bias, mean, rstd)
    ctx.normalized_shape = normalized_shape
    ctx.mark_non_differentiable(mean, rstd)


def _layer_norm_backward(ctx, dy, _dmean, _drstd):
    x, weight, bias, mean, rstd = ctx.saved_tensors
    need = ctx.needs_input_grad  # x, normalized_shape, weight, bias, eps
    mask = [bool(need[0]), bool(need[2]) and weight is not None, bool(need[3]) and bias is not None]
    dx, dw, db = torch.ops.lntune.layer_norm_bwd(dy, x, mean, rstd, ctx.normalized_shape, weight, bias, mask)
    return (dx if mask[0] else None), None, (dw if mask[1] else None), (db if mask[2] else None), None


# ------------------------------------------------------------------ registration

# Each op's CUDA kernel is either its Python implementation (given to
# _register) or a C++ one from the optional extension (lntune/csrc/
# torch_ext.cpp: the ops in its kNativeOps table), which runs no Python per
# call: what torch.compile'd graphs and the ops route then cost the host.
# LNTUNE_TORCH_NATIVE_OPS=1 picks the C++ kernels where the extension has
# them (default 0 until measured on a GPU); use_native_ops() switches at run
# time. Schemas, fakes and autograd formulas stay in Python either way.
NATIVE_OPS = os.environ.get("LNTUNE_TORCH_NATIVE_OPS", "0").lower() in ("1", "on", "yes")

_python_cuda = {}  # op name -> its Python CUDA implementation
_python_libs = {}  # op name -> the torch.library.Library holding that registration
native = {}  # op name -> whether its CUDA kernel is the C++ one now


def _extension():
    from . import _torch_ext  # noqa: PLC0415 - built on first use; torch.py imports it anyway

    return _torch_ext.ext


def _install_cuda(name: str, use_native: bool) -> bool:
    """Registers lntune::`name`'s CUDA kernel: the C++ one if `use_native`
    and the extension has it, else the Python one; one registration at a
    time (the other is taken out first). Returns whether it is the C++ one."""
    ext = _extension()
    has_native = ext is not None and name in ext.native_ops()
    if use_native and has_native:
        lib = _python_libs.pop(name, None)
        if lib is not None:
            lib._destroy()
        try:
            ext.register_native(name, "CUDA")
            native[name] = True
            return True
        except RuntimeError as e:  # e.g. a schema its C++ signature does not match: say so, keep Python's
            warnings.warn("lntune.torch: the C++ kernel of lntune::%s could not be registered (%s); using the "
                          "Python one" % (name, (str(e).strip().splitlines() or [""])[0]), RuntimeWarning,
                          stacklevel=2)
    elif has_native:
        ext.unregister_native(name, "CUDA")
    if name not in _python_libs:
        lib = torch.library.Library("lntune", "IMPL")
        lib.impl(name, _python_cuda[name], "CUDA")
        _python_libs[name] = lib
    native[name] = False
    return False


def use_native_ops(enabled: bool) -> dict:
    """Switches every op's CUDA kernel to the C++ one (where the extension
    has it) or back to Python; returns {op name: whether it is C++ now}.
    Compiled graphs call the ops through the dispatcher, so they follow."""
    for name in _python_cuda:
        _install_cuda(name, bool(enabled))
    return dict(native)


def _register(lib, name, cuda, fake, backward=None, setup_context=None):
    """Defines lntune::`name` (_SCHEMAS[name]) with its CUDA kernel (see
    _install_cuda), fake implementation and, for a forward, its autograd
    formula."""
    lib.define(_SCHEMAS[name])
    _python_cuda[name] = cuda
    _install_cuda(name, NATIVE_OPS)
    torch.library.register_fake("lntune::" + name, fake, lib=lib)
    if backward is not None:
        torch.library.register_autograd("lntune::" + name, backward, setup_context=setup_context, lib=lib)


def _define_ops():
    try:
        lib = torch.library.Library("lntune", "DEF")
    except RuntimeError:
        # Defined already: this module was loaded twice (e.g. from two paths).
        if hasattr(torch.ops.lntune, "layer_norm_fwd"):
            return None
        raise
    _register(lib, "layer_norm_fwd", _layer_norm_fwd_cuda, _layer_norm_fwd_fake,
              _layer_norm_backward, _layer_norm_setup_context)
    _register(lib, "layer_norm_bwd", _layer_norm_bwd_cuda, _layer_norm_bwd_fake)
    return lib


_LIBRARY = _define_ops()  # kept alive: the registrations live as long as this object
