"""Refs under jvp, linearize, grad, vjp, jacfwd/jacrev/hessian (transforms/ref_rules.py),
differential against JAX's `jax.new_ref` where JAX behaves as intended.

Each program is written once against a namespace `m` (minijax or jax) so the two
libraries run the very same code."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mjnp
from minijax.testing import JAX_VERSION, assert_trees_match
from tests.test_divergences import pins, seen_on_this_jax


class _NS:
    def __init__(self, lib, np_mod):
        self.lib, self.np = lib, np_mod
        self.new_ref, self.empty_ref, self.freeze = lib.new_ref, lib.empty_ref, lib.freeze
        self.ref = lib.ref
        self.stop_gradient = lib.lax.stop_gradient


MJ, JX = _NS(minijax, mjnp), _NS(jax, jjnp)
# jax.empty_ref has no evaluation rule under jax.jvp (0.10.2): JAX runs the
# programs with a zero-initialised ref instead, which an empty ref written before
# it is read cannot be told apart from.
JX.empty_ref = lambda ty: jax.new_ref(jjnp.zeros(ty.shape, ty.dtype))
X = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
V = np.array([0.5, -1.0, 2.0], np.float32)


def accumulate(m, x):                 # the example
    r = m.new_ref(x)
    r[...] += x * x
    return r[...].sum()


def from_zeros(m, x):                 # ref made from a constant, written with x later
    r = m.new_ref(m.np.zeros_like(x))
    r[...] = m.np.sin(x)
    r[0] += x[0] * x[1]
    return r[...] * 2.0


def overwrite_with_constant(m, x):    # the derivative through r is dropped
    r = m.new_ref(x * 3.0)
    r[...] = m.np.ones_like(x)
    return (r[...] * x).sum()


def swap_old(m, x):
    r = m.new_ref(x)
    old = m.ref.swap(r, (), x * x)
    return (old * r[...]).sum() + r[1]


def dynamic_index(m, x):
    r = m.new_ref(m.np.zeros((3,), x.dtype))
    for i in range(3):
        j = m.np.int32(2 - i)
        r[j] += x[i] * x[i]
    return r[...]


def empty_then_set(m, x):
    r = m.empty_ref(jax.ShapeDtypeStruct(x.shape, x.dtype))
    r[...] = x * 2.0
    r[...] += m.np.cos(x)
    return r[...].sum()


def matrix_rows(m, x):
    r = m.new_ref(m.np.zeros((2, 3), x.dtype))
    r[0] = x
    r[1, 1:] = x[:2] * x[2]
    return (r[...] ** 2).sum()


def add_via_addupdate(m, x):
    r = m.new_ref(x)
    m.ref.addupdate(r, 1, x[0] * 5.0)
    return r[...]


def with_freeze(m, x):
    r = m.new_ref(x)
    r[...] *= x
    return m.freeze(r).sum()


SCALAR_FNS = [accumulate, overwrite_with_constant, swap_old, empty_then_set,
              matrix_rows, with_freeze]
VECTOR_FNS = [from_zeros, dynamic_index, add_via_addupdate]
ALL_FNS = SCALAR_FNS + VECTOR_FNS


def _both(fn):
    return (lambda x: fn(MJ, x)), (lambda x: fn(JX, x))


def _match(a, b):
    assert_trees_match(a, b, check_weak_types=False, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fn", ALL_FNS, ids=lambda f: f.__name__)
def test_jvp(fn):
    mine, theirs = _both(fn)
    _match(minijax.jvp(mine, (V,), (V * 2,)), jax.jvp(theirs, (V,), (V * 2,)))


@pytest.mark.parametrize("fn", ALL_FNS, ids=lambda f: f.__name__)
def test_linearize(fn):
    mine, theirs = _both(fn)
    out_m, lin_m = minijax.linearize(mine, V)
    out_j, lin_j = jax.linearize(theirs, V)
    _match(out_m, out_j)
    _match(lin_m(V + 1), lin_j(V + 1))


# The reverse-mode oracle is JAX's forward mode, which handles these refs as intended:
# JAX's own reverse mode crashes on several of them (the registry entry
# "jax_grad_of_ref_overwritten_with_constant_crashes", pinned below).
def _jacobian_by_jvp(f, x):
    basis = np.eye(x.size, dtype=x.dtype)
    columns = [np.asarray(jax.jvp(f, (x,), (e,))[1]) for e in basis]
    return np.stack(columns, axis=-1)


def _hessian_by_jvp(f, x):
    def gradient_by_jvp(y):
        return jjnp.stack([jax.jvp(f, (y,), (e,))[1] for e in jjnp.eye(x.size, dtype=x.dtype)])
    return _jacobian_by_jvp(gradient_by_jvp, x)


@pytest.mark.parametrize("fn", SCALAR_FNS, ids=lambda f: f.__name__)
def test_grad_and_grad_of_jit(fn):
    mine, theirs = _both(fn)
    expected = _jacobian_by_jvp(theirs, V)
    _match(minijax.grad(mine)(V), expected)
    _match(minijax.grad(minijax.jit(mine))(V), expected)
    _match(minijax.jit(minijax.grad(mine))(V), expected)


@pytest.mark.parametrize("fn", VECTOR_FNS, ids=lambda f: f.__name__)
def test_vjp(fn):
    mine, theirs = _both(fn)
    out_m, back_m = minijax.vjp(mine, V)
    _match(out_m, theirs(V))
    _match(back_m(V * 3)[0], (V * 3) @ _jacobian_by_jvp(theirs, V))


@pytest.mark.parametrize("fn", SCALAR_FNS, ids=lambda f: f.__name__)
def test_grad_of_grad(fn):
    mine, theirs = _both(fn)
    first = lambda g: (lambda x: g(x)[0])
    _match(minijax.grad(first(minijax.grad(mine)))(V), _hessian_by_jvp(theirs, V)[0])


@pins("jax_grad_of_ref_overwritten_with_constant_crashes")
def test_jax_grad_of_ref_overwritten_with_constant_crashes():
    mine, theirs = _both(overwrite_with_constant)
    if JAX_VERSION >= (0, 11):      # fixed in 0.11
        _match(jax.grad(theirs)(V), np.ones(3, np.float32))
    else:
        with pytest.raises(AttributeError, match="accum"):
            jax.grad(theirs)(V)
    _match(minijax.grad(mine)(V), np.ones(3, np.float32))


def test_reading_a_closed_over_ref_has_zero_derivative():
    def f(m, ref, x):
        return (ref[...] * x).sum()
    r_m, r_j = minijax.new_ref(V), jax.new_ref(V)
    _match(minijax.grad(lambda x: f(MJ, r_m, x))(V), jax.grad(lambda x: f(JX, r_j, x))(V))


def test_writing_a_differentiated_value_into_a_closed_over_ref_is_an_error():
    r = minijax.new_ref(np.zeros(3, np.float32))

    def f(x):
        r[...] = x * 2.0
        return x.sum()
    with pytest.raises(minijax.MinijaxError, match=r"writes a differentiated value.*"
                       r"tangent is not tracked.*lax.stop_gradient"):
        minijax.grad(f)(V)
    np.testing.assert_array_equal(np.asarray(r[...]), np.zeros(3))

    def g(x):
        r[...] = minijax.lax.stop_gradient(x * 2.0)
        minijax.ref.addupdate(r, (), minijax.lax.stop_gradient(x))
        return x.sum()
    _match(minijax.grad(g)(V), np.ones(3, np.float32))
    np.testing.assert_allclose(np.asarray(r[...]), V * 3.0)


def test_addupdate_of_a_closed_over_ref_is_an_error_under_jvp():
    r = minijax.new_ref(np.zeros(3, np.float32))
    with pytest.raises(minijax.MinijaxError, match=r"`addupdate` writes a differentiated"):
        minijax.jvp(lambda x: minijax.ref.addupdate(r, (), x) or x, (V,), (V,))


def _counted(m, x):
    counter = m.new_ref(m.np.int32(0))
    counter[...] += 1
    return x * counter[...].astype(x.dtype)


def test_integer_ref_has_no_tangent():
    mine, theirs = _both(_counted)
    # Where JAX's jvp crashes (and on 0.11.2 its linearize too), the tangent is its
    # Jacobian, from jacrev, times V.
    expected_jvp = (jax.jvp(theirs, (V,), (V,)) if not seen_on_this_jax(JVP_OF_INT_REF)
                    else (V, jax.jacrev(theirs)(V) @ V))
    _match(minijax.jvp(mine, (V,), (V,)), expected_jvp)
    _match(minijax.jacrev(mine)(V), jax.jacrev(theirs)(V))


JVP_OF_INT_REF = "jax_jvp_of_integer_ref_crashes"


@pins(JVP_OF_INT_REF)
def test_jax_jvp_of_integer_ref_crashes():
    mine, theirs = _both(_counted)
    if JAX_VERSION >= (0, 11):
        with pytest.raises(AttributeError, match="committed"):
            jax.jvp(theirs, (V,), (V,))
    else:                           # 0.10.2 gives the tangent, as minijax
        _match(jax.jvp(theirs, (V,), (V,)), (V, V))
    _match(minijax.jvp(mine, (V,), (V,)), (V, V))


def test_linear_program_shows_tangent_refs():
    _, lin = minijax.linearize(lambda x: from_zeros(MJ, x), V)
    text = str(minijax.make_jaxpr(lin)(V))
    assert "new_ref" in text and "<-" in text


# -- jacobians (these need the ref rules of vmap too) --------------------------------------

@pytest.mark.parametrize("fn", ALL_FNS, ids=lambda f: f.__name__)
def test_jacfwd_and_jacrev(fn):
    mine, theirs = _both(fn)
    expected = _jacobian_by_jvp(theirs, V)
    _match(minijax.jacfwd(mine)(V), expected)
    _match(minijax.jacrev(mine)(V), expected)


@pytest.mark.parametrize("fn", [accumulate, swap_old, matrix_rows], ids=lambda f: f.__name__)
def test_hessian(fn):
    mine, theirs = _both(fn)
    _match(minijax.hessian(mine)(V), _hessian_by_jvp(theirs, V))


@pins("jax_jacobians_of_internal_ref_functions_fail")
def test_jax_jacobians_of_internal_ref_functions_fail():
    mine, theirs = _both(accumulate)
    with pytest.raises(ValueError, match="got axis spec None but output was batched"):
        jax.jacfwd(theirs)(V)
    _match(minijax.jacfwd(mine)(V), 1 + 2 * V)


# -- jvp with a ref primal -----------------------------------------------------------------

def _increments(m, r, x):
    r[...] += x * x
    return r[...].sum()


def test_jvp_with_a_ref_primal_writes_into_its_tangent_ref():
    results = []
    for m in (MJ, JX):
        r, t = m.new_ref(V.copy()), m.new_ref(np.ones(3, np.float32))
        out = m.lib.jvp(lambda r, x: _increments(m, r, x), (r, V), (t, V))
        results.append((out, np.asarray(r[...]), np.asarray(t[...])))
    _match(results[0], results[1])


def test_jvp_ref_primal_needs_a_ref_tangent():
    r = minijax.new_ref(V.copy())
    f = lambda r, x: _increments(MJ, r, x)
    with pytest.raises(minijax.MinijaxError, match=r"a primal of type Ref\{float32\[3\]\} needs "
                       r"a tangent of type Ref\{float32\[3\]\}, got float32\[3\]: the tangent of a "
                       r"ref is a ref"):
        minijax.jvp(f, (r, V), (np.ones(3, np.float32), V))
    with pytest.raises(minijax.MinijaxError, match=r"a primal of type float32\[3\] needs a "
                       r"tangent of type float32\[3\], got Ref\{float32\[3\]\}"):
        minijax.jvp(lambda x: x, (V,), (minijax.new_ref(V),))
    with pytest.raises(minijax.MinijaxError, match=r"a ref primal of type Ref\{float32\[3\]\} "
                       r"needs a tangent ref of the same type, got Ref\{float32\[2\]\}"):
        minijax.jvp(f, (r, V), (minijax.new_ref(V[:2]), V))
    np.testing.assert_array_equal(np.asarray(r[...]), V)


@pytest.mark.parametrize("fn", [accumulate, overwrite_with_constant, swap_old, with_freeze],
                         ids=lambda f: f.__name__)
def test_grad_programs_verify_and_round_trip(fn):
    from minijax.testing import check_jaxpr
    mine, _ = _both(fn)
    check_jaxpr(minijax.make_jaxpr(minijax.grad(mine))(V))
    check_jaxpr(minijax.make_jaxpr(minijax.jacfwd(mine))(V))
