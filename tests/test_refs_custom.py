"""Refs and custom derivatives (issue 17): refs made inside a `custom_jvp` /
`custom_vjp` function, refs passed to one (read, written), the gradient-stashing
recipe (`bwd` writes the cotangent into a ref), and a custom function returning a
ref. Each program is written against a namespace `m` (minijax or jax) and run by both."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mjnp
from minijax.testing import JAX_VERSION, assert_trees_match
from tests.test_divergences import pins

X = np.float32(1.5)
T = np.float32(1.0)
NP = {minijax: mjnp, jax: jjnp}


def _match(mine, theirs):
    assert_trees_match(mine, theirs)


def own_refs_jvp(m):
    @m.custom_jvp
    def f(x, r):
        t = m.new_ref(x)
        t[...] += x * x
        return t[...]
    f.defjvp(lambda p, t: (f(*p), t[0] * (1 + 2 * p[0])))
    return f


def own_refs_vjp(m):
    @m.custom_vjp
    def f(x, r):
        t = m.new_ref(x)
        t[...] += x * x
        return t[...]

    def fwd(x, r):
        t = m.new_ref(x)
        t[...] *= 3.0
        return f(x, r), x
    f.defvjp(fwd, lambda x, g: (g * (1 + 2 * x), None))
    return f


def reads_ref_vjp(m):
    @m.custom_vjp
    def f(x, r):
        return x * r[...]
    f.defvjp(lambda x, r: (x * r[...], r[...]), lambda rv, g: (g * rv, None))
    return f


def reads_ref_jvp(m):
    @m.custom_jvp
    def f(x, r):
        return x * r[...]
    f.defjvp(lambda p, t: (p[0] * p[1][...], t[0] * p[1][...]))
    return f


def writes_ref_vjp(m):
    @m.custom_vjp
    def f(x, r):
        r[...] += x
        return x * 2.0

    def fwd(x, r):
        r[...] += x
        return x * 2.0, None
    f.defvjp(fwd, lambda _, g: (g * 2.0, None))
    return f


def writes_ref_jvp(m):
    @m.custom_jvp
    def f(x, r):
        r[...] += x
        return x * 2.0

    def jvp(p, t):
        p[1][...] += p[0]
        return p[0] * 2.0, t[0] * 2.0
    f.defjvp(jvp)
    return f


def stash_cotangent(m):
    """The gradient-stashing recipe: bwd writes the incoming cotangent into the ref
    (a primal argument, kept as the residual) and passes the cotangent on."""
    @m.custom_vjp
    def f(x, r):
        return x

    def fwd(x, r):
        return x, r

    def bwd(r, g):
        r[...] = g
        return g, None
    f.defvjp(fwd, bwd)
    return f


CUSTOM_JVP = [own_refs_jvp, reads_ref_jvp, writes_ref_jvp]
CUSTOM_VJP = [own_refs_vjp, reads_ref_vjp, writes_ref_vjp, stash_cotangent]


def _run(m, make, how):
    f = make(m)
    r = m.new_ref(np.float32(2.0))
    sin = NP[m].sin

    def g(x):
        return sin(f(x, r)) * 3.0
    out = {"eager": lambda: g(X), "jit": lambda: m.jit(g)(X),
           "grad": lambda: m.grad(g)(X), "jit_grad": lambda: m.jit(m.grad(g))(X),
           "grad_jit": lambda: m.grad(m.jit(g))(X),
           "jvp": lambda: m.jvp(g, (X,), (T,)),
           "vjp": lambda: m.vjp(g, X)[1](T)}[how]()
    return out, r[...]


JAX_CANNOT_JIT = CUSTOM_JVP + [own_refs_vjp, stash_cotangent]     # pinned below


@pytest.mark.parametrize("make", CUSTOM_JVP + CUSTOM_VJP)
@pytest.mark.parametrize("how", ["eager", "jit", "grad", "jit_grad", "grad_jit", "vjp"])
def test_value_and_ref_contents_match_jax(make, how):
    # Where JAX cannot jit, jit must agree with JAX run eagerly.
    theirs = {"jit": "eager", "jit_grad": "grad", "grad_jit": "grad"}.get(how, how) \
        if make in JAX_CANNOT_JIT else how
    _match(_run(minijax, make, how), _run(jax, make, theirs))


@pytest.mark.parametrize("make", CUSTOM_JVP)
def test_forward_mode_of_custom_jvp_with_refs_matches_jax(make):
    _match(_run(minijax, make, "jvp"), _run(jax, make, "jvp"))


@pins("jax_jit_of_custom_jvp_using_refs_fails")
@pytest.mark.parametrize("make", CUSTOM_JVP)
def test_jax_jit_of_custom_jvp_using_refs_fails(make):
    with pytest.raises(NotImplementedError, match="discharge rule.*custom_jvp_call"):
        _run(jax, make, "jit")
    _match(_run(minijax, make, "jit"), _run(jax, make, "eager"))


_XS = np.array([1.0, 2.0], np.float32)


def _written_out(m, f, r):
    """The scans over `_XS` below, as a Python loop."""
    def g(x):
        for xi in _XS:
            x = NP[m].sin(f(x, r)) * xi
        return x
    return g


@pins("jax_grad_of_scan_over_custom_jvp_using_refs_fails")
def test_jax_grad_of_scan_over_custom_jvp_using_refs_fails():
    def scanned(m, f):
        return lambda x: m.lax.scan(lambda c, xi: (NP[m].sin(f(c, None)) * xi, None), x,
                                    _XS)[0]
    expected = jax.grad(_written_out(jax, own_refs_jvp(jax), None))(X)
    if JAX_VERSION >= (0, 12):
        with pytest.raises(NotImplementedError, match="discharge rule.*custom_jvp_call"):
            jax.grad(scanned(jax, own_refs_jvp(jax)))(X)
    else:
        _match(jax.grad(scanned(jax, own_refs_jvp(jax)))(X), expected)
    _match(minijax.grad(scanned(minijax, own_refs_jvp(minijax)))(X), expected)
    _match(minijax.jit(minijax.grad(scanned(minijax, own_refs_jvp(minijax))))(X), expected)


def _in_control_flow(m, f, r, where):
    """`_written_out`'s loop as a scan or while_loop; for cond, its first iteration."""
    sin, xs = NP[m].sin, NP[m].asarray(_XS)
    if where == "scan":
        return lambda x: m.lax.scan(lambda c, xi: (sin(f(c, r)) * xi, None), x, _XS)[0]
    if where == "while_loop":
        body = lambda c: (c[0] + 1, sin(f(c[1], r)) * xs[c[0]])
        return lambda x: m.lax.while_loop(lambda c: c[0] < len(_XS), body, (0, x))[1]
    return lambda x: m.lax.cond(x > 0, lambda y: sin(f(y, r)) * xs[0], lambda y: y, x)


@pins("jax_scan_over_custom_jvp_using_refs_fails")
@pytest.mark.parametrize("where", ["scan", "while_loop", "cond"])
@pytest.mark.parametrize("make", CUSTOM_JVP)
def test_jax_scan_over_custom_jvp_using_refs_fails(make, where):
    f, r = make(jax), jax.new_ref(np.float32(2.0))
    g = _in_control_flow(jax, f, r, where)
    for run in (g, jax.jit(g)):                    # no differentiation at all
        with pytest.raises(NotImplementedError, match="discharge rule.*custom_jvp_call"):
            run(X)
    # JAX runs the call outside the loop: the loop written out is the expected value
    r = jax.new_ref(np.float32(2.0))
    written_out = (lambda x: jjnp.sin(f(x, r)) * _XS[0]) if where == "cond" \
        else _written_out(jax, f, r)
    expected = written_out(X), r[...]
    for jit in (False, True):
        f, r = make(minijax), minijax.new_ref(np.float32(2.0))
        g = _in_control_flow(minijax, f, r, where)
        _match(((minijax.jit(g) if jit else g)(X), r[...]), expected)


@pins("jax_jit_of_custom_vjp_with_unused_ref_argument_fails")
@pytest.mark.parametrize("make, error", [(stash_cotangent, "constant handler"),
                                         (own_refs_vjp, "Did not ask")])
def test_jax_jit_of_custom_vjp_with_unused_ref_argument_fails(make, error):
    with pytest.raises((TypeError, ValueError), match=error):
        _run(jax, make, "jit")
    _match(_run(minijax, make, "jit"), _run(jax, make, "eager"))


def test_stashing_writes_only_under_reverse_mode():
    f = stash_cotangent(minijax)
    r = minijax.new_ref(np.float32(0.0))
    minijax.jit(lambda x: f(x, r) * 3.0)(X)         # bwd never runs without AD
    assert float(r[...]) == 0.0
    minijax.grad(lambda x: f(x, r) * 3.0)(X)
    assert float(r[...]) == 3.0


def test_pure_custom_functions_using_their_own_refs_under_vmap():
    xs = np.array([0.5, 1.0, 2.0], np.float32)
    outs = []
    for m in (minijax, jax):
        f = own_refs_vjp(m)
        outs.append(m.vmap(m.grad(lambda x: f(x, None)))(xs))
        outs.append(m.vmap(lambda x: f(x, None))(xs))
    _match(outs[:2], outs[2:])


@pytest.mark.parametrize("custom", ["custom_jvp", "custom_vjp"])
@pytest.mark.parametrize("how", ["jit", "grad", "make_jaxpr"])
def test_a_custom_function_returning_a_ref_is_a_ref_error(custom, how):
    r = minijax.new_ref(np.float32(5.0))

    def body(x):
        r[...] = x                       # must not happen: the error comes first
        return minijax.new_ref(x)
    f = getattr(minijax, custom)(body)
    if custom == "custom_jvp":
        f.defjvp(lambda p, t: (f(*p), t[0]))
    else:
        f.defvjp(lambda x: (f(x), None), lambda _, g: (g,))
    run = {"jit": lambda: minijax.jit(lambda x: f(x)[...])(X),
           "grad": lambda: minijax.grad(lambda x: f(x)[...])(X),
           "make_jaxpr": lambda: minijax.make_jaxpr(lambda x: f(x)[...])(X)}[how]
    with pytest.raises(minijax.RefError, match=r"custom function body returns a ref.*r\[\.\.\.\]"):
        run()
    assert float(r[...]) == 5.0


def _stash_in(m, where):
    f = stash_cotangent(m)
    r = m.new_ref(np.float32(0.0))
    xs = np.array([1.0, 2.0, 0.5], np.float32)
    sin = NP[m].sin
    if where == "checkpoint":
        g = lambda x: m.checkpoint(lambda y: sin(f(y, r) * 3.0))(x)
    else:       # the last write is the first iteration's cotangent
        g = lambda x: m.lax.scan(lambda c, xi: (sin(f(c, r)) * xi, None), x, xs)[0]
    return g, r


@pytest.mark.parametrize("where", ["checkpoint", "scan"])
@pytest.mark.parametrize("how", ["eager", "grad", "jit_grad", "vjp"])
def test_stashing_inside_checkpoint_and_scan_matches_jax(where, how):
    results = []
    for m in (minijax, jax):
        g, r = _stash_in(m, where)
        run = {"eager": lambda: g(X), "grad": lambda: m.grad(g)(X),
               "jit_grad": lambda: m.jit(m.grad(g))(X),
               "vjp": lambda: m.vjp(g, X)[1](T)}[how]
        results.append((run(), r[...]))
    _match(*results)


def test_a_custom_rule_taking_a_ref_inside_a_cond_without_differentiating():
    f = stash_cotangent(minijax)
    r = minijax.new_ref(np.float32(0.0))
    g = lambda x: minijax.lax.cond(x > 0, lambda y: f(y, r) * 3.0, lambda y: y, x)
    _match(g(X), X * 3.0)                                 # no AD: the primal runs
    _match(minijax.jit(g)(X), X * 3.0)
    assert float(r[...]) == 0.0      # differentiated: tests/test_refs_custom_control_flow.py


@pytest.mark.parametrize("make", [own_refs_jvp, own_refs_vjp, reads_ref_vjp, writes_ref_vjp])
@pytest.mark.parametrize("where", ["checkpoint", "scan"])
def test_custom_functions_with_refs_inside_checkpoint_and_scan_under_grad(make, where):
    results = []
    for m in (minijax, jax):
        f, r, sin = make(m), m.new_ref(np.float32(2.0)), NP[m].sin
        if where == "checkpoint":
            g = lambda x: m.checkpoint(lambda y: sin(f(y, r)))(x)
        elif m is jax and make is own_refs_jvp and JAX_VERSION >= (0, 12):
            # JAX 0.12 cannot differentiate the scan (registry entry
            # "jax_grad_of_scan_over_custom_jvp_using_refs_fails"): the loop written out.
            g = _written_out(m, f, r)
        else:
            g = lambda x: m.lax.scan(lambda c, xi: (sin(f(c, r)) * xi, None), x, _XS)[0]
        results.append((m.grad(g)(X), r[...]))
    if make is writes_ref_vjp and where == "checkpoint":
        # JAX runs the write again when it recomputes the checkpoint (pinned as
        # remat_grad_external_ref_effect_runs_twice): minijax writes once.
        _match(results[0][0], results[1][0])
        _match(results[0][1], np.float32(2.0 + X))
        return
    _match(*results)


@pytest.mark.parametrize("make", [own_refs_jvp, own_refs_vjp, reads_ref_vjp, reads_ref_jvp])
def test_custom_functions_with_refs_under_vmap_and_vmap_of_grad(make):
    xs = np.array([1.0, 2.0], np.float32)
    results = []
    for m in (minijax, jax):
        f, r = make(m), m.new_ref(np.float32(2.0))
        results.append((m.vmap(lambda x: f(x, r))(xs),
                        m.vmap(m.grad(lambda x: f(x, r)))(xs), r[...]))
    _match(*results)


def test_a_custom_function_writing_a_per_example_value_under_vmap_is_an_error():
    f, r = writes_ref_vjp(minijax), minijax.new_ref(np.float32(2.0))
    with pytest.raises(minijax.MinijaxError, match="differs per example"):
        minijax.vmap(lambda x: f(x, r))(np.array([1.0, 2.0], np.float32))
    assert float(r[...]) == 2.0
