"""`checkpoint(static_argnames=)` and the policy answers `Saveable`, `Recompute` and
`Offloadable` of `minijax.ad_checkpoint`, against JAX's."""
import jax
import jax.ad_checkpoint  # noqa: F401  (jax.ad_checkpoint.print_saved_residuals)
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax import ad_checkpoint as mad
from jax import ad_checkpoint as jad

from tests.test_divergences import pins


def _scaled(np_lib):
    def f(x, n, *, k):
        return (np_lib.sin(x) * n * k).sum()
    return f


_CALLS = [lambda f: lambda x: f(x, 3.0, k=2.0), lambda f: lambda x: f(x, n=3.0, k=2.0)]


@pytest.mark.parametrize("names", ["n", ("n", "k")])
def test_static_argnames_match_jax(names):
    # Numeric arguments, which JAX traces and minijax bakes in: the same values.
    x = np.linspace(0.1, 1.0, 3, dtype=np.float32)
    results = []
    for lib, np_lib in ((jax, jnp), (minijax, mnp)):
        f = lib.checkpoint(_scaled(np_lib), static_argnames=names)
        results.append([(call(f)(x), lib.grad(call(f))(x), lib.jit(call(f))(x))
                        for call in _CALLS])
    for ours, theirs in zip(results[1], results[0]):
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-6)


@pins("checkpoint_static_argnames_ignored")
def test_static_argnames_makes_arguments_static_unlike_jax():
    seen = []

    def f(x, mode):
        seen.append(type(mode))
        return x * (2.0 if mode == "double" else 3.0)
    g = minijax.checkpoint(f, static_argnames="mode")
    assert float(minijax.grad(lambda x: g(x, mode="double"))(1.0)) == 2.0
    assert float(minijax.grad(lambda x: g(x, "triple"))(1.0)) == 3.0
    assert float(minijax.jit(lambda x: g(x, mode=["unhashable"]))(1.0)) == 3.0
    assert seen == [str, str, list]
    with pytest.raises(TypeError, match="static_argnames must be a str"):
        minijax.checkpoint(f, static_argnames=3)
    # JAX traces the named argument: a str one is no valid JAX type
    with pytest.raises(TypeError, match="is not a valid JAX type"):
        jax.checkpoint(f, static_argnames="mode")(1.0, "double")


def _residual_kinds(lib, np_lib, policy, capsys):
    """What `print_saved_residuals` says is saved (aval and kind, not the source
    line), and the gradient."""
    f = lib.checkpoint(lambda x: np_lib.sin(np_lib.sin(x)).sum(), policy=policy)
    capsys.readouterr()
    lib.ad_checkpoint.print_saved_residuals(f, np.ones(3, np.float32))
    lines = capsys.readouterr().out.splitlines()
    return [line.split(" from ")[0] for line in lines], lib.grad(f)(np.ones(3, np.float32))


def test_policy_markers_match_jax(capsys):
    assert (mad.Saveable, mad.Recompute, mad.Offloadable) == \
        (jad.Saveable, jad.Recompute, jad.Offloadable)
    counts = []
    for marker in (jad.Saveable, jad.Recompute):
        ours, ours_grad = _residual_kinds(minijax, mnp, lambda *a, **k: marker, capsys)
        theirs, theirs_grad = _residual_kinds(jax, jnp, lambda *a, **k: marker, capsys)
        assert ours == theirs
        counts.append(len(ours))
        np.testing.assert_allclose(ours_grad, theirs_grad, rtol=1e-6)
    assert counts[0] > counts[1]       # Recompute (a truthy object) saves less

    def offload_sin(prim, *avals, **params):
        if prim.name == "sin":
            return jad.Offloadable(src="device", dst="pinned_host")
        return jad.Recompute
    ours, ours_grad = _residual_kinds(minijax, mnp, offload_sin, capsys)
    theirs, theirs_grad = _residual_kinds(jax, jnp, offload_sin, capsys)
    # JAX saves the offloaded value in host memory (a device_put to it); minijax, which
    # has no memory kinds, saves the same value with the others.
    assert len(ours) == len(theirs) == 2 and ours[1] == "f32[3] output of sin"
    np.testing.assert_allclose(ours_grad, theirs_grad, rtol=1e-6)
