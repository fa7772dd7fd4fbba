"""Differential checks for the libraries on top of the core (nn, scipy, example
libraries): one function written against a module pair, run through minijax and JAX.

`check_everywhere(fn, *args)` calls `fn(minijax_mod, *args)` and `fn(jax_mod, *args)`
(each `mod` has `.nn`, `.scipy`, `.numpy`, `.lax`) and compares
* the traced output types, weak types included (make_jaxpr on both sides);
* values, eagerly and under jit (JAX's side, the oracle, always runs under `jax.jit`:
  one compile instead of one per op);
* the gradient of the summed output with respect to argument `argnums` (grad=True),
  under jit;
* `vmap` over the leading axis of the first argument (vmap=True), minijax's eagerly.

Each library's jitted work is one program: minijax jits the value and the gradient
together, JAX (the oracle) the value, the gradient and the vmap; each result is still
compared on its own. `one_program=False` jits each apart, for big programs (the
incomplete gamma and beta functions): joined they compile no faster, and apart
minijax's jitted value is often the very program JAX compiled, which the run's
persistent cache then serves.

`concrete_weak_types=False` leaves the weak-type flag of concrete results unchecked
(the traced types still are): minijax's compiled results do not carry the flag of a
weak value made by converting an integer array (`int32_array + 1.0`), a core
difference outside these libraries.
"""
from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest

import minijax
from minijax.testing import assert_trees_match
from tests.numpy_helpers import assert_avals_match

rng = np.random.default_rng(12)


def randn(*shape, dtype=np.float32, scale=1.0, shift=0.0):
    return (rng.standard_normal(shape) * scale + shift).astype(dtype)


def uniform(*shape, low=0.0, high=1.0, dtype=np.float32):
    return rng.uniform(low, high, shape).astype(dtype)


def assert_raises_as_jax(fn, *, same_message=True):
    """`fn(minijax)` and `fn(jax)` both raise, exceptions of one type and (unless
    `same_message=False`, for JAX messages that name its internals) one message.
    Warnings raised on the way are ignored: the error is what is compared."""
    raised = []
    for mod in (minijax, jax):
        with pytest.raises(Exception) as info, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(mod)
        raised.append(info.value)
    ours, theirs = raised
    assert type(ours) is type(theirs), (ours, theirs)
    if same_message:
        assert str(ours) == str(theirs)
    return ours, theirs


def outcome(fun):
    """What `fun()` gave: its result (ready), or the type of the exception it raised."""
    try:
        return jax.block_until_ready(fun())
    except Exception as e:   # noqa: BLE001 -- the type is what is compared
        return type(e)


def assert_same_outcome(case):
    """`case(jax)` and `case(minijax)` both return matching trees, or both raise an
    exception of one type."""
    want, got = outcome(lambda: case(jax)), outcome(lambda: case(minijax))
    if isinstance(want, type):
        assert got is want, f"minijax gave {got!r} where JAX raised {want.__name__}"
    else:
        assert not isinstance(got, type), f"minijax raised {got.__name__}; JAX gave {want}"
        assert_trees_match(got, want)


def _summed(mod, fn, argnums):
    def total(*args):
        out = fn(mod, *args)
        leaves = jax.tree_util.tree_leaves(out)
        return sum(mod.numpy.sum(leaf) for leaf in leaves)
    return total


def check_everywhere(fn, *args, rtol=None, atol=None, grad=True, vmap=True, argnums=0,
                     eager=True, grad_rtol=None, grad_atol=None, concrete_weak_types=True,
                     one_program=True):
    weak = dict(check_weak_types=concrete_weak_types)
    ours = minijax.make_jaxpr(lambda *a: fn(minijax, *a))(*args)
    theirs = jax.make_jaxpr(lambda *a: fn(jax, *a))(*args)
    assert_avals_match(ours.out_avals, theirs.out_avals)
    in_axes = (0,) + (None,) * (len(args) - 1)
    checks = {"value": lambda mod: lambda *a: fn(mod, *a)}
    if grad:
        checks["grad"] = lambda mod: mod.grad(_summed(mod, fn, argnums), argnums)
    if vmap:
        checks["vmap"] = lambda mod: mod.vmap(lambda *b: fn(mod, *b), in_axes)

    def jitted(mod, names):
        # The named checks as ONE jitted program: a program costs a lowering and an XLA
        # compile however small it is.
        return mod.jit(lambda *a: {name: checks[name](mod)(*a) for name in names})(*args)

    def jitted_apart(mod, names):
        return {name: jitted(mod, [name])[name] for name in names}

    run = jitted if one_program else jitted_apart
    expected = run(jax, list(checks))
    got = run(minijax, [name for name in checks if name != "vmap"])
    assert_trees_match(got["value"], expected["value"], rtol=rtol, atol=atol, what="jit",
                       **weak)
    if eager:   # against JAX's jitted result: JAX run op by op compiles a program per op
        assert_trees_match(fn(minijax, *args), expected["value"], rtol=rtol, atol=atol,
                           what="eager", **weak)
    if grad:
        assert_trees_match(got["grad"], expected["grad"], rtol=grad_rtol or rtol,
                           atol=grad_atol or atol, what="grad")
    if vmap:    # minijax's vmap eagerly, as a user calls it
        got = minijax.vmap(lambda *a: fn(minijax, *a), in_axes)(*args)
        assert_trees_match(got, expected["vmap"], rtol=rtol, atol=atol, what="vmap", **weak)
