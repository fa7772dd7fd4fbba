"""Refs from outside the differentiated function -- ref arguments, and refs closed
over -- passed into an inner `jit` under autodiff (transforms/calls.py), differential
against JAX: their final contents (the call's effects happen once), and the error for
a differentiated value written into one. The programs made inside are in
tests/test_refs_jit.py."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import minijax
from tests.test_divergences import pins
from tests.test_refs_jit import MJ, JX, V, _match


# -- a ref argument of the outer function, passed into an inner jit --------------------------

def with_ref_argument(m, x, r):
    @m.jit
    def g(r, y):
        r[...] += m.stop_gradient(y)
        r[...] = r[...] * 2.0
        return r[...] * y
    out = g(r, x)
    return (out * x).sum() + r[0]


def _on_both(run):
    """`run(m, r)` with a fresh ref of ones in each library: (its result, the ref's
    final contents), for minijax and for JAX."""
    results = []
    for m in (MJ, JX):
        r = m.new_ref(np.ones(3, np.float32))
        results.append((run(m, r), np.asarray(r[...])))
    return results


_ARGUMENT_TRANSFORMS = {
    "grad": lambda m, r: m.lib.grad(with_ref_argument, argnums=1)(m, V, r),
    "value_and_grad": lambda m, r: m.lib.value_and_grad(with_ref_argument, argnums=1)(m, V, r),
    "jvp": lambda m, r: m.lib.jvp(lambda x: with_ref_argument(m, x, r), (V,), (V,)),
    "jit_of_grad": lambda m, r: m.lib.jit(m.lib.grad(
        lambda x, r: with_ref_argument(m, x, r)))(V, r),
    "grad_of_jit": lambda m, r: m.lib.grad(m.lib.jit(
        lambda x, r: with_ref_argument(m, x, r)))(V, r),
}


@pytest.mark.parametrize("transform", sorted(_ARGUMENT_TRANSFORMS))
def test_ref_argument_updated_once(transform):
    mine, theirs = _on_both(_ARGUMENT_TRANSFORMS[transform])
    _match(mine, theirs)
    _match(mine[1], (1.0 + V) * 2.0)


def test_ref_argument_under_linearize_and_vjp_called_twice():
    def run(m, r):
        out, lin = m.lib.linearize(lambda x: with_ref_argument(m, x, r), V)
        after_call = np.asarray(r[...]).copy()
        tangents = lin(V), lin(V + 1)
        after_linear_calls = np.asarray(r[...]).copy()
        _, back = m.lib.vjp(lambda x: with_ref_argument(m, x, r), V)
        after_vjp = np.asarray(r[...]).copy()
        cotangents = back(np.float32(1.0)), back(np.float32(2.0))
        return out, tangents, cotangents, (after_call, after_linear_calls, after_vjp)
    mine, theirs = _on_both(run)
    _match(mine, theirs)
    after_call, after_linear_calls, after_vjp = mine[0][3]
    _match(after_call, (1.0 + V) * 2.0)                  # the primal call, once
    _match(after_linear_calls, after_call)               # the linear function: no effect
    _match(after_vjp, ((1.0 + V) * 2.0 + V) * 2.0)       # the vjp's primal call, once
    _match(mine[1], after_vjp)                           # the pullback: no effect


def test_jvp_with_a_ref_primal_passed_into_a_jit():
    def run(m, r):
        t = m.new_ref(np.full(3, 0.5, np.float32))

        def f(r, x):
            @m.jit
            def g(r, y):
                r[...] += y * y
                return r[...].sum()
            return g(r, x)
        return m.lib.jvp(f, (r, V), (t, V)), np.asarray(t[...])
    mine, theirs = _on_both(run)
    _match(mine, theirs)


def test_grad_wrt_a_ref_argument_read_in_a_jit():
    # JAX raises here, with and without the jit: "jax_grad_wrt_ref_argument_fails"
    def f(r, x):
        @minijax.jit
        def g(r, y):
            return (r[...] * y).sum()
        return g(r, x) * 2.0
    r = minijax.new_ref(np.ones(3, np.float32))
    _match(minijax.grad(f)(r, V), V * 2.0)
    _match(np.asarray(r[...]), np.ones(3, np.float32))


def test_grad_wrt_a_ref_argument_written_in_a_jit_is_an_error():
    def f(r, x):
        @minijax.jit
        def g(r, y):
            r[...] = r[...] * y
        g(r, x)
        return r[...].sum()
    r = minijax.new_ref(np.ones(3, np.float32))
    with pytest.raises(minijax.MinijaxError, match=r"writes .* the Ref\{float32\[3\]\} passed "
                       r"as a differentiated input.*Pass its value r\[\.\.\.\]"):
        minijax.grad(f)(r, V)
    _match(np.asarray(r[...]), np.ones(3, np.float32))


# -- a differentiated value written into a ref from outside ----------------------------------

_EXTERNAL_WRITE = (r"`{prim}` writes a differentiated value into a Ref\{{float32\[3\]\}} whose "
                   r"tangent is not tracked.*Create the ref inside the function, or write "
                   r"lax.stop_gradient\(value\)")


def _writes_closed_over(m, r, accumulate=False, depth=1):
    def f(x):
        def g(y):
            if accumulate:
                m.ref.addupdate(r, (), y)
            else:
                r[...] = y * 2.0
        for _ in range(depth):
            g = m.jit(g)
        g(x)
        return x.sum()
    return f


@pytest.mark.parametrize("transform", ["grad", "jvp", "linearize", "vjp", "jit_of_grad",
                                       "nested_jits"])
def test_writing_a_differentiated_value_into_a_closed_over_ref_is_an_error(transform):
    r = minijax.new_ref(np.ones(3, np.float32))
    f = _writes_closed_over(MJ, r, depth=2 if transform == "nested_jits" else 1)
    run = {"grad": lambda: minijax.grad(f)(V), "nested_jits": lambda: minijax.grad(f)(V),
           "jvp": lambda: minijax.jvp(f, (V,), (V,)),
           "linearize": lambda: minijax.linearize(f, V),
           "vjp": lambda: minijax.vjp(f, V),
           "jit_of_grad": lambda: minijax.jit(minijax.grad(f))(V)}[transform]
    with pytest.raises(minijax.MinijaxError, match=_EXTERNAL_WRITE.format(prim="swap")):
        run()
    _match(np.asarray(r[...]), np.ones(3, np.float32))


def test_jax_also_refuses_a_differentiated_write_into_a_closed_over_ref_in_a_jit():
    r = jax.new_ref(jjnp.ones(3))
    with pytest.raises(Exception, match="differentiated value on a non-differentiated"):
        jax.grad(_writes_closed_over(JX, r))(V)
    _match(np.asarray(r[...]), np.ones(3, np.float32))


def test_writing_a_differentiated_value_into_a_ref_argument_in_a_jit_is_an_error():
    def f(x, r):
        @minijax.jit
        def g(r, y):
            r[...] += y
        g(r, x)
        return x.sum()
    r = minijax.new_ref(np.ones(3, np.float32))
    with pytest.raises(minijax.MinijaxError, match=_EXTERNAL_WRITE.format(prim="swap")):
        minijax.grad(f)(V, r)
    _match(np.asarray(r[...]), np.ones(3, np.float32))


def test_stop_gradient_writes_into_a_closed_over_ref_in_a_jit():
    def run(m, r):
        def f(x):
            @m.jit
            def g(y):
                r[...] = m.stop_gradient(y * 2.0)
                r[...] += m.stop_gradient(y)
                return (r[...] * y).sum()
            return g(x)
        return m.lib.grad(f)(V)
    mine, theirs = _on_both(run)
    _match(mine, theirs)
    _match(mine[1], V * 3.0)


@pins("jax_addupdate_of_closed_over_ref_in_inner_jit_crashes")
def test_jax_addupdate_of_closed_over_ref_in_inner_jit_crashes():
    r_j = jax.new_ref(jjnp.ones(3))
    with pytest.raises(TypeError, match="Error interpreting argument to addupdate"):
        jax.grad(_writes_closed_over(JX, r_j, accumulate=True))(V)
    r_m = minijax.new_ref(np.ones(3, np.float32))
    with pytest.raises(minijax.MinijaxError, match=_EXTERNAL_WRITE.format(prim="addupdate")):
        minijax.grad(_writes_closed_over(MJ, r_m, accumulate=True))(V)
    _match(np.asarray(r_m[...]), np.ones(3, np.float32))
