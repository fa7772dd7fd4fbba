"""Custom derivative functions that take a ref, called inside a differentiated `cond`
branch or loop body (issue 17): the user's rules see the ref, its writes happen
once, and the gradient-stashing recipe gives what it gives eagerly. Each program is
run by minijax and by JAX, or -- where JAX fails (pinned below) -- compared with the
same program without the `cond`/loop, whose meaning it has."""
import jax
import numpy as np
import pytest

import minijax
from minijax.testing import JAX_VERSION, assert_trees_match
import minijax.ad_checkpoint  # noqa: F401 -- imported by name, as on JAX
from tests.test_divergences import pins
from tests.test_refs_custom import (NP, own_refs_jvp, own_refs_vjp, reads_ref_jvp,
                                    reads_ref_vjp, stash_cotangent, writes_ref_jvp,
                                    writes_ref_vjp)

X, T = np.float32(1.5), np.float32(1.0)


def _apply(m, g, how):
    return {"eager": lambda: g(X), "jit": lambda: m.jit(g)(X),
            "jvp": lambda: m.jvp(g, (X,), (T,)),
            "jit_jvp": lambda: m.jit(lambda x: m.jvp(g, (x,), (T,)))(X),
            "linearize": lambda: m.linearize(g, X)[1](T),
            "grad": lambda: m.grad(g)(X), "jit_grad": lambda: m.jit(m.grad(g))(X),
            "grad_jit": lambda: m.grad(m.jit(g))(X),
            "vjp": lambda: m.vjp(g, X)[1](T)}[how]()


def _in_cond(m, make, taken=True, inline=False):
    """`sin(f(x, r))` in the branch that runs (the other returns x); `inline`: the
    same without the `cond`, as it means when that branch is taken."""
    f, r, sin = make(m), m.new_ref(np.float32(2.0)), NP[m].sin

    def g(x):
        if inline:
            return sin(f(x, r)) * 3.0
        return m.lax.cond(x > 0 if taken else x < 0,
                          lambda y: sin(f(y, r)) * 3.0, lambda y: y * 2.0, x)
    return g, r


def _results(m, build, how):
    g, r = build(m)
    return _apply(m, g, how), r[...]


CUSTOM_JVP_FNS = [reads_ref_jvp, writes_ref_jvp, own_refs_jvp]


def _reference(make, how):
    """Who runs the program without the cond / loop: JAX, except under jit for a
    custom function using only its own refs, or a custom_jvp function using refs
    without differentiating, which JAX cannot jit (`jax_jit_of_custom_jvp_using_refs_fails`,
    `jax_jit_of_custom_vjp_with_unused_ref_argument_fails`); minijax matches JAX on
    those eagerly (tests/test_refs_custom.py)."""
    own_refs = make in (own_refs_jvp, own_refs_vjp) and "jit" in how
    undifferentiated = make in CUSTOM_JVP_FNS and how == "jit"
    return minijax if own_refs or undifferentiated else jax
CUSTOM_VJP_FNS = [reads_ref_vjp, writes_ref_vjp, own_refs_vjp]


@pytest.mark.parametrize("make", CUSTOM_JVP_FNS)
@pytest.mark.parametrize("how", ["jvp", "jit_jvp", "linearize", "grad", "jit_grad", "vjp"])
def test_custom_jvp_taking_a_ref_in_a_differentiated_cond_matches_jax(make, how):
    mine = _results(minijax, lambda m: _in_cond(m, make), how)
    assert_trees_match(mine, _results(_reference(make, how), lambda m: _in_cond(m, make, inline=True), how))
    if make is not own_refs_jvp:      # JAX fails on that one (pinned below)
        assert_trees_match(mine, _results(jax, lambda m: _in_cond(m, make), how))


@pytest.mark.parametrize("make", CUSTOM_VJP_FNS)
@pytest.mark.parametrize("how", ["grad", "vjp", "grad_jit"])
@pytest.mark.parametrize("taken", [True, False])
def test_custom_vjp_taking_a_ref_in_a_differentiated_cond_matches_jax(make, how, taken):
    mine = _results(minijax, lambda m: _in_cond(m, make, taken), how)
    if _reference(make, how) is jax:
        assert_trees_match(mine, _results(jax, lambda m: _in_cond(m, make, taken), how))
    else:
        assert_trees_match(mine, _results(jax, lambda m: _in_cond(m, make, taken), "grad"))


@pytest.mark.parametrize("how", ["eager", "jit", "grad", "jit_grad", "grad_jit", "vjp"])
@pytest.mark.parametrize("taken", [True, False])
def test_stashing_in_a_differentiated_cond_gives_what_it_gives_eagerly(how, taken):
    """JAX fails here (pinned below); without the cond it works, and gives this."""
    def stash_in_cond(m):
        f, r, sin = stash_cotangent(m), m.new_ref(np.float32(0.0)), NP[m].sin
        return (lambda x: m.lax.cond(x > 0 if taken else x < 0,
                                     lambda y: sin(f(y, r) * 3.0), lambda y: y * 2.0, x)), r

    def stash_inline(m):
        f, r, sin = stash_cotangent(m), m.new_ref(np.float32(0.0)), NP[m].sin
        return (lambda x: sin(f(x, r) * 3.0) if taken else x * 2.0), r
    # JAX cannot jit the recipe without differentiating
    # (`jax_jit_of_custom_vjp_with_unused_ref_argument_fails`): its un-jitted result.
    expected = _results(jax, stash_inline, {"jit": "eager", "grad_jit": "grad"}.get(how, how))
    assert_trees_match(_results(minijax, stash_in_cond, how), expected)
    assert_trees_match(_results(minijax, stash_inline, how), expected)


def test_a_ref_made_by_the_differentiated_function_through_a_cond():
    """A ref with a tangent ref (made inside the differentiated function) passed to
    a custom_jvp function in a branch: its tangent ref goes in beside it."""
    def build(m, make, use_cond):
        f, sin = make(m), NP[m].sin

        def g(x):
            t = m.new_ref(x * 2.0)
            y = (m.lax.cond(x > 0, lambda y: sin(f(y, t)), lambda y: y, x) if use_cond
                 else sin(f(x, t)))
            return y + t[...]
        return g
    for make in (reads_ref_jvp, writes_ref_jvp):
        for how in ("jvp", "grad", "jit_grad"):
            mine = _apply(minijax, build(minijax, make, True), how)
            assert_trees_match(mine, _apply(jax, build(jax, make, True), how))
            assert_trees_match(mine, _apply(minijax, build(minijax, make, False), how))


# -- while_loop (forward mode) and fori_loop with static bounds (a scan) -----------------

def _in_while(m, make, steps=3):
    f, r, sin = make(m), m.new_ref(np.float32(2.0)), NP[m].sin

    def g(x):
        return m.lax.while_loop(lambda c: c[0] < steps,
                                lambda c: (c[0] + 1, sin(f(c[1], r))), (0, x))[1]
    return g, r


def _unrolled(m, make, steps=3):
    f, r, sin = make(m), m.new_ref(np.float32(2.0)), NP[m].sin

    def g(x):
        for _ in range(steps):
            x = sin(f(x, r))
        return x
    return g, r


@pytest.mark.parametrize("make", CUSTOM_JVP_FNS)
@pytest.mark.parametrize("how", ["eager", "jit", "jvp", "jit_jvp", "linearize"])
def test_custom_jvp_taking_a_ref_in_a_while_loop_under_forward_mode(make, how):
    mine = _results(minijax, lambda m: _in_while(m, make), how)
    assert_trees_match(mine, _results(_reference(make, how), lambda m: _unrolled(m, make), how))
    # JAX's own loop: not undifferentiated (jax_jit_of_custom_jvp_using_refs_fails:
    # an eager loop is jitted), not with own refs nor under linearize (pinned below).
    if make is not own_refs_jvp and how in ("jvp", "jit_jvp"):
        assert_trees_match(mine, _results(jax, lambda m: _in_while(m, make), how))


@pytest.mark.parametrize("how", ["grad", "jit_jvp"])
def test_a_custom_vjp_stash_in_a_while_loop_is_a_clear_error_and_writes_nothing(how):
    g, r = _in_while(minijax, stash_cotangent)
    with pytest.raises(minijax.MinijaxError, match="custom_vjp function \\(f\\).*while_loop"):
        _apply(minijax, g, how)
    assert float(r[...]) == 2.0


@pytest.mark.parametrize("how", ["grad", "jit_grad", "vjp"])
def test_stashing_in_a_fori_loop_with_static_bounds_matches_jax(how):
    def build(m):
        f, r, sin = stash_cotangent(m), m.new_ref(np.float32(0.0)), NP[m].sin
        return (lambda x: m.lax.fori_loop(0, 3, lambda i, c: sin(f(c, r)) * 1.5, x)), r
    assert_trees_match(_results(minijax, build, how), _results(jax, build, how))


# -- where JAX does otherwise ------------------------------------------------------------

@pins("jax_custom_vjp_taking_a_ref_in_a_differentiated_cond_fails")
def test_jax_custom_vjp_stash_in_a_differentiated_cond_fails():
    def build(m):
        f, r, sin = stash_cotangent(m), m.new_ref(np.float32(0.0)), NP[m].sin
        return (lambda x: m.lax.cond(x > 0, lambda y: sin(f(y, r) * 3.0),
                                     lambda y: y, x)), r
    g, r = build(minijax)
    grad = minijax.grad(g)(X)
    assert_trees_match(r[...], grad)                 # the cotangent reached the ref
    if JAX_VERSION >= (0, 12):      # fixed in 0.12: the same gradient and ref contents
        g, r = build(jax)
        assert_trees_match((jax.grad(g)(X), r[...]), (grad, grad))
    else:
        with pytest.raises(KeyError, match="AbstractRef"):
            _results(jax, build, "grad")


@pins("jax_custom_jvp_with_own_refs_in_differentiated_control_flow_fails")
def test_jax_custom_jvp_with_own_refs_in_a_cond_or_while_loop_fails():
    for build in (lambda m: _in_while(m, own_refs_jvp), lambda m: _in_cond(m, own_refs_jvp)):
        with pytest.raises(NotImplementedError, match="custom_jvp_call"):
            _results(jax, build, "jvp")
    assert_trees_match(_results(minijax, lambda m: _in_while(m, own_refs_jvp), "jvp"),
                       _results(jax, lambda m: _unrolled(m, own_refs_jvp), "jvp"))


@pins("jax_linearize_of_while_with_custom_jvp_ref_write_writes_twice")
def test_jax_linearize_of_while_writes_the_ref_twice():
    jvp_contents = _results(jax, lambda m: _in_while(m, writes_ref_jvp), "jvp")[1]
    _, contents = _results(jax, lambda m: _in_while(m, writes_ref_jvp), "linearize")
    np.testing.assert_allclose(contents - 2.0, 2 * (jvp_contents - 2.0), rtol=1e-6)
    assert_trees_match(_results(minijax, lambda m: _in_while(m, writes_ref_jvp),
                                "linearize")[1], jvp_contents)


# -- the recipe costs what it costs without refs: a scan stays a scan, a checkpoint
#    recomputes ---------------------------------------------------------------------------

def _stash_in_scan(length):
    f, r, sin = stash_cotangent(minijax), minijax.new_ref(np.float32(0.0)), NP[minijax].sin
    xs = np.linspace(0.5, 1.5, length).astype(np.float32)
    return (lambda x: minijax.lax.scan(lambda c, xi: (sin(f(c, r)) * xi, None), x, xs)[0]), r


def test_stashing_in_a_scan_keeps_one_scan_whatever_its_length():
    texts = [str(minijax.make_jaxpr(minijax.grad(_stash_in_scan(n)[0]))(X)) for n in (3, 40)]
    assert len(texts[0].splitlines()) == len(texts[1].splitlines())
    assert texts[1].count("scan[") == 2           # forward and backward, not 40 copies
    assert "length=40" in texts[1]


def test_stashing_in_a_checkpoint_recomputes_instead_of_saving():
    f, r, sin = stash_cotangent(minijax), minijax.new_ref(np.float32(0.0)), NP[minijax].sin
    g = lambda x: minijax.checkpoint(lambda y: sin(sin(f(y, r) * 3.0)))(x)
    residuals = minijax.ad_checkpoint.saved_residuals(g, X)
    # Only the argument (and the ref, a constant): no sin/cos of the body is saved.
    assert sorted(why for _, why in residuals) == ["from a constant", "from the argument x"]
    assert isinstance(residuals[[why for _, why in residuals].index("from a constant")][0],
                      minijax.ir.types.RefType)
    assert "remat[" in str(minijax.make_jaxpr(minijax.grad(g))(X))
    jf, jr = stash_cotangent(jax), jax.new_ref(np.float32(0.0))
    expected = jax.grad(lambda x: jax.checkpoint(
        lambda y: jax.numpy.sin(jax.numpy.sin(jf(y, jr) * 3.0)))(x))(X)
    assert_trees_match((minijax.grad(g)(X), r[...]), (expected, jr[...]))


def test_a_ref_with_a_tangent_ref_through_a_custom_function_in_a_scan():
    """A ref the differentiated function made, handed to a custom_jvp function in a
    scan body: its tangent ref goes through the loop (split iteration by iteration
    under reverse mode)."""
    def build(m, make, use_scan):
        f, sin = make(m), NP[m].sin
        xs = np.array([1.0, 0.5, 2.0], np.float32)

        def g(x):
            t = m.new_ref(x * 2.0)
            if use_scan:
                c = m.lax.scan(lambda c, xi: (sin(f(c, t)) * xi, None), x, xs)[0]
            else:
                c = x
                for xi in xs:
                    c = sin(f(c, t)) * xi
            return c + t[...]
        return g
    for make in (reads_ref_jvp, writes_ref_jvp):
        for how in ("jvp", "grad", "linearize"):
            mine = _apply(minijax, build(minijax, make, True), how)
            assert_trees_match(mine, _apply(jax, build(jax, make, False), how))
            assert_trees_match(mine, _apply(minijax, build(minijax, make, False), how))


def test_stashing_into_a_ref_the_branch_made():
    """`fwd` keeps a ref the branch itself made: the backward cond gets a copy of it
    (nothing after the branch can see the ref, so where bwd's write lands is unseen)."""
    def build(m, use_cond):
        f, r, sin = stash_cotangent(m), m.new_ref(np.float32(0.0)), NP[m].sin

        def branch(y):
            t = m.new_ref(y)
            out = f(y, t)
            r[...] = m.lax.stop_gradient(out) * 2.0
            return sin(out) + t[...]
        return (lambda x: m.lax.cond(x > 0, branch, lambda y: y, x) if use_cond
                else branch(x)), r
    for how in ("grad", "jit_grad", "vjp"):
        mine = _results(minijax, lambda m: build(m, True), how)
        assert_trees_match(mine, _results(jax, lambda m: build(m, False), how))


@pytest.mark.parametrize("how", ["jvp", "jit_jvp"])
def test_forward_mode_of_a_custom_vjp_in_a_cond_is_jaxs_error_and_writes_nothing(how):
    g, r = _in_cond(minijax, writes_ref_vjp)
    with pytest.raises(minijax.MinijaxError, match="forward-mode autodiff.*custom_vjp"):
        _apply(minijax, g, how)
    assert float(r[...]) == 2.0
    with pytest.raises(TypeError, match="forward-mode autodiff.*custom_vjp"):
        _results(jax, lambda m: _in_cond(m, writes_ref_vjp), how)


def test_a_ref_with_a_tangent_ref_through_a_custom_function_in_a_while_loop():
    def build(m, make, use_loop):
        f, sin = make(m), NP[m].sin

        def g(x):
            t = m.new_ref(x * 2.0)
            if use_loop:
                c = m.lax.while_loop(lambda c: c[0] < 3,
                                     lambda c: (c[0] + 1, sin(f(c[1], t))), (0, x))[1]
            else:
                c = x
                for _ in range(3):
                    c = sin(f(c, t))
            return c + t[...]
        return g
    for make in (reads_ref_jvp, writes_ref_jvp):
        for how in ("jvp", "linearize"):
            assert_trees_match(_apply(minijax, build(minijax, make, True), how),
                               _apply(jax, build(jax, make, False), how))
        # (JAX's jacfwd of a function making refs fails:
        # jax_jacobians_of_internal_ref_functions_fail)
        assert_trees_match(minijax.jacfwd(build(minijax, make, True))(X),
                           minijax.jacfwd(build(minijax, make, False))(X))


def test_print_saved_residuals_writes_a_ref_residual_as_a_ref(capsys):
    f, r, sin = stash_cotangent(minijax), minijax.new_ref(np.float32(0.0)), NP[minijax].sin
    g = lambda x: minijax.checkpoint(lambda y: sin(sin(f(y, r) * 3.0)))(x)
    minijax.ad_checkpoint.print_saved_residuals(g, X)
    assert "Ref{f32[]} from a constant" in capsys.readouterr().out.splitlines()
