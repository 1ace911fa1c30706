"""lntune: fused LayerNorm CUDA kernels compiled at run time, from Python.

``import lntune`` needs neither PyTorch nor a GPU; it loads liblntune.so
(through ctypes) on first use. The PyTorch binding lives in ``lntune.torch``
(imported on first access):

    import lntune.torch
    y = lntune.torch.layer_norm(x, (N,), weight, bias, 1e-5)
    ln = lntune.torch.LayerNorm(N, device="cuda", dtype=torch.bfloat16)
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from ._ffi import (
    DType,
    LibraryNotFoundError,
    LntuneError,
    Status,
    has_set_tuned,
    last_error,
    library_path,
    set_tuned,
    version,
)

def _package_version() -> str:
    """The version without loading the library: written at build time into an
    installed package (lntune/_version.py), else read from the source tree's
    CMakeLists.txt (project(lntune VERSION ...)), which lntune_version() reports."""
    try:
        from ._version import __version__ as v  # pip install . writes it

        return v
    except ImportError:
        pass
    try:
        text = (Path(__file__).resolve().parent.parent.parent / "CMakeLists.txt").read_text()
        m = re.search(r"project\(\s*lntune\s+VERSION\s+([0-9][0-9.]*)", text)
        if m:
            return m.group(1)
    except OSError:
        pass
    return "unknown"


__version__ = _package_version()

__all__ = [
    "__version__",
    "DType",
    "Status",
    "LntuneError",
    "LibraryNotFoundError",
    "version",
    "last_error",
    "library_path",
    "has_set_tuned",
    "set_tuned",
]


def __getattr__(name):
    # ``lntune.torch`` on first access, so that ``import lntune`` never imports torch.
    if name == "torch":
        return importlib.import_module(".torch", __name__)
    raise AttributeError("module 'lntune' has no attribute %r" % name)
