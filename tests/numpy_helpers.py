"""Differential-testing helpers for `minijax.numpy` against `jax.numpy` (the oracle).

A case is a function `fn(np_module, *args)` written once and run with both modules:

* `check(fn, *args)` runs it with jax.numpy under `jax.jit` (the oracle), traces it
  with `minijax.make_jaxpr` (the jaxpr must pass the verifier, and its output types,
  weak types included, must be JAX's), runs it under `minijax.jit` and eagerly;
  values, shapes and dtypes must all agree. Python scalar arguments become weakly typed
  inputs of the traced function, exactly as when they are passed to `jax.jit`.
* `check_types(fn, *args)` compares only the abstract result (dtype, shape, weak
  type) of `jax.make_jaxpr` and `minijax.make_jaxpr`: no XLA compile, so promotion
  tables over many dtype pairs stay fast.
* `together(cases)` makes several cases one, checked in one program per library.
* `count_eqns` counts equations, looking inside JAX's nested `jit` equations.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import minijax
import minijax.numpy as mnp
from minijax.ir.verify import verify_jaxpr

rng = np.random.default_rng(0)


def rand(shape, dtype=np.float32, low=-3, high=3):
    """Random test data of a NumPy dtype (bool: coin flips; ints: in [low, high))."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        low = max(low, 0) if dtype.kind == "u" else low
        return rng.integers(low, high, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def _leaves(tree):
    return jax.tree_util.tree_leaves(tree)


def assert_values_close(ours, theirs, rtol=1e-5, atol=1e-5, check_dtype=True):
    ours_leaves, theirs_leaves = _leaves(ours), _leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves), (ours, theirs)
    for a, b in zip(ours_leaves, theirs_leaves):
        a_arr, b_arr = np.asarray(a), np.asarray(b)
        assert a_arr.shape == b_arr.shape, f"shape {a_arr.shape} != JAX's {b_arr.shape}"
        if check_dtype:
            assert a_arr.dtype == b_arr.dtype, f"dtype {a_arr.dtype} != JAX's {b_arr.dtype}"
        if b_arr.dtype.kind in "fcV" or a_arr.dtype.kind in "fcV":
            np.testing.assert_allclose(a_arr.astype(np.complex128 if b_arr.dtype.kind == "c"
                                                    else np.float64),
                                       b_arr.astype(np.complex128 if b_arr.dtype.kind == "c"
                                                    else np.float64),
                                       rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(a_arr, b_arr)


def traced(fn, *args, **kwargs):
    """`minijax.make_jaxpr` of `fn(mnp, *args)`, checked by the verifier."""
    closed = minijax.make_jaxpr(lambda *a: fn(mnp, *a), **kwargs)(*args)
    verify_jaxpr(closed)
    return closed


def jax_traced(fn, *args):
    return jax.make_jaxpr(lambda *a: fn(jnp, *a))(*args)


def assert_avals_match(ours, theirs):
    """minijax out avals vs JAX's: shape, dtype and weak type of every output."""
    assert len(ours) == len(theirs), (ours, theirs)
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape), f"shape {a.shape} != JAX's {b.shape}"
        assert np.dtype(a.dtype) == np.dtype(b.dtype), f"dtype {a.dtype} != JAX's {b.dtype}"
        # JAX marks some bool results weak (a comparison of weak operands); bool is
        # the bottom of the lattice, so that flag never changes a promotion: ignored.
        if np.dtype(b.dtype) != np.bool_:
            assert a.weak_type == b.weak_type, (f"weak_type {a.weak_type} != JAX's "
                                                f"{b.weak_type} for {b.dtype}{list(b.shape)}")


def check_types(fn, *args):
    """Abstract results only: minijax.make_jaxpr vs jax.make_jaxpr (no compiles)."""
    ours = traced(fn, *args)
    theirs = jax_traced(fn, *args)
    assert_avals_match(ours.out_avals, theirs.out_avals)
    return ours


def check(fn, *args, rtol=1e-5, atol=1e-5, eager=False, jit=True, weak=True):
    """Run `fn` through jax.numpy and minijax.numpy and compare values, dtypes, shapes
    and (traced) weak types. The oracle runs under `jax.jit` (one compile however many
    outputs `fn` returns, so tests batch variants into one program); minijax runs
    traced, under `minijax.jit`, and eagerly op by op when `eager` (or without jit).
    Eager runs cost one small compile per primitive, so they are opted into."""
    if jit:
        expected = jax.jit(lambda *a: fn(jnp, *a))(*args)
    else:
        expected = fn(jnp, *args)
    closed = traced(fn, *args)
    theirs = jax_traced(fn, *args)
    if weak:
        assert_avals_match(closed.out_avals, theirs.out_avals)
    else:
        assert_avals_match([a.update(weak_type=False) for a in closed.out_avals],
                           [a.update(weak_type=False) for a in theirs.out_avals])
    if jit:
        compiled = minijax.jit(lambda *a: fn(mnp, *a))(*args)
        assert_values_close(compiled, expected, rtol, atol)
    if eager or not jit:
        got = fn(mnp, *args)
        assert_values_close(got, expected, rtol, atol)
    return closed


def together(cases):
    """Several `(fn, args)` cases as one `(fn, args)`: a function of all their arguments
    returning each case's result, so `check` compiles one program per library for the
    group instead of one per case (a linear-algebra program takes 0.05-0.3 s to
    compile) while still comparing every result on its own."""
    def fn(np_, *args):
        results, start = [], 0
        for case_fn, case_args in cases:
            results.append(case_fn(np_, *args[start:start + len(case_args)]))
            start += len(case_args)
        return tuple(results)
    return fn, tuple(arg for _, case_args in cases for arg in case_args)


def assert_groups_cover(groups: dict, cases: dict):
    """The groups `together` is used with name every case exactly once."""
    grouped = [name for names in groups.values() for name in names]
    assert sorted(grouped) == sorted(cases)


def count_eqns(jaxpr) -> int:
    """Equations of a (closed) jaxpr, JAX's or minijax's, counting the bodies of
    nested `jit`/`pjit` equations instead of the call itself."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    total = 0
    for eqn in jaxpr.eqns:
        inner = [v for v in eqn.params.values()
                 if hasattr(v, "eqns") or hasattr(getattr(v, "jaxpr", None), "eqns")]
        name = getattr(eqn.primitive, "name", str(eqn.primitive))
        if name in ("jit", "pjit", "closed_call", "core_call") and inner:
            total += sum(count_eqns(v) for v in inner)
        else:
            total += 1
    return total
