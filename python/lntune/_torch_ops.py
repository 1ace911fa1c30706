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

RMSNorm and the fused residual forms (rms_norm_fwd/bwd, add_layer_norm_fwd/bwd,
add_rms_norm_fwd/bwd) are described where they are defined, below
("norm variants"); NORM_OPS lists their pieces for _register().

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


def _param_dtype(api, x_dtype, w_dtype, b_dtype):
    """The dtype weight and bias share (x's or float32), or None without
    either; a TypeError naming `api` otherwise."""
    wt = None
    for name, d in (("weight", w_dtype), ("bias", b_dtype)):
        if d is None:
            continue
        if d != x_dtype and d != torch.float32:
            raise TypeError("%s: %s must be %s (x's dtype) or float32, got %s" % (api, name, x_dtype, d))
        if wt is not None and d != wt:
            raise TypeError("%s: weight (%s) and bias (%s) must have the same dtype" % (api, wt, d))
        wt = d
    return wt


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
        wt = _param_dtype("lntune.torch.layer_norm", x_dtype, w_dtype, b_dtype)
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


def _attach_workspace(sizes: dict, key, wss, dev: int, args, device):
    """Gives a backward's `args` its workspace (the fp32 partial dW/dB rows)
    from torch's caching allocator: stream-ordered, and from the graph's pool
    under capture. Its size is asked of the library once per `key` (the
    shape, dtypes, alignment and tuning generation) and memoised in `sizes`.
    Returns the tensor, to keep alive until the launch (None: none needed)."""
    nbytes = sizes.get(key)
    if nbytes is None:
        n = ctypes.c_size_t(0)
        _call(wss, dev, _byref(args), _byref(n))
        nbytes = n.value
        if len(sizes) >= 4096:
            sizes.clear()
        sizes[key] = nbytes
    if not nbytes:
        return None
    ws = _empty((nbytes,), dtype=_u8, device=device)
    args.workspace = ws.data_ptr()
    args.workspace_bytes = nbytes
    return ws


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
        ws = _attach_workspace(_ws_sizes, key, wss, dev, args, x2.device)
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


# ------------------------------------------------------------------ norm variants: RMSNorm, fused residual add
#
# Ops (functional like the LayerNorm ones: nothing is mutated, no output
# aliases an input or another output):
#
#   rms_norm_fwd(x, normalized_shape, weight?, eps, zero_centered_weight, out_dtype?) -> (y, rstd)
#   rms_norm_bwd(dy, x, rstd, normalized_shape, weight?, zero_centered_weight, bool[2] output_mask)
#       -> (dx, dweight)
#   add_layer_norm_fwd(x, residual, normalized_shape, weight?, bias?, eps, zero_centered_weight, out_dtype?)
#       -> (y, residual_out, mean, rstd)
#   add_layer_norm_bwd(dy, dresidual_out?, residual_out, mean, rstd, normalized_shape, weight?, bias?,
#                      zero_centered_weight, dx_dtype, bool[3] output_mask) -> (dx, dresidual, dweight, dbias)
#   add_rms_norm_fwd(x, residual, normalized_shape, weight?, eps, zero_centered_weight, out_dtype?)
#       -> (y, residual_out, rstd)
#   add_rms_norm_bwd(dy, dresidual_out?, residual_out, rstd, normalized_shape, weight?, zero_centered_weight,
#                    dx_dtype, bool[2] output_mask) -> (dx, dresidual, dweight)
#
# One op per form rather than one norm_fwd with a norm kind: each schema is
# exactly its form's (RMSNorm has no mean and no bias, a plain norm has no
# residual_out), so no op returns placeholder tensors, and a traced graph or
# a profile names the norm that ran. Behind them is one launch function per
# direction (_norm_forward / _norm_backward over lntune_norm_forward /
# lntune_norm_backward) taking the norm kind: the six ops share every line
# of launch and validation code.
#
# y has out_dtype (default: x's dtype); residual_out (z = x + residual) has
# the residual's dtype, as the C ABI writes it. The gradient of z is the
# gradient of both x and residual: the fused backward writes it as dx in
# dx_dtype (x's dtype) and, when that differs from the residual's dtype
# (residual_out's), also as dresidual in the residual's dtype, from the same
# kernel (the C ABI's dresidual): each is rounded once from fp32, so an fp32
# residual stream with bf16 activations gets an exact fp32 gradient with no
# fp32 detour or cast kernels. dresidual is an empty (0,) tensor when the
# dtypes agree (dx is then the residual's gradient too) or output_mask[0] is
# off, like a masked-off dweight. The ops' backward formulas add the upstream
# gradient of z (dresidual_out) into dx in the same kernel, as the C ABI's
# backward does.
# Double backward is not supported: the *_bwd ops' autograd formula raises.

_NormFwdArgs = _ffi._RawNormForwardArgs
_NormBwdArgs = _ffi._RawNormBackwardArgs
_LAYER = int(_ffi.Norm.LAYER_NORM)
_RMS = int(_ffi.Norm.RMS_NORM)
_norm_fns = None  # (lntune_norm_forward, lntune_norm_backward, lntune_norm_backward_workspace_size)

_DTYPE_NAMES = "float32, float16 or bfloat16"


def _norm_functions():
    global _norm_fns
    if _norm_fns is None:
        lib = _ffi.library()
        if not hasattr(lib, "lntune_norm_forward"):
            raise NotImplementedError(
                "lntune.torch: this liblntune (%s) has no lntune_norm_forward: RMSNorm and the fused residual "
                "forms need a newer library (rebuild it, or point LNTUNE_LIBRARY at a current one)"
                % _ffi.library_path())
        _norm_fns = (lib.lntune_norm_forward, lib.lntune_norm_backward, lib.lntune_norm_backward_workspace_size)
    return _norm_fns


def check_eps(api: str, eps) -> float:
    """eps as a float; ValueError unless it is a finite number (negative and
    zero are allowed, as torch allows them)."""
    try:
        e = float(eps)
    except (TypeError, ValueError):
        raise TypeError("%s: eps must be a float, got %s" % (api, type(eps).__name__)) from None
    if not math.isfinite(e):
        raise ValueError("%s: eps must be a finite number, got %r" % (api, e))
    return e


class _NormSignature:
    """What one (norm, dtypes, normalized_shape, options) implies: the
    lntune_dtype codes, N, and the dtypes of the outputs."""

    __slots__ = ("api", "norm", "shape", "k", "N", "x_dtype", "w_dtype", "w_torch_dtype", "y_torch_dtype",
                 "y_dtype", "r_torch_dtype", "r_dtype", "zero_centered")

    def __init__(self, api, norm, x_dtype, r_dtype, w_dtype, b_dtype, out_dtype, shape, zero_centered, has_w):
        xd = DTYPES.get(x_dtype)
        if xd is None:
            raise TypeError("%s: x must be %s, got %s" % (api, _DTYPE_NAMES, x_dtype))
        if r_dtype is not None and r_dtype not in DTYPES:
            raise TypeError("%s: residual must be %s, got %s" % (api, _DTYPE_NAMES, r_dtype))
        if out_dtype is not None and out_dtype not in DTYPES:
            raise TypeError("%s: out_dtype must be None, torch.float32, torch.float16 or torch.bfloat16, got %r"
                            % (api, out_dtype))
        if len(shape) == 0:
            raise ValueError("%s: normalized_shape must not be empty" % api)
        if any(d < 0 for d in shape):
            raise ValueError("%s: normalized_shape %s has a negative size" % (api, list(shape)))
        if zero_centered and not has_w:
            raise ValueError("%s: zero_centered_weight=True needs a weight (y = xhat * (1 + weight)%s)"
                             % (api, " + bias" if norm == _LAYER else ""))
        wt = _param_dtype(api, x_dtype, w_dtype, b_dtype)
        self.api = api
        self.norm = norm
        self.shape = shape
        self.k = len(shape)
        self.N = math.prod(shape)  # 0 is allowed (as in torch): nothing to launch
        self.x_dtype = int(xd)
        self.w_dtype = int(xd if wt is None else DTYPES[wt])
        self.w_torch_dtype = x_dtype if wt is None else wt
        self.y_torch_dtype = x_dtype if out_dtype is None else out_dtype
        self.y_dtype = int(DTYPES[self.y_torch_dtype])
        self.r_torch_dtype = r_dtype
        self.r_dtype = int(DTYPES[r_dtype]) if r_dtype is not None else self.x_dtype
        self.zero_centered = bool(zero_centered)


_norm_signatures = {}


def _tensor_or_none(api, name, t):
    if t is not None and not isinstance(t, torch.Tensor):
        raise TypeError("%s: %s must be a torch.Tensor or None, got %s" % (api, name, type(t).__name__))


def _norm_shape(api, normalized_shape):
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    try:
        return tuple(int(d) for d in normalized_shape)
    except TypeError:
        raise TypeError("%s: normalized_shape must be an int or a sequence of ints, got %s"
                        % (api, type(normalized_shape).__name__)) from None


def check_norm(api, norm, x, residual, normalized_shape, weight, bias, zero_centered, out_dtype, cpu_hint=""):
    """Validates one call of a norm variant on real tensors; returns
    (signature, device index). Errors name `api` (the user-facing function)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError("%s: x must be a torch.Tensor, got %s" % (api, type(x).__name__))
    if not x.is_cuda:
        raise TypeError("%s: x must be a CUDA tensor, got one on %s (lntune runs on NVIDIA GPUs only%s)"
                        % (api, x.device, cpu_hint))
    if residual is not None and isinstance(residual, torch.Tensor) and not residual.is_cuda:
        raise TypeError("%s: residual must be a CUDA tensor, got one on %s" % (api, residual.device))
    for name, t in (("residual", residual), ("weight", weight), ("bias", bias)):
        _tensor_or_none(api, name, t)
    shape = _norm_shape(api, normalized_shape)
    key = (api, norm, x.dtype, None if residual is None else residual.dtype, None if weight is None else weight.dtype,
           None if bias is None else bias.dtype, out_dtype, shape, bool(zero_centered))
    try:
        sig = _norm_signatures.get(key)
    except TypeError:  # out_dtype unhashable: the signature says what is wrong with it
        key, sig = None, None
    if sig is None:
        sig = _NormSignature(api, norm, x.dtype, None if residual is None else residual.dtype,
                             None if weight is None else weight.dtype, None if bias is None else bias.dtype,
                             out_dtype, shape, zero_centered, weight is not None)
        if key is not None and len(_norm_signatures) < 4096:
            _norm_signatures[key] = sig
    xs = x.shape
    if len(xs) < sig.k or tuple(xs[len(xs) - sig.k:]) != sig.shape:
        raise ValueError("%s: normalized_shape %s must be the last dimensions of x, whose shape is %s"
                         % (api, list(sig.shape), list(xs)))
    dev = x.get_device()
    if residual is not None:
        if not residual.is_cuda or residual.get_device() != dev:
            raise TypeError("%s: residual is on %s but x is on %s" % (api, residual.device, x.device))
        if residual.shape != xs:
            raise ValueError("%s: residual must have x's shape %s, got %s" % (api, list(xs), list(residual.shape)))
    for name, p in (("weight", weight), ("bias", bias)):
        if p is None:
            continue
        if not p.is_cuda or p.get_device() != dev:
            raise TypeError("%s: %s is on %s but x is on %s" % (api, name, p.device, x.device))
        if tuple(p.shape) != sig.shape:
            raise ValueError("%s: %s must have shape %s (normalized_shape), got %s"
                             % (api, name, list(sig.shape), list(p.shape)))
    return sig, dev


def _check_norm_fake(api, norm, x, residual, normalized_shape, weight, bias, zero_centered, out_dtype):
    """The same checks on fake/meta tensors (sizes may be symbolic); returns
    the signature's output dtypes (y, residual_out) and k."""
    if x.device.type != "cuda":
        raise TypeError("%s: x must be a CUDA tensor, got one on %s" % (api, x.device))
    k = len(normalized_shape)
    sig = _NormSignature(api, norm, x.dtype, None if residual is None else residual.dtype,
                         None if weight is None else weight.dtype, None if bias is None else bias.dtype, out_dtype,
                         (0,) * k, zero_centered, weight is not None)
    if x.dim() < k:
        raise ValueError("%s: normalized_shape %s must be the last dimensions of x, whose shape is %s"
                         % (api, list(normalized_shape), list(x.shape)))
    _same_sizes(x.shape[x.dim() - k:], normalized_shape, lambda: "%s: normalized_shape %s must be the last "
                "dimensions of x, whose shape is %s" % (api, list(normalized_shape), list(x.shape)))
    for name, t in (("residual", residual), ("weight", weight), ("bias", bias)):
        if t is not None and t.device != x.device:
            raise TypeError("%s: %s is on %s but x is on %s" % (api, name, t.device, x.device))
    if residual is not None:
        _same_sizes(residual.shape, x.shape, lambda: "%s: residual must have x's shape %s, got %s"
                    % (api, list(x.shape), list(residual.shape)))
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None:
            _same_sizes(p.shape, normalized_shape, lambda: "%s: %s must have shape %s (normalized_shape), got %s"
                        % (api, name, list(normalized_shape), list(p.shape)))
    return sig, k


def _same_sizes(a, b, message):
    """ValueError(message()) unless sizes a and b are equal; with symbolic
    sizes, a torch._check (a guard or a runtime assertion under tracing)."""
    a, b = list(a), list(b)
    if all(type(d) is int for d in a + b):
        if a != b:
            raise ValueError(message())
    else:
        torch._check(a == b, message)


def _norm_forward(sig, dev, x, residual, weight, bias, eps):
    """lntune_norm_forward over x's rows: (y, residual_out or None, mean or
    None, rstd), y and residual_out contiguous, mean/rstd float32 of x's
    leading shape (mean only for LayerNorm)."""
    N = sig.N
    lead = x.shape[: x.dim() - sig.k]
    M = x.numel() // N if N else math.prod(lead)
    dev_ = x.device
    y = _empty(x.shape, dtype=sig.y_torch_dtype, device=dev_)
    z = _empty(x.shape, dtype=sig.r_torch_dtype, device=dev_) if residual is not None else None
    mean = _empty(lead, dtype=_f32, device=dev_) if sig.norm == _LAYER else None
    rstd = _empty(lead, dtype=_f32, device=dev_)
    if N == 0:
        rstd.fill_(math.nan)  # the statistics of no elements, as torch's
        if mean is not None:
            mean.fill_(math.nan)
    if M == 0 or N == 0:
        return y, z, mean, rstd
    weight = _dense(weight)
    bias = _dense(bias)
    x2, xs = _rows(x, M, N)
    rp = zp = None
    rs = 0
    if residual is not None:
        r2, rs = _rows(residual, M, N)
        rp, zp = r2.data_ptr(), z.data_ptr()
    args = _NormFwdArgs(x2.data_ptr(), None if weight is None else weight.data_ptr(),
                        None if bias is None else bias.data_ptr(), y.data_ptr(),
                        None if mean is None else mean.data_ptr(), rstd.data_ptr(), M, N, xs, N, sig.x_dtype,
                        sig.w_dtype, eps, _stream(dev), sig.norm, 1 if sig.zero_centered else 0, rp, zp, rs, N,
                        sig.r_dtype, sig.y_dtype)
    _call(_norm_functions()[0], dev, _byref(args))
    return y, z, mean, rstd


# (device, norm, M, N, strides, dtypes, options, weight?, dW?, dB?, 16-byte alignment bits, set_tuned
# generation) -> workspace bytes of lntune_norm_backward.
_norm_ws_sizes = {}


def _norm_backward(api, norm, dev, dy, dz, saved, mean, rstd, shape, weight, b_dtype, zero_centered, dx_dtype,
                   want_dw, want_db, residual, want_dres=False):
    """lntune_norm_backward: (dx in dx_dtype, dresidual or None, dweight or
    None, dbias or None).

    saved is the forward's x (no residual) or its residual_out (z); dz, the
    upstream gradient of z, is added into dx (with a residual only).
    want_dres (with a residual only): also write the gradient in saved's
    dtype (the residual's) from the same kernel, as dresidual."""
    if dy.dtype not in DTYPES:
        raise TypeError("%s backward: dy must be %s, got %s" % (api, _DTYPE_NAMES, dy.dtype))
    if dy.shape != saved.shape:
        raise ValueError("%s backward: dy has shape %s, the saved input %s" % (api, list(dy.shape),
                                                                                list(saved.shape)))
    if dx_dtype not in DTYPES:
        raise TypeError("%s backward: dx_dtype must be %s, got %s" % (api, _DTYPE_NAMES, dx_dtype))
    k = len(shape)
    N = math.prod(shape)
    lead = saved.shape[: saved.dim() - k]
    M = math.prod(lead)
    for name, s in (("mean", mean), ("rstd", rstd)):
        if s is not None and (s.dtype != _f32 or s.numel() != M):
            raise ValueError("%s backward: %s must be float32 with %d elements (one per row), got %s with %d"
                             % (api, name, M, s.dtype, s.numel()))
    # The C ABI takes a weight in dx's dtype or float32: any other is read as
    # float32 and dW rounded back to the weight's dtype.
    w_torch = weight.dtype if weight is not None else b_dtype if b_dtype is not None else dx_dtype
    w_run = w_torch if w_torch in (dx_dtype, _f32) else _f32
    dx = _empty(saved.shape, dtype=dx_dtype, device=saved.device)
    dres = _empty(saved.shape, dtype=saved.dtype, device=saved.device) if residual and want_dres else None
    dw = _empty((N,), dtype=w_run, device=saved.device) if want_dw else None
    db = _empty((N,), dtype=w_run, device=saved.device) if want_db else None
    if M > 0 and N > 0:
        if weight is not None:
            weight = _dense(weight if w_run == w_torch else weight.to(w_run))
        x2, xs = _rows(saved, M, N)
        dy2, dys = _rows(dy, M, N)
        dzp, dzs = None, 0
        if dz is not None:
            if dz.shape != saved.shape:
                raise ValueError("%s backward: dresidual_out has shape %s, residual_out %s"
                                 % (api, list(dz.shape), list(saved.shape)))
            if dz.dtype != saved.dtype:
                dz = dz.to(saved.dtype)
            dz2, dzs = _rows(dz, M, N)
            dzp = dz2.data_ptr()
        mean_p = None if mean is None else _dense(mean).data_ptr()
        rstd_c = _dense(rstd)
        wp = None if weight is None else weight.data_ptr()
        xdt = int(DTYPES[dx_dtype])
        wdt = int(DTYPES[w_run])
        sdt = int(DTYPES[saved.dtype])
        dyp, xp, dxp = dy2.data_ptr(), x2.data_ptr(), dx.data_ptr()
        drp = None if dres is None else dres.data_ptr()
        args = _NormBwdArgs(dyp, xp, wp, mean_p, rstd_c.data_ptr(), dxp,
                            None if dw is None else dw.data_ptr(), None if db is None else db.data_ptr(),
                            M, N, dys, xs, N, xdt, wdt, None, 0, _stream(dev), norm, 1 if zero_centered else 0,
                            1 if residual else 0, dzp, dzs, sdt if residual else xdt, int(DTYPES[dy.dtype]),
                            drp, 0 if dres is None else N)
        _, bwd, wss = _norm_functions()
        ws = None
        if want_dw or want_db:
            key = (dev, norm, M, N, dys, xs, dzs, xdt, wdt, sdt, int(DTYPES[dy.dtype]), bool(zero_centered),
                   bool(residual), dzp is None, wp is None, drp is None, want_dw, want_db,
                   (dyp | xp | dxp | (wp or 0) | (dzp or 0) | (drp or 0)) & 15, _ffi.generation)
            ws = _attach_workspace(_norm_ws_sizes, key, wss, dev, args, saved.device)
        _call(bwd, dev, _byref(args))
        del ws  # back to the caching allocator after the launch: reuse is ordered on this stream
    else:
        for g in (dw, db):
            if g is not None:
                g.zero_()  # dW, dB of no rows are zero
    if dw is not None:
        dw = dw.view(shape) if w_run == w_torch else dw.view(shape).to(w_torch)
    if db is not None:
        db = db.view(shape) if w_run == w_torch else db.view(shape).to(w_torch)
    return dx, dres, dw, db


def fused_dx_dtype(x_dtype, residual_dtype, need_x=True, need_residual=True):
    """The dx_dtype the fused backward is asked for: x's dtype when x's
    gradient is wanted, else the residual's (then no second output is
    written). The op adds dresidual in the residual's dtype when that
    differs from dx_dtype."""
    return x_dtype if need_x or not need_residual else residual_dtype


def _empty_grad(x, dtype):
    return x.new_empty((0,), dtype=dtype)


# ---- the ops' implementations

_API_RMS = "lntune.torch.rms_norm"
_API_ADD_LN = "lntune.torch.fused_add_layer_norm"
_API_ADD_RMS = "lntune.torch.fused_add_rms_norm"
_NO_CPU_RMS = "; use torch.nn.functional.rms_norm on the CPU"


def _rms_norm_fwd_cuda(x, normalized_shape, weight, eps, zero_centered_weight, out_dtype):
    eps = check_eps(_API_RMS, eps)
    sig, dev = check_norm(_API_RMS, _RMS, x, None, tuple(normalized_shape), weight, None, zero_centered_weight,
                          out_dtype, _NO_CPU_RMS)
    y, _z, _mean, rstd = _norm_forward(sig, dev, x, None, weight, None, eps)
    return y, rstd


def _rms_norm_fwd_fake(x, normalized_shape, weight, eps, zero_centered_weight, out_dtype):
    check_eps(_API_RMS, eps)
    sig, k = _check_norm_fake(_API_RMS, _RMS, x, None, normalized_shape, weight, None, zero_centered_weight,
                              out_dtype)
    return x.new_empty(x.shape, dtype=sig.y_torch_dtype), x.new_empty(x.shape[: x.dim() - k], dtype=_f32)


def _rms_norm_bwd_cuda(dy, x, rstd, normalized_shape, weight, zero_centered_weight, output_mask):
    sig, dev = check_norm(_API_RMS, _RMS, x, None, tuple(normalized_shape), weight, None, zero_centered_weight,
                          None)
    want_dw = bool(output_mask[1]) and weight is not None
    dx, _, dw, _ = _norm_backward(_API_RMS, _RMS, dev, dy, None, x, None, rstd, sig.shape, weight, None,
                               zero_centered_weight, x.dtype, want_dw, False, False)
    return dx, dw if dw is not None else _empty_grad(x, sig.w_torch_dtype)


def _rms_norm_bwd_fake(dy, x, rstd, normalized_shape, weight, zero_centered_weight, output_mask):
    sig, _k = _check_norm_fake(_API_RMS, _RMS, x, None, normalized_shape, weight, None, zero_centered_weight, None)
    dw = x.new_empty(tuple(normalized_shape), dtype=sig.w_torch_dtype) if output_mask[1] and weight is not None \
        else _empty_grad(x, sig.w_torch_dtype)
    return x.new_empty(x.shape), dw


def _add_layer_norm_fwd_cuda(x, residual, normalized_shape, weight, bias, eps, zero_centered_weight, out_dtype):
    eps = check_eps(_API_ADD_LN, eps)
    if not isinstance(residual, torch.Tensor):
        raise TypeError("%s: residual must be a torch.Tensor, got %s" % (_API_ADD_LN, type(residual).__name__))
    sig, dev = check_norm(_API_ADD_LN, _LAYER, x, residual, tuple(normalized_shape), weight, bias,
                          zero_centered_weight, out_dtype)
    y, z, mean, rstd = _norm_forward(sig, dev, x, residual, weight, bias, eps)
    return y, z, mean, rstd


def _add_layer_norm_fwd_fake(x, residual, normalized_shape, weight, bias, eps, zero_centered_weight, out_dtype):
    check_eps(_API_ADD_LN, eps)
    sig, k = _check_norm_fake(_API_ADD_LN, _LAYER, x, residual, normalized_shape, weight, bias,
                              zero_centered_weight, out_dtype)
    lead = x.shape[: x.dim() - k]
    return (x.new_empty(x.shape, dtype=sig.y_torch_dtype), x.new_empty(x.shape, dtype=residual.dtype),
            x.new_empty(lead, dtype=_f32), x.new_empty(lead, dtype=_f32))


def _fused_bwd_check(api, norm, residual_out, normalized_shape):
    """The backward's saved z: a CUDA tensor in a dtype the C ABI reads, whose
    last dimensions are normalized_shape."""
    if not isinstance(residual_out, torch.Tensor) or not residual_out.is_cuda:
        raise TypeError("%s backward: residual_out must be a CUDA tensor" % api)
    if residual_out.dtype not in DTYPES:
        raise TypeError("%s backward: residual_out must be %s, got %s" % (api, _DTYPE_NAMES, residual_out.dtype))
    return check_norm(api + " backward", norm, residual_out, None, tuple(normalized_shape), None, None, False, None)


def _weight_checks(api, sig, weight, bias, dev, zero_centered_weight):
    for name, p in (("weight", weight), ("bias", bias)):
        if p is None:
            continue
        if not p.is_cuda or p.get_device() != dev:
            raise TypeError("%s backward: %s is on %s, the saved input on cuda:%d" % (api, name, p.device, dev))
        if tuple(p.shape) != sig.shape:
            raise ValueError("%s backward: %s must have shape %s (normalized_shape), got %s"
                             % (api, name, list(sig.shape), list(p.shape)))
        if p.dtype not in DTYPES:
            raise TypeError("%s backward: %s must be %s, got %s" % (api, name, _DTYPE_NAMES, p.dtype))
    if weight is not None and bias is not None and weight.dtype != bias.dtype:
        raise TypeError("%s backward: weight (%s) and bias (%s) must have the same dtype"
                        % (api, weight.dtype, bias.dtype))
    if zero_centered_weight and weight is None:
        raise ValueError("%s backward: zero_centered_weight=True needs a weight" % api)


def _add_layer_norm_bwd_cuda(dy, dresidual_out, residual_out, mean, rstd, normalized_shape, weight, bias,
                             zero_centered_weight, dx_dtype, output_mask):
    sig, dev = _fused_bwd_check(_API_ADD_LN, _LAYER, residual_out, normalized_shape)
    _weight_checks(_API_ADD_LN, sig, weight, bias, dev, zero_centered_weight)
    want_dw = bool(output_mask[1]) and weight is not None
    want_db = bool(output_mask[2]) and bias is not None
    want_dres = bool(output_mask[0]) and dx_dtype != residual_out.dtype
    dx, dres, dw, db = _norm_backward(_API_ADD_LN, _LAYER, dev, dy, dresidual_out, residual_out, mean, rstd,
                                      sig.shape, weight, None if bias is None else bias.dtype, zero_centered_weight,
                                      dx_dtype, want_dw, want_db, True, want_dres)
    wt = weight.dtype if weight is not None else bias.dtype if bias is not None else dx_dtype
    return (dx, dres if dres is not None else _empty_grad(dx, residual_out.dtype),
            dw if dw is not None else _empty_grad(dx, wt), db if db is not None else _empty_grad(dx, wt))


def _fused_bwd_fake(api, norm, dy, residual_out, normalized_shape, weight, bias, dx_dtype, output_mask):
    if residual_out.device.type != "cuda":
        raise TypeError("%s backward: residual_out must be a CUDA tensor, got one on %s" % (api, residual_out.device))
    if dx_dtype not in DTYPES:
        raise TypeError("%s backward: dx_dtype must be %s, got %s" % (api, _DTYPE_NAMES, dx_dtype))
    wt = weight.dtype if weight is not None else bias.dtype if bias is not None else dx_dtype
    ns = tuple(normalized_shape)
    dw = residual_out.new_empty(ns, dtype=wt) if output_mask[1] and weight is not None \
        else residual_out.new_empty((0,), dtype=wt)
    dres = residual_out.new_empty(residual_out.shape) if output_mask[0] and dx_dtype != residual_out.dtype \
        else residual_out.new_empty((0,))
    out = [residual_out.new_empty(residual_out.shape, dtype=dx_dtype), dres, dw]
    if norm == _LAYER:
        out.append(residual_out.new_empty(ns, dtype=wt) if output_mask[2] and bias is not None
                   else residual_out.new_empty((0,), dtype=wt))
    return tuple(out)


def _add_layer_norm_bwd_fake(dy, dresidual_out, residual_out, mean, rstd, normalized_shape, weight, bias,
                             zero_centered_weight, dx_dtype, output_mask):
    return _fused_bwd_fake(_API_ADD_LN, _LAYER, dy, residual_out, normalized_shape, weight, bias, dx_dtype,
                           output_mask)


def _add_rms_norm_fwd_cuda(x, residual, normalized_shape, weight, eps, zero_centered_weight, out_dtype):
    eps = check_eps(_API_ADD_RMS, eps)
    if not isinstance(residual, torch.Tensor):
        raise TypeError("%s: residual must be a torch.Tensor, got %s" % (_API_ADD_RMS, type(residual).__name__))
    sig, dev = check_norm(_API_ADD_RMS, _RMS, x, residual, tuple(normalized_shape), weight, None,
                          zero_centered_weight, out_dtype, _NO_CPU_RMS)
    y, z, _mean, rstd = _norm_forward(sig, dev, x, residual, weight, None, eps)
    return y, z, rstd


def _add_rms_norm_fwd_fake(x, residual, normalized_shape, weight, eps, zero_centered_weight, out_dtype):
    check_eps(_API_ADD_RMS, eps)
    sig, k = _check_norm_fake(_API_ADD_RMS, _RMS, x, residual, normalized_shape, weight, None,
                              zero_centered_weight, out_dtype)
    return (x.new_empty(x.shape, dtype=sig.y_torch_dtype), x.new_empty(x.shape, dtype=residual.dtype),
            x.new_empty(x.shape[: x.dim() - k], dtype=_f32))


def _add_rms_norm_bwd_cuda(dy, dresidual_out, residual_out, rstd, normalized_shape, weight, zero_centered_weight,
                           dx_dtype, output_mask):
    sig, dev = _fused_bwd_check(_API_ADD_RMS, _RMS, residual_out, normalized_shape)
    _weight_checks(_API_ADD_RMS, sig, weight, None, dev, zero_centered_weight)
    want_dw = bool(output_mask[1]) and weight is not None
    want_dres = bool(output_mask[0]) and dx_dtype != residual_out.dtype
    dx, dres, dw, _ = _norm_backward(_API_ADD_RMS, _RMS, dev, dy, dresidual_out, residual_out, None, rstd,
                                     sig.shape, weight, None, zero_centered_weight, dx_dtype, want_dw, False, True,
                                     want_dres)
    wt = weight.dtype if weight is not None else dx_dtype
    return (dx, dres if dres is not None else _empty_grad(dx, residual_out.dtype),
            dw if dw is not None else _empty_grad(dx, wt))


def _add_rms_norm_bwd_fake(dy, dresidual_out, residual_out, rstd, normalized_shape, weight, zero_centered_weight,
                           dx_dtype, output_mask):
    return _fused_bwd_fake(_API_ADD_RMS, _RMS, dy, residual_out, normalized_shape, weight, None, dx_dtype,
                           output_mask)


# ---- autograd formulas


def _rms_norm_setup_context(ctx, inputs, output):
    x, normalized_shape, weight, _eps, zero_centered_weight, _out_dtype = inputs
    _y, rstd = output
    ctx.save_for_backward(x, weight, rstd)
    ctx.normalized_shape = normalized_shape
    ctx.zero_centered_weight = zero_centered_weight
    ctx.mark_non_differentiable(rstd)


def _rms_norm_backward(ctx, dy, _drstd):
    x, weight, rstd = ctx.saved_tensors
    need = ctx.needs_input_grad  # x, normalized_shape, weight, eps, zero_centered_weight, out_dtype
    mask = [bool(need[0]), bool(need[2]) and weight is not None]
    dx, dw = torch.ops.lntune.rms_norm_bwd(dy, x, rstd, ctx.normalized_shape, weight, ctx.zero_centered_weight,
                                           mask)
    return (dx if mask[0] else None), None, (dw if mask[1] else None), None, None, None


def _fused_setup(ctx, x, residual, normalized_shape, weight, bias, zero_centered_weight, z, mean, rstd):
    ctx.save_for_backward(z, weight, bias, mean, rstd)
    ctx.normalized_shape = normalized_shape
    ctx.zero_centered_weight = zero_centered_weight
    ctx.x_dtype = x.dtype
    ctx.residual_dtype = residual.dtype
    # An unused output's gradient comes as None, not as zeros to be read.
    ctx.set_materialize_grads(False)


def _fused_dx_dtype(ctx):
    need = ctx.needs_input_grad
    return fused_dx_dtype(ctx.x_dtype, ctx.residual_dtype, bool(need[0]), bool(need[1]))


def _fused_grads(ctx, dx, dres):
    """The gradients of x and residual from the op's dx (in dx_dtype) and
    dresidual (the residual's dtype; empty when dx already has it): no casts."""
    need = ctx.needs_input_grad
    gx = dx if need[0] else None
    gr = (dx if dx.dtype == ctx.residual_dtype else dres) if need[1] else None
    return gx, gr


def _fused_dy(dy, dres, z):
    if dy is None:
        if dres is None:
            return None
        # Only z was used downstream: y's gradient is zero.
        return torch.zeros_like(z)
    return dy


def _add_layer_norm_setup_context(ctx, inputs, output):
    x, residual, normalized_shape, weight, bias, _eps, zero_centered_weight, _out_dtype = inputs
    _y, z, mean, rstd = output
    _fused_setup(ctx, x, residual, normalized_shape, weight, bias, zero_centered_weight, z, mean, rstd)
    ctx.mark_non_differentiable(mean, rstd)


def _add_layer_norm_backward(ctx, dy, dres, _dmean, _drstd):
    z, weight, bias, mean, rstd = ctx.saved_tensors
    need = ctx.needs_input_grad  # x, residual, normalized_shape, weight, bias, eps, zero_centered, out_dtype
    dy = _fused_dy(dy, dres, z)
    if dy is None:
        return (None,) * 8
    mask = [bool(need[0] or need[1]), bool(need[3]) and weight is not None, bool(need[4]) and bias is not None]
    dx, dr, dw, db = torch.ops.lntune.add_layer_norm_bwd(dy, dres, z, mean, rstd, ctx.normalized_shape, weight,
                                                         bias, ctx.zero_centered_weight, _fused_dx_dtype(ctx), mask)
    gx, gr = _fused_grads(ctx, dx, dr)
    return gx, gr, None, (dw if mask[1] else None), (db if mask[2] else None), None, None, None


def _add_rms_norm_setup_context(ctx, inputs, output):
    x, residual, normalized_shape, weight, _eps, zero_centered_weight, _out_dtype = inputs
    _y, z, rstd = output
    _fused_setup(ctx, x, residual, normalized_shape, weight, None, zero_centered_weight, z, None, rstd)
    ctx.mark_non_differentiable(rstd)


def _add_rms_norm_backward(ctx, dy, dres, _drstd):
    z, weight, _bias, _mean, rstd = ctx.saved_tensors
    need = ctx.needs_input_grad  # x, residual, normalized_shape, weight, eps, zero_centered, out_dtype
    dy = _fused_dy(dy, dres, z)
    if dy is None:
        return (None,) * 7
    mask = [bool(need[0] or need[1]), bool(need[3]) and weight is not None]
    dx, dr, dw = torch.ops.lntune.add_rms_norm_bwd(dy, dres, z, rstd, ctx.normalized_shape, weight,
                                                   ctx.zero_centered_weight, _fused_dx_dtype(ctx), mask)
    gx, gr = _fused_grads(ctx, dx, dr)
    return gx, gr, None, (dw if mask[1] else None), None, None, None


def _no_double_backward(api):
    def setup_context(ctx, inputs, output):
        pass

    def backward(ctx, *grads):
        raise RuntimeError("%s: double backward (differentiating the gradient, e.g. backward with "
                           "create_graph=True and then a gradient of that gradient) is not supported" % api)

    return backward, setup_context


_SCHEMAS.update({
    "rms_norm_fwd": "rms_norm_fwd(Tensor x, SymInt[] normalized_shape, Tensor? weight, float eps, "
                    "bool zero_centered_weight, ScalarType? out_dtype) -> (Tensor, Tensor)",
    "rms_norm_bwd": "rms_norm_bwd(Tensor dy, Tensor x, Tensor rstd, SymInt[] normalized_shape, Tensor? weight, "
                    "bool zero_centered_weight, bool[2] output_mask) -> (Tensor, Tensor)",
    "add_layer_norm_fwd": "add_layer_norm_fwd(Tensor x, Tensor residual, SymInt[] normalized_shape, "
                          "Tensor? weight, Tensor? bias, float eps, bool zero_centered_weight, "
                          "ScalarType? out_dtype) -> (Tensor, Tensor, Tensor, Tensor)",
    "add_layer_norm_bwd": "add_layer_norm_bwd(Tensor dy, Tensor? dresidual_out, Tensor residual_out, Tensor mean, "
                          "Tensor rstd, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
                          "bool zero_centered_weight, ScalarType dx_dtype, bool[3] output_mask) "
                          "-> (Tensor, Tensor, Tensor, Tensor)",
    "add_rms_norm_fwd": "add_rms_norm_fwd(Tensor x, Tensor residual, SymInt[] normalized_shape, Tensor? weight, "
                        "float eps, bool zero_centered_weight, ScalarType? out_dtype) -> (Tensor, Tensor, Tensor)",
    "add_rms_norm_bwd": "add_rms_norm_bwd(Tensor dy, Tensor? dresidual_out, Tensor residual_out, Tensor rstd, "
                        "SymInt[] normalized_shape, Tensor? weight, bool zero_centered_weight, "
                        "ScalarType dx_dtype, bool[2] output_mask) -> (Tensor, Tensor, Tensor)",
})

# name -> (CUDA implementation, fake implementation, autograd backward, setup_context), for _register().
NORM_OPS = {
    "rms_norm_fwd": (_rms_norm_fwd_cuda, _rms_norm_fwd_fake, _rms_norm_backward, _rms_norm_setup_context),
    "rms_norm_bwd": (_rms_norm_bwd_cuda, _rms_norm_bwd_fake) + _no_double_backward(_API_RMS),
    "add_layer_norm_fwd": (_add_layer_norm_fwd_cuda, _add_layer_norm_fwd_fake, _add_layer_norm_backward,
                           _add_layer_norm_setup_context),
    "add_layer_norm_bwd": (_add_layer_norm_bwd_cuda, _add_layer_norm_bwd_fake) + _no_double_backward(_API_ADD_LN),
    "add_rms_norm_fwd": (_add_rms_norm_fwd_cuda, _add_rms_norm_fwd_fake, _add_rms_norm_backward,
                         _add_rms_norm_setup_context),
    "add_rms_norm_bwd": (_add_rms_norm_bwd_cuda, _add_rms_norm_bwd_fake) + _no_double_backward(_API_ADD_RMS),
}


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
    for name, impls in NORM_OPS.items():  # RMSNorm and the fused residual forms
        _register(lib, name, *impls)
    return lib


_LIBRARY = _define_ops()  # kept alive: the registrations live as long as this object
