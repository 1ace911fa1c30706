"""GPU-free tests of lntune.torch's RMSNorm and fused residual ops: schemas,
registrations, fake implementations (output shapes and dtypes under
FakeTensorMode), argument validation and the RMSNorm module's drop-in
surface. Need PyTorch (any build), not a GPU; skipped without torch.

    LNTUNE_LIBRARY=build/lib/liblntune.so PYTHONPATH=python python3 -m pytest -q tests/python/test_torch_norms_cpu.py
    python3 tests/python/test_torch_norms_cpu.py   # through pytest.main; exits 77 (skipped) without pytest or torch
"""

import inspect
import math
import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _script  # noqa: E402

    _script.run(__file__)

import pytest  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python"))
# The optional C++ fast path (LayerNorm only) is not what these tests look at: don't build it here.
os.environ.setdefault("LNTUNE_TORCH_EXT", "off")

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

import lntune.torch as lt  # noqa: E402
from lntune import _torch_ops  # noqa: E402

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
DTYPE_IDS = ["fp32", "fp16", "bf16"]
OPS = ["rms_norm_fwd", "rms_norm_bwd", "add_layer_norm_fwd", "add_layer_norm_bwd", "add_rms_norm_fwd",
       "add_rms_norm_bwd"]

SCHEMAS = {
    "rms_norm_fwd": "lntune::rms_norm_fwd(Tensor x, SymInt[] normalized_shape, Tensor? weight, float eps, "
                    "bool zero_centered_weight, ScalarType? out_dtype) -> (Tensor, Tensor)",
    "rms_norm_bwd": "lntune::rms_norm_bwd(Tensor dy, Tensor x, Tensor rstd, SymInt[] normalized_shape, "
                    "Tensor? weight, bool zero_centered_weight, bool[2] output_mask) -> (Tensor, Tensor)",
    "add_layer_norm_fwd": "lntune::add_layer_norm_fwd(Tensor x, Tensor residual, SymInt[] normalized_shape, "
                          "Tensor? weight, Tensor? bias, float eps, bool zero_centered_weight, "
                          "ScalarType? out_dtype) -> (Tensor, Tensor, Tensor, Tensor)",
    "add_layer_norm_bwd": "lntune::add_layer_norm_bwd(Tensor dy, Tensor? dresidual_out, Tensor residual_out, "
                          "Tensor mean, Tensor rstd, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
                          "bool zero_centered_weight, ScalarType dx_dtype, bool[3] output_mask) "
                          "-> (Tensor, Tensor, Tensor, Tensor)",
    "add_rms_norm_fwd": "lntune::add_rms_norm_fwd(Tensor x, Tensor residual, SymInt[] normalized_shape, "
                        "Tensor? weight, float eps, bool zero_centered_weight, ScalarType? out_dtype) "
                        "-> (Tensor, Tensor, Tensor)",
    "add_rms_norm_bwd": "lntune::add_rms_norm_bwd(Tensor dy, Tensor? dresidual_out, Tensor residual_out, "
                        "Tensor rstd, SymInt[] normalized_shape, Tensor? weight, bool zero_centered_weight, "
                        "ScalarType dx_dtype, bool[2] output_mask) -> (Tensor, Tensor, Tensor)",
}


def _op(name):
    return getattr(torch.ops.lntune, name).default


# ------------------------------------------------------------------ schemas and registrations


@pytest.mark.parametrize("name", OPS)
def test_schema(name):
    assert str(_op(name)._schema) == SCHEMAS[name]


@pytest.mark.parametrize("name", OPS)
def test_functional_no_alias_no_mutation(name):
    """Functional ops: no argument is written, no output aliases an input."""
    schema = _op(name)._schema
    assert not schema.is_mutable, name
    for a in list(schema.arguments) + list(schema.returns):
        assert a.alias_info is None, (name, a.name)


@pytest.mark.parametrize("name", OPS)
def test_registrations(name):
    qual = "lntune::" + name
    assert torch._C._dispatch_has_kernel_for_dispatch_key(qual, "CUDA"), qual
    # The fake implementation (torch.library.register_fake) and the autograd
    # formula (register_autograd; for the *_bwd ops: the double-backward error).
    from torch._library.simple_registry import singleton

    assert singleton.find(qual).fake_impl.kernel is not None, qual
    assert torch._C._dispatch_has_kernel_for_dispatch_key(qual, "Autograd"), qual


# ------------------------------------------------------------------ fake implementations

# (x dtype, residual dtype, weight dtype, out_dtype)
COMBOS = [
    (torch.bfloat16, torch.bfloat16, torch.bfloat16, None),
    (torch.bfloat16, torch.float32, torch.bfloat16, None),
    (torch.float16, torch.float32, torch.float32, torch.float32),
    (torch.float32, torch.bfloat16, torch.float32, torch.bfloat16),
    (torch.float32, torch.float32, None, None),
]


def _fake(shape, dtype, requires_grad=False):
    return torch.empty(shape, device="cuda", dtype=dtype, requires_grad=requires_grad)


@pytest.mark.parametrize("xd,rd,wd,od", COMBOS)
def test_fake_shapes_and_dtypes(xd, rd, wd, od):
    with FakeTensorMode():
        x = _fake((3, 5, 6, 8), xd)
        r = _fake((3, 5, 6, 8), rd)
        w = None if wd is None else _fake((6, 8), wd)
        b = None if wd is None else _fake((6, 8), wd)
        yd = od or xd
        zc = w is not None

        y, rstd = _op("rms_norm_fwd")(x, [6, 8], w, 1e-6, zc, od)
        assert (y.shape, y.dtype, y.device.type) == (x.shape, yd, "cuda")
        assert (rstd.shape, rstd.dtype) == ((3, 5), torch.float32)

        y, z, mean, rstd = _op("add_layer_norm_fwd")(x, r, [6, 8], w, b, 1e-5, zc, od)
        assert (y.shape, y.dtype) == (x.shape, yd)
        assert (z.shape, z.dtype) == (x.shape, rd)
        assert mean.shape == rstd.shape == (3, 5) and mean.dtype == rstd.dtype == torch.float32

        y, z, rstd = _op("add_rms_norm_fwd")(x, r, [6, 8], w, 1e-5, zc, od)
        assert (y.dtype, z.dtype, rstd.shape) == (yd, rd, (3, 5))

        dy = _fake(x.shape, yd)
        wt = wd or xd
        dx, dw = _op("rms_norm_bwd")(dy, x, rstd, [6, 8], w, zc, [True, True])
        assert (dx.shape, dx.dtype) == (x.shape, xd)
        assert dw.shape == ((6, 8) if w is not None else (0,)) and dw.dtype == wt

        dxd = _torch_ops.fused_dx_dtype(xd, rd)
        assert dxd == xd and _torch_ops.fused_dx_dtype(xd, rd, need_x=False) == rd
        # dresidual in the residual's dtype when it differs from dx's, else empty (0,).
        dres_shape = x.shape if xd != rd else (0,)
        dx, dres, dw, db = _op("add_layer_norm_bwd")(dy, z, z, mean, rstd, [6, 8], w, b, zc, dxd,
                                                     [True, True, False])
        assert (dx.shape, dx.dtype) == (x.shape, xd)
        assert (dres.shape, dres.dtype) == (dres_shape, rd)
        assert dw.shape == ((6, 8) if w is not None else (0,)) and db.shape == (0,)
        dx, dres, dw = _op("add_rms_norm_bwd")(dy, None, z, rstd, [6, 8], w, zc, dxd, [True, False])
        assert (dx.dtype, dres.shape, dres.dtype, dw.shape) == (xd, dres_shape, rd, (0,))
        # Only the residual's gradient: asked in its dtype, no second output.
        dx, dres, dw = _op("add_rms_norm_bwd")(dy, None, z, rstd, [6, 8], w, zc, rd, [True, False])
        assert (dx.dtype, dres.shape) == (rd, (0,))
        # dx masked off: no dresidual either.
        _dx, dres, _dw = _op("add_rms_norm_bwd")(dy, None, z, rstd, [6, 8], w, zc, dxd, [False, True])
        assert dres.shape == (0,)


def test_fake_through_the_user_api():
    with FakeTensorMode():
        x = _fake((4, 16, 64), torch.bfloat16)
        r = _fake((4, 16, 64), torch.float32)
        w = _fake((64,), torch.bfloat16)
        b = _fake((64,), torch.bfloat16)
        assert lt.rms_norm(x, 64, w).dtype == torch.bfloat16
        assert lt.rms_norm(x, (64,), out_dtype=torch.float32).dtype == torch.float32
        y, z = lt.fused_add_rms_norm(x, r, [64], w, zero_centered_weight=True)
        assert (y.dtype, z.dtype, z.shape) == (torch.bfloat16, torch.float32, x.shape)
        y, z = lt.fused_add_layer_norm(x, r, 64, w, b, 1e-5, out_dtype=torch.float16)
        assert (y.dtype, z.dtype) == (torch.float16, torch.float32)
        m = lt.RMSNorm(64, device="cuda", dtype=torch.bfloat16)
        assert m(x).shape == x.shape


# ------------------------------------------------------------------ validation (fake CUDA tensors)


def _bad(fn, exc, text):
    with FakeTensorMode():
        with pytest.raises(exc, match=text):
            fn()


def test_errors_name_the_problem():
    def x(d=torch.bfloat16, s=(4, 64)):
        return _fake(s, d)

    rms, aln, arms = lt.rms_norm, lt.fused_add_layer_norm, lt.fused_add_rms_norm
    _bad(lambda: rms(torch.randn(4, 8), 8), TypeError, r"lntune.torch.rms_norm: x must be a CUDA tensor.*rms_norm on the CPU")
    _bad(lambda: rms([1.0], 8), TypeError, "x must be a torch.Tensor, got list")
    _bad(lambda: rms(x(torch.float64), 64), TypeError, "x must be float32, float16 or bfloat16, got torch.float64")
    _bad(lambda: rms(x(), 32), ValueError, r"normalized_shape \[32\] must be the last dimensions of x, whose shape is \[4, 64\]")
    _bad(lambda: rms(x(), 64, x(torch.float16, (64,))), TypeError, "weight must be torch.bfloat16 .* or float32, got torch.float16")
    _bad(lambda: rms(x(), 64, zero_centered_weight=True), ValueError, r"zero_centered_weight=True needs a weight")
    _bad(lambda: rms(x(), 64, out_dtype=torch.float64), TypeError, "out_dtype must be None, torch.float32")
    _bad(lambda: rms(x(), 64, out_dtype="bf16"), TypeError, "out_dtype must be None or a torch.dtype")
    _bad(lambda: rms(x(), 64, eps=float("nan")), ValueError, "eps must be a finite number, got nan")
    _bad(lambda: rms(x(), 64, eps="small"), TypeError, "eps must be a float, got str")
    _bad(lambda: rms(x(), 64.5), TypeError, "normalized_shape must be an int or a sequence of ints, got float")
    _bad(lambda: rms(x(), 64, zero_centered_weight=1), TypeError, "zero_centered_weight must be a bool")
    _bad(lambda: arms(x(), None, 64), TypeError, "fused_add_rms_norm: residual must be a torch.Tensor, got NoneType")
    _bad(lambda: arms(x(), x(s=(4, 32)), 64), ValueError, r"residual must have x's shape \[4, 64\], got \[4, 32\]")
    _bad(lambda: arms(x(), x(torch.int32), 64), TypeError, "residual must be float32, float16 or bfloat16, got torch.int32")
    _bad(lambda: aln(x(), x(), 64, x(s=(64,)), x(torch.float32, (64,))), TypeError,
         r"weight \(torch.bfloat16\) and bias \(torch.float32\) must have the same dtype")
    _bad(lambda: aln(x(), x(), 64, x(s=(32,))), ValueError, r"weight must have shape \[64\] \(normalized_shape\), got \[32\]")
    _bad(lambda: aln(x(), x(), 64, None, x(s=(64,)), zero_centered_weight=True), ValueError,
         r"fused_add_layer_norm: zero_centered_weight=True needs a weight \(y = xhat \* \(1 \+ weight\) \+ bias\)")
    _bad(lambda: aln(torch.randn(4, 8), torch.randn(4, 8), 8), TypeError, "layer_norm on the CPU")


def test_real_tensor_checks_without_a_gpu():
    """check_norm (the CUDA implementation's validation) on CPU tensors: the device error comes first."""
    with pytest.raises(TypeError, match="x must be a CUDA tensor, got one on cpu"):
        _torch_ops.check_norm("api", 1, torch.ones(2, 4), None, (4,), None, None, False, None)
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        _torch_ops.check_norm("api", 1, 3.0, None, (4,), None, None, False, None)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_signature_dtypes(dtype):
    sig = _torch_ops._NormSignature("api", 1, dtype, torch.float32, torch.float32, None, torch.bfloat16, (3, 5),
                                    True, True)
    assert sig.N == 15 and sig.k == 2
    assert sig.y_torch_dtype == torch.bfloat16 and sig.r_torch_dtype == torch.float32
    assert sig.w_torch_dtype == torch.float32 and sig.zero_centered
    with pytest.raises(ValueError, match="normalized_shape must not be empty"):
        _torch_ops._NormSignature("api", 1, dtype, None, None, None, None, (), False, False)
    with pytest.raises(ValueError, match="negative size"):
        _torch_ops._NormSignature("api", 1, dtype, None, None, None, None, (4, -1), False, False)


# ------------------------------------------------------------------ eps default


class _Recorder:
    def __init__(self, outputs):
        self.args = None
        self.outputs = outputs

    def __call__(self, *args):
        self.args = args
        return (args[0],) * self.outputs


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_eps_none_is_torchs_rule(dtype, monkeypatch):
    """F.rms_norm's eps=None is the machine epsilon of the computation type:
    torch.finfo(torch.float32).eps for float32, float16 and bfloat16 alike
    (torch.nn.RMSNorm's documentation; torch._decomp's _fused_rms_norm)."""
    rec = _Recorder(2)
    monkeypatch.setattr(lt, "_rms_norm_op", rec)
    monkeypatch.setattr(lt, "_add_rms_norm_op", rec)
    with FakeTensorMode():
        x = _fake((2, 8), dtype)
        lt.rms_norm(x, 8)
        assert rec.args[3] == torch.finfo(torch.float32).eps
        lt.rms_norm(x, 8, None, 1e-3)
        assert rec.args[3] == 1e-3
        rec.outputs = 3
        lt.fused_add_rms_norm(x, x, 8)
        assert rec.args[4] == torch.finfo(torch.float32).eps
        rec.outputs = 2
        lt.RMSNorm(8, device="cuda", dtype=dtype)(x)
        assert rec.args[3] == torch.finfo(torch.float32).eps


# ------------------------------------------------------------------ RMSNorm module (CPU parameters)


def test_rmsnorm_signature_matches_torch():
    ours = list(inspect.signature(lt.RMSNorm.__init__).parameters.items())
    theirs = list(inspect.signature(torch.nn.RMSNorm.__init__).parameters.items())
    assert [(n, p.default) for n, p in ours] == [(n, p.default) for n, p in theirs]


@pytest.mark.parametrize("kwargs", [{}, {"eps": 1e-6}, {"elementwise_affine": False}, {"dtype": torch.bfloat16}])
@pytest.mark.parametrize("shape", [16, (4, 8)])
def test_rmsnorm_state_dict_round_trip(shape, kwargs):
    ref = torch.nn.RMSNorm(shape, **kwargs)
    ours = lt.RMSNorm(shape, **kwargs)
    assert repr(ours) == repr(ref)
    assert ours.normalized_shape == ref.normalized_shape and ours.eps == ref.eps
    assert ours.state_dict().keys() == ref.state_dict().keys()
    for k, v in ref.state_dict().items():
        assert torch.equal(ours.state_dict()[k], v) and ours.state_dict()[k].dtype == v.dtype, k
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.rand_like(p) + 0.5)
    ours.load_state_dict(ref.state_dict())  # torch -> lntune
    back = torch.nn.RMSNorm(shape, **kwargs)
    back.load_state_dict(ours.state_dict())  # lntune -> torch
    for k, v in ref.state_dict().items():
        assert torch.equal(back.state_dict()[k], v), k
    conv = lt.RMSNorm.from_torch(ref)
    assert repr(conv) == repr(ref)
    for (n, p), (_, q) in zip(conv.named_parameters(), ref.named_parameters()):
        assert torch.equal(p, q) and p.dtype == q.dtype and p.data_ptr() != q.data_ptr(), n


def test_from_torch_rejects_other_modules():
    with pytest.raises(TypeError, match="expected a torch.nn.RMSNorm, got LayerNorm"):
        lt.RMSNorm.from_torch(torch.nn.LayerNorm(8))


def test_user_api_signatures():
    """rms_norm takes F.rms_norm's parameters, in order, with the same defaults."""
    import torch.nn.functional as F

    ours = [(n, p.default) for n, p in inspect.signature(lt.rms_norm).parameters.items()][:4]
    theirs = [(n, p.default) for n, p in inspect.signature(F.rms_norm).parameters.items()]
    assert [d for _, d in ours] == [d for _, d in theirs]
    for fn in (lt.rms_norm, lt.fused_add_layer_norm, lt.fused_add_rms_norm):
        params = inspect.signature(fn).parameters
        assert params["zero_centered_weight"].kind == inspect.Parameter.KEYWORD_ONLY
        assert params["zero_centered_weight"].default is False and params["out_dtype"].default is None
    assert math.isclose(lt._RMS_DEFAULT_EPS, 1.1920928955078125e-07)


# ------------------------------------------------------------------ launch arguments through the real C ABI


def _has_driver():
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def test_launch_arguments_pass_the_c_abi_checks(monkeypatch):
    """_norm_forward / _norm_backward fill lntune_norm_*_args for every norm,
    dtype mix and option; liblntune checks the arguments before it loads the
    driver, so on a machine without one a well-formed call ends in
    LNTUNE_ERROR_NO_DRIVER, a malformed one in INVALID_ARGUMENT (with CPU
    tensors: nothing is launched)."""
    import itertools

    from lntune import _ffi

    if _has_driver():
        pytest.skip("a CUDA driver is present: these calls would launch kernels on host pointers")
    ops = _torch_ops
    seen = []

    def call(fn, dev, *args):
        st = fn(*args)
        seen.append((fn.__name__, st, _ffi.last_error()))
        if fn.__name__ == "lntune_norm_backward_workspace_size":
            args[1]._obj.value = 0

    monkeypatch.setattr(ops, "_call", call)
    monkeypatch.setattr(ops, "_stream", lambda dev: 0)
    n = 0
    for norm, xd, rd, wd, zc, od, res in itertools.product(
            (ops._LAYER, ops._RMS), (torch.float32, torch.bfloat16), (torch.float32, torch.bfloat16),
            (None, "x", torch.float32), (False, True), (None, torch.float16), (False, True)):
        if zc and wd is None:
            continue
        wdt = None if wd is None else (xd if wd == "x" else wd)
        M, N = 6, 40
        big = torch.randn(M, N + 24).to(xd)
        x = big[:, 3:N + 3] if res else torch.randn(M, N).to(xd)  # strided rows too
        r = torch.randn(M, N).to(rd) if res else None
        w = None if wdt is None else torch.rand(N).to(wdt)
        # LayerNorm: a bias beside the weight, or alone (fp32) where there is no weight.
        b = (w.clone() if w is not None else torch.randn(N)) if norm == ops._LAYER else None
        bdt = None if b is None else b.dtype
        sig = ops._NormSignature("t", norm, xd, None if r is None else rd, wdt, bdt, od, (N,),
                                 zc, w is not None)
        seen.clear()
        y, z, mean, rstd = ops._norm_forward(sig, 0, x, r, w, b, 1e-5)
        assert y.dtype == (od or xd) and (z is None or z.dtype == rd) and ((mean is None) == (norm == ops._RMS))
        dxd = ops.fused_dx_dtype(xd, rd) if res else xd
        dy = torch.randn(M, N).to(od or xd)
        dz = torch.randn(M, N).to(rd) if res else None
        want_dres = res and xd != rd  # dresidual (the residual's dtype) from the same kernel
        dx, dres, dw, db = ops._norm_backward("t", norm, 0, dy, dz, z if res else x, mean, rstd, (N,), w, bdt, zc,
                                              dxd, w is not None, b is not None, res, want_dres)
        assert dx.dtype == dxd and (dw is None or dw.dtype == w.dtype) and (db is None or db.dtype == b.dtype)
        assert (dres is not None) == want_dres and (dres is None or (dres.dtype, dres.shape) == (rd, x.shape))
        names = [s[0] for s in seen]
        assert names[0] == "lntune_norm_forward" and names[-1] == "lntune_norm_backward", names
        for name, st, msg in seen:
            n += 1
            assert st == _ffi.Status.ERROR_NO_DRIVER, (name, st, msg, norm, xd, rd, wdt, zc, od, res)
    assert n >= 300


# ------------------------------------------------------------------ autograd formulas (fake tensors, no engine)


class _Ctx:
    """Stands in for autograd's ctx: what setup_context stores, what backward reads."""

    def __init__(self, needs):
        self.needs_input_grad = needs
        self.materialize = True

    def save_for_backward(self, *ts):
        self.saved_tensors = ts

    def mark_non_differentiable(self, *ts):
        self.non_diff = ts

    def set_materialize_grads(self, v):
        self.materialize = v


@pytest.mark.parametrize("xd,rd", [(torch.bfloat16, torch.bfloat16), (torch.bfloat16, torch.float32),
                                   (torch.float32, torch.float16)])
def test_backward_formulas(xd, rd):
    """setup_context then backward of each forward op, on fake tensors: the
    *_bwd op is called with the saved tensors, and one gradient per input
    comes back in its input's dtype (None where not needed)."""
    with FakeTensorMode():
        x, r = _fake((4, 6, 32), xd), _fake((4, 6, 32), rd)
        w, b = _fake((32,), xd), _fake((32,), torch.float32 if xd == torch.float32 else xd)
        ops = _torch_ops

        out = _op("rms_norm_fwd")(x, [32], w, 1e-6, True, torch.float32)
        ctx = _Ctx((True, False, True, False, False, False))
        ops._rms_norm_setup_context(ctx, (x, [32], w, 1e-6, True, torch.float32), out)
        g = ops._rms_norm_backward(ctx, _fake(x.shape, torch.float32), None)
        assert len(g) == 6 and g[0].dtype == xd and g[2].shape == (32,) and g[2].dtype == xd
        assert g[1] is None and g[3] is None

        inputs = (x, r, [32], w, b, 1e-5, False, None)
        out = _op("add_layer_norm_fwd")(*inputs)
        for needs in ((True, True, False, True, True, False, False, False),
                      (False, True, False, False, True, False, False, False)):
            ctx = _Ctx(needs)
            ops._add_layer_norm_setup_context(ctx, inputs, out)
            assert ctx.materialize is False  # an unused y or z comes as None
            for dy, dz in ((out[0], out[1]), (out[0], None), (None, out[1])):
                g = ops._add_layer_norm_backward(ctx, dy, dz, None, None)
                assert len(g) == 8
                assert (g[0] is None) != needs[0] and (g[1] is None) != needs[1]
                if needs[0]:
                    assert g[0].dtype == xd and g[0].shape == x.shape
                assert g[1].dtype == rd
                assert (g[3] is not None) == needs[3] and g[4].dtype == b.dtype
            assert ops._add_layer_norm_backward(ctx, None, None, None, None) == (None,) * 8

        inputs = (x, r, [32], w, 1e-5, True, torch.bfloat16)
        out = _op("add_rms_norm_fwd")(*inputs)
        ctx = _Ctx((True, True, False, True, False, False, False))
        ops._add_rms_norm_setup_context(ctx, inputs, out)
        g = ops._add_rms_norm_backward(ctx, out[0], out[1], None)
        assert len(g) == 7 and g[0].dtype == xd and g[1].dtype == rd and g[3].dtype == w.dtype
