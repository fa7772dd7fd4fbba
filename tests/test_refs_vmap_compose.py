"""Refs under vmap composed with other transforms (tests/test_refs_vmap.py first):
remat of functions using refs under vmap (and grad of that), and vmap of grad, grad
of vmap, jit of vmap and vmap of jit with ref arguments mapped on every in_axes.
Differential against JAX where JAX does as intended; where it does not (an external
ref's effect under grad of remat runs twice in JAX:
`remat_grad_external_ref_effect_runs_twice`), against minijax without remat."""
import numpy as np
import pytest

import minijax
import minijax.numpy as mjnp
from minijax.testing import JAX_VERSION, assert_trees_match
from tests.test_divergences import pins
from tests.test_refs_vmap_more import MJ, JX

X = np.linspace(0.1, 1.2, 6, dtype=np.float32).reshape(3, 2)


def _match(a, b):
    assert_trees_match(a, b, check_weak_types=False, rtol=1e-5, atol=1e-5)


POLICIES = [None, "everything_saveable", "nothing_saveable", "dots_saveable"]


def _remat(m, f, policy):
    """`f` under checkpoint with `policy` ("none": no remat at all)."""
    if policy == "none":
        return f
    pol = None if policy is None else getattr(m.lib.checkpoint_policies, policy)
    return m.lib.checkpoint(f, policy=pol)


# -- remat under vmap ------------------------------------------------------------------------

def internal_rmw(m, x):
    r = m.new_ref(x)
    r[...] += m.np.sin(x)
    r[0] = r[1] * x[0]
    return (r[...] ** 2).sum()


def reads_closed_over(m, scale):
    def f(x):
        return (m.np.sin(x) * scale[...]).sum()
    return f


def argument_rmw(m, r, x):
    y = m.np.sin(x) * r[...]
    r[...] += 1.0
    return (y * x).sum()


def argument_write_only(m, r, x):
    r[...] = m.lax.stop_gradient(x) * 2.0
    return (m.np.cos(x) * x).sum()


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("use_jit", [False, True], ids=["eager", "jit"])
def test_vmap_of_remat_with_internal_refs(policy, use_jit):
    results = []
    for m in (MJ, JX):
        f = _remat(m, lambda x: internal_rmw(m, x), policy)
        wrap = m.lib.jit if use_jit else (lambda g: g)
        results.append((wrap(m.lib.vmap(f))(X), wrap(m.lib.vmap(m.lib.grad(f)))(X),
                        m.lib.grad(lambda x: m.lib.vmap(f)(x).sum())(X)))
    _match(results[0], results[1])


@pytest.mark.parametrize("policy", POLICIES)
def test_vmap_of_grad_of_remat_reading_a_closed_over_ref(policy):
    results = []
    for m in (MJ, JX):
        scale = m.new_ref(np.array([2.0, -1.0], np.float32))
        f = _remat(m, reads_closed_over(m, scale), policy)
        results.append((m.lib.vmap(f)(X), m.lib.vmap(m.lib.grad(f))(X)))
    _match(results[0], results[1])


def _run_with_ref_argument(m, fn, policy, how, axis, init):
    ref = m.new_ref(np.moveaxis(init, 0, axis))
    f = _remat(m, lambda r, x: fn(m, r, x), policy)
    if how == "value":
        out = m.lib.vmap(f, in_axes=(axis, 0))(ref, X)
    elif how == "vmap_of_grad":
        out = m.lib.vmap(m.lib.grad(f, argnums=1), in_axes=(axis, 0))(ref, X)
    else:                                              # grad of vmap, through a sum
        out = m.lib.grad(lambda x: m.lib.vmap(f, in_axes=(axis, 0))(ref, x).sum())(X)
    return out, np.moveaxis(np.asarray(ref[...]), axis, 0)


INIT = np.arange(1.0, 7.0, dtype=np.float32).reshape(3, 2)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("how", ["value", "vmap_of_grad", "grad_of_vmap"])
def test_vmap_of_remat_writing_a_mapped_ref_argument(policy, how):
    """Read-modify-write of a ref argument: its effect runs once, and the gradient
    sees the contents the ref had on entry -- as without remat."""
    got = _run_with_ref_argument(MJ, argument_rmw, policy, how, 0, INIT)
    _match(got, _run_with_ref_argument(MJ, argument_rmw, "none", how, 0, INIT))
    if how == "value":       # no differentiation: JAX runs the effect once too
        _match(got, _run_with_ref_argument(JX, argument_rmw, policy, how, 0, INIT))


@pins("remat_grad_external_ref_effect_runs_twice")
def test_jax_runs_the_effect_twice_under_vmap_of_grad_of_remat():
    """`remat_grad_external_ref_effect_runs_twice`, under vmap too: JAX increments the
    ref twice and differentiates against the incremented contents."""
    theirs = _run_with_ref_argument(JX, argument_rmw, None, "vmap_of_grad", 0, INIT)
    mine = _run_with_ref_argument(MJ, argument_rmw, None, "vmap_of_grad", 0, INIT)
    _match(theirs[1], INIT + 2.0)
    _match(mine[1], INIT + 1.0)
    no_remat = _run_with_ref_argument(JX, argument_rmw, "none", "vmap_of_grad", 0,
                                      INIT + 1.0)
    _match(theirs[0], no_remat[0])                 # the gradient at contents + 1
    _match(mine[0], _run_with_ref_argument(JX, argument_rmw, "none", "vmap_of_grad", 0,
                                           INIT)[0])


@pytest.mark.parametrize("policy", [None, "everything_saveable"])
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("how", ["value", "vmap_of_grad", "grad_of_vmap"])
def test_vmap_of_remat_with_a_write_only_ref_argument(policy, axis, how):
    init = np.zeros((3, 2), np.float32)
    got = _run_with_ref_argument(MJ, argument_write_only, policy, how, axis, init)
    # JAX maps the ref on axis 0 only: `jax_vmap_whole_ref_write_on_other_axis_fails`
    _match(got, _run_with_ref_argument(JX, argument_write_only, policy, how, 0, init))


@pytest.mark.parametrize("policy", ["none", None, "everything_saveable"])
def test_remat_writing_a_closed_over_ref_the_same_value_for_every_example(policy):
    """An unbatched write to a closed-over ref happens once, remat or not (JAX rejects
    it under vmap: `jax_vmap_unbatched_write_to_closed_over_ref_fails`), under grad
    too: the remat rewrite reads a ref at entry only if the body uses its value."""
    flag = minijax.new_ref(np.float32(0))

    def f(x):
        flag[...] = 1.0
        return (mjnp.sin(x) * x).sum()
    _match(minijax.vmap(_remat(MJ, f, policy))(X), (np.sin(X) * X).sum(1))
    assert float(flag[...]) == 1.0
    flag[...] = 0.0
    _match(minijax.vmap(minijax.grad(_remat(MJ, f, policy)))(X), np.cos(X) * X + np.sin(X))
    assert float(flag[...]) == 1.0


def test_remat_increment_of_a_closed_over_ref_under_vmap_is_ambiguous():
    from minijax.transforms.vmap import BatchingError
    counter = minijax.new_ref(np.float32(0))

    def f(x):
        counter[...] += 1.0
        return (x * x).sum()
    with pytest.raises(BatchingError, match=r"An increment of it is ambiguous"):
        minijax.vmap(minijax.grad(minijax.checkpoint(f)))(X)
    assert float(counter[...]) == 0.0


# -- compositions with ref arguments on every in_axes ------------------------------------------

def rmw(m, r, x):
    """Per example: a Ref{f32[2,2]}, x: f32[2]."""
    y = (m.np.sin(x) * r[...]).sum()
    r[...] += m.lax.stop_gradient(x) * 2.0
    return y + (r[0] * x).sum()


def read_only(m, r, x):
    return (m.np.sin(x) * r[...]).sum() + (r[0] * x * x).sum()


REF_INIT = np.arange(12.0, dtype=np.float32).reshape(3, 2, 2) / 4.0


def _compose(m, how, axis):
    fn = read_only if axis is None else rmw
    ref = m.new_ref(REF_INIT[0] if axis is None else np.moveaxis(REF_INIT, 0, axis))
    f = lambda r, x: fn(m, r, x)                            # noqa: E731
    axes = (axis, 0)
    V = m.lib.vmap
    if how == "vmap_of_grad":
        out = V(m.lib.grad(f, argnums=1), in_axes=axes)(ref, X)
    elif how == "grad_of_vmap":
        out = m.lib.grad(lambda x: V(f, in_axes=axes)(ref, x).sum())(X)
    elif how == "jit_of_vmap":
        out = m.lib.jit(V(f, in_axes=axes))(ref, X)
    elif how == "vmap_of_jit":
        out = V(m.lib.jit(f), in_axes=axes)(ref, X)
    else:                                                   # jit of vmap of grad
        out = m.lib.jit(V(m.lib.grad(f, argnums=1), in_axes=axes))(ref, X)
    contents = np.asarray(ref[...])
    return out, contents if axis is None else np.moveaxis(contents, axis, 0)


@pytest.mark.parametrize("axis", [0, 1, -1, None])
@pytest.mark.parametrize("how", ["vmap_of_grad", "grad_of_vmap", "jit_of_vmap",
                                 "vmap_of_jit", "jit_of_vmap_of_grad"])
def test_compositions_with_ref_arguments(how, axis):
    # JAX maps a written ref on axis 0 only: `jax_vmap_whole_ref_write_on_other_axis_fails`
    _match(_compose(MJ, how, axis), _compose(JX, how, 0 if axis in (1, -1) else axis))


@pins("jax_vmap_whole_ref_write_on_other_axis_fails")
def test_jax_vmap_whole_ref_write_on_other_axis_fails():
    for axis in (1, -1):
        if JAX_VERSION >= (0, 11):  # fixed in 0.11
            _match(_compose(JX, "jit_of_vmap", axis), _compose(JX, "jit_of_vmap", 0))
        else:
            with pytest.raises(ValueError, match="Invalid shape for `swap`"):
                _compose(JX, "jit_of_vmap", axis)
        _match(_compose(MJ, "jit_of_vmap", axis), _compose(JX, "jit_of_vmap", 0))
