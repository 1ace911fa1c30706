"""ctypes layer over lntune's C ABI (include/lntune/lntune.h).

Nothing here imports torch or needs a GPU: the library loads its CUDA driver
lazily, so on a machine without one every launch returns
LNTUNE_ERROR_NO_DRIVER (or NO_DEVICE) with a message, and argument errors are
reported before the driver is touched.

The structs mirror the C header field for field (same order and types); the
layout is pinned by tests/python/test_import.py.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import enum
import os
import threading
from pathlib import Path
from typing import List, Optional

__all__ = [
    "DType",
    "Status",
    "ForwardArgs",
    "BackwardArgs",
    "Norm",
    "NormForwardArgs",
    "NormBackwardArgs",
    "LntuneError",
    "LibraryNotFoundError",
    "library",
    "library_path",
    "check",
    "last_error",
    "version",
    "forward",
    "backward",
    "backward_workspace_size",
    "norm_forward",
    "norm_backward",
    "norm_backward_workspace_size",
    "has_set_tuned",
    "set_tuned",
]


class DType(enum.IntEnum):
    """lntune_dtype."""

    FP32 = 0
    FP16 = 1
    BF16 = 2


class Norm(enum.IntEnum):
    """lntune_norm."""

    LAYER_NORM = 0
    RMS_NORM = 1


class Status(enum.IntEnum):
    """lntune_status."""

    OK = 0
    ERROR_INVALID_ARGUMENT = 1  # shapes, strides, null pointers, dtypes, eps, alignment
    ERROR_NO_DRIVER = 2  # libcuda.so.1 could not be loaded
    ERROR_NO_DEVICE = 3  # no CUDA device
    ERROR_COMPILE = 4  # NVRTC failed (the message holds the log)
    ERROR_CUDA = 5  # a driver call failed
    ERROR_CACHE = 6  # the tuning cache could not be read
    ERROR_INTERNAL = 7

    @property
    def c_name(self) -> str:
        """The name in the C header, e.g. "LNTUNE_ERROR_NO_DRIVER"."""
        return "LNTUNE_" + self.name


class _RawForwardArgs(ctypes.Structure):
    """lntune_forward_args, unchecked (the hot path of lntune.torch fills it
    with values that fit by construction)."""

    _fields_ = [
        ("x", ctypes.c_void_p),  # const void*  [M, x_row_stride] x_dtype
        ("weight", ctypes.c_void_p),  # const void*  [N] w_dtype, or NULL
        ("bias", ctypes.c_void_p),  # const void*  [N] w_dtype, or NULL
        ("y", ctypes.c_void_p),  # void*        [M, y_row_stride] x_dtype
        ("mean", ctypes.c_void_p),  # float*       [M], or NULL
        ("rstd", ctypes.c_void_p),  # float*       [M], or NULL
        ("M", ctypes.c_int64),
        ("N", ctypes.c_int64),
        ("x_row_stride", ctypes.c_int64),  # elements; 0 = N
        ("y_row_stride", ctypes.c_int64),
        ("x_dtype", ctypes.c_int),  # lntune_dtype
        ("w_dtype", ctypes.c_int),  # lntune_dtype: x_dtype or FP32
        ("eps", ctypes.c_float),  # finite (may be <= 0, as in torch)
        ("stream", ctypes.c_void_p),  # CUstream (NULL = legacy default stream)
    ]


class _RawBackwardArgs(ctypes.Structure):
    """lntune_backward_args, unchecked."""

    _fields_ = [
        ("dy", ctypes.c_void_p),  # const void*  [M, dy_row_stride] x_dtype
        ("x", ctypes.c_void_p),  # const void*  [M, x_row_stride] x_dtype
        ("weight", ctypes.c_void_p),  # const void*  [N] w_dtype, or NULL
        ("mean", ctypes.c_void_p),  # const float* [M] from the forward
        ("rstd", ctypes.c_void_p),  # const float* [M] from the forward
        ("dx", ctypes.c_void_p),  # void*        [M, dx_row_stride] x_dtype
        ("dweight", ctypes.c_void_p),  # void*        [N] w_dtype, or NULL
        ("dbias", ctypes.c_void_p),  # void*        [N] w_dtype, or NULL
        ("M", ctypes.c_int64),
        ("N", ctypes.c_int64),
        ("dy_row_stride", ctypes.c_int64),
        ("x_row_stride", ctypes.c_int64),
        ("dx_row_stride", ctypes.c_int64),
        ("x_dtype", ctypes.c_int),
        ("w_dtype", ctypes.c_int),
        ("workspace", ctypes.c_void_p),  # 16-byte aligned, or NULL (lntune manages one)
        ("workspace_bytes", ctypes.c_size_t),
        ("stream", ctypes.c_void_p),
    ]


class _RawNormForwardArgs(ctypes.Structure):
    """lntune_norm_forward_args, unchecked: lntune_forward_args' fields, then
    the variant's (RMSNorm, fused residual add, zero-centred gamma, y dtype)."""

    _fields_ = _RawForwardArgs._fields_ + [
        ("norm", ctypes.c_int),  # lntune_norm
        ("zero_centered_weight", ctypes.c_int),  # nonzero: y = xhat * (1 + w) + b
        ("residual", ctypes.c_void_p),  # const void* [M, residual_row_stride] residual_dtype, or NULL
        ("residual_out", ctypes.c_void_p),  # void* z = x + residual, [M, residual_out_row_stride] residual_dtype
        ("residual_row_stride", ctypes.c_int64),
        ("residual_out_row_stride", ctypes.c_int64),
        ("residual_dtype", ctypes.c_int),  # lntune_dtype (read only with a residual)
        ("y_dtype", ctypes.c_int),  # lntune_dtype of y
    ]


class _RawNormBackwardArgs(ctypes.Structure):
    """lntune_norm_backward_args, unchecked."""

    _fields_ = _RawBackwardArgs._fields_ + [
        ("norm", ctypes.c_int),
        ("zero_centered_weight", ctypes.c_int),
        ("residual", ctypes.c_int),  # nonzero: the forward had a residual add (x is then its residual_out)
        ("dresidual_out", ctypes.c_void_p),  # const void* [M, dresidual_out_row_stride] residual_dtype, or NULL
        ("dresidual_out_row_stride", ctypes.c_int64),
        ("residual_dtype", ctypes.c_int),
        ("y_dtype", ctypes.c_int),  # lntune_dtype of dy
        ("dresidual", ctypes.c_void_p),  # void* [M, dresidual_row_stride] residual_dtype, or NULL
        ("dresidual_row_stride", ctypes.c_int64),
    ]


_RANGES = {
    ctypes.c_int64: (-(2**63), 2**63 - 1, "int64_t"),
    ctypes.c_int: (-(2**31), 2**31 - 1, "int"),
    ctypes.c_size_t: (0, 2**64 - 1, "size_t"),
    ctypes.c_void_p: (0, 2**64 - 1, "a pointer"),
}


class _Checked:
    """Range checks for the integer and pointer fields: ctypes silently wraps
    a value that does not fit (M = 2**63 would become -2**63)."""

    __slots__ = ()

    def __init__(self, *args, **kwargs):
        names = [f[0] for f in self._fields_]
        if len(args) > len(names):
            raise TypeError("%s takes at most %d field values, got %d" % (type(self).__name__, len(names), len(args)))
        super().__init__()
        for name, value in list(zip(names, args)) + list(kwargs.items()):
            setattr(self, name, value)

    def __setattr__(self, name, value):
        ctype = self._types.get(name)
        if ctype is None:
            if name not in self._names:
                raise AttributeError("%s has no field %r" % (type(self).__name__, name))
        elif value is not None and (ctype is not ctypes.c_void_p or isinstance(value, int)):
            if not isinstance(value, int):
                raise TypeError("%s.%s must be an int, got %s" % (type(self).__name__, name, type(value).__name__))
            lo, hi, what = _RANGES[ctype]
            if not lo <= value <= hi:
                raise OverflowError("%s.%s = %d does not fit in %s (%d .. %d)"
                                    % (type(self).__name__, name, value, what, lo, hi))
        super().__setattr__(name, value)


def _field_types(cls):
    cls._types = {n: t for n, t in cls._fields_ if t in _RANGES}
    cls._names = frozenset(n for n, _ in cls._fields_)
    return cls


@_field_types
class ForwardArgs(_Checked, _RawForwardArgs):
    """lntune_forward_args. Integer and pointer fields are range-checked
    (OverflowError rather than a silent wrap-around)."""

    __slots__ = ()


@_field_types
class BackwardArgs(_Checked, _RawBackwardArgs):
    """lntune_backward_args, range-checked like ForwardArgs."""

    __slots__ = ()


@_field_types
class NormForwardArgs(_Checked, _RawNormForwardArgs):
    """lntune_norm_forward_args, range-checked like ForwardArgs."""

    __slots__ = ()


@_field_types
class NormBackwardArgs(_Checked, _RawNormBackwardArgs):
    """lntune_norm_backward_args, range-checked like ForwardArgs."""

    __slots__ = ()


class LntuneError(RuntimeError):
    """A call into liblntune failed.

    Attributes: ``status`` (a Status, or None when no call was made: the
    library could not be loaded), ``status_name`` (its C name, e.g.
    "LNTUNE_ERROR_NO_DRIVER") and ``message`` (lntune_last_error()'s text).
    """

    def __init__(self, status, message: str, function: str = ""):
        if status is None:
            self.status = None
            self.status_name = "library not usable"
        else:
            try:
                self.status = Status(status)
                self.status_name = self.status.c_name
            except ValueError:
                self.status = status
                self.status_name = "unknown lntune_status %d" % status
        self.message = message
        self.function = function
        where = (function + ": ") if function else ""
        super().__init__("%s%s: %s" % (where, self.status_name, message or "(no message)"))


class LibraryNotFoundError(LntuneError, OSError):
    """liblntune.so could not be found or loaded, or the file loaded is not
    liblntune (a symbol is missing). An OSError and an LntuneError."""

    def __init__(self, message: str):
        LntuneError.__init__(self, None, message)
        self.args = (message,)

    def __str__(self):
        return self.message


# ------------------------------------------------------------------ loading

_lock = threading.Lock()
# Bumped by set_tuned(): lntune.torch keys its per-shape memo (the backward's
# workspace size) on it.
generation = 0
_lib: Optional[ctypes.CDLL] = None
_lib_path: Optional[str] = None


def _candidates() -> List[str]:
    """Where the library is looked for, in order."""
    out = []
    env = os.environ.get("LNTUNE_LIBRARY")
    if env:
        out.append(env)
        return out  # an explicit choice: nothing else is tried
    here = Path(__file__).resolve().parent
    # An installed package (pip install .) carries its own copy.
    bundled = here / "lib" / "liblntune.so"
    if bundled.exists():
        out.append(str(bundled))
    # <repo>/python/lntune/_ffi.py -> <repo>/build/lib/liblntune.so
    out.append(str(here.parent.parent / "build" / "lib" / "liblntune.so"))
    found = ctypes.util.find_library("lntune")
    if found:
        out.append(found)
    return out


_REQUIRED = ("lntune_forward", "lntune_backward", "lntune_backward_workspace_size", "lntune_last_error",
             "lntune_version")


def _declare(lib: ctypes.CDLL, path: str) -> None:
    missing = [name for name in _REQUIRED if not hasattr(lib, name)]
    if missing:
        raise LibraryNotFoundError(
            "lntune: %s is not liblntune: it has no symbol %s%s. Point LNTUNE_LIBRARY at build/lib/liblntune.so "
            "(or unset it to use the library installed with the package)."
            % (path, missing[0], "" if len(missing) == 1 else " (nor %s)" % ", ".join(missing[1:])))
    status = ctypes.c_int
    lib.lntune_forward.argtypes = [ctypes.POINTER(_RawForwardArgs)]
    lib.lntune_forward.restype = status
    lib.lntune_backward.argtypes = [ctypes.POINTER(_RawBackwardArgs)]
    lib.lntune_backward.restype = status
    lib.lntune_backward_workspace_size.argtypes = [ctypes.POINTER(_RawBackwardArgs), ctypes.POINTER(ctypes.c_size_t)]
    lib.lntune_backward_workspace_size.restype = status
    lib.lntune_last_error.argtypes = []
    lib.lntune_last_error.restype = ctypes.c_char_p
    lib.lntune_version.argtypes = []
    lib.lntune_version.restype = ctypes.c_char_p
    if hasattr(lib, "lntune_norm_forward"):  # RMSNorm and the fused variants (lntune >= the norm ABI)
        lib.lntune_norm_forward.argtypes = [ctypes.POINTER(_RawNormForwardArgs)]
        lib.lntune_norm_forward.restype = status
        lib.lntune_norm_backward.argtypes = [ctypes.POINTER(_RawNormBackwardArgs)]
        lib.lntune_norm_backward.restype = status
        lib.lntune_norm_backward_workspace_size.argtypes = [ctypes.POINTER(_RawNormBackwardArgs),
                                                            ctypes.POINTER(ctypes.c_size_t)]
        lib.lntune_norm_backward_workspace_size.restype = status
    if hasattr(lib, "lntune_set_tuned"):
        lib.lntune_set_tuned.argtypes = [ctypes.c_int]
        lib.lntune_set_tuned.restype = status


def library() -> ctypes.CDLL:
    """The loaded liblntune (loaded on first use).

    Looks at $LNTUNE_LIBRARY (only), else the copy installed with the package
    (lntune/lib/liblntune.so), else <repo>/build/lib/liblntune.so next to
    this package's source tree, else ctypes.util.find_library("lntune").
    """
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if os.sep in path:
                path = os.path.abspath(path)
                if not os.path.exists(path):
                    tried.append("%s (no such file)" % path)
                    continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
                continue
            _declare(lib, path)  # raises LibraryNotFoundError if it is not liblntune
            _lib_path = path
            _lib = lib
            return lib
        if not tried:
            tried.append('ctypes.util.find_library("lntune") found nothing')
        raise LibraryNotFoundError(
            "lntune: could not load liblntune.so; tried: " + "; ".join(tried)
            + ". Build it (cmake --build build) or set LNTUNE_LIBRARY to its path."
        )


def library_path() -> str:
    """The path the library was loaded from."""
    library()
    return _lib_path  # type: ignore[return-value]


# ------------------------------------------------------------------ calls


def last_error() -> str:
    """This thread's last error message ("" if none)."""
    msg = library().lntune_last_error()
    return msg.decode("utf-8", "replace") if msg else ""


_clear_args = None


def _clear_last_error() -> None:
    """Empties this thread's lntune_last_error() with a call that always
    succeeds (a zero-row workspace query needs no GPU)."""
    global _clear_args
    if _clear_args is None:
        a = _RawBackwardArgs()
        a.N = 1
        _clear_args = (a, ctypes.c_size_t(0))
    library().lntune_backward_workspace_size(ctypes.byref(_clear_args[0]), ctypes.byref(_clear_args[1]))


def check(status: int, function: str = "") -> None:
    """Raise LntuneError (status name + lntune_last_error()) unless status is OK.

    Call it right after the call that returned `status`, on the same thread.
    The message is taken once: check() then empties lntune_last_error(), so
    a later check() of some other, older status never attaches this message
    (it says "(no message)" instead)."""
    if status != Status.OK:
        message = last_error()
        if message:
            _clear_last_error()
        raise LntuneError(status, message, function)


def version() -> str:
    """lntune_version(), e.g. "0.1.0"."""
    return library().lntune_version().decode("ascii")


def forward(args: ForwardArgs) -> None:
    """lntune_forward; raises LntuneError on failure."""
    status = library().lntune_forward(ctypes.byref(args))
    if status:
        check(status, "lntune_forward")


def backward(args: BackwardArgs) -> None:
    """lntune_backward; raises LntuneError on failure."""
    status = library().lntune_backward(ctypes.byref(args))
    if status:
        check(status, "lntune_backward")


def backward_workspace_size(args: BackwardArgs) -> int:
    """lntune_backward_workspace_size: bytes of workspace these args need."""
    n = ctypes.c_size_t(0)
    status = library().lntune_backward_workspace_size(ctypes.byref(args), ctypes.byref(n))
    if status:
        check(status, "lntune_backward_workspace_size")
    return int(n.value)


def _norm_function(name: str):
    lib = library()
    fn = getattr(lib, name, None)
    if fn is None:
        raise NotImplementedError("lntune: this liblntune (%s) has no %s (RMSNorm and the fused variants need a "
                                  "newer library)" % (_lib_path, name))
    return fn


def norm_forward(args: NormForwardArgs) -> None:
    """lntune_norm_forward; raises LntuneError on failure."""
    status = _norm_function("lntune_norm_forward")(ctypes.byref(args))
    if status:
        check(status, "lntune_norm_forward")


def norm_backward(args: NormBackwardArgs) -> None:
    """lntune_norm_backward; raises LntuneError on failure."""
    status = _norm_function("lntune_norm_backward")(ctypes.byref(args))
    if status:
        check(status, "lntune_norm_backward")


def norm_backward_workspace_size(args: NormBackwardArgs) -> int:
    """lntune_norm_backward_workspace_size: bytes of workspace these args need."""
    n = ctypes.c_size_t(0)
    status = _norm_function("lntune_norm_backward_workspace_size")(ctypes.byref(args), ctypes.byref(n))
    if status:
        check(status, "lntune_norm_backward_workspace_size")
    return int(n.value)


def has_set_tuned() -> bool:
    """Whether this liblntune exports lntune_set_tuned."""
    return hasattr(library(), "lntune_set_tuned")


_set_tuned_hooks = []


def on_set_tuned(hook) -> None:
    """Calls hook() on every set_tuned() (caches of plan-dependent facts
    outside this module, e.g. lntune.torch's C++ extension, start afresh)."""
    _set_tuned_hooks.append(hook)


def set_tuned(enabled: bool) -> None:
    """lntune_set_tuned: True = tuned configs from the cache, False = the
    default heuristic only. Raises NotImplementedError on a library without it."""
    lib = library()
    if not hasattr(lib, "lntune_set_tuned"):
        raise NotImplementedError("lntune: this liblntune (%s) has no lntune_set_tuned" % _lib_path)
    global generation
    generation += 1  # configs may change: shape-keyed caches above the C ABI start afresh
    for hook in _set_tuned_hooks:
        hook()
    status = lib.lntune_set_tuned(1 if enabled else 0)
    if status:
        check(status, "lntune_set_tuned")
