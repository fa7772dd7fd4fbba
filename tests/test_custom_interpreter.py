"""JAX's "Writing custom Jaxpr interpreters" tutorial, run on minijax and on JAX.

The interpreters are written once against a module (`jax` or `minijax`): they read a
jaxpr's equations, key a registry by primitive objects (`lax.exp_p`) and bind
primitives anew, so they need `lax.X_p` to be the primitives of minijax's jaxprs.
"""
from __future__ import annotations

import functools
import importlib
import re

import jax
import numpy as np
import pytest

import minijax
from minijax.testing import assert_trees_match


def _interpreters(mod):
    core = importlib.import_module(mod.__name__ + ".extend.core")
    lax, jnp = mod.lax, mod.numpy

    def reader(env):
        return lambda v: v.val if isinstance(v, core.Literal) else env[v]

    def eval_jaxpr(jaxpr, consts, *args):
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, args))
        read = reader(env)
        for eqn in jaxpr.eqns:
            outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
            env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))
        return [read(v) for v in jaxpr.outvars]

    inverse_registry = {lax.exp_p: jnp.log, lax.tanh_p: jnp.arctanh}

    def inverse_jaxpr(jaxpr, consts, *args):
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.outvars, args))
        read = reader(env)
        for eqn in reversed(jaxpr.eqns):
            if eqn.primitive not in inverse_registry:
                raise NotImplementedError(f"{eqn.primitive} has no registered inverse")
            env[eqn.invars[0]] = inverse_registry[eqn.primitive](*map(read, eqn.outvars))
        return [read(v) for v in jaxpr.invars]

    def using(interpret, fun):
        @functools.wraps(fun)
        def wrapped(*args):
            closed = mod.make_jaxpr(fun)(*args)
            return interpret(closed.jaxpr, closed.consts, *args)[0]
        return wrapped

    return (functools.partial(using, eval_jaxpr), functools.partial(using, inverse_jaxpr))


def _f(mod):
    return lambda x: mod.numpy.exp(mod.numpy.tanh(x))


def _text(closed):
    # JAX prints a short jaxpr on one line with `;` between equations, minijax one
    # equation a line: the same jaxpr once spacing and separators are set aside.
    return re.sub(r"\s+", " ", str(closed).replace(";", " "))


@pytest.mark.parametrize("which", ["eval", "inverse"])
def test_tutorial_interpreters_match_jax(which):
    y = np.float32(0.5)

    def run(mod):
        interp = _interpreters(mod)[which == "inverse"]
        x = _f(mod)(y) if which == "inverse" else y
        g = interp(_f(mod))
        jitted = mod.jit(g)(x)
        batched = mod.vmap(g)(mod.numpy.stack([x, x]))
        return g(x), jitted, batched, _text(mod.make_jaxpr(g)(x))
    *got, got_text = run(minijax)
    *want, want_text = run(jax)
    assert got_text == want_text
    assert_trees_match(got, want)


def test_inverse_refuses_an_unregistered_primitive():
    inverse = _interpreters(minijax)[1]
    with pytest.raises(NotImplementedError, match="sin has no registered inverse"):
        inverse(minijax.numpy.sin)(np.float32(0.5))
