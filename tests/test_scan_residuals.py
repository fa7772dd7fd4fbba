"""Loop-invariant residuals of `scan`: saved once, not once per iteration (fuzz
finding F16, docs/fuzzing_findings.md; docs/control_flow.md, "scan under the passes").

A residual of a scan body computed from the loop's constants alone (`sin(w)` for a
closed-over `w`) is the same in every iteration. Partial evaluation computes it once,
before the loop, and hands it to the backward scan as a const, as JAX does; before
the fix minijax stacked it, `length` copies. Each program below is one Python
function run with either library's numpy and lax, so the residual lists printed by
`print_saved_residuals` can be compared with JAX's word for word."""
import jax
import numpy as np
import pytest

import minijax
from minijax.testing import assert_cross_check
from minijax.testing.comparison import assert_trees_match
from minijax.testing.recipes import Side

W = np.full((3,), 0.7, np.float32)
XS = np.arange(12, dtype=np.float32).reshape(4, 3) / 10


def programs(api):
    jnp, lax = api.numpy, api.lax

    def sin_carry(w, xs):
        c, ys = lax.scan(lambda c, x: (c * jnp.sin(w) + x, c * x), xs[0], xs)
        return jnp.sum(c) + jnp.sum(ys)

    def nested(w, xs):
        def outer(c, x):
            inner = lax.scan(lambda d, _: (d * jnp.sin(w), None), c + x, None, length=2)[0]
            return inner, jnp.cos(w) * x
        c, ys = lax.scan(outer, xs[0], xs)
        return jnp.sum(c) + jnp.sum(ys)

    def fori(w, xs):
        xs = jnp.asarray(xs)       # indexed by the loop counter, a tracer
        return jnp.sum(lax.fori_loop(0, 4, lambda i, c: c * jnp.sin(w) + xs[i], xs[0]))

    def invariant_only(w, xs):      # the fuzzer's F16 program: no carry at all
        return jnp.sum(lax.scan(lambda c, x: (c, lax.asinh(w) * x), (), xs)[1])

    return dict(sin_carry=sin_carry, nested=nested, fori=fori,
                invariant_only=invariant_only)


NAMES = ("sin_carry", "nested", "fori", "invariant_only")


def saved(api, name, policy=None, args=(W, XS)):
    f = programs(api)[name]
    if policy is not None:
        f = api.checkpoint(f, policy=getattr(api.checkpoint_policies, policy))
    return Side(api.__name__, api, None).saved_residuals(f, *args)


def _multiset_le(small, big):
    rest = list(big)
    for item in small:
        if item not in rest:
            return False
        rest.remove(item)
    return True


# What each side saves, where the lists agree word for word. The invariant residuals
# (sin(w), cos(w), asinh(w), its derivative) are f32[3] in both: saved once.
AGREE = [("sin_carry", None), ("sin_carry", "nothing_saveable"),
         ("sin_carry", "dots_saveable"), ("nested", None), ("nested", "nothing_saveable"),
         ("nested", "dots_saveable"), ("fori", "nothing_saveable"),
         ("fori", "dots_saveable"), ("invariant_only", None),
         ("invariant_only", "everything_saveable")]


@pytest.mark.parametrize("name, policy", AGREE)
def test_saved_residuals_match_jax(name, policy):
    assert saved(minijax, name, policy) == saved(jax, name, policy)


def test_sin_of_a_const_is_saved_once():
    expected = ("f32[3]", "f32[3]", "f32[4,3]", "f32[4,3]")   # sin, cos, carries, xs
    assert saved(minijax, "sin_carry") == expected


# Where JAX saves more: a checkpoint saving everything makes JAX keep a loop input
# (`xs[0]`, the initial carry) and, for fori_loop, the final counter; minijax's
# list is contained in JAX's, and its invariant residuals are saved once, like JAX's.
MINIJAX_SAVES_LESS = {
    ("sin_carry", "everything_saveable"): ("f32[3]", "f32[3]", "f32[4,3]", "f32[4,3]"),
    ("nested", "everything_saveable"): ("f32[3]", "f32[3]", "f32[3]", "f32[3]",
                                        "f32[4,2,3]", "f32[4,3]"),
    ("fori", None): ("f32[3]", "f32[3]", "f32[4,3]", "i32[4]"),
    ("fori", "everything_saveable"): ("f32[3]", "f32[3]", "f32[4,3]", "i32[4]"),
}


@pytest.mark.parametrize("name, policy", list(MINIJAX_SAVES_LESS))
def test_saved_residuals_where_jax_saves_more(name, policy):
    mine, theirs = saved(minijax, name, policy), saved(jax, name, policy)
    assert mine == MINIJAX_SAVES_LESS[name, policy]
    assert _multiset_le(mine, theirs) and mine != theirs


def test_a_length_zero_scan_saves_its_invariant_residuals_once():
    # the fuzzer found F16 at a length-0 scan: the invariant residual is still computed
    # (once), as in JAX, and nothing is stacked over zero iterations
    args = (W, np.zeros((0, 3), np.float32))
    assert saved(minijax, "invariant_only", None, args) == saved(jax, "invariant_only", None, args)


def _shapes(atoms):
    return tuple(tuple(a.aval.shape) for a in atoms)


def _scan_signatures(closed):
    """(input shapes, output shapes) of each top-level scan equation, in order (an
    equation's operands are `inputs`/`outputs` in minijax, `invars`/`outvars` in JAX)."""
    return [(_shapes(getattr(e, "inputs", None) or e.invars),
             _shapes(getattr(e, "outputs", None) or e.outvars))
            for e in closed.jaxpr.eqns if e.primitive.name == "scan"]


@pytest.mark.parametrize("name", ("sin_carry", "invariant_only"))
def test_printed_scans_carry_what_jax_s_carry(name):
    # the forward scan emits no stacked copy of an invariant residual, and the
    # backward scan takes it as a const: every scan's inputs and outputs have the
    # shapes of JAX's (the printed jaxprs differ only in names and order)
    mine = minijax.make_jaxpr(minijax.grad(programs(minijax)[name]))(W, XS)
    theirs = jax.make_jaxpr(jax.grad(programs(jax)[name]))(W, XS)
    signatures = [_scan_signatures(mine), _scan_signatures(theirs)]
    assert [(sorted(i), sorted(o)) for i, o in signatures[0]] == \
        [(sorted(i), sorted(o)) for i, o in signatures[1]]
    assert len(signatures[0]) == 2
    backward_inputs = signatures[0][1][0]
    assert backward_inputs.count((4, 3)) == sum(s == (4, 3) for s in signatures[1][1][0])


@pytest.mark.parametrize("name", NAMES)
def test_gradients_match_jax(name):
    for argnums in (0, 1, (0, 1)):
        # JAX's side under jax.jit (one program, not one per operation; the comparison
        # has a tolerance)
        assert_trees_match(minijax.grad(programs(minijax)[name], argnums=argnums)(W, XS),
                           jax.jit(jax.grad(programs(jax)[name], argnums=argnums))(W, XS))
        assert_trees_match(
            minijax.jit(minijax.grad(minijax.checkpoint(programs(minijax)[name]),
                                     argnums=argnums))(W, XS),
            jax.jit(jax.grad(jax.checkpoint(programs(jax)[name]), argnums=argnums))(W, XS))


@pytest.mark.parametrize("name", NAMES)
def test_every_transform_matches_jax(name):
    # eager, jit, jvp, vjp, grad, linearize, vmap ... of the imported JAX program,
    # and checkpoint with the policies whose residual lists agree
    assert_cross_check(programs(jax)[name], W, XS,
                       policies=("nothing_saveable", "dots_saveable"), shrink=False,
                       jit_oracle=True)


def _eqns(jaxpr):
    body = jaxpr.jaxpr if hasattr(jaxpr, "consts") else jaxpr    # either library's
    return body.eqns


def _reverse_scan_bodies(jaxpr):
    """The primitive names in each body of a reverse scan, at any depth."""
    found = []
    for eqn in _eqns(jaxpr):
        if eqn.primitive.name == "scan" and eqn.params["reverse"]:
            found.append(sorted(e.primitive.name for e in _eqns(eqn.params["jaxpr"])))
        if "jaxpr" in eqn.params:
            found += _reverse_scan_bodies(eqn.params["jaxpr"])
    return found


@pytest.mark.parametrize("policy", ("nothing_saveable", "dots_saveable"))
def test_a_policy_recomputes_an_invariant_residual_outside_the_backward_loop(policy):
    # the policy may not save sin(w) and cos(w): both libraries recompute them once,
    # before the backward scan, whose body only multiplies and adds
    bodies = []
    for api in (minijax, jax):
        f = api.checkpoint(programs(api)["sin_carry"],
                           policy=getattr(api.checkpoint_policies, policy))
        bodies.append(_reverse_scan_bodies(api.make_jaxpr(api.grad(f))(W, XS)))
    assert len(bodies[0]) == 1 and not {"sin", "cos"} & set(bodies[0][0])
    assert [[p.replace("add_any", "add") for p in b] for b in bodies[1]] == bodies[0]


def test_an_effect_on_a_constant_stays_in_the_loop(capsys):
    # a print of sin(w) depends on loop constants only, but happens once per
    # iteration: it is not hoisted, so grad prints as often as the loop itself does
    # (as often as JAX's loop without grad; jax 0.10.2's grad hoists it, printing once)
    def f(api):
        def loss(w, xs):
            def body(c, x):
                api.debug.print("s={s}", s=api.numpy.sin(w)[0])
                return c * api.numpy.sin(w) + x, None
            return api.numpy.sum(api.lax.scan(body, xs[0], xs)[0])
        return loss
    capsys.readouterr()
    jax.block_until_ready(f(jax)(W, XS))
    jax.effects_barrier()
    jax_prints = capsys.readouterr().out.count("s=")
    assert_trees_match(minijax.grad(f(minijax))(W, XS), jax.grad(f(jax))(W, XS))
    capsys.readouterr()
    minijax.grad(f(minijax))(W, XS)
    assert capsys.readouterr().out.count("s=") == jax_prints == len(XS)
