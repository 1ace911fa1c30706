"""The optional C++ fast path of lntune.torch (csrc/torch_ext.cpp).

Built on first use with torch.utils.cpp_extension.load (cached by torch in
~/.cache/torch_extensions, rebuilt only when the source changes) and handed
liblntune's C functions. Why it exists: a pure-Python autograd.Function over
ctypes costs 1.6-1.9x PyTorch's host time per training step (measured on an
H100, bench/bench_layernorm.py --section host); the backward, run by
autograd's device thread, pays for the GIL, the Python node and four torch
allocations from Python. In C++ a step costs what PyTorch's own costs.

LNTUNE_TORCH_EXT: "auto" (default: build or load it; fall back to the ctypes
path with one warning if that fails), "on" (fail loudly), "off" (never).
Needs a C++ compiler and torch's headers (they come with the torch wheel),
and the CUDA toolkit's headers, only at build time.

Switches:
- LNTUNE_TORCH_NODE_V2 (default 1): the eager route's backward is a plain
  autograd Node (as PyTorch's own LayerNorm node) instead of a
  torch::autograd::Function (0; set_node_v2 switches at run time). Measured
  on an H100 (bench/results/h100_2026-11-24c, bench/bench_host_step.py,
  interleaved): a training step's host time 0.88-0.94x PyTorch's with the
  Node, 1.01-1.09x with the Function, over M in {1, 32, 4096, 16384} and
  N in {1024..8192}; the binding's GPU tests pass with either.
- LNTUNE_TORCH_NATIVE_OPS=1 (opt-in, not yet measured as a default): the
  lntune:: ops' CUDA kernels are the C++ ones (lntune._torch_ops.use_native_ops
  switches at run time).

The eager entries of the norm variants (rms_norm, fused_add_layer_norm,
fused_add_rms_norm: C++ forward and autograd node over lntune_norm_*) are
on wherever the extension loads; LNTUNE_TORCH_EXT_VARIANTS=0 sends those
calls through the lntune:: ops instead (lntune.torch._variant_ext).
"""

from __future__ import annotations

import ctypes
import os
import warnings
from pathlib import Path

from . import _ffi

def _include_dir():
    here = Path(__file__).resolve().parent
    for d in (here / "include", here.parent.parent / "include"):  # installed package, source tree
        if (d / "lntune" / "lntune.h").is_file():
            return str(d)
    return None


def _flag(name: str, default: bool = False) -> bool:
    return os.environ.get(name, "1" if default else "0").lower() in ("1", "on", "yes")


# The eager backward node: a plain autograd Node (True) or a
# torch::autograd::Function (False); see the module docstring.
NODE_V2 = _flag("LNTUNE_TORCH_NODE_V2", default=True)


def _load():
    mode = os.environ.get("LNTUNE_TORCH_EXT", "auto").lower()
    if mode in ("off", "0", "no"):
        return None
    try:
        from torch.utils import cpp_extension

        inc = _include_dir()
        if inc is None:
            raise RuntimeError("lntune/lntune.h not found next to the package")
        src = Path(__file__).resolve().parent / "csrc" / "torch_ext.cpp"
        ext = cpp_extension.load(
            name="lntune_torch_ext",
            sources=[str(src)],
            extra_include_paths=[inc],
            extra_cflags=["-O2"],
            # No .cu sources: this only keeps torch from probing for a GPU
            # architecture, so the module also builds on a machine without one.
            extra_cuda_cflags=["-gencode=arch=compute_90,code=sm_90"],
            with_cuda=True,
            verbose=os.environ.get("LNTUNE_TORCH_EXT_VERBOSE", "") == "1",
        )
        lib = _ffi.library()

        def address(f):
            return ctypes.cast(f, ctypes.c_void_p).value

        ext.set_api(address(lib.lntune_forward), address(lib.lntune_backward),
                 address(lib.lntune_backward_workspace_size), address(lib.lntune_last_error))
        if hasattr(lib, "lntune_norm_forward"):  # the variants' eager entries (an older library: the ops say why)
            ext.set_norm_api(address(lib.lntune_norm_forward), address(lib.lntune_norm_backward),
                             address(lib.lntune_norm_backward_workspace_size))
        ext.set_node_v2(NODE_V2)
        _ffi.on_set_tuned(ext.bump_generation)  # its memoised workspace sizes depend on the configs
        return ext
    except Exception as e:  # noqa: BLE001 - optional: the ctypes path serves
        if mode in ("on", "1", "yes"):
            raise
        warnings.warn("lntune.torch: the C++ fast path is not available (%s: %s); using the ctypes path "
                      "(same kernels, more host time per call). LNTUNE_TORCH_EXT=off silences this."
                      % (type(e).__name__, str(e).strip().splitlines()[-1] if str(e).strip() else ""),
                      RuntimeWarning, stacklevel=3)
        return None


def failure() -> "_ffi.LntuneError":
    """The LntuneError of this thread's last failed forward on the C++ path."""
    status, function, message = ext.last_failure()
    return _ffi.LntuneError(status, message, function)


ext = _load()
