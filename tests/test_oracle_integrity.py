"""Importing minijax leaves JAX -- the oracle it is tested against -- as it was.

A fresh interpreter runs a set of JAX programs (indexing, `.at` updates, jit, grad,
vmap, control flow, refs) and records their results and JAX's public attributes
(every name of `jax`, `jax.numpy`, `jax.lax`, and every attribute of `jax.Array`'s
concrete class), then imports minijax (with its JAX bridge and testing tools), runs a
minijax transformation, and checks that the JAX programs give identical results and
that every recorded attribute is the very same object.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent('''
    import pickle, sys
    import numpy as np
    import jax, jax.numpy as jnp
    from jax import lax

    def programs():
        x = jnp.arange(6.0).reshape(2, 3)
        i = jnp.int32(1)
        r = jax.new_ref(jnp.zeros(3))
        r[1] = 2.0
        return [x[1], x[:, i], x[i, 1:], x.at[0, 1].set(7.0), x.at[i].add(1.0),
                jax.jit(lambda a, k: a[k] * 2)(x, 1),
                jax.grad(lambda a: jnp.sum(jnp.tanh(a) ** 2))(x),
                jax.vmap(lambda row: row[i])(x),
                lax.fori_loop(0, 2, lambda k, c: c + x[k], jnp.zeros(3)),
                lax.scan(lambda c, v: (c + v, c * v), 0.0, x[0]),
                r[...]]

    def attributes():
        # The stored objects themselves (module and class dictionaries along the MRO),
        # not what getattr makes fresh on each access (bound methods, proxies).
        spaces = {"jax": [jax], "jax.numpy": [jnp], "jax.lax": [lax],
                  "ArrayImpl": type(jnp.zeros(())).__mro__, "jax.Array": jax.Array.__mro__}
        return {(owner, i, name): id(value) for owner, objs in spaces.items()
                for i, obj in enumerate(objs) for name, value in vars(obj).items()}

    def values(results):
        return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(results)]

    before_values, before_attributes = values(programs()), attributes()
    import minijax, minijax.numpy as mnp, minijax.interop, minijax.testing
    table = mnp.arange(4.0)
    minijax.jit(lambda k: table[k] + table.at[k].set(1.0)[0])(2)    # the hook's own case
    minijax.lax.fori_loop(0, 2, lambda k, c: c + table[k], 0.0)
    after_values, after_attributes = values(programs()), attributes()
    changed = sorted(str(k) for k in before_attributes
                     if after_attributes.get(k) != before_attributes[k])
    added = sorted(str(k) for k in set(after_attributes) - set(before_attributes))
    same = all(a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
               for a, b in zip(before_values, after_values))
    print("changed", changed)
    print("added", added)
    print("same values", same and len(before_values) == len(after_values))
''')


def test_importing_minijax_leaves_jax_as_it_was(tmp_path):
    script = tmp_path / "oracle.py"
    script.write_text(SCRIPT)
    # A bare environment, but for the checkout under test: an interpreter that has jax
    # but not minijax installed (the suite run from a source tree) imports it from there.
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         check=True, env={"JAX_PLATFORMS": "cpu", "PATH": "",
                                          "PYTHONPATH": str(Path(__file__).parent.parent)}).stdout
    lines = dict(line.split(" ", 1) for line in out.strip().splitlines()
                 if line.startswith(("changed", "added")))
    assert lines["changed"] == "[]", out
    # Nothing is added either, not even a submodule: importing `jax.ad_checkpoint` with
    # minijax made `jax.ad_checkpoint` work in a program that never imported it, which
    # `python -m minijax diff` then reported as JAX running it without error.
    assert lines["added"] == "[]", out
    assert "same values True" in out, out
