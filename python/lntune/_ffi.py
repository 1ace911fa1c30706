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
    "has_set_tuned",
    "set_tuned",
]


class DType(enum.IntEnum):
    """lntune_dtype."""

    FP32 = 0
    FP16 = 1
    BF16 = 2


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


class ForwardArgs(ctypes.Structure):
    """lntune_forward_args."""

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
        ("eps", ctypes.c_float),  # > 0
        ("stream", ctypes.c_void_p),  # CUstream (NULL = legacy default stream)
    ]


class BackwardArgs(ctypes.Structure):
    """lntune_backward_args."""

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


class LibraryNotFoundError(OSError):
    """liblntune.so could not be found or loaded."""


class LntuneError(RuntimeError):
    """A call into liblntune failed.

    Attributes: ``status`` (a Status), ``status_name`` (its C name, e.g.
    "LNTUNE_ERROR_NO_DRIVER") and ``message`` (lntune_last_error()'s text).
    """

    def __init__(self, status: int, message: str, function: str = ""):
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


# ------------------------------------------------------------------ loading

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_lib_path: Optional[str] = None


def _candidates() -> List[str]:
    """Where the library is looked for, in order."""
    out = []
    env = os.environ.get("LNTUNE_LIBRARY")
    if env:
        out.append(env)
        return out  # an explicit choice: nothing else is tried
    # <repo>/python/lntune/_ffi.py -> <repo>/build/lib/liblntune.so
    repo = Path(__file__).resolve().parent.parent.parent
    out.append(str(repo / "build" / "lib" / "liblntune.so"))
    found = ctypes.util.find_library("lntune")
    if found:
        out.append(found)
    return out


def _declare(lib: ctypes.CDLL) -> None:
    status = ctypes.c_int
    lib.lntune_forward.argtypes = [ctypes.POINTER(ForwardArgs)]
    lib.lntune_forward.restype = status
    lib.lntune_backward.argtypes = [ctypes.POINTER(BackwardArgs)]
    lib.lntune_backward.restype = status
    lib.lntune_backward_workspace_size.argtypes = [ctypes.POINTER(BackwardArgs), ctypes.POINTER(ctypes.c_size_t)]
    lib.lntune_backward_workspace_size.restype = status
    lib.lntune_last_error.argtypes = []
    lib.lntune_last_error.restype = ctypes.c_char_p
    lib.lntune_version.argtypes = []
    lib.lntune_version.restype = ctypes.c_char_p
    if hasattr(lib, "lntune_set_tuned"):
        lib.lntune_set_tuned.argtypes = [ctypes.c_int]
        lib.lntune_set_tuned.restype = status


def library() -> ctypes.CDLL:
    """The loaded liblntune (loaded on first use).

    Looks at $LNTUNE_LIBRARY (only), else <repo>/build/lib/liblntune.so next
    to this package, else ctypes.util.find_library("lntune").
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
            _declare(lib)
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


def check(status: int, function: str = "") -> None:
    """Raise LntuneError (status name + lntune_last_error()) unless status is OK."""
    if status != Status.OK:
        raise LntuneError(status, last_error(), function)


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


def has_set_tuned() -> bool:
    """Whether this liblntune exports lntune_set_tuned."""
    return hasattr(library(), "lntune_set_tuned")


def set_tuned(enabled: bool) -> None:
    """lntune_set_tuned: True = tuned configs from the cache, False = the
    default heuristic only. Raises NotImplementedError on a library without it."""
    lib = library()
    if not hasattr(lib, "lntune_set_tuned"):
        raise NotImplementedError("lntune: this liblntune (%s) has no lntune_set_tuned" % _lib_path)
    status = lib.lntune_set_tuned(1 if enabled else 0)
    if status:
        check(status, "lntune_set_tuned")
