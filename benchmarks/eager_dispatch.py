"""Eager op-by-op dispatch: the cost of one repeated primitive on concrete arrays.

minijax runs an eager op as a cached `jax.jit` of its lowering rule, keyed by
primitive, params and input avals (minijax/backends/xla.py). The target (DESIGN §7)
is that a repeated eager op costs no more than JAX's own eager dispatch.

    .venv/bin/python benchmarks/eager_dispatch.py

prints microseconds per call for minijax and JAX and their ratio (minijax / jax;
below 1.0 means minijax is faster). The two sides are timed in interleaved rounds,
so both see the same machine load, and each keeps its minimum (the helper of
`jit_dispatch.py`). Target (issue 18): every ratio <= 1.0.

Measured on the shared 2-core development machine (CPU, jax 0.10.2, heavily loaded):

    op                        minijax us    jax us   ratio
    sin                             4.51      7.23    0.62
    add                             6.28      8.03    0.78
    mul by python scalar            9.38      9.83    0.95
    reduce_sum                      7.10     13.23    0.54
    dot                            17.58     24.49    0.72
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import minijax.lax as mlax
import minijax.numpy as mnp
from jit_dispatch import _interleaved_min_us   # this folder is on sys.path when run


def main():
    x = jnp.asarray(np.linspace(-1, 1, 16, dtype=np.float32))
    m = jnp.asarray(np.ones((8, 8), np.float32))
    cases = [
        ("sin", lambda: mlax.sin(x), lambda: jax.lax.sin(x)),
        ("add", lambda: mlax.add(x, x), lambda: jax.lax.add(x, x)),
        ("mul by python scalar", lambda: mlax.mul(x, 2.0), lambda: jax.lax.mul(x, 2.0)),
        ("reduce_sum", lambda: mlax.reduce_sum(x, (0,)), lambda: jax.lax.reduce_sum(x, (0,))),
        ("dot", lambda: mlax.dot(m, m), lambda: jax.lax.dot(m, m)),
    ]
    # jax.numpy's functions are themselves `jax.jit`-wrapped, so JAX dispatches each
    # from C++; minijax.numpy promotes and broadcasts in Python on every call, then
    # dispatches each primitive.
    cases += [
        ("jnp.add", lambda: mnp.add(x, x), lambda: jnp.add(x, x)),
        ("jnp.multiply by scalar", lambda: mnp.multiply(x, 2.0), lambda: jnp.multiply(x, 2.0)),
        ("jnp.sin", lambda: mnp.sin(x), lambda: jnp.sin(x)),
        ("jnp.sum", lambda: mnp.sum(x), lambda: jnp.sum(x)),
        ("jnp.dot", lambda: mnp.dot(m, m), lambda: jnp.dot(m, m)),
    ]
    print(f"{'op':24s} {'minijax us':>11s} {'jax us':>9s} {'ratio':>7s}")
    for name, mini, ref in cases:
        mini_us, ref_us = _interleaved_min_us(mini, ref)
        print(f"{name:24s} {mini_us:11.2f} {ref_us:9.2f} {mini_us / ref_us:7.2f}")


if __name__ == "__main__":
    main()
