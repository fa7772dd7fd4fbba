"""A transformation that fails part-way leaves every ref as it was (issue 6).

Run eagerly, `grad`, `vjp`, `jvp`, `vmap`, ... execute the user's function one
primitive at a time, so a ref from outside may already have been written when the
failure comes (a non-scalar output, a bad argument to an inner transform). JAX
0.10.2 leaves such a ref written; minijax puts it back (`eager_ref_runtime.all_or_nothing`).
"""
import jax
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from tests.test_divergences import pins

ONES = np.ones(3, np.float32)


def make_writer(lib, ref):
    def f(x):
        ref[...] = lib.lax.stop_gradient(x) * 2.0
        return x * 3.0          # not a scalar: grad fails after the write
    return f


FAILING = {
    "grad": lambda m, f: m.grad(f)(ONES),
    "value_and_grad": lambda m, f: m.value_and_grad(f)(ONES),
    "jit_of_grad": lambda m, f: m.jit(m.grad(f))(ONES),
    "jvp_of_grad": lambda m, f: m.jvp(m.grad(f), (ONES,), (ONES,)),
    "grad_after_a_successful_vjp": lambda m, f: m.grad(
        lambda x: m.vjp(f, x)[0].sum() + f(x))(ONES),
}


@pytest.mark.parametrize("name", sorted(FAILING))
def test_a_failed_transformation_leaves_refs_as_they_were(name):
    ours = minijax.new_ref(np.zeros(3, np.float32))
    with pytest.raises(minijax.MinijaxError, match="scalar"):
        FAILING[name](minijax, make_writer(minijax, ours))
    np.testing.assert_array_equal(ours[...], np.zeros(3))


@pins("jax_failed_transformation_leaves_ref_written")
def test_jax_leaves_the_ref_written():
    # The JAX side of the same call: the write before the failure stays.
    theirs = jax.new_ref(np.zeros(3, np.float32))
    with pytest.raises(TypeError, match="scalar"):
        jax.grad(make_writer(jax, theirs))(ONES)
    np.testing.assert_array_equal(theirs[...], 2 * ONES)


def test_a_successful_transformation_keeps_its_writes():
    ours = minijax.new_ref(np.zeros(3, np.float32))
    f = make_writer(minijax, ours)
    minijax.grad(lambda x: f(x).sum())(ONES)
    np.testing.assert_array_equal(ours[...], 2 * ONES)


def test_a_failed_vmap_puts_back_a_mapped_ref_argument():
    rows = np.arange(6, dtype=np.float32).reshape(2, 3)
    ours = minijax.new_ref(rows)

    def f(r, x):
        r[...] = x * 10.0
        return mnp.reshape(x, (7,))     # fails after the write
    with pytest.raises(ValueError, match="cannot reshape"):
        minijax.vmap(f)(ours, rows)
    np.testing.assert_array_equal(ours[...], rows)
