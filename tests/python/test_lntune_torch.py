"""GPU tests of the PyTorch binding (lntune.torch). Skipped without torch or CUDA.

    LNTUNE_LIBRARY=build/lib/liblntune.so PYTHONPATH=python python3 -m pytest -q tests/python/test_lntune_torch.py
    python3 tests/python/test_lntune_torch.py   # the same through pytest.main; exits 77
                                                # (skipped) without pytest, torch or a GPU

Accuracy: every output and gradient is compared with torch.nn.functional.layer_norm
computed in float64 on upcast copies of the same inputs. The error measure is
    err = max |out - ref| / max(max |ref|, 1e-3)
and it must be at most
    max(TOL[dtype], 2 * the same error of PyTorch run in the input's dtype),
with TOL = 1e-5 (fp32), 2e-3 (fp16: about two units in the last place of the
largest value), 1.6e-2 (bf16: likewise). The second term keeps the check fair
where rounding the output itself dominates (e.g. large dW sums in bf16).
Where the exact result is zero (N = 1: dx and dW vanish) an absolute error up
to ATOL (1e-5, 1e-4, 1e-3) passes too: lntune rounds differently from PyTorch
there, and rstd = 1/sqrt(eps) magnifies the last bit.
"""

import inspect
import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _script  # noqa: E402

    _script.run(__file__, cuda_for="the lntune.torch tests")

import pytest  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python"))

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: the lntune.torch tests need an NVIDIA GPU", allow_module_level=True)

import torch.nn.functional as F  # noqa: E402

import lntune  # noqa: E402
import lntune.torch as lt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _module_samples import check_module_info_samples  # noqa: E402

DEV = "cuda"
TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}
ATOL = {torch.float32: 1e-5, torch.float16: 1e-4, torch.bfloat16: 1e-3}
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
DTYPE_IDS = ["fp32", "fp16", "bf16"]


# ------------------------------------------------------------------ helpers


def _abs_err(out, ref):
    return (out.double() - ref).abs().max().item() if ref.numel() else 0.0


def _err(out, ref):
    return _abs_err(out, ref) / max(ref.abs().max().item(), 1e-3) if ref.numel() else 0.0


def _inputs(x_shape, shape, dtype, w_dtype=None, affine="wb", seed=0):
    g = torch.Generator(device=DEV).manual_seed(seed)
    w_dtype = w_dtype or dtype
    x = (torch.randn(x_shape, device=DEV, generator=g) * 0.5 - 2.3).to(dtype)
    dy = (torch.randn(x_shape, device=DEV, generator=g) * 0.1).to(dtype)
    w = (torch.rand(shape, device=DEV, generator=g) + 0.5).to(w_dtype) if "w" in affine else None
    b = torch.randn(shape, device=DEV, generator=g).to(w_dtype) if "b" in affine else None
    return x, w, b, dy


def _run(fn, x, shape, w, b, eps, dy, cast=None):
    """fn on fresh leaves (aliases keeping the strides, or copies cast to
    `cast`); returns (y, dx, dw, db)."""
    def leaf(t):
        if t is None:
            return None
        t = t.detach() if cast is None else t.detach().to(cast)
        return t.requires_grad_()
    xl, wl, bl = leaf(x), leaf(w), leaf(b)
    y = fn(xl, shape, wl, bl, eps)
    y.backward(dy if cast is None else dy.to(cast))
    return y.detach(), xl.grad, None if wl is None else wl.grad, None if bl is None else bl.grad


def _torch_same_dtype(x, shape, w, b, eps, dy):
    try:
        return _run(F.layer_norm, x, shape, w, b, eps, dy)
    except RuntimeError:  # e.g. a mixed-dtype combination PyTorch does not take
        return (None, None, None, None)


def check_layer_norm(x, shape, w, b, eps=1e-5, dy=None, fn=lt.layer_norm):
    dtype = x.dtype
    if dy is None:
        dy = torch.randn_like(x) * 0.1
    got = _run(fn, x, shape, w, b, eps, dy)
    ref = _run(F.layer_norm, x, shape, w, b, eps, dy, cast=torch.float64)
    same = _torch_same_dtype(x, shape, w, b, eps, dy)
    for name, g, r, t, src in zip(("y", "dx", "dw", "db"), got, ref, same, (x, x, w, b)):
        if r is None:
            assert g is None, name
            continue
        assert g is not None, "%s missing" % name
        assert g.shape == src.shape, (name, g.shape, src.shape)
        assert g.dtype == src.dtype, (name, g.dtype, src.dtype)
        assert torch.isfinite(g).all(), "%s has non-finite values" % name
        e = _err(g, r)
        bound = TOL[dtype]
        if t is not None:
            bound = max(bound, 2 * _err(t, r))
        exact_zero = r.numel() > 0 and r.abs().max().item() == 0.0  # e.g. dx, dW when N = 1
        assert e <= bound or (exact_zero and _abs_err(g, r) <= ATOL[dtype]), \
            "%s: err %.3e > %.3e (dtype %s, x %s, normalized %s)" % (
            name, e, bound, dtype, tuple(x.shape), shape)
    return got


# ------------------------------------------------------------------ the two switches of the C++ extension


@pytest.fixture(params=[False, True], ids=["py_ops", "native_ops"])
def native_ops(request):
    """The lntune:: ops' CUDA kernels: the Python ones, then the C++ ones
    (lntune._torch_ops.use_native_ops; LNTUNE_TORCH_NATIVE_OPS at import)."""
    from lntune import _torch_ops

    if request.param and not (lt._ext is not None and lt._ext.native_ops()):
        pytest.skip("the C++ extension is not built here: no C++ op kernels")
    got = _torch_ops.use_native_ops(request.param)
    # Only the ops the extension implements switch (the norm variants' ops
    # have Python kernels alone): those follow the switch, the others stay.
    with_cpp = set(lt._ext.native_ops()) if lt._ext is not None else set()
    assert got and all(v == (request.param and name in with_cpp) for name, v in got.items()), got
    if request.param:
        assert with_cpp and all(got[name] for name in with_cpp), got
    torch._dynamo.reset()  # compiled graphs cache nothing of the kernels, but start clean
    yield request.param
    _torch_ops.use_native_ops(_torch_ops.NATIVE_OPS)


@pytest.fixture(params=["function", "node"])
def eager_node(request):
    """The eager route's autograd node: the torch::autograd::Function or the
    plain Node (LNTUNE_TORCH_NODE_V2)."""
    from lntune import _torch_ext

    if lt._ext is None:
        if request.param == "node":
            pytest.skip("the C++ extension is not built here: the eager route is the ctypes one")
        yield request.param
        return
    lt._ext.set_node_v2(request.param == "node")
    yield request.param
    lt._ext.set_node_v2(_torch_ext.NODE_V2)


# ------------------------------------------------------------------ forward + backward

SHAPES = [
    ((16, 1), (1,)),
    ((33, 7), (7,)),
    ((8, 1000), (1000,)),
    ((4, 4097), (4097,)),
    ((2, 3, 64), (64,)),  # 3-D input
    ((3, 5, 6, 8), (6, 8)),  # two normalized dims
    ((1024, 4096), (4096,)),
    ((1, 8192), (8192,)),
    ((96, 16384), (16384,)),
]


@pytest.mark.parametrize("affine", ["wb", "w", "b", "none"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("x_shape,shape", SHAPES, ids=[str(s[0]) for s in SHAPES])
def test_matches_float64_reference(x_shape, shape, dtype, affine):
    x, w, b, dy = _inputs(x_shape, shape, dtype, affine=affine)
    check_layer_norm(x, shape, w, b, dy=dy)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
@pytest.mark.parametrize("affine", ["wb", "w", "b"])
@pytest.mark.parametrize("N", [7, 1024, 4097])
def test_fp32_weight_with_half_input(N, affine, dtype):
    x, w, b, dy = _inputs((64, N), (N,), dtype, w_dtype=torch.float32, affine=affine)
    check_layer_norm(x, (N,), w, b, dy=dy)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("M,N", [(4, 65536), (2, 262144)])
def test_long_rows(M, N, dtype):
    x, w, b, dy = _inputs((M, N), (N,), dtype)
    check_layer_norm(x, (N,), w, b, dy=dy)


@pytest.mark.parametrize("eps", [1e-6, 1e-5, 1e-2, 0.0])
def test_eps(eps):
    x, w, b, dy = _inputs((32, 512), (512,), torch.float32)
    check_layer_norm(x, (512,), w, b, eps=eps, dy=dy)


def test_strided_rows_are_used_in_place():
    big, w, b, dy = _inputs((64, 1536), (1536,), torch.float16)
    x = big[:, 256:1280]  # row stride 1536, 1024 columns
    assert not x.is_contiguous()
    check_layer_norm(x, (1024,), w[:1024].contiguous(), b[:1024].contiguous(), dy=dy[:, :1024].contiguous())


def test_non_contiguous_input_and_grad():
    x, w, b, _ = _inputs((512, 256), (512,), torch.bfloat16, affine="")
    x = x.t()  # (256, 512), column-major: copied to contiguous rows
    w = torch.rand(512, device=DEV, dtype=torch.bfloat16) + 0.5
    b = torch.randn(512, device=DEV, dtype=torch.bfloat16)
    dy = (torch.randn(512, 256, device=DEV) * 0.1).to(torch.bfloat16).t()
    check_layer_norm(x, (512,), w, b, dy=dy)


def test_expanded_grad():
    # y.sum().backward() hands the backward a stride-0 dy.
    x, w, b, _ = _inputs((16, 300), (300,), torch.float32)
    xl = x.clone().requires_grad_()
    lt.layer_norm(xl, (300,), w, b).sum().backward()
    xr = x.double().requires_grad_()
    F.layer_norm(xr, (300,), w.double(), b.double()).sum().backward()
    assert _err(xl.grad, xr.grad) <= 1e-5


def test_zero_rows():
    x = torch.empty((0, 64), device=DEV, requires_grad=True)
    w = torch.rand(64, device=DEV, requires_grad=True)
    b = torch.rand(64, device=DEV, requires_grad=True)
    y = lt.layer_norm(x, (64,), w, b)
    assert y.shape == (0, 64)
    y.backward(torch.empty_like(y))
    assert x.grad.shape == (0, 64)
    assert torch.equal(w.grad, torch.zeros_like(w)) and torch.equal(b.grad, torch.zeros_like(b))


def test_only_weight_grads():
    x, w, b, dy = _inputs((128, 256), (256,), torch.float32)
    w.requires_grad_()
    y = lt.layer_norm(x, (256,), w, b)  # x and b need no grad
    y.backward(dy)
    wr = w.detach().double().requires_grad_()
    F.layer_norm(x.double(), (256,), wr, b.double()).backward(dy.double())
    assert _err(w.grad, wr.grad) <= 1e-5
    assert b.grad is None and x.grad is None


def test_inference_path_matches_autograd_path():
    x, w, b, _ = _inputs((64, 2048), (2048,), torch.bfloat16)
    with torch.no_grad():
        y0 = lt.layer_norm(x, (2048,), w, b)
    y1 = lt.layer_norm(x.clone().requires_grad_(), (2048,), w, b)
    assert not y0.requires_grad and y1.requires_grad
    ref = F.layer_norm(x.double(), (2048,), w.double(), b.double())
    assert _err(y0, ref) <= TOL[torch.bfloat16] and _err(y1, ref) <= TOL[torch.bfloat16]


# ------------------------------------------------------------------ streams, devices, graphs


def test_runs_on_the_current_stream():
    """On a side stream, x and dy are written after a long spin on that stream.
    Had lntune launched on any other stream, it would read the zeros."""
    if not hasattr(torch.cuda, "_sleep"):
        pytest.skip("torch.cuda._sleep is not available")
    M, N = 2048, 4096
    src, w, b, dy_src = _inputs((M, N), (N,), torch.float32)
    x = torch.zeros_like(src)
    dy = torch.zeros_like(dy_src)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)
        x.copy_(src)
        x.requires_grad_()
        y = lt.layer_norm(x, (N,), w, b)
        torch.cuda._sleep(200_000_000)
        dy.copy_(dy_src)
        y.backward(dy)
    torch.cuda.synchronize()
    xr = src.double().requires_grad_()
    yr = F.layer_norm(xr, (N,), w.double(), b.double())
    yr.backward(dy_src.double())
    assert _err(y.detach(), yr.detach()) <= 1e-5
    assert _err(x.grad, xr.grad) <= 1e-5


def test_second_device():
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two CUDA devices")
    assert torch.cuda.current_device() == 0
    dev = torch.device("cuda", 1)
    x = (torch.randn(64, 1024, device=dev) * 0.5 - 2.3).requires_grad_()
    w = (torch.rand(1024, device=dev) + 0.5).requires_grad_()
    b = torch.randn(1024, device=dev).requires_grad_()
    y = lt.layer_norm(x, (1024,), w, b)
    y.backward(torch.ones_like(y))
    assert y.device == dev and x.grad.device == dev
    ref = F.layer_norm(x.detach().double(), (1024,), w.detach().double(), b.detach().double())
    assert _err(y.detach(), ref) <= 1e-5


def test_cuda_graph_capture_forward_and_backward(eager_node):
    N, M, dtype = 1024, 512, torch.float16
    ln = lt.LayerNorm(N, device=DEV, dtype=dtype)
    with torch.no_grad():
        ln.weight.copy_(torch.rand(N, device=DEV) + 0.5)
        ln.bias.copy_(torch.randn(N, device=DEV))
    x = torch.randn(M, N, device=DEV, dtype=dtype, requires_grad=True)
    dy = torch.randn(M, N, device=DEV, dtype=dtype) * 0.1
    # Warm up on a side stream (compiles and plans outside the capture).
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            x.grad = None
            ln.zero_grad(set_to_none=True)
            ln(x).backward(dy)
    torch.cuda.current_stream().wait_stream(s)
    x.grad = None
    ln.zero_grad(set_to_none=True)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = ln(x)
        y.backward(dy)
    for seed in (1, 2):
        gen = torch.Generator(device=DEV).manual_seed(seed)
        with torch.no_grad():
            x.copy_(torch.randn(M, N, device=DEV, generator=gen) * 0.5 - 2.3)
            dy.copy_(torch.randn(M, N, device=DEV, generator=gen) * 0.1)
        g.replay()
        torch.cuda.synchronize()
        ref = _run(F.layer_norm, x, (N,), ln.weight, ln.bias, ln.eps, dy, cast=torch.float64)
        for name, got, r in zip(("y", "dx", "dw", "db"), (y, x.grad, ln.weight.grad, ln.bias.grad), ref):
            assert _err(got.detach(), r) <= 3 * TOL[dtype], name


# ------------------------------------------------------------------ nn.Module drop-in


def test_module_signature_matches_torch():
    ours = list(inspect.signature(lt.LayerNorm.__init__).parameters.items())
    theirs = list(inspect.signature(torch.nn.LayerNorm.__init__).parameters.items())
    assert [(n, p.default) for n, p in ours] == [(n, p.default) for n, p in theirs]


@pytest.mark.parametrize("kwargs", [{}, {"elementwise_affine": False}, {"bias": False}, {"eps": 1e-6}])
def test_module_is_a_drop_in(kwargs):
    shape = (4, 96)
    ref = torch.nn.LayerNorm(shape, device=DEV, dtype=torch.float32, **kwargs)
    ours = lt.LayerNorm(shape, device=DEV, dtype=torch.float32, **kwargs)
    assert repr(ours) == repr(ref)
    assert ours.state_dict().keys() == ref.state_dict().keys()
    for k, v in ref.state_dict().items():
        assert torch.equal(ours.state_dict()[k], v), k
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.rand_like(p) + 0.5)
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(8, 3, 4, 96, device=DEV) * 0.5 - 2.3
    dy = torch.randn_like(x) * 0.1
    xo = x.clone().requires_grad_()
    xr = x.double().requires_grad_()
    yo = ours(xo)
    ref64 = torch.nn.LayerNorm(shape, dtype=torch.float64, device=DEV, **kwargs)
    ref64.load_state_dict({k: v.double() for k, v in ref.state_dict().items()})
    yr = ref64(xr)
    yo.backward(dy)
    yr.backward(dy.double())
    assert _err(yo.detach(), yr.detach()) <= 1e-5
    assert _err(xo.grad, xr.grad) <= 1e-5
    for (n, po), (_, pr) in zip(ours.named_parameters(), ref64.named_parameters()):
        assert po.grad.dtype == po.dtype
        assert _err(po.grad, pr.grad) <= 1e-5, n


def test_module_from_torch_and_half_params():
    ref = torch.nn.LayerNorm(256, device=DEV, dtype=torch.bfloat16)
    with torch.no_grad():
        ref.weight.normal_()
        ref.bias.normal_()
    ours = lt.LayerNorm.from_torch(ref)
    assert ours.weight.dtype == torch.bfloat16 and ours.weight.device == ref.weight.device
    x, _, _, dy = _inputs((32, 256), (256,), torch.bfloat16, affine="")
    check_layer_norm(x, (256,), ref.weight.detach(), ref.bias.detach(), dy=dy)
    y = ours(x)
    assert _err(y.detach(), F.layer_norm(x.double(), (256,), ref.weight.double(), ref.bias.double())) <= TOL[torch.bfloat16]


# ------------------------------------------------------------------ errors


def test_cpu_tensor_is_a_type_error():
    with pytest.raises(TypeError, match="CUDA tensor"):
        lt.layer_norm(torch.randn(4, 8), (8,))


@pytest.mark.parametrize("dtype", [torch.float64, torch.int32])
def test_unsupported_dtype_is_a_type_error(dtype):
    with pytest.raises(TypeError, match="float32, float16 or bfloat16"):
        lt.layer_norm(torch.ones(4, 8, device=DEV, dtype=dtype), (8,))


def test_mismatched_shapes():
    x = torch.randn(4, 8, device=DEV)
    with pytest.raises(ValueError, match="last dimensions"):
        lt.layer_norm(x, (4,))
    with pytest.raises(ValueError, match="must have shape"):
        lt.layer_norm(x, (8,), torch.ones(4, device=DEV))


def test_weight_dtype_rules():
    x = torch.randn(4, 8, device=DEV, dtype=torch.bfloat16)
    with pytest.raises(TypeError, match="or float32"):
        lt.layer_norm(x, (8,), torch.ones(8, device=DEV, dtype=torch.float16))
    with pytest.raises(TypeError, match="same dtype"):
        lt.layer_norm(x, (8,), torch.ones(8, device=DEV), torch.zeros(8, device=DEV, dtype=torch.bfloat16))
    with pytest.raises(TypeError, match="on cpu"):
        lt.layer_norm(x, (8,), torch.ones(8, dtype=torch.bfloat16))


@pytest.mark.parametrize("requires_grad", [False, True])
def test_library_errors_carry_status_and_message(requires_grad):
    x = torch.randn(4, 8, device=DEV, requires_grad=requires_grad)
    with pytest.raises(lntune.LntuneError) as ei:
        lt.layer_norm(x, (8,), eps=float("nan"))
    assert ei.value.status == lntune.Status.ERROR_INVALID_ARGUMENT
    assert "eps must be a finite number" in ei.value.message
    assert "lntune_forward" in str(ei.value)
    y = lt.layer_norm(x, (8,), eps=1e-5)  # and the next call works
    assert torch.isfinite(y).all()


# ------------------------------------------------------------------ drop-in fidelity


def test_negative_eps_is_computed_with_like_torch():
    x = torch.randn(2, 2, 3, device=DEV) * 4
    w, b = torch.rand(2, 3, device=DEV) + 0.5, torch.randn(2, 3, device=DEV)
    torch.testing.assert_close(lt.layer_norm(x, (2, 3), w, b, -0.5), F.layer_norm(x, (2, 3), w, b, -0.5))


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("affine", ["wb", "w", "b", "none"])
def test_single_column_rows_are_exact(dtype, affine):
    """N = 1: x - mean is exactly 0, so y = bias (0 without one), and dx and dW
    are exactly 0, as in torch (rstd = 1/sqrt(eps) would magnify any rounding)."""
    x, w, b, dy = _inputs((64, 1), (1,), dtype, affine=affine)
    y, dx, dw, db = _run(lt.layer_norm, x, (1,), w, b, 1e-5, dy)
    assert torch.equal(y, (b if b is not None else torch.zeros(1, device=DEV, dtype=dtype)).expand_as(y).to(dtype))
    assert torch.count_nonzero(dx).item() == 0, "dx at N = 1 must be exactly 0, got max |dx| %.3e" % dx.abs().max()
    if dw is not None:
        assert torch.count_nonzero(dw).item() == 0, dw


def _opinfo(name):
    pytest.importorskip("expecttest", reason="torch.testing._internal needs the expecttest package")
    from torch.testing._internal.common_methods_invocations import op_db

    return next(o for o in op_db if o.name == name)


def _grads(fn, args, kwargs, g):
    """(y, grads of every floating tensor argument that requires grad) of fn."""
    y = fn(*args, **kwargs)
    leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    if not leaves or y.numel() == 0:
        return [y] + [torch.zeros_like(a) for a in leaves]
    return [y] + list(torch.autograd.grad(y, leaves, g, allow_unused=True))


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_opinfo_samples(dtype):
    """PyTorch's own OpInfo samples for nn.functional.layer_norm, through
    lntune.torch.layer_norm: outputs and gradients equal torch's within
    torch.testing.assert_close's defaults."""
    op = _opinfo("nn.functional.layer_norm")
    n = 0
    failures = []
    for sample in op.sample_inputs(DEV, dtype, requires_grad=True):
        args = (sample.input,) + tuple(sample.args)
        g = torch.randn_like(sample.input)
        ours = _grads(lt.layer_norm, args, sample.kwargs, g)
        ref = _grads(F.layer_norm, args, sample.kwargs, g)
        for name, a, r in zip(("y", "dx", "dw", "db"), ours, ref):
            try:
                torch.testing.assert_close(a, r)
            except AssertionError as e:
                failures.append("x %s, args %s, kwargs %s: %s: %s" % (
                    tuple(sample.input.shape), [tuple(a.shape) if isinstance(a, torch.Tensor) else a for a in
                                                sample.args], sample.kwargs, name, " ".join(str(e).split())[:300]))
        n += 1
    assert n >= 5
    assert not failures, "%d of %d samples' outputs differ from torch's:\n" % (len(failures), n) + "\n".join(failures)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_module_info_samples(dtype):
    """PyTorch's ModuleInfo inputs for nn.LayerNorm, through lntune.torch.LayerNorm."""
    check_module_info_samples(torch.nn.LayerNorm, lt.LayerNorm, DEV, dtype, at_least=3)


# ------------------------------------------------------------------ torch custom ops


AFFINES = ["wb", "w", "b", "none", "wb32"]


def _op_args(dtype, affine, shape=(3, 17, 64), k=1, requires_grad=True, scale=0.5):
    g = torch.Generator(device=DEV).manual_seed(3)
    ns = list(shape[len(shape) - k:])
    wdt = torch.float32 if affine == "wb32" else dtype
    x = (torch.randn(shape, device=DEV, generator=g) * scale - 2.3).to(dtype).requires_grad_(requires_grad)
    w = (torch.rand(ns, device=DEV, generator=g) + 0.5).to(wdt).requires_grad_(requires_grad) if "w" in affine else None
    b = torch.randn(ns, device=DEV, generator=g).to(wdt).requires_grad_(requires_grad) if "b" in affine else None
    return x, ns, w, b


@pytest.mark.parametrize("affine", AFFINES)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_opcheck_forward(dtype, affine, native_ops):
    if affine == "wb32" and dtype == torch.float32:
        pytest.skip("same as wb")
    x, ns, w, b = _op_args(dtype, affine)
    torch.library.opcheck(torch.ops.lntune.layer_norm_fwd.default, (x, ns, w, b, 1e-5))
    # Two normalized dims, and a negative eps (variance 4 + eps > 0: finite, as in torch).
    x2, ns2, w2, b2 = _op_args(dtype, affine, shape=(5, 6, 8), k=2, scale=2.0)
    torch.library.opcheck(torch.ops.lntune.layer_norm_fwd.default, (x2, ns2, w2, b2, -0.5))


@pytest.mark.parametrize("affine", AFFINES)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_opcheck_backward(dtype, affine, native_ops):
    if affine == "wb32" and dtype == torch.float32:
        pytest.skip("same as wb")
    x, ns, w, b = _op_args(dtype, affine, requires_grad=False)
    _, mean, rstd = torch.ops.lntune.layer_norm_fwd(x, ns, w, b, 1e-5)
    dy = torch.randn_like(x)
    for mask in ([True, True, True], [True, False, True], [False, True, False]):
        torch.library.opcheck(torch.ops.lntune.layer_norm_bwd.default, (dy, x, mean, rstd, ns, w, b, mask))


def test_ops_match_the_eager_route(native_ops, eager_node):
    x, ns, w, b = _op_args(torch.bfloat16, "wb")
    dy = torch.randn_like(x)
    y_op, mean, rstd = torch.ops.lntune.layer_norm_fwd(x, ns, w, b, 1e-5)
    assert mean.shape == rstd.shape == x.shape[:-1] and mean.dtype == torch.float32
    y = lt.layer_norm(x, ns, w, b, 1e-5)
    assert torch.equal(y, y_op)
    dx, dw, db = torch.autograd.grad(y, (x, w, b), dy)
    dx2, dw2, db2 = torch.autograd.grad(y_op, (x, w, b), dy)
    assert torch.equal(dx, dx2) and torch.equal(dw, dw2) and torch.equal(db, db2)


class _Block(torch.nn.Module):
    """A transformer block's norm path: Linear -> LayerNorm -> residual."""

    def __init__(self, n, dtype):
        super().__init__()
        self.lin = torch.nn.Linear(n, n, device=DEV, dtype=dtype)
        self.ln = lt.LayerNorm(n, device=DEV, dtype=dtype)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.normal_()

    def forward(self, x):
        return x + self.ln(self.lin(x))


def _step(model, x, g):
    x = x.detach().clone().requires_grad_()
    model.zero_grad(set_to_none=True)
    y = model(x)
    y.backward(g)
    return [y.detach(), x.grad] + [p.grad for p in model.parameters()]


@pytest.fixture
def no_tf32():
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32 = old


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_compile_fullgraph_no_graph_break(dtype, no_tf32, native_ops):
    torch._dynamo.reset()
    N = 256
    blk = _Block(N, dtype)
    x = torch.randn(4, 16, N, device=DEV, dtype=dtype)
    g = torch.randn_like(x)
    ex = torch._dynamo.explain(blk)(x.clone().requires_grad_())
    assert ex.graph_break_count == 0, ex.break_reasons
    assert ex.graph_count == 1
    targets = [str(n.target) for gm in ex.graphs for n in gm.graph.nodes]
    assert any("lntune.layer_norm_fwd" in t for t in targets), targets
    eager = _step(blk, x, g)
    compiled = _step(torch.compile(blk, fullgraph=True), x, g)
    # Outputs: y, x.grad, then the Linear's and the LayerNorm's parameter grads.
    # Inductor generates the residual add and the Linear bias grad's row sum
    # itself (another summation order than eager's), so fp32 results agree to
    # rounding of those sums (~1e-5 relative), bf16 ones to about one ulp.
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)
    for i, (c, e) in enumerate(zip(compiled, eager)):
        torch.testing.assert_close(c, e, **tol, msg=lambda m: "output %d: %s" % (i, m))


def test_compile_reduce_overhead_matches_eager(no_tf32, native_ops):
    torch._dynamo.reset()
    N = 512
    blk = _Block(N, torch.float32)
    cblk = torch.compile(blk, mode="reduce-overhead", fullgraph=True)
    for seed in range(4):  # warm-up, recording, then replays with new data
        gen = torch.Generator(device=DEV).manual_seed(seed)
        x = torch.randn(8, 32, N, device=DEV, generator=gen)
        g = torch.randn(8, 32, N, device=DEV, generator=gen)
        got = [t.clone() for t in _step(cblk, x, g)]
        ref = _step(blk, x, g)
        for i, (c, e) in enumerate(zip(got, ref)):
            # fp32 with inductor's own sums for the Linear bias grad (see above):
            # seen 1.3e-5 absolute on one of 512 elements of magnitude ~1.
            torch.testing.assert_close(c, e, rtol=1e-4, atol=1e-4,
                                       msg=lambda m: "seed %d output %d: %s" % (seed, i, m))


@pytest.mark.parametrize("affine", ["wb", "w", "b", "none"])
def test_ctypes_route_matches_the_native_route(affine, monkeypatch):
    """The C++ fast path (when built) and the ctypes fallback launch the same
    kernels: bitwise equal outputs and gradients."""
    if lt._ext is None:
        pytest.skip("the C++ fast path is not built here: every test ran the ctypes route")
    x, w, b, dy = _inputs((64, 1000), (1000,), torch.bfloat16, affine=affine)
    native = _run(lt.layer_norm, x, (1000,), w, b, 1e-5, dy)
    monkeypatch.setattr(lt, "_ext", None)
    fallback = _run(lt.layer_norm, x, (1000,), w, b, 1e-5, dy)
    for n, a, r in zip(("y", "dx", "dw", "db"), native, fallback):
        assert (a is None) == (r is None), n
        if a is not None:
            assert torch.equal(a, r), n


def test_native_route_is_built():
    """Where a compiler and CUDA headers exist (the GPU test machines), the C++
    fast path must build: without it the host-time targets are not met."""
    import shutil

    if os.environ.get("LNTUNE_TORCH_EXT", "auto").lower() in ("off", "0", "no"):
        pytest.skip("LNTUNE_TORCH_EXT=off")
    if shutil.which(os.environ.get("CXX", "c++")) is None:
        pytest.skip("no C++ compiler")
    assert lt._ext is not None


def test_torch_function_and_dispatch_modes_take_the_op_route():
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x, ns, w, b = _op_args(torch.float32, "wb", requires_grad=False)
    with Record():
        y = lt.layer_norm(x, ns, w, b)
    assert any("lntune.layer_norm_fwd" in s for s in seen), seen
    torch.testing.assert_close(y, F.layer_norm(x, ns, w, b))


# ------------------------------------------------------------------ the new C++ paths against the verified ones


def _op_cases():
    g = torch.Generator(device=DEV).manual_seed(5)
    for dtype, affine in ((torch.bfloat16, "wb"), (torch.float16, "w"), (torch.float32, "b"), (torch.float32, "none"),
                          (torch.bfloat16, "wb32")):
        x, ns, w, b = _op_args(dtype, affine, requires_grad=False)
        yield x, ns, w, b
    big = torch.randn(64, 1536, device=DEV, generator=g).to(torch.float16)
    # Every tensor from g: the two passes of test_native_ops_equal_the_python_ops
    # must see the same inputs (a weight from the global RNG made them differ).
    w16 = (torch.rand(1024, device=DEV, generator=g) + 0.5).to(torch.float16)
    yield big[:, 256:1280], [1024], w16, None  # strided rows
    xt = torch.randn(512, 256, device=DEV, generator=g).t()  # column-major: copied
    yield xt, [512], None, torch.randn(512, device=DEV, generator=g)
    yield (torch.empty(0, 64, device=DEV), [64], torch.rand(64, device=DEV, generator=g),
           torch.rand(64, device=DEV, generator=g))  # M = 0
    yield torch.empty(3, 0, device=DEV), [0], torch.empty(0, device=DEV), None  # N = 0


def test_native_ops_equal_the_python_ops():
    """The C++ op kernels launch what the Python ones launch: bitwise equal
    results, for every mask, stride case and degenerate shape."""
    from lntune import _torch_ops

    if lt._ext is None or not lt._ext.native_ops():
        pytest.skip("the C++ extension is not built here")
    results = {}
    try:
        for native in (False, True):
            _torch_ops.use_native_ops(native)
            out = []
            for x, ns, w, b in _op_cases():
                y, mean, rstd = torch.ops.lntune.layer_norm_fwd(x, ns, w, b, 1e-5)
                dy = torch.ones_like(x) * 0.25 + x.detach() * 0.1
                out.append((y, mean, rstd))
                for mask in ([True, True, True], [True, False, True], [False, True, False]):
                    out.append(torch.ops.lntune.layer_norm_bwd(dy, x, mean, rstd, ns, w, b, mask))
            torch.cuda.synchronize()
            results[native] = out
    finally:
        _torch_ops.use_native_ops(_torch_ops.NATIVE_OPS)
    for i, (py, cc) in enumerate(zip(results[False], results[True])):
        for j, (a, c) in enumerate(zip(py, cc)):
            assert a.shape == c.shape and a.dtype == c.dtype and a.device == c.device, (i, j)
            assert torch.equal(a, c) or (a.isnan().all() and c.isnan().all()), (i, j)


@pytest.mark.parametrize("native", [False, True], ids=["py_ops", "native_ops"])
def test_op_errors_are_the_python_ones(native):
    from lntune import _torch_ops

    if native and (lt._ext is None or not lt._ext.native_ops()):
        pytest.skip("the C++ extension is not built here")
    _torch_ops.use_native_ops(native)
    try:
        x = torch.randn(4, 8, device=DEV)
        op = torch.ops.lntune.layer_norm_fwd.default
        with pytest.raises(TypeError, match="x must be float32, float16 or bfloat16, got torch.float64"):
            op(x.double(), [8], None, None, 1e-5)
        with pytest.raises(ValueError, match=r"normalized_shape \[7\] must be the last dimensions of x"):
            op(x, [7], None, None, 1e-5)
        with pytest.raises(TypeError, match="weight must be torch.float32 .x's dtype. or float32, got torch.float16"):
            op(x, [8], torch.ones(8, device=DEV, dtype=torch.float16), None, 1e-5)
        with pytest.raises(ValueError, match=r"bias must have shape \[8\] .normalized_shape., got \[4\]"):
            op(x, [8], None, torch.ones(4, device=DEV), 1e-5)
        with pytest.raises((RuntimeError, lntune.LntuneError), match="eps must be a finite number"):
            op(x, [8], None, None, float("nan"))
    finally:
        _torch_ops.use_native_ops(_torch_ops.NATIVE_OPS)


def _eager_grads(x, ns, w, b, dy, wrt, retain=False):
    leaves = {"x": x, "w": w, "b": b}
    # Fresh leaves with the same strides (strided rows stay strided).
    ins = {k: (None if t is None else t.detach().requires_grad_(k in wrt)) for k, t in leaves.items()}
    y = lt.layer_norm(ins["x"], ns, ins["w"], ins["b"])
    want = [ins[k] for k in ("x", "w", "b") if k in wrt and ins[k] is not None]
    gs = torch.autograd.grad(y, want, dy, retain_graph=retain)
    return [y.detach()] + list(gs), y


def test_node_v2_equals_the_function_node():
    """The plain autograd Node and the torch::autograd::Function launch the
    same kernels: bitwise equal results, for every subset of wanted grads."""
    if lt._ext is None:
        pytest.skip("the C++ extension is not built here")
    from lntune import _torch_ext

    results = {}
    try:
        for v2 in (False, True):
            lt._ext.set_node_v2(v2)
            out = []
            for x, ns, w, b in _op_cases():
                dy = torch.ones_like(x) * 0.25 + x * 0.1
                for wrt in ("xwb", "x", "w", "wb", "b"):
                    if not any(k in wrt for k, t in (("x", x), ("w", w), ("b", b)) if t is not None):
                        continue
                    gs, y = _eager_grads(x, ns, w, b, dy, wrt)
                    out.append(gs)
            torch.cuda.synchronize()
            results[v2] = out
    finally:
        lt._ext.set_node_v2(_torch_ext.NODE_V2)
    for i, (a, c) in enumerate(zip(results[False], results[True])):
        assert len(a) == len(c), i
        for j, (t1, t2) in enumerate(zip(a, c)):
            assert t1.shape == t2.shape and t1.dtype == t2.dtype, (i, j)
            assert torch.equal(t1, t2), (i, j)


def test_node_v2_graph_semantics():
    """retain_graph, a second backward without it, double backward, the
    node's name, a zero incoming gradient, a saved input changed in place."""
    if lt._ext is None:
        pytest.skip("the C++ extension is not built here")
    from lntune import _torch_ext

    lt._ext.set_node_v2(True)
    try:
        x, ns, w, b = _op_args(torch.float32, "wb")
        y = lt.layer_norm(x, ns, w, b)
        assert "Lntune" in y.grad_fn.name()
        dy = torch.randn_like(y)
        g1 = torch.autograd.grad(y, (x, w, b), dy, retain_graph=True)
        g2 = torch.autograd.grad(y, (x, w, b), dy)
        for a, c in zip(g1, g2):
            assert torch.equal(a, c)
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            torch.autograd.grad(y, (x,), dy)
        y = lt.layer_norm(x, ns, w, b)
        with pytest.raises(RuntimeError, match="double backward"):
            torch.autograd.grad(y, (x,), dy, create_graph=True)
        # A zero incoming gradient: dx is exactly zero.
        y = lt.layer_norm(x, ns, w, b)
        (gx,) = torch.autograd.grad((y * 0).sum() + x.sum(), (x,))
        assert torch.equal(gx, torch.ones_like(x))
        # A saved input modified in place is caught (version counter).
        xl = x.detach().clone().requires_grad_()
        xx = xl * 1
        y = lt.layer_norm(xx, ns, w, b)
        with torch.no_grad():
            xx.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward(dy)
    finally:
        lt._ext.set_node_v2(_torch_ext.NODE_V2)


@pytest.mark.parametrize("native", [False, True], ids=["node_v2", "native_ops"])
def test_backward_workspace_size_is_memoised(native):
    """A warm backward asks the library for its workspace size once per
    shape (and again after set_tuned, which may change the plan)."""
    from lntune import _torch_ext, _torch_ops

    if lt._ext is None or not lt._ext.native_ops():
        pytest.skip("the C++ extension is not built here")
    lt._ext.set_node_v2(True)
    _torch_ops.use_native_ops(native)
    try:
        x, ns, w, b = _op_args(torch.bfloat16, "wb", shape=(37, 768))
        dy = torch.randn_like(x)

        def backward():
            if native:
                _, mean, rstd = torch.ops.lntune.layer_norm_fwd(x.detach(), ns, w.detach(), b.detach(), 1e-5)
                torch.ops.lntune.layer_norm_bwd(dy, x.detach(), mean, rstd, ns, w.detach(), b.detach(),
                                                [True, True, True])
            else:
                torch.autograd.grad(lt.layer_norm(x, ns, w, b), (x, w, b), dy)

        backward()
        q = lt._ext.workspace_queries()
        for _ in range(3):
            backward()
        assert lt._ext.workspace_queries() == q
        from lntune import _ffi

        if _ffi.has_set_tuned():
            _ffi.set_tuned(True)  # the state it has by default; the plans start afresh all the same
            backward()
            assert lt._ext.workspace_queries() == q + 1
    finally:
        lt._ext.set_node_v2(_torch_ext.NODE_V2)
        _torch_ops.use_native_ops(_torch_ops.NATIVE_OPS)
