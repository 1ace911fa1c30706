"""Checks of lntune.torch's C++ extension that need torch and a C++ compiler
but no GPU: it builds, its op kernels register (and unregister) for the
lntune:: ops, the kernels' argument checks raise what the Python
implementation raises, and the ops trace with fake tensors.

    LNTUNE_LIBRARY=build/lib/liblntune.so PYTHONPATH=python /work/venv-torch/bin/python -m pytest -q \
        tests/python/test_torch_ext_cpu.py
    python3 tests/python/test_torch_ext_cpu.py   # through pytest.main; exits 77 (skipped) without
                                                 # pytest, torch or a C++ compiler

Building the extension takes minutes on a small machine (cached afterwards
in torch's extension directory). The GPU behaviour of the same code is
tested by tests/python/test_lntune_torch.py.
"""

import os
import shutil
import subprocess
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _script  # noqa: E402

    _script.run(__file__, needs_cxx=True)

import pytest  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if shutil.which(os.environ.get("CXX", "c++")) is None:
    pytest.skip("no C++ compiler to build the extension with", allow_module_level=True)

os.environ["LNTUNE_TORCH_EXT"] = "on"  # a build failure fails these tests instead of falling back

import lntune.torch as lt  # noqa: E402
from lntune import _torch_ops as ops  # noqa: E402

OPS = ["layer_norm_fwd", "layer_norm_bwd"]


def _kernel_source(name, key="CUDA"):
    """Where lntune::name's kernel for `key` was registered, from the
    dispatcher's own table (a C++ file:line, or the Python registration)."""
    dump = torch._C._dispatch_dump_table("lntune::" + name)
    for line in dump.splitlines():
        if line.startswith(key + ":"):
            return line
    return None


def test_extension_is_built_and_lists_its_ops():
    assert lt._ext is not None
    assert sorted(lt._ext.native_ops()) == sorted(OPS)


def test_every_op_has_one_cuda_kernel_python_by_default():
    for name in OPS:
        assert torch._C._dispatch_has_kernel_for_dispatch_key("lntune::" + name, "CUDA")
    if not ops.NATIVE_OPS:
        # Every registered op (the norm variants too) runs its Python kernel.
        assert set(OPS) <= set(ops.native) and not any(ops.native.values()), ops.native


def _native_split(state):
    """{op: is C++} -> (the ops with C++ kernels, the state of the others)."""
    return {n: state[n] for n in OPS}, {n: v for n, v in state.items() if n not in OPS}


def test_native_ops_switch_on_and_off():
    before = ops.NATIVE_OPS
    try:
        with_cpp, others = _native_split(ops.use_native_ops(True))
        assert with_cpp == {name: True for name in OPS}
        # Ops the extension has no C++ kernel for (the norm variants) keep their Python one.
        assert others and not any(others.values()), others
        for name in OPS:
            src = _kernel_source(name)
            assert src is not None and "torch_ext.cpp" in src, src
        with_cpp, others = _native_split(ops.use_native_ops(False))
        assert with_cpp == {name: False for name in OPS} and not any(others.values())
        for name in OPS:
            src = _kernel_source(name)
            assert src is not None and "torch_ext.cpp" not in src, src
        # Twice in a row is harmless (no second registration, no warning).
        ops.use_native_ops(True)
        assert _native_split(ops.use_native_ops(True))[0] == {name: True for name in OPS}
    finally:
        ops.use_native_ops(before)


def _with_cpu_kernels(fn):
    """Runs fn() with the C++ kernels registered for the CPU key too, so
    that CPU tensors reach them (their argument checks run before anything
    touches a GPU); takes them out again afterwards."""
    for name in OPS:
        assert lt._ext.register_native(name, "CPU")
    try:
        return fn()
    finally:
        for name in OPS:
            assert lt._ext.unregister_native(name, "CPU")


def test_native_kernels_unbox_the_schema_and_check_like_python():
    x = torch.randn(3, 8)
    w = torch.ones(8)

    def run():
        # Reaching the kernel at all shows the C++ signature matches the
        # schema (SymInt[] -> IntArrayRef, Tensor?, float, bool[3]).
        with pytest.raises(TypeError, match=r"x must be a CUDA tensor, got one on cpu \(lntune runs on NVIDIA"):
            torch.ops.lntune.layer_norm_fwd(x, [8], w, None, 1e-5)
        with pytest.raises(TypeError, match="x must be a CUDA tensor, got one on cpu"):
            torch.ops.lntune.layer_norm_bwd(x, x, x[:, 0], x[:, 0], [8], w, None, [True, True, False])

    _with_cpu_kernels(run)
    assert not torch._C._dispatch_has_kernel_for_dispatch_key("lntune::layer_norm_fwd", "CPU")


def test_python_kernel_checks_the_same_way():
    # The Python CUDA kernel, for comparison: same type and message start.
    with pytest.raises(TypeError, match=r"x must be a CUDA tensor, got one on cpu \(lntune runs on NVIDIA"):
        ops.check(torch.randn(3, 8), (8,), None, None)


def test_unknown_op_is_not_registered():
    assert lt._ext.register_native("no_such_op", "CUDA") is False
    assert lt._ext.unregister_native("no_such_op", "CUDA") is False


@pytest.mark.parametrize("native", [False, True], ids=["py_ops", "native_ops"])
def test_ops_trace_with_fake_cuda_tensors(native):
    """What torch.compile traces, whichever CUDA kernel is registered:
    lntune.torch.layer_norm on fake CUDA tensors gives the forward op with
    the right shapes and dtypes, and so does the backward op (called
    directly: autograd's engine needs a real device to run a backward)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx

    before = ops.NATIVE_OPS
    ops.use_native_ops(native)
    try:
        with FakeTensorMode():
            x = torch.empty(4, 16, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            w = torch.empty(64, device="cuda", dtype=torch.float32, requires_grad=True)
            b = torch.empty(64, device="cuda", dtype=torch.float32, requires_grad=True)
            dy = torch.empty(4, 16, 64, device="cuda", dtype=torch.bfloat16)
            gm = make_fx(lambda x, w, b: lt.layer_norm(x, (64,), w, b), tracing_mode="fake")(x, w, b)
            y = lt.layer_norm(x, (64,), w, b)
            y2, mean, rstd = torch.ops.lntune.layer_norm_fwd(x, [64], w, b, 1e-5)
            dx, dw, db = torch.ops.lntune.layer_norm_bwd(dy, x, mean, rstd, [64], w, b, [True, True, False])
        targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
        assert any("lntune.layer_norm_fwd" in t for t in targets), targets
        assert y.shape == y2.shape == dx.shape == (4, 16, 64) and y.dtype == dx.dtype == torch.bfloat16
        assert y.requires_grad and "lntune_layer_norm_fwd" in type(y.grad_fn).__name__
        assert mean.shape == rstd.shape == (4, 16) and mean.dtype == torch.float32
        assert dw.shape == (64,) and dw.dtype == torch.float32 and db.shape == (0,)
    finally:
        ops.use_native_ops(before)


def test_set_tuned_hook_reaches_the_extension():
    from lntune import _ffi

    assert lt._ext.bump_generation in _ffi._set_tuned_hooks


def test_env_switches_in_a_fresh_process():
    """LNTUNE_TORCH_NATIVE_OPS=1 at import registers the C++ kernels; the
    extension is cached by then, so this is quick."""
    code = ("import lntune.torch as lt, lntune._torch_ops as o, torch\n"
            "cpp = set(lt._ext.native_ops())\n"
            "assert o.NATIVE_OPS and cpp and all(o.native[n] == (n in cpp) for n in o.native), o.native\n"
            "print('ok')\n")
    env = dict(os.environ, LNTUNE_TORCH_NATIVE_OPS="1", LNTUNE_TORCH_NODE_V2="1", LNTUNE_TORCH_EXT="on",
               PYTHONPATH=os.path.join(ROOT, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr
