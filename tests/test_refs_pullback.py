"""`vjp`'s pullback `with_refs(*refs)` (issue 17): the cotangents are added into the
given refs instead of being returned, as JAX's `f_vjp.with_refs`; compared with JAX
(ref contents after each call), eagerly and under `jit`."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mjnp
from minijax.testing import assert_trees_match

X = np.array([0.5, 1.0, -2.0], np.float32)
Y = np.float32(2.0)
CT = np.array([1.0, 0.5, 2.0], np.float32)


def _f(np_mod):
    return lambda x, y: np_mod.sin(x) * y + x * x


def _contents_after(m, np_mod, run, calls=2):
    _, pullback = m.vjp(_f(np_mod), X, Y)
    rx, ry = m.new_ref(np.full(3, 10.0, np.float32)), m.new_ref(np.float32(0.0))
    accumulate = run(m, lambda ct: pullback.with_refs(rx, ry)(ct))
    for _ in range(calls):
        accumulate(CT)
    return rx[...], ry[...]


RUNS = {"eager": lambda m, f: f, "jit": lambda m, f: m.jit(f)}


@pytest.mark.parametrize("run", RUNS)
def test_with_refs_accumulates_like_jax(run):
    assert_trees_match(_contents_after(minijax, mjnp, RUNS[run]),
                       _contents_after(jax, jjnp, RUNS[run]))


def test_with_refs_adds_on_each_call_and_returns_the_rest():
    _, pullback = minijax.vjp(_f(mjnp), X, Y)
    # a program that prints type(pullback).__name__ prints what it does on JAX
    assert type(pullback).__name__ == type(jax.vjp(_f(jjnp), X, Y)[1]).__name__ == "VJP"
    ct_x, ct_y = pullback(CT)
    rx = minijax.new_ref(np.zeros(3, np.float32))
    got = pullback.with_refs(rx, None)(CT)
    assert got[0] is None
    assert_trees_match(got[1], ct_y)
    pullback.with_refs(rx, None)(CT)
    np.testing.assert_allclose(np.asarray(rx[...]), 2 * np.asarray(ct_x), rtol=1e-6)


def test_with_refs_on_a_pytree_of_primals():
    f = lambda p: (mjnp.sin(p["w"]) * p["b"]).sum()
    params = {"w": X, "b": Y}
    _, pullback = minijax.vjp(f, params)
    grads = {"w": minijax.new_ref(np.zeros(3, np.float32)),
             "b": minijax.new_ref(np.float32(0.0))}
    pullback.with_refs(grads)(np.float32(1.0))
    want = minijax.grad(f)(params)
    assert_trees_match({k: r[...] for k, r in grads.items()}, want)


@pytest.mark.parametrize("bad, message", [
    (lambda: (minijax.new_ref(np.zeros(3, np.float32)),), "one ref .or None. per primal"),
    (lambda: (minijax.new_ref(np.zeros(3, np.float32)), minijax.new_ref(np.zeros(2, np.float32))),
     r"primal leaf 1, whose cotangent is a float32\[\]"),
    (lambda: (minijax.new_ref(np.zeros(3, np.int32)), None), r"primal leaf 0.*float32\[3\]"),
    (lambda: (X, None), "pass a ref to accumulate"),
])
def test_with_refs_errors_name_the_mistake_and_write_nothing(bad, message):
    _, pullback = minijax.vjp(_f(mjnp), X, Y)
    refs = bad()
    with pytest.raises(ValueError, match=message):
        pullback.with_refs(*refs)(CT)
    for r in refs:
        if isinstance(r, minijax.Ref):
            assert not np.asarray(r[...]).any()
