"""PyTorch's ModuleInfo samples for a norm module, run through lntune's drop-in
(tests/python's GPU files share it: nn.LayerNorm and nn.RMSNorm)."""

import pytest
import torch


def check_module_info_samples(torch_cls, ours_cls, device, dtype, at_least):
    """Every ModuleInfo input of torch_cls: ours_cls.from_torch(module) must
    repr alike and give the same output and gradients (x's and the
    parameters'), within assert_close's defaults; at least `at_least` inputs."""
    pytest.importorskip("expecttest", reason="torch.testing._internal needs the expecttest package")
    from torch.testing._internal.common_modules import module_db

    info = next(m for m in module_db if m.module_cls is torch_cls)
    n = 0
    for mi in info.module_inputs_func(info, device=device, dtype=dtype, requires_grad=True, training=True):
        if mi.forward_input is None:
            continue
        cargs, ckw = mi.constructor_input.args, mi.constructor_input.kwargs
        ref = torch_cls(*cargs, **ckw, device=device, dtype=dtype)
        ours = ours_cls.from_torch(ref)
        assert repr(ours) == repr(ref)
        fargs, fkw = mi.forward_input.args, mi.forward_input.kwargs
        x = fargs[0]
        g = torch.randn_like(x)
        outs = []
        for m in (ours, ref):
            xl = x.detach().clone().requires_grad_(x.requires_grad)
            y = m(xl, *fargs[1:], **fkw)
            leaves = ([xl] if xl.requires_grad else []) + list(m.parameters())
            grads = torch.autograd.grad(y, leaves, g) if leaves and y.numel() else []
            outs.append([y] + list(grads))
        for i, (a, r) in enumerate(zip(*outs)):
            torch.testing.assert_close(a, r, msg=lambda msg: "module input %s, output %d: %s" % (mi, i, msg))
        n += 1
    assert n >= at_least
