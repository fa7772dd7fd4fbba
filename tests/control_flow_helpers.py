"""Shared harness of the control-flow tests: one program, run by minijax and by JAX.

A test program is written once as `make(ns)`, where `ns` has `.jax`, `.jnp` and
`.lax`: the minijax modules or JAX's. `check_transforms` runs the program (and its
jit, jvp, grad and vmap) through both and compares, and runs every minijax jaxpr
involved through `check_jaxpr` (verifier + print/parse round trip).
"""
from __future__ import annotations

import types

import jax
import jax.numpy as jnp
import numpy as np

import minijax
import minijax.numpy as mjnp
from minijax.testing import assert_trees_match, check_jaxpr

MJ = types.SimpleNamespace(jax=minijax, jnp=mjnp, lax=minijax.lax, name="minijax")
JX = types.SimpleNamespace(jax=jax, jnp=jnp, lax=jax.lax, name="jax")

rng = np.random.default_rng(0)


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def assert_close(ours, theirs, tol=2e-5, weak=False):
    assert_trees_match(ours, theirs, rtol=tol, atol=tol, check_weak_types=weak)


def _sum_floats(ns, out):
    total = 0.0
    for leaf in ns.jax.tree_util.tree_leaves(out):
        if np.issubdtype(leaf.dtype, np.floating):
            total = total + ns.jnp.sum(ns.jnp.sin(leaf))
    return total


def transformed(ns, make, how: str, args, in_axes=0, jit=True):
    """`make(ns)` under the transformation `how`, as a function of `args`; jvp, grad
    and vmap are jitted (one compile rather than one per eager op) unless `jit=False`."""
    g = _transformed(ns, make, how, args, in_axes)
    return ns.jax.jit(g) if jit and how in ("jvp", "grad", "vmap") else g


def _transformed(ns, make, how: str, args, in_axes=0):
    f = make(ns)
    if how == "eval":
        return f
    if how == "jit":
        return ns.jax.jit(f)
    if how == "jvp":
        tangents = tuple(np.ones_like(a) if np.issubdtype(np.asarray(a).dtype, np.floating)
                         else np.zeros(np.shape(a), jax.dtypes.float0) for a in args)

        def jvp_f(*a):
            primals_out, tangents_out = ns.jax.jvp(f, a, tangents)
            # float0 tangents of integer outputs carry no values (and are not
            # writable in the text form): compare the float ones
            return primals_out, [t for t in ns.jax.tree_util.tree_leaves(tangents_out)
                                 if t.dtype != jax.dtypes.float0]
        return jvp_f
    if how == "grad":
        argnums = tuple(i for i, a in enumerate(args)
                        if np.issubdtype(np.asarray(a).dtype, np.floating))
        return ns.jax.grad(lambda *a: _sum_floats(ns, f(*a)), argnums=argnums)
    if how == "vmap":
        return ns.jax.vmap(f, in_axes=in_axes)
    raise ValueError(how)


def check_transforms(make, *args, hows=("eval", "jit", "jvp", "grad"), tol=2e-5,
                     vmap_args=None, in_axes=0, jit=True):
    """Compare minijax with JAX on `make` under each transformation in `hows`; with
    `vmap_args`, also under vmap (in_axes as given) on those batched inputs. `jit=False`
    runs minijax's jvp, grad and vmap eagerly; JAX's (compared to a tolerance) stay one
    jitted program each, since eagerly JAX compiles a program per operation."""
    for how in hows:
        ours = transformed(MJ, make, how, args, jit=jit)(*args)
        theirs = transformed(JX, make, how, args)(*args)
        assert_close(ours, theirs, tol)
        if how != "eval":
            check_jaxpr(minijax.make_jaxpr(_transformed(MJ, make, how, args))(*args))
    if vmap_args is not None:
        ours = transformed(MJ, make, "vmap", vmap_args, in_axes, jit=jit)(*vmap_args)
        theirs = transformed(JX, make, "vmap", vmap_args, in_axes)(*vmap_args)
        assert_close(ours, theirs, tol)
        check_jaxpr(minijax.make_jaxpr(_transformed(MJ, make, "vmap", vmap_args,
                                                    in_axes))(*vmap_args))
