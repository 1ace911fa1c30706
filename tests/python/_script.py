"""Running a tests/python file as a script, as ctest does: exit 77 (ctest's
"skipped") with the reason printed where it cannot run, else pytest.main on
the file with the script's arguments."""

import importlib.util
import os
import shutil
import sys


def _skip(reason: str) -> None:
    print("SKIPPED: " + reason)
    sys.exit(77)


def run(path: str, cuda_for: str = "", needs_cxx: bool = False) -> None:
    """cuda_for: what needs the GPU, for the skip message ("" = no GPU needed);
    needs_cxx: the file builds lntune.torch's C++ extension."""
    missing = [m for m in ("pytest", "torch") if importlib.util.find_spec(m) is None]
    if missing:
        _skip("%s not installed" % " and ".join(missing))
    if needs_cxx and shutil.which(os.environ.get("CXX", "c++")) is None:
        _skip("no C++ compiler to build the extension with")
    if cuda_for:
        import torch

        if not torch.cuda.is_available():
            _skip("no CUDA device: %s need an NVIDIA GPU" % cuda_for)
    import pytest

    sys.exit(pytest.main([os.path.abspath(path), "-q", "-rs", "-p", "no:cacheprovider"] + sys.argv[1:]))
