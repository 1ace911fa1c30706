"""GPU-free, torch-free checks of the Python package (runs in CI).

    LNTUNE_LIBRARY=build/lib/liblntune.so python3 tests/python/test_import.py

Prints one line per test and "N passed, N failed, N skipped"; exits non-zero
on any failure. Also collectable by pytest. Needs only the Python standard
library and liblntune.so (found through $LNTUNE_LIBRARY, else
<repo>/build/lib/liblntune.so).
"""

import ctypes
import os
import subprocess
import sys
import traceback

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_DIR = os.path.join(REPO, "python")
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)

import lntune  # noqa: E402
from lntune import _ffi  # noqa: E402


class Skip(Exception):
    pass


def _skip(reason):
    """pytest.skip under pytest, else our own Skip (counted by main())."""
    if "pytest" in sys.modules:
        import pytest

        pytest.skip(reason)
    raise Skip(reason)


def _child_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = PYTHON_DIR + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _forward_args(**kw):
    """A valid-looking forward call: M=1, N=4, fp32, fake aligned non-null pointers."""
    a = _ffi.ForwardArgs()
    a.x, a.y, a.weight, a.bias = 0x10000, 0x20000, 0x30000, 0x40000
    a.mean, a.rstd = 0x50000, 0x60000
    a.M, a.N = 1, 4
    a.x_row_stride = a.y_row_stride = 0
    a.x_dtype = a.w_dtype = _ffi.DType.FP32
    a.eps = 1e-5
    a.stream = None
    for k, v in kw.items():
        setattr(a, k, v)
    return a


def _backward_args():
    a = _ffi.BackwardArgs()
    a.dy, a.x, a.weight, a.mean, a.rstd = 0x10000, 0x20000, 0x30000, 0x40000, 0x50000
    a.dx, a.dweight, a.dbias = 0x60000, 0x70000, 0x80000
    a.M, a.N = 1, 4
    a.x_dtype = a.w_dtype = _ffi.DType.FP32
    return a


_GPU_PROBE = []


def _gpu_probe():
    """Status of a call that reaches the driver without launching anything
    (lntune_backward_workspace_size only plans): OK means a usable GPU."""
    if not _GPU_PROBE:
        lib = _ffi.library()
        n = ctypes.c_size_t(0)
        st = lib.lntune_backward_workspace_size(ctypes.byref(_backward_args()), ctypes.byref(n))
        _GPU_PROBE.append((st, _ffi.last_error()))
    return _GPU_PROBE[0]


# ------------------------------------------------------------------ tests


def test_import_does_not_import_torch():
    code = "import sys, lntune; assert 'torch' not in sys.modules, 'import lntune imported torch'; print('ok')"
    r = subprocess.run([sys.executable, "-c", code], env=_child_env(), capture_output=True, text=True)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr


def test_version():
    # lntune_version() is CMakeLists.txt's project(lntune VERSION ...), and so is __version__.
    import re

    with open(os.path.join(REPO, "CMakeLists.txt")) as f:
        want = re.search(r"project\(\s*lntune\s+VERSION\s+([0-9][0-9.]*)", f.read()).group(1)
    assert lntune.version() == want, (lntune.version(), want)
    assert lntune.__version__ == lntune.version(), (lntune.__version__, lntune.version())


def test_struct_layout_matches_header():
    # Offsets and sizes of include/lntune/lntune.h on LP64 (x86-64, aarch64).
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        _skip("not an LP64 platform")
    fwd = [("x", 0), ("weight", 8), ("bias", 16), ("y", 24), ("mean", 32), ("rstd", 40), ("M", 48),
           ("N", 56), ("x_row_stride", 64), ("y_row_stride", 72), ("x_dtype", 80), ("w_dtype", 84),
           ("eps", 88), ("stream", 96)]
    bwd = [("dy", 0), ("x", 8), ("weight", 16), ("mean", 24), ("rstd", 32), ("dx", 40), ("dweight", 48),
           ("dbias", 56), ("M", 64), ("N", 72), ("dy_row_stride", 80), ("x_row_stride", 88),
           ("dx_row_stride", 96), ("x_dtype", 104), ("w_dtype", 108), ("workspace", 112),
           ("workspace_bytes", 120), ("stream", 128)]
    assert ctypes.sizeof(_ffi.ForwardArgs) == 104, ctypes.sizeof(_ffi.ForwardArgs)
    assert ctypes.sizeof(_ffi.BackwardArgs) == 136, ctypes.sizeof(_ffi.BackwardArgs)
    assert [(n, getattr(_ffi.ForwardArgs, n).offset) for n, _ in fwd] == fwd
    assert [(n, getattr(_ffi.BackwardArgs, n).offset) for n, _ in bwd] == bwd


def test_norm_struct_layout_matches_header():
    # lntune_norm_forward_args / lntune_norm_backward_args: the plain structs' fields, then the variant's.
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        _skip("not an LP64 platform")
    fwd = [("norm", 104), ("zero_centered_weight", 108), ("residual", 112), ("residual_out", 120),
           ("residual_row_stride", 128), ("residual_out_row_stride", 136), ("residual_dtype", 144),
           ("y_dtype", 148)]
    bwd = [("norm", 136), ("zero_centered_weight", 140), ("residual", 144), ("dresidual_out", 152),
           ("dresidual_out_row_stride", 160), ("residual_dtype", 168), ("y_dtype", 172), ("dresidual", 176),
           ("dresidual_row_stride", 184)]
    assert ctypes.sizeof(_ffi.NormForwardArgs) == 152, ctypes.sizeof(_ffi.NormForwardArgs)
    assert ctypes.sizeof(_ffi.NormBackwardArgs) == 192, ctypes.sizeof(_ffi.NormBackwardArgs)
    assert [(n, getattr(_ffi.NormForwardArgs, n).offset) for n, _ in fwd] == fwd
    assert [(n, getattr(_ffi.NormBackwardArgs, n).offset) for n, _ in bwd] == bwd
    assert _ffi.NormForwardArgs.x.offset == 0 and _ffi.NormBackwardArgs.stream.offset == 128


def _c_layout():
    """{struct: {field: (offset, size)}} and {struct: sizeof} as the C compiler
    lays out include/lntune/lntune.h (tests/abi_layout.cpp; its path in
    LNTUNE_ABI_LAYOUT, set by tests/CMakeLists.txt)."""
    prog = os.environ.get("LNTUNE_ABI_LAYOUT")
    if not prog:  # a build tree's library (build/lib/liblntune.so): its build/tests/abi_layout
        guess = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(_ffi.library_path()))), "tests",
                             "abi_layout")
        if not os.path.isfile(guess):
            _skip("LNTUNE_ABI_LAYOUT not set and no %s (the abi_layout program of tests/CMakeLists.txt; run "
                  "through ctest)" % guess)
        prog = guess
    if not os.path.isfile(prog):
        _skip("LNTUNE_ABI_LAYOUT=%s does not exist (build the abi_layout target)" % prog)
    out = subprocess.run([prog], capture_output=True, text=True, check=True).stdout
    fields, sizes = {}, {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "sizeof":
            sizes[parts[0]] = int(parts[2])
        else:
            struct, field, offset, size = parts
            fields.setdefault(struct, {})[field] = (int(offset), int(size))
    return fields, sizes


def test_ctypes_structs_match_the_c_compilers_layout():
    """Every field of the four public args structs, in the C compiler's
    offsets and sizes (from abi_layout), matches the ctypes mirror, and
    neither side has a field the other lacks."""
    fields, sizes = _c_layout()
    mirrors = {"lntune_forward_args": _ffi._RawForwardArgs, "lntune_backward_args": _ffi._RawBackwardArgs,
               "lntune_norm_forward_args": _ffi._RawNormForwardArgs,
               "lntune_norm_backward_args": _ffi._RawNormBackwardArgs}
    assert sorted(fields) == sorted(mirrors) == sorted(sizes), (sorted(fields), sorted(sizes))
    for struct, py in mirrors.items():
        c = fields[struct]
        mine = {n: (getattr(py, n).offset, getattr(py, n).size) for n, _ in py._fields_}
        py_order, c_order = [n for n, _ in py._fields_], sorted(c, key=lambda n: c[n][0])
        assert py_order == c_order, "%s: ctypes fields %s, C fields %s" % (struct, py_order, c_order)
        assert mine == c, "%s: ctypes (offset, size) %s != C %s" % (
            struct, {n: v for n, v in mine.items() if c.get(n) != v}, {n: v for n, v in c.items() if mine.get(n) != v})
        assert ctypes.sizeof(py) == sizes[struct], (struct, ctypes.sizeof(py), sizes[struct])


def _norm_forward_args(**kw):
    a = _ffi.NormForwardArgs()
    base = _forward_args()
    for name, _ in _ffi._RawForwardArgs._fields_:
        setattr(a, name, getattr(base, name))
    a.norm = _ffi.Norm.RMS_NORM
    a.mean = None
    a.y_dtype = a.residual_dtype = _ffi.DType.FP32
    for k, v in kw.items():
        setattr(a, k, v)
    return a


def test_norm_invalid_arguments_reported_before_the_driver():
    cases = [
        (dict(mean=0x50000), "mean must be null for RMSNorm"),
        (dict(weight=None, bias=None, zero_centered_weight=1), "zero_centered_weight needs a weight"),
        (dict(residual=0x70000), "residual was given without residual_out"),
        (dict(norm=5), "norm is not a valid lntune_norm"),
        (dict(y_dtype=9), "y_dtype"),
    ]
    for kw, text in cases:
        try:
            _ffi.norm_forward(_norm_forward_args(**kw))
        except _ffi.LntuneError as e:
            assert e.status == _ffi.Status.ERROR_INVALID_ARGUMENT, (kw, e)
            assert text in e.message, (kw, e.message)
            assert "lntune_norm_forward" in str(e)
        else:
            raise AssertionError("no error for %s" % kw)


def test_invalid_argument_reported_before_the_driver():
    lib = _ffi.library()
    st = lib.lntune_forward(ctypes.byref(_forward_args(N=0)))
    assert st == _ffi.Status.ERROR_INVALID_ARGUMENT, st
    assert "N must be >= 1" in _ffi.last_error(), _ffi.last_error()
    st = lib.lntune_forward(ctypes.byref(_forward_args(x=None)))
    assert st == _ffi.Status.ERROR_INVALID_ARGUMENT, st
    assert "x must not be null" in _ffi.last_error(), _ffi.last_error()
    st = lib.lntune_forward(ctypes.byref(_forward_args(x_dtype=7)))
    assert st == _ffi.Status.ERROR_INVALID_ARGUMENT, st
    st = lib.lntune_forward(None)
    assert st == _ffi.Status.ERROR_INVALID_ARGUMENT, st
    assert "args must not be null" in _ffi.last_error(), _ffi.last_error()


def test_lntune_error_carries_status_and_message():
    try:
        _ffi.forward(_forward_args(eps=float("nan")))
    except _ffi.LntuneError as e:
        assert isinstance(e, RuntimeError)
        assert e.status == _ffi.Status.ERROR_INVALID_ARGUMENT
        assert e.status_name == "LNTUNE_ERROR_INVALID_ARGUMENT", e.status_name
        assert "eps must be a finite number" in e.message, e.message
        assert "LNTUNE_ERROR_INVALID_ARGUMENT" in str(e) and "lntune_forward" in str(e), str(e)
    else:
        raise AssertionError("eps = nan was accepted")


def test_any_finite_eps_is_accepted():
    # As in torch: 0 and negative eps are computed with (M = 0: checked, nothing launched).
    for eps in (0.0, -0.5, 1e-5):
        _ffi.forward(_forward_args(M=0, eps=eps))


def test_out_of_range_fields_are_errors_not_wrap_arounds():
    # ctypes itself would store M = 2**63 as -2**63.
    for make in (lambda: _ffi.ForwardArgs(M=2**63), lambda: _forward_args(M=2**63)):
        try:
            make()
        except OverflowError as e:
            assert "ForwardArgs.M = 9223372036854775808 does not fit in int64_t" in str(e), str(e)
        else:
            raise AssertionError("M = 2**63 was accepted")
    a = _backward_args()
    for field, value in (("N", -(2**63) - 1), ("workspace_bytes", -1), ("workspace_bytes", 2**64),
                         ("x_dtype", 2**31), ("dx", 2**64), ("dy", -1)):
        try:
            setattr(a, field, value)
        except OverflowError as e:
            assert ("BackwardArgs.%s" % field) in str(e), str(e)
        else:
            raise AssertionError("%s = %d was accepted" % (field, value))
    a.M = 2**63 - 1  # the largest int64_t is stored as is (and rejected by the C checks)
    assert a.M == 2**63 - 1
    try:
        _ffi.ForwardArgs(no_such_field=1)
    except AttributeError as e:
        assert "no_such_field" in str(e)
    else:
        raise AssertionError("an unknown field was accepted")


def test_another_library_is_a_clear_error():
    # LNTUNE_LIBRARY at a library that is not liblntune: an LntuneError naming
    # the file and the missing symbol, not a raw AttributeError.
    code = (
        "import lntune\n"
        "try:\n"
        "    lntune.version()\n"
        "except lntune.LntuneError as e:\n"
        "    assert isinstance(e, OSError)\n"
        "    print('error: ' + str(e))\n"
    )
    env = _child_env()
    env["LNTUNE_LIBRARY"] = "libc.so.6"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "libc.so.6 is not liblntune: it has no symbol lntune_forward" in r.stdout, r.stdout


def test_check_never_attaches_a_stale_message():
    lib = _ffi.library()
    st = lib.lntune_forward(ctypes.byref(_forward_args(N=0)))
    assert st == _ffi.Status.ERROR_INVALID_ARGUMENT
    try:
        _ffi.check(st, "lntune_forward")
    except _ffi.LntuneError as e:
        assert "N must be >= 1" in e.message, e.message
    else:
        raise AssertionError("check() did not raise")
    # A second check() (of the same or another status) must not reuse that message.
    for status in (st, _ffi.Status.ERROR_CUDA):
        try:
            _ffi.check(status, "something_else")
        except _ffi.LntuneError as e:
            assert e.message == "", e.message
            assert "(no message)" in str(e), str(e)
        else:
            raise AssertionError("check() did not raise")
    # After a successful call there is no message either.
    lib.lntune_forward(ctypes.byref(_forward_args(N=0)))
    _ffi.forward(_forward_args(M=0))
    try:
        _ffi.check(_ffi.Status.ERROR_INVALID_ARGUMENT)
    except _ffi.LntuneError as e:
        assert e.message == "", e.message


def test_python_m_lntune_info_is_the_cli():
    # `python -m lntune info` runs the same CLI as `lntune info` (exit status too).
    from lntune import __main__ as m

    cli, tried = m.cli_path()
    if cli is None:
        _skip("no lntune CLI built (looked at %s)" % "; ".join(tried))
    want = subprocess.run([cli, "info"], capture_output=True, text=True)
    got = subprocess.run([sys.executable, "-m", "lntune", "info"], env=_child_env(), capture_output=True, text=True)
    assert got.returncode == want.returncode, (got.returncode, want.returncode, got.stderr)
    assert got.stdout == want.stdout, (got.stdout, want.stdout)
    assert got.stderr == want.stderr, (got.stderr, want.stderr)
    print("    (lntune info: exit %d; %s)" % (got.returncode, (got.stdout + got.stderr).strip().splitlines()[:1]))


def test_m_zero_is_a_no_op():
    _ffi.forward(_forward_args(M=0))  # no driver needed, no error


def test_no_gpu_is_reported_clearly():
    st, msg = _gpu_probe()
    if st == _ffi.Status.OK:
        _skip("a GPU is present (this test checks the no-GPU error path)")
    assert st in (_ffi.Status.ERROR_NO_DRIVER, _ffi.Status.ERROR_NO_DEVICE, _ffi.Status.ERROR_CUDA), (st, msg)
    # Only now is it safe to pass fake pointers: no kernel can be launched.
    lib = _ffi.library()
    fst = lib.lntune_forward(ctypes.byref(_forward_args()))
    fmsg = _ffi.last_error()
    assert fst == st, (fst, fmsg, st, msg)
    assert fmsg, "empty lntune_last_error()"
    if fst == _ffi.Status.ERROR_NO_DRIVER:
        assert "driver" in fmsg.lower(), fmsg
    elif fst == _ffi.Status.ERROR_NO_DEVICE:
        assert "device" in fmsg.lower() or "driver" in fmsg.lower(), fmsg
    try:
        _ffi.forward(_forward_args())
    except _ffi.LntuneError as e:
        assert e.status == fst and e.message == fmsg, (e.status, e.message)
        print("    (no GPU here: %s)" % e)
    else:
        raise AssertionError("forward succeeded without a GPU")


def test_set_tuned_if_present():
    if not _ffi.has_set_tuned():
        _skip("this liblntune has no lntune_set_tuned")
    # Choosing tuned configs or the default heuristic needs no GPU; a cache that
    # cannot be opened may be reported as LNTUNE_ERROR_CACHE.
    for v in (0, 1, 0):
        rc = _ffi.library().lntune_set_tuned(v)
        assert rc in (_ffi.Status.OK, _ffi.Status.ERROR_CACHE), (
            "lntune_set_tuned(%d) returned %s: %r" % (v, rc, _ffi.last_error()))
    try:
        _ffi.set_tuned(False)  # the Python wrapper
    except _ffi.LntuneError as e:
        assert e.status == _ffi.Status.ERROR_CACHE, e


def test_torch_binding_import():
    code = (
        "import importlib.util, sys\n"
        "has_torch = importlib.util.find_spec('torch') is not None\n"
        "try:\n"
        "    import lntune.torch\n"
        "except ImportError as e:\n"
        "    assert not has_torch, e\n"
        "    assert 'PyTorch' in str(e), str(e)\n"
        "    print('no torch: ' + str(e))\n"
        "else:\n"
        "    assert has_torch\n"
        "    import lntune\n"
        "    assert lntune.torch.layer_norm and lntune.torch.LayerNorm\n"
        "    print('torch ' + lntune.torch.torch.__version__)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], env=_child_env(), capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    print("    (%s)" % r.stdout.strip())


def main():
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_") and callable(f)]
    passed = failed = skipped = 0
    print("lntune %s from %s" % (lntune.version(), _ffi.library_path()), flush=True)
    for name, fn in tests:
        try:
            fn()
        except Skip as e:
            skipped += 1
            print("SKIP %s: %s" % (name, e), flush=True)
        except Exception:
            failed += 1
            print("FAIL %s\n%s" % (name, traceback.format_exc()), flush=True)
        else:
            passed += 1
            print("PASS %s" % name, flush=True)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
