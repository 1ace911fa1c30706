"""GPU tests of lntune.torch's RMSNorm and fused residual forms (rms_norm,
RMSNorm, fused_add_layer_norm, fused_add_rms_norm). Skipped without torch or CUDA.

    LNTUNE_LIBRARY=build/lib/liblntune.so PYTHONPATH=python python3 -m pytest -q tests/python/test_lntune_torch_norms.py
    python3 tests/python/test_lntune_torch_norms.py   # through pytest.main; exits 77 (skipped) without pytest,
                                                      # torch or a GPU

Accuracy: every output and gradient is compared with the same computation in
float64 on upcast copies of the inputs (F.layer_norm / F.rms_norm; z = x +
residual rounded to the residual's dtype, as lntune stores it, with the
rounding's gradient taken as 1; zero-centred gamma as weight 1 + w). The
error measure is err = max |out - ref| / max(max |ref|, 1e-3), and it must be
at most max(TOL[d] over the dtypes of x, residual and y, 2 * the error of
PyTorch doing the same in those dtypes), TOL and ATOL (where the exact
result is zero) as in test_lntune_torch.py. tests/python's harness of these
checks against a pure-PyTorch stand-in ran on the CPU when they were written.
"""

import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _script  # noqa: E402

    _script.run(__file__, cuda_for="the lntune.torch norm tests")

import pytest  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python"))

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: the lntune.torch norm tests need an NVIDIA GPU", allow_module_level=True)

import torch.nn.functional as F  # noqa: E402

import lntune.torch as lt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _module_samples import check_module_info_samples  # noqa: E402

DEV = "cuda"
TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}
ATOL = {torch.float32: 1e-5, torch.float16: 1e-4, torch.bfloat16: 1e-3}
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
DTYPE_IDS = ["fp32", "fp16", "bf16"]
KINDS = ["rms", "add_ln", "add_rms"]
F32_EPS = torch.finfo(torch.float32).eps


def _abs_err(out, ref):
    return (out.double() - ref).abs().max().item() if ref.numel() else 0.0


def _err(out, ref):
    return _abs_err(out, ref) / max(ref.abs().max().item(), 1e-3) if ref.numel() else 0.0


def _other(dtype):
    """A residual/output dtype other than x's: fp32 for half x, bf16 for fp32 x."""
    return torch.float32 if dtype != torch.float32 else torch.bfloat16


# A variant: (kind, x dtype, option). Options:
#   w      weight (and bias for LayerNorm) in x's dtype
#   none   no weight, no bias
#   b      bias only (LayerNorm), float32
#   w32    float32 weight (and bias) with half x
#   zc     zero-centred gamma
#   out    y in another dtype (out_dtype)
#   res    residual in another dtype (fused forms)
#   all    zc + out + res + w32 (where they apply)
OPTIONS = ["w", "none", "b", "w32", "zc", "out", "res", "all"]


def _variants():
    out = []
    for kind in KINDS:
        for d, did in zip(DTYPES, DTYPE_IDS):
            for opt in OPTIONS:
                if opt == "w32" and d == torch.float32:
                    continue
                if (opt == "res" and kind == "rms") or (opt == "b" and kind != "add_ln"):
                    continue
                out.append(pytest.param(kind, d, opt, id="%s-%s-%s" % (kind, did, opt)))
    return out


def _config(kind, dtype, opt):
    """(weight dtype or None, has bias, zero_centered, out_dtype, residual dtype or None)."""
    w_dtype = None if opt in ("none", "b") else (torch.float32 if opt in ("w32", "all") and dtype != torch.float32
                                          else dtype)
    has_bias = kind == "add_ln" and (w_dtype is not None or opt == "b")
    zc = opt in ("zc", "all")
    out_dtype = _other(dtype) if opt in ("out", "all") else None
    r_dtype = None if kind == "rms" else (_other(dtype) if opt in ("res", "all") else dtype)
    return w_dtype, has_bias, zc, out_dtype, r_dtype


def make_inputs(kind, shape, k, dtype, opt, seed=0):
    w_dtype, has_bias, zc, out_dtype, r_dtype = _config(kind, dtype, opt)
    b_dtype = w_dtype or torch.float32
    g = torch.Generator(device=DEV).manual_seed(seed)
    ns = tuple(shape[len(shape) - k:])
    x = (torch.randn(shape, device=DEV, generator=g) * 0.7 + 0.3).to(dtype)
    r = (torch.randn(shape, device=DEV, generator=g) - 1.1).to(r_dtype) if r_dtype is not None else None
    # Zero-centred weights are stored around zero.
    w = None
    if w_dtype is not None:
        w = ((torch.rand(ns, device=DEV, generator=g) - 0.5) if zc else (torch.rand(ns, device=DEV, generator=g)
                                                                        + 0.5)).to(w_dtype)
    b = torch.randn(ns, device=DEV, generator=g).to(b_dtype) if has_bias else None
    y_dtype = out_dtype or dtype
    dy = (torch.randn(shape, device=DEV, generator=g) * 0.1).to(y_dtype)
    dz = (torch.randn(shape, device=DEV, generator=g) * 0.1).to(r_dtype) if r_dtype is not None else None
    return dict(kind=kind, x=x, r=r, ns=ns, w=w, b=b, zc=zc, out_dtype=out_dtype, dy=dy, dz=dz)


def call_lntune(c, x, r, w, b, eps=None):
    """(y, z) of lntune.torch's op for case c on these inputs (z None for RMSNorm)."""
    kw = dict(zero_centered_weight=c["zc"], out_dtype=c["out_dtype"])
    if c["kind"] == "rms":
        return lt.rms_norm(x, c["ns"], w, eps, **kw), None
    if c["kind"] == "add_ln":
        return lt.fused_add_layer_norm(x, r, c["ns"], w, b, 1e-5 if eps is None else eps, **kw)
    return lt.fused_add_rms_norm(x, r, c["ns"], w, eps, **kw)


def run_lntune(c, eps=None):
    """lntune on fresh leaves; {name: tensor} of outputs and gradients."""
    x, r, w, b = (None if c[n] is None else c[n].detach().requires_grad_() for n in ("x", "r", "w", "b"))
    y, z = call_lntune(c, x, r, w, b, eps)
    outs, grads = [y], [c["dy"]]
    if z is not None:
        outs.append(z)
        grads.append(c["dz"])
    torch.autograd.backward(outs, grads)
    return {"y": y.detach(), "z": None if z is None else z.detach(), "dx": x.grad,
            "dr": None if r is None else r.grad, "dw": None if w is None else w.grad,
            "db": None if b is None else b.grad}


def run_torch(c, eps=None, dtype=torch.float64):
    """The same with PyTorch ops in `dtype` (float64: the reference; None: the
    inputs' own dtypes, PyTorch's rounding for the fairness bound)."""
    def leaf(t):
        if t is None:
            return None
        return (t.detach() if dtype is None else t.detach().to(dtype)).requires_grad_()
    x, r, w, b = (leaf(c[n]) for n in ("x", "r", "w", "b"))
    rd = None if c["r"] is None else c["r"].dtype
    z = None
    if r is not None:
        z = x + r
        if dtype is None:
            z = z.to(rd)
        else:  # lntune stores z in the residual's dtype and normalizes that
            z = z + (z.to(rd).to(dtype) - z).detach()
        src = z
    else:
        src = x
    w_eff = None if w is None else ((1 + w) if c["zc"] else w)
    if c["kind"] == "add_ln":
        y = F.layer_norm(src, c["ns"], w_eff, b, 1e-5 if eps is None else eps)
    else:
        y = F.rms_norm(src, c["ns"], w_eff, F32_EPS if eps is None else eps)
    if dtype is None:
        y = y.to(c["out_dtype"] or c["x"].dtype)
    outs, grads = [y], [c["dy"] if dtype is None else c["dy"].to(dtype)]
    if z is not None:
        outs.append(z)
        grads.append(c["dz"] if dtype is None else c["dz"].to(dtype))
    torch.autograd.backward(outs, grads)
    return {"y": y.detach(), "z": None if z is None else z.detach(), "dx": x.grad,
            "dr": None if r is None else r.grad, "dw": None if w is None else w.grad,
            "db": None if b is None else b.grad}


def check_variant(c, eps=None):
    got = run_lntune(c, eps)
    ref = run_torch(c, eps)
    try:
        same = run_torch(c, eps, dtype=None)
    except RuntimeError:  # a dtype mix PyTorch does not take
        same = {}
    dts = [c["x"].dtype] + [t.dtype for t in (c["r"],) if t is not None] + [c["out_dtype"] or c["x"].dtype]
    tol = max(TOL[d] for d in dts)
    want_dtype = {"y": c["out_dtype"] or c["x"].dtype, "z": None if c["r"] is None else c["r"].dtype,
                  "dx": c["x"].dtype, "dr": None if c["r"] is None else c["r"].dtype,
                  "dw": None if c["w"] is None else c["w"].dtype, "db": None if c["b"] is None else c["b"].dtype}
    for name, r in ref.items():
        g = got[name]
        if r is None:
            assert g is None, name
            continue
        assert g is not None, "%s missing" % name
        assert g.shape == r.shape, (name, g.shape, r.shape)
        assert g.dtype == want_dtype[name], (name, g.dtype, want_dtype[name])
        assert torch.isfinite(g).all(), "%s has non-finite values" % name
        bound = tol
        if same.get(name) is not None:
            bound = max(bound, 2 * _err(same[name], r))
        e = _err(g, r)
        exact_zero = r.abs().max().item() <= 1e-9  # LayerNorm at N = 1: dW vanishes (float64 rounding aside)
        assert e <= bound or (exact_zero and _abs_err(g, r) <= max(ATOL[d] for d in dts)), "%s: err %.3e > %.3e (%s, x %s %s, normalized %s, zc %s, out %s, residual %s)" % (
            name, e, bound, c["kind"], tuple(c["x"].shape), c["x"].dtype, c["ns"], c["zc"], c["out_dtype"],
            None if c["r"] is None else c["r"].dtype)
    return got


# ------------------------------------------------------------------ the two eager routes

# Plain eager calls take the C++ extension's entries (lntune.torch._variant_ext)
# where it is built, unless LNTUNE_TORCH_EXT_VARIANTS=0; the tests below run
# on that default route unless they pick one with the `route` fixture.


def _cpp_route_or_skip():
    if lt._variant_ext is None:
        pytest.skip("the variants' C++ route is off here (extension not built, LNTUNE_TORCH_EXT_VARIANTS=0 or "
                    "LNTUNE_TORCH_EAGER=ops): every eager call took the ops")


@pytest.fixture(params=["cpp", "ops"])
def route(request, monkeypatch):
    """Eager calls through the C++ entries ("cpp") or through the lntune::
    ops ("ops", what LNTUNE_TORCH_EXT_VARIANTS=0 gives)."""
    if request.param == "cpp":
        _cpp_route_or_skip()
    else:
        monkeypatch.setattr(lt, "_variant_ext", None)
    return request.param


# ------------------------------------------------------------------ every variant x dtype x option

SHAPES = [((48, 1537), 1), ((4, 8, 1024), 1), ((3, 5, 6, 7), 2)]  # odd N (scalar path), vector path, two dims


@pytest.mark.parametrize("kind,dtype,opt", _variants())
@pytest.mark.parametrize("shape,k", SHAPES, ids=["odd1537", "3d1024", "2dims42"])
def test_matches_float64_reference(kind, dtype, opt, shape, k):
    check_variant(make_inputs(kind, shape, k, dtype, opt))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("N", [1, 7, 4097, 65536])
def test_row_lengths(kind, dtype, N):
    check_variant(make_inputs(kind, (8 if N > 4097 else 33, N), 1, dtype, "w"))


def test_fp32_residual_gradient_stays_fp32_exact():
    """bf16 x with an fp32 residual stream: the residual's gradient is
    written in fp32 by the same kernel as x's bf16 one (not rounded through
    bf16), so it meets float32's tolerance against the float64 reference,
    and x's is that same value rounded once to bf16."""
    for kind in ("add_ln", "add_rms"):
        for shape in ((64, 2048), (33, 1537)):
            c = make_inputs(kind, shape, 1, torch.bfloat16, "res")
            got = run_lntune(c)
            ref = run_torch(c)
            assert got["dr"].dtype == torch.float32 and got["dx"].dtype == torch.bfloat16
            assert _err(got["dr"], ref["dr"]) <= 1e-4, (kind, shape, _err(got["dr"], ref["dr"]))
            assert _err(got["dx"], ref["dx"]) <= TOL[torch.bfloat16], (kind, shape, _err(got["dx"], ref["dx"]))
            assert torch.equal(got["dx"], got["dr"].to(torch.bfloat16)), (kind, shape)


@pytest.mark.parametrize("kind", ["add_ln", "add_rms"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_mixed_dtype_backward_one_kernel_no_casts(kind, dtype, route):
    """x and residual in different dtypes: the backward is one *_bwd op call
    (the ops route; the C++ route's node calls the library directly, so no
    op at all) returning dx and dresidual in their dtypes (checked against
    float64), with no cast or copy op anywhere in the backward (the old fp32
    detour cast dz twice)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    c = make_inputs(kind, (40, 1024), 1, dtype, "res")
    assert c["r"].dtype != c["x"].dtype
    x, r, w = (c[n].detach().clone().requires_grad_() for n in ("x", "r", "w"))
    if kind == "add_ln":
        y, z = lt.fused_add_layer_norm(x, r, c["ns"], w, c["b"], 1e-5)
    else:
        y, z = lt.fused_add_rms_norm(x, r, c["ns"], w)
    log = Log()
    with log:
        torch.autograd.backward((y, z), (c["dy"], c["dz"]))
    bwd = [o for o in log.ops if o.startswith("lntune.")]
    if route == "ops":
        assert bwd == ["lntune.%s_bwd.default" % ("add_layer_norm" if kind == "add_ln" else "add_rms_norm")], log.ops
    else:
        assert bwd == [] and y.grad_fn.name().startswith("Lntune"), (log.ops, y.grad_fn.name())
    assert not [o for o in log.ops if "_to_copy" in o or "copy_" in o or o.startswith("aten.to")], log.ops
    assert (x.grad.dtype, r.grad.dtype) == (x.dtype, r.dtype)
    ref = run_torch(c)  # float64, z rounded to the residual's dtype as lntune stores it
    for name, g in (("dx", x.grad), ("dr", r.grad)):
        # one rounding to the gradient's dtype; fp32 at float32's accumulation bound (1e-4)
        assert _err(g, ref[name]) <= max(TOL[g.dtype], 1e-4), (name, _err(g, ref[name]))


def test_eps_default_is_torchs():
    """eps=None: torch.finfo(torch.float32).eps for every dtype, as F.rms_norm;
    rows of tiny values make eps dominate."""
    for dtype in DTYPES:
        x = (torch.randn(16, 512, device=DEV) * 1e-4).to(dtype)
        w = torch.rand(512, device=DEV).to(dtype) + 0.5
        ref = F.rms_norm(x.double(), (512,), w.double(), F32_EPS)
        assert _err(lt.rms_norm(x, (512,), w), ref) <= TOL[dtype]
        torch.testing.assert_close(lt.rms_norm(x, (512,), w), F.rms_norm(x, (512,), w), atol=TOL[dtype],
                                   rtol=TOL[dtype])
        assert _err(lt.rms_norm(x, (512,), w, 1e-3), F.rms_norm(x.double(), (512,), w.double(), 1e-3)) <= TOL[dtype]


# ------------------------------------------------------------------ strides, partial use, edge cases


@pytest.mark.parametrize("kind", KINDS)
def test_strided_rows(kind):
    """Row-strided x, residual and gradients (column slices) are read in place;
    transposed ones are copied first. Results as for contiguous inputs."""
    c = make_inputs(kind, (64, 1536), 1, torch.float16, "w")
    for sl in (slice(256, 1280), slice(3, 1026)):  # aligned and misaligned starts
        n = sl.stop - sl.start
        cc = dict(c, ns=(n,), x=c["x"][:, sl], r=None if c["r"] is None else c["r"][:, sl],
                  w=c["w"][:n].contiguous(), b=None if c["b"] is None else c["b"][:n].contiguous(),
                  dy=c["dy"][:, sl], dz=None if c["dz"] is None else c["dz"][:, sl])
        assert not cc["x"].is_contiguous()
        check_variant(cc)
    ct = make_inputs(kind, (512, 256), 1, torch.bfloat16, "w")
    t = dict(ct, x=ct["x"].t().contiguous().t(), dy=ct["dy"].t().contiguous().t(),
             r=None if ct["r"] is None else ct["r"].t().contiguous().t())
    check_variant(t)


@pytest.mark.parametrize("kind", ["add_ln", "add_rms"])
def test_only_one_output_used(kind):
    c = make_inputs(kind, (32, 512), 1, torch.float32, "w")
    fn = lt.fused_add_layer_norm if kind == "add_ln" else lt.fused_add_rms_norm
    for used in ("y", "z"):
        x = c["x"].clone().requires_grad_()
        r = c["r"].clone().requires_grad_()
        w = c["w"].clone().requires_grad_()
        y, z = fn(x, r, (512,), w)
        (y if used == "y" else z).backward(c["dy"] if used == "y" else c["dz"])
        xr, rr, wr = (t.double().requires_grad_() for t in (c["x"], c["r"], c["w"]))
        zr = xr + rr
        yr = F.layer_norm(zr, (512,), wr, None, 1e-5) if kind == "add_ln" else F.rms_norm(zr, (512,), wr, F32_EPS)
        (yr if used == "y" else zr).backward(c["dy"].double() if used == "y" else c["dz"].double())
        assert _err(x.grad, xr.grad) <= 1e-5 and _err(r.grad, rr.grad) <= 1e-5, used
        if used == "z":
            assert w.grad is None or torch.count_nonzero(w.grad) == 0
        else:
            assert _err(w.grad, wr.grad) <= 1e-5


@pytest.mark.parametrize("kind", KINDS)
def test_zero_rows(kind):
    c = make_inputs(kind, (0, 64), 1, torch.float32, "w")
    got = run_lntune(c)
    assert got["y"].shape == (0, 64) and got["dx"].shape == (0, 64)
    assert torch.count_nonzero(got["dw"]) == 0


def test_inference_no_grad(route):
    x = torch.randn(64, 2048, device=DEV, dtype=torch.bfloat16)
    w = torch.rand(2048, device=DEV, dtype=torch.bfloat16) + 0.5
    with torch.no_grad():
        y = lt.rms_norm(x, 2048, w)
        y2, z2 = lt.fused_add_rms_norm(x, x, 2048, w)
    assert not y.requires_grad
    assert _err(y, F.rms_norm(x.double(), (2048,), w.double(), F32_EPS)) <= TOL[torch.bfloat16]
    assert torch.equal(z2, x + x)


def test_double_backward_is_a_clear_error(route):
    x = torch.randn(8, 64, device=DEV, requires_grad=True)
    r = torch.randn(8, 64, device=DEV, requires_grad=True)
    w = (torch.rand(64, device=DEV) + 0.5).requires_grad_()
    for name, f in (("rms_norm", lambda: lt.rms_norm(x, 64, w)),
                    ("fused_add_rms_norm", lambda: lt.fused_add_rms_norm(x, r, 64, w)[0]),
                    ("fused_add_layer_norm", lambda: lt.fused_add_layer_norm(x, r, 64, w)[0])):
        y = f()
        (gx,) = torch.autograd.grad(y, x, torch.randn_like(y), create_graph=True)
        with pytest.raises(RuntimeError, match="lntune.torch.%s: double backward .* is not supported" % name):
            gx.sum().backward()


def test_library_errors_and_bad_inputs_on_the_gpu(route):
    # Both routes raise the ops' errors: the C++ entries decline these calls.
    x = torch.randn(4, 64, device=DEV)
    with pytest.raises(TypeError, match="residual must be a CUDA tensor, got one on cpu"):
        lt.fused_add_rms_norm(x, torch.randn(4, 64), 64)
    with pytest.raises(ValueError, match="residual must have x's shape"):
        lt.fused_add_layer_norm(x, torch.randn(4, 32, device=DEV), 64)
    with pytest.raises(TypeError, match="weight is on cpu"):
        lt.rms_norm(x, 64, torch.ones(64))
    with pytest.raises(ValueError, match="zero_centered_weight=True needs a weight"):
        lt.rms_norm(x, 64, zero_centered_weight=True)
    with pytest.raises(ValueError, match="eps must be a finite number"):
        lt.fused_add_rms_norm(x, x, 64, eps=float("inf"))
    with pytest.raises(TypeError, match="out_dtype must be None, torch.float32"):
        lt.rms_norm(x, 64, out_dtype=torch.int8)


# ------------------------------------------------------------------ the C++ route against the ops, bitwise


def _run_route(c, use_cpp, need=("x", "r", "w", "b"), use=("y", "z"), eps=None, grad=True):
    """run_lntune through one route, with a choice of which inputs need a
    gradient and which outputs are used; also the name of y's grad_fn."""
    saved = lt._variant_ext
    if not use_cpp:
        lt._variant_ext = None
    try:
        leaves = {n: (None if c[n] is None else c[n].detach().requires_grad_(grad and n in need))
                  for n in ("x", "r", "w", "b")}
        y, z = call_lntune(c, *(leaves[n] for n in ("x", "r", "w", "b")), eps)
        node = None if y.grad_fn is None else y.grad_fn.name()
        outs, grads = [], []
        if "y" in use:
            outs.append(y)
            grads.append(c["dy"])
        if z is not None and "z" in use:
            outs.append(z)
            grads.append(c["dz"])
        if y.requires_grad:
            torch.autograd.backward(outs, grads)
    finally:
        lt._variant_ext = saved
    out = {"y": y.detach(), "z": None if z is None else z.detach(), "node": node}
    for n, t in leaves.items():
        out["d" + n] = None if t is None else t.grad
    return out


def _assert_same(cpp, ops):
    for name in ("y", "z", "dx", "dr", "dw", "db"):
        a, b = cpp[name], ops[name]
        assert (a is None) == (b is None), name
        if a is not None:
            assert a.dtype == b.dtype and a.shape == b.shape, (name, a.dtype, b.dtype, a.shape, b.shape)
            assert torch.equal(a, b), "%s differs: max |diff| %.3e" % (name, (a.double() - b.double()).abs().max())


def _routes_equal(c, **kw):
    cpp = _run_route(c, True, **kw)
    ops = _run_route(c, False, **kw)
    if kw.get("grad", True) and cpp["node"] is not None:
        assert cpp["node"].startswith("Lntune"), cpp["node"]  # the C++ node, not the op's
        assert not ops["node"].startswith("Lntune"), ops["node"]
    _assert_same(cpp, ops)
    return cpp


@pytest.mark.parametrize("kind,dtype,opt", _variants())
@pytest.mark.parametrize("shape,k", SHAPES, ids=["odd1537", "3d1024", "2dims42"])
def test_cpp_route_equals_the_op_route(kind, dtype, opt, shape, k):
    """Every variant x dtype x option (weight/bias dtypes, zero-centred
    gamma, out_dtype, residual dtype): outputs and gradients bitwise equal
    between the C++ entries and the lntune:: ops, with grad and without."""
    _cpp_route_or_skip()
    c = make_inputs(kind, shape, k, dtype, opt)
    _routes_equal(c)
    _routes_equal(c, grad=False)  # inference: one launch without statistics
    with torch.no_grad():
        _assert_same(_run_route(c, True), _run_route(c, False))


@pytest.mark.parametrize("kind", ["add_ln", "add_rms"])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("opt", ["all", "res"])
@pytest.mark.parametrize("need", [("x",), ("r",), ("w",), ("b",), ("x", "r"), ("r", "w", "b"), ("x", "w")],
                         ids=lambda n: "+".join(n))
def test_cpp_route_equals_the_op_route_partial_grads(kind, dtype, opt, need):
    """Which inputs need a gradient picks dx's dtype and the extra dresidual
    (mixed dtypes) and whether dW/dB are computed ("res": a weight in x's
    dtype, read as float32 when dx takes the residual's dtype): the same
    choices, bitwise the same results."""
    _cpp_route_or_skip()
    c = make_inputs(kind, (40, 1536), 1, dtype, opt)
    _routes_equal(c, need=need)


@pytest.mark.parametrize("kind", ["add_ln", "add_rms"])
@pytest.mark.parametrize("used", ["y", "z"])
def test_cpp_route_equals_the_op_route_one_output_used(kind, used):
    _cpp_route_or_skip()
    c = make_inputs(kind, (32, 1024), 1, torch.bfloat16, "res")
    _routes_equal(c, use=(used,))


@pytest.mark.parametrize("kind", KINDS)
def test_cpp_route_equals_the_op_route_strides_and_eps(kind):
    _cpp_route_or_skip()
    c = make_inputs(kind, (64, 1536), 1, torch.float16, "w")
    for sl in (slice(256, 1280), slice(3, 1026)):  # row-strided, aligned and misaligned starts
        n = sl.stop - sl.start
        cc = dict(c, ns=(n,), x=c["x"][:, sl], r=None if c["r"] is None else c["r"][:, sl],
                  w=c["w"][:n].contiguous(), b=None if c["b"] is None else c["b"][:n].contiguous(),
                  dy=c["dy"][:, sl], dz=None if c["dz"] is None else c["dz"][:, sl])
        _routes_equal(cc)
    ct = make_inputs(kind, (512, 256), 1, torch.bfloat16, "w")
    _routes_equal(dict(ct, x=ct["x"].t().contiguous().t(), dy=ct["dy"].t().contiguous().t(),
                       r=None if ct["r"] is None else ct["r"].t().contiguous().t()))  # copied
    # a non-contiguous weight, copied
    cw = dict(c, w=torch.stack([c["w"], c["w"]], 1)[:, 0])
    assert not cw["w"].is_contiguous()
    _routes_equal(cw)
    for eps in (None, 1e-3, -1e-7, 0.0):
        _routes_equal(make_inputs(kind, (16, 512), 1, torch.float32, "w"), eps=eps)


def test_cpp_route_is_the_default_and_the_switch_turns_it_off():
    """With the extension built, eager calls take the C++ route unless
    LNTUNE_TORCH_EXT_VARIANTS=0 (checked in a fresh process)."""
    import subprocess

    if lt._ext is None:
        pytest.skip("the C++ extension is not built here")
    # (A Python autograd.Function's node, the op route's, has no name() in
    # torch 2.11: its class name is used.)
    code = ("import torch, lntune.torch as lt\n"
            "nm = lambda f: type(f).__name__ if hasattr(f, '_forward_cls') else f.name()\n"
            "x = torch.randn(4, 64, device='cuda', requires_grad=True)\n"
            "print(lt._variant_ext is not None, nm(lt.rms_norm(x, 64).grad_fn), "
            "nm(lt.fused_add_rms_norm(x, x, 64)[0].grad_fn))\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for value, want in ((None, "True LntuneRmsNormBackward LntuneAddRmsNormBackward"), ("0", "False")):
        env = dict(os.environ, PYTHONPATH=os.path.join(root, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
        env.pop("LNTUNE_TORCH_EXT_VARIANTS", None)
        env.pop("LNTUNE_TORCH_EAGER", None)
        if value is not None:
            env["LNTUNE_TORCH_EXT_VARIANTS"] = value
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stdout + r.stderr
        line = r.stdout.strip().splitlines()[-1]
        assert line.startswith(want) and ("Lntune" not in line if value == "0" else True), line


def test_cpp_route_workspace_size_is_memoised():
    """A warm backward asks the library for no workspace size (the memo),
    as the LayerNorm route's."""
    _cpp_route_or_skip()
    c = make_inputs("add_rms", (256, 2048), 1, torch.bfloat16, "w")
    _run_route(c, True)
    q = lt._ext.workspace_queries()
    for _ in range(3):
        _run_route(c, True)
    assert lt._ext.workspace_queries() == q


# ------------------------------------------------------------------ custom ops: opcheck


def _opcheck(op, args):
    torch.library.opcheck(op, args)


@pytest.mark.parametrize("kind,dtype,opt", [p for p in _variants() if p.values[2] in ("w", "none", "all", "res", "zc")])
def test_opcheck_forward_and_backward(kind, dtype, opt):
    c = make_inputs(kind, (3, 17, 64), 1, dtype, opt)
    ns = list(c["ns"])
    grad = lambda t: None if t is None else t.detach().clone().requires_grad_()  # noqa: E731
    x, r, w, b = grad(c["x"]), grad(c["r"]), grad(c["w"]), grad(c["b"])
    ops = torch.ops.lntune
    if kind == "rms":
        _opcheck(ops.rms_norm_fwd.default, (x, ns, w, 1e-6, c["zc"], c["out_dtype"]))
        y, rstd = ops.rms_norm_fwd(x.detach(), ns, c["w"], 1e-6, c["zc"], c["out_dtype"])
        for mask in ([True, True], [True, False]):
            _opcheck(ops.rms_norm_bwd.default, (c["dy"], c["x"], rstd, ns, c["w"], c["zc"], mask))
    elif kind == "add_ln":
        _opcheck(ops.add_layer_norm_fwd.default, (x, r, ns, w, b, 1e-5, c["zc"], c["out_dtype"]))
        y, z, mean, rstd = ops.add_layer_norm_fwd(c["x"], c["r"], ns, c["w"], c["b"], 1e-5, c["zc"], c["out_dtype"])
        # dx_dtype x's (with a dresidual when the residual's differs) and the residual's (dx only)
        for dxd in {c["x"].dtype, c["r"].dtype}:
            for dz, mask in ((c["dz"], [True, True, True]), (None, [True, False, True]),
                             (c["dz"], [True, True, False]), (c["dz"], [False, True, True])):
                _opcheck(ops.add_layer_norm_bwd.default, (c["dy"], dz, z, mean, rstd, ns, c["w"], c["b"], c["zc"],
                                                          dxd, mask))
    else:
        _opcheck(ops.add_rms_norm_fwd.default, (x, r, ns, w, 1e-6, c["zc"], c["out_dtype"]))
        y, z, rstd = ops.add_rms_norm_fwd(c["x"], c["r"], ns, c["w"], 1e-6, c["zc"], c["out_dtype"])
        for dxd in {c["x"].dtype, c["r"].dtype}:
            for dz, mask in ((c["dz"], [True, True]), (None, [True, False]), (c["dz"], [False, True])):
                _opcheck(ops.add_rms_norm_bwd.default, (c["dy"], dz, z, rstd, ns, c["w"], c["zc"], dxd, mask))


# ------------------------------------------------------------------ torch.compile, CUDA graphs


class _Block(torch.nn.Module):
    """A pre-norm transformer block's residual path: Linear -> fused add + RMSNorm -> Linear, residual out."""

    def __init__(self, n, dtype):
        super().__init__()
        self.lin1 = torch.nn.Linear(n, n, device=DEV, dtype=dtype)
        self.lin2 = torch.nn.Linear(n, n, device=DEV, dtype=dtype)
        self.norm_weight = torch.nn.Parameter(torch.rand(n, device=DEV, dtype=dtype) + 0.5)
        self.n = n

    def forward(self, x, residual):
        y, z = lt.fused_add_rms_norm(self.lin1(x), residual, (self.n,), self.norm_weight, 1e-6)
        return self.lin2(y), z


def _block_step(model, x, r, g1, g2):
    x = x.detach().clone().requires_grad_()
    r = r.detach().clone().requires_grad_()
    model.zero_grad(set_to_none=True)
    out, z = model(x, r)
    torch.autograd.backward([out, z], [g1, g2])
    return [out.detach(), z.detach(), x.grad, r.grad] + [p.grad for p in model.parameters()]


@pytest.fixture
def no_tf32():
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32 = old


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_compile_fullgraph_no_graph_break(dtype, no_tf32):
    torch._dynamo.reset()
    N = 256
    blk = _Block(N, dtype)
    x = torch.randn(4, 16, N, device=DEV, dtype=dtype)
    r = torch.randn(4, 16, N, device=DEV, dtype=dtype)
    g1, g2 = torch.randn_like(x), torch.randn_like(x)
    ex = torch._dynamo.explain(blk)(x.clone().requires_grad_(), r.clone().requires_grad_())
    assert ex.graph_break_count == 0, ex.break_reasons
    assert ex.graph_count == 1
    targets = [str(n.target) for gm in ex.graphs for n in gm.graph.nodes]
    assert any("lntune.add_rms_norm_fwd" in t for t in targets), targets
    eager = _block_step(blk, x, r, g1, g2)
    compiled = _block_step(torch.compile(blk, fullgraph=True), x, r, g1, g2)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)
    for i, (a, e) in enumerate(zip(compiled, eager)):
        torch.testing.assert_close(a, e, **tol, msg=lambda m: "output %d: %s" % (i, m))


@pytest.mark.parametrize("fn", ["rms_norm", "fused_add_layer_norm"])
def test_compile_other_forms(fn, no_tf32):
    torch._dynamo.reset()
    c = make_inputs("rms" if fn == "rms_norm" else "add_ln", (8, 32, 512), 1, torch.float32, "all")

    def f(x, r, w, b):
        if fn == "rms_norm":
            return (lt.rms_norm(x, (512,), w, zero_centered_weight=True, out_dtype=torch.bfloat16).float() * 2,)
        y, z = lt.fused_add_layer_norm(x, r, (512,), w, b, zero_centered_weight=True, out_dtype=torch.bfloat16)
        return y.float() * 2, z

    args = [None if c[n] is None else c[n].detach().requires_grad_() for n in ("x", "r", "w", "b")]
    eager = f(*args)
    compiled = torch.compile(f, fullgraph=True)(*args)
    for a, e in zip(compiled, eager):
        torch.testing.assert_close(a, e)


def test_cuda_graph_capture_forward_and_backward(route):
    N, M, dtype = 1024, 512, torch.bfloat16
    w = (torch.rand(N, device=DEV) + 0.5).to(dtype).requires_grad_()
    x = torch.randn(M, N, device=DEV, dtype=dtype, requires_grad=True)
    r = torch.randn(M, N, device=DEV, dtype=torch.float32, requires_grad=True)
    dy = torch.randn(M, N, device=DEV, dtype=dtype) * 0.1
    dz = torch.randn(M, N, device=DEV) * 0.1

    def step():
        y, z = lt.fused_add_rms_norm(x, r, (N,), w)
        torch.autograd.backward([y, z], [dy, dz])
        return y, z

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):  # compiles and plans outside the capture
            x.grad = r.grad = w.grad = None
            step()
    torch.cuda.current_stream().wait_stream(s)
    x.grad = r.grad = w.grad = None
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y, z = step()
    for seed in (1, 2):
        gen = torch.Generator(device=DEV).manual_seed(seed)
        with torch.no_grad():
            x.copy_(torch.randn(M, N, device=DEV, generator=gen))
            r.copy_(torch.randn(M, N, device=DEV, generator=gen))
            dy.copy_(torch.randn(M, N, device=DEV, generator=gen) * 0.1)
        g.replay()
        torch.cuda.synchronize()
        c = dict(kind="add_rms", x=x.detach(), r=r.detach(), ns=(N,), w=w.detach(), b=None, zc=False,
                 out_dtype=None, dy=dy, dz=dz)
        ref = run_torch(c)
        for name, got in (("y", y), ("z", z), ("dx", x.grad), ("dr", r.grad), ("dw", w.grad)):
            assert _err(got.detach(), ref[name]) <= 3 * TOL[dtype], name


# ------------------------------------------------------------------ RMSNorm module


@pytest.mark.parametrize("kwargs", [{}, {"eps": 1e-6}, {"elementwise_affine": False}])
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_rmsnorm_module_is_a_drop_in(kwargs, dtype):
    shape = (4, 96)
    ref = torch.nn.RMSNorm(shape, device=DEV, dtype=dtype, **kwargs)
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.rand_like(p) + 0.5)
    ours = lt.RMSNorm.from_torch(ref)
    assert repr(ours) == repr(ref)
    back = torch.nn.RMSNorm(shape, device=DEV, dtype=dtype, **kwargs)
    back.load_state_dict(ours.state_dict())
    x = (torch.randn(8, 3, 4, 96, device=DEV) * 0.5 - 0.3).to(dtype)
    dy = (torch.randn_like(x, dtype=torch.float32) * 0.1).to(dtype)
    xo, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    yo, yb = ours(xo), back(xb)
    yo.backward(dy)
    yb.backward(dy)
    ref64 = torch.nn.RMSNorm(shape, device=DEV, dtype=torch.float64, **kwargs)
    ref64.load_state_dict({k: v.double() for k, v in ref.state_dict().items()})
    xr = x.double().requires_grad_()
    yr = ref64(xr)
    yr.backward(dy.double())
    bound = lambda a, b: max(TOL[dtype], 2 * _err(a, b))  # noqa: E731
    assert _err(yo.detach(), yr.detach()) <= bound(yb.detach(), yr.detach())
    assert _err(xo.grad, xr.grad) <= bound(xb.grad, xr.grad)
    for (n, po), (_, pb), (_, pr) in zip(ours.named_parameters(), back.named_parameters(), ref64.named_parameters()):
        assert po.grad.dtype == po.dtype
        assert _err(po.grad, pr.grad) <= bound(pb.grad, pr.grad), n


# ------------------------------------------------------------------ PyTorch's own samples


def _grads(fn, args, kwargs, g):
    y = fn(*args, **kwargs)
    leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    if not leaves or y.numel() == 0:
        return [y] + [torch.zeros_like(a) for a in leaves]
    return [y] + list(torch.autograd.grad(y, leaves, g, allow_unused=True))


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_rms_norm_opinfo_samples(dtype):
    """PyTorch's OpInfo samples for nn.functional.rms_norm (negative eps, eps
    None, N = 1, no rows, no weight), through lntune.torch.rms_norm: outputs
    and gradients equal torch's within torch.testing.assert_close's defaults."""
    pytest.importorskip("expecttest", reason="torch.testing._internal needs the expecttest package")
    from torch.testing._internal.common_methods_invocations import op_db

    op = next(o for o in op_db if o.name == "nn.functional.rms_norm" and not o.variant_test_name)
    n = 0
    failures = []
    for sample in op.sample_inputs(DEV, dtype, requires_grad=True):
        args = (sample.input,) + tuple(sample.args)
        g = torch.randn_like(sample.input)
        ours = _grads(lt.rms_norm, args, sample.kwargs, g)
        ref = _grads(F.rms_norm, args, sample.kwargs, g)
        for name, a, r in zip(("y", "dx", "dw"), ours, ref):
            try:
                torch.testing.assert_close(a, r)
            except AssertionError as e:
                failures.append("x %s, args %s, kwargs %s: %s: %s" % (
                    tuple(sample.input.shape), [tuple(t.shape) if isinstance(t, torch.Tensor) else t
                                                for t in sample.args], sample.kwargs, name,
                    " ".join(str(e).split())[:300]))
        n += 1
    assert n >= 5
    assert not failures, "%d of %d samples differ from torch's:\n" % (len(failures), n) + "\n".join(failures)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_rmsnorm_module_info_samples(dtype):
    """PyTorch's ModuleInfo inputs for nn.RMSNorm, through lntune.torch.RMSNorm.from_torch."""
    check_module_info_samples(torch.nn.RMSNorm, lt.RMSNorm, DEV, dtype, at_least=2)
