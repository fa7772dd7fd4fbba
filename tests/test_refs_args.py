"""grad / vjp / value_and_grad with respect to a ref argument (issue 6): a ref that is
only read is differentiated with respect to its contents; one that is written is a
trace-time RefError that leaves it as it was."""
import jax
import numpy as np
import pytest

import minijax
from minijax import RefError
from minijax.testing import JAX_VERSION
from tests.test_divergences import pins

X = np.arange(3.0, dtype=np.float32)


def read_only(r):
    return (r[...] ** 2).sum()


def writes(r):
    r[...] = r[...] * 2.0
    return r[...].sum()


def writes_view(r):
    r.at[1:][...] = r[1:] * 2.0
    return r[...].sum()


def increments(r):
    r[...] += 1.0
    return r[...].sum()


WRITE_MESSAGE = (r"writes \(by set\) the Ref\{float32\[3\]\} passed as a differentiated input; "
                 r"differentiating with respect to a ref that is written is not supported\. "
                 r"Pass its value r\[\.\.\.\] as the argument instead")


def test_grad_of_read_only_ref_is_an_array():
    r = minijax.new_ref(X)
    g = minijax.grad(read_only)(r)
    assert not isinstance(g, minijax.Ref)
    assert g.shape == X.shape and g.dtype == X.dtype
    np.testing.assert_allclose(g, jax.grad(lambda x: (x ** 2).sum())(X))
    np.testing.assert_array_equal(r[...], X)


def test_vjp_and_value_and_grad_of_read_only_ref():
    r = minijax.new_ref(X)
    out, vjp_fun = minijax.vjp(read_only, r)
    assert float(out) == 5.0
    (ct,) = vjp_fun(np.float32(2.0))
    np.testing.assert_allclose(ct, 4 * X)
    value, g = minijax.value_and_grad(read_only)(r)
    assert float(value) == 5.0
    np.testing.assert_allclose(g, 2 * X)
    np.testing.assert_array_equal(r[...], X)


def test_ref_among_other_arguments_and_in_pytrees():
    r = minijax.new_ref(X)
    gr, gx = minijax.grad(lambda r, x: (r[...] * x).sum(), argnums=(0, 1))(r, X + 1)
    np.testing.assert_allclose(gr, X + 1)
    np.testing.assert_allclose(gx, X)
    (value, aux), g = minijax.value_and_grad(
        lambda d: ((d["a"][...] * d["b"]).sum(), 3), has_aux=True)({"a": r, "b": X + 1})
    assert float(value) == 8.0 and aux == 3
    np.testing.assert_allclose(g["a"], X + 1)
    np.testing.assert_allclose(g["b"], X)


def test_grad_of_ref_under_jit_vmap_and_grad():
    r = minijax.new_ref(X)
    np.testing.assert_allclose(minijax.jit(minijax.grad(read_only))(r), 2 * X)
    batched = minijax.new_ref(np.ones((2, 3), np.float32))
    np.testing.assert_allclose(minijax.vmap(minijax.grad(read_only))(batched),
                               2 * np.ones((2, 3)))
    inner = lambda x: minijax.grad(lambda r: (r[...] ** 3).sum())(minijax.new_ref(x)).sum()
    np.testing.assert_allclose(minijax.grad(inner)(X), 6 * X)


def test_integer_ref_needs_allow_int_and_gets_float0():
    ri = minijax.new_ref(np.arange(3))
    f = lambda r: r[...].sum().astype(np.float32)
    with pytest.raises(minijax.MinijaxError, match="allow_int=True"):
        minijax.grad(f)(ri)
    g = minijax.grad(f, allow_int=True)(ri)
    assert g.shape == (3,) and g.dtype == jax.dtypes.float0


@pytest.mark.parametrize("fn", [writes, writes_view, increments])
@pytest.mark.parametrize("how", ["grad", "vjp", "value_and_grad", "jit_grad"])
def test_differentiating_a_written_ref_is_an_error(fn, how):
    r = minijax.new_ref(X)
    call = {"grad": lambda: minijax.grad(fn)(r),
            "vjp": lambda: minijax.vjp(fn, r),
            "value_and_grad": lambda: minijax.value_and_grad(fn)(r),
            "jit_grad": lambda: minijax.jit(minijax.grad(fn))(r)}[how]
    where = "vjp" if how == "vjp" else f"grad\\({fn.__name__}\\)"
    with pytest.raises(RefError, match=where + ": the function " + WRITE_MESSAGE):
        call()
    np.testing.assert_array_equal(r[...], X)
    assert minijax.grad(read_only)(r) is not None     # the ref is still usable


def test_write_error_names_the_leaf_among_several():
    r = minijax.new_ref(X)

    def f(x, r):
        r[0] = 1.0
        return (x * r[...]).sum()
    with pytest.raises(RefError, match=r"differentiated input \(leaf 1 of the flattened"):
        minijax.grad(f, argnums=(0, 1))(X, r)
    np.testing.assert_array_equal(r[...], X)


def test_other_refs_untouched_when_the_write_is_refused():
    r, other = minijax.new_ref(X), minijax.new_ref(X)

    def f(r):
        r[...] = r[...] + 1.0
        other[...] = other[...] + 1.0
        return r[...].sum()
    with pytest.raises(RefError):
        minijax.grad(f)(r)
    np.testing.assert_array_equal(r[...], X)
    np.testing.assert_array_equal(other[...], X)


def test_closed_over_and_non_differentiated_refs_still_writable():
    r = minijax.new_ref(X)

    def f(x, r):
        r[...] = r[...] + 1.0
        return (x * r[...]).sum()
    np.testing.assert_allclose(minijax.grad(f)(X, r), X + 1)
    np.testing.assert_array_equal(r[...], X + 1)


@pins("jax_grad_wrt_ref_argument_fails")
def test_jax_grad_wrt_ref_argument_fails():
    """Pins "jax_grad_wrt_ref_argument_fails" from both sides."""
    if JAX_VERSION >= (0, 11):      # a refusal by design, before anything runs
        for fn in (read_only, writes):
            r = jax.new_ref(X)
            with pytest.raises(TypeError, match="grad cannot differentiate with respect to "
                               "a Ref-typed argument"):
                jax.grad(fn)(r)
            np.testing.assert_array_equal(r[...], X)
    else:
        for fn in (read_only, writes):
            r = jax.new_ref(X)
            with pytest.raises(ValueError, match=r"Expected cotangent type Ref\{float32\[3\]\}"):
                jax.grad(fn)(r)
        r = jax.new_ref(X)
        with pytest.raises(ValueError):
            jax.grad(writes)(r)
        np.testing.assert_array_equal(r[...], 2 * X)      # JAX wrote it before failing
    m = minijax.new_ref(X)
    np.testing.assert_allclose(minijax.grad(read_only)(m), 2 * X)
    with pytest.raises(RefError):
        minijax.grad(writes)(m)
    np.testing.assert_array_equal(m[...], X)
