"""Eager op-by-op dispatch: the cost of one repeated primitive on concrete arrays.

minijax runs an eager op as a cached `jax.jit` of its lowering rule, keyed by
primitive, params and input avals (minijax/backends/xla.py). The target (DESIGN §7)
is that a repeated eager op costs no more than JAX's own eager dispatch.

    .venv/bin/python benchmarks/eager_dispatch.py

prints microseconds per call for minijax and JAX and their ratio (minijax / jax;
below 1.0 means minijax is faster). The two sides are timed in interleaved rounds of
CPU time, so both see the same machine load and a round the scheduler preempts does
not count, and each keeps its minimum (the helper of `jit_dispatch.py`). Target
(issue 18): every ratio <= 1.0.

Measured on the shared 2-core development machine (CPU, jax 0.10.2, load about 8),
`PYTHONPATH=. .venv/bin/python benchmarks/eager_dispatch.py`, two runs a minute apart:

    op                        minijax us    jax us   ratio
    sin                        4.74  4.47  6.89  7.07  0.69  0.63
    add                        6.10  5.46  8.15  7.49  0.75  0.73
    mul by python scalar       7.74  7.10 10.25  9.22  0.75  0.77
    reduce_sum                 7.04  6.62  8.36  7.87  0.84  0.84
    dot                       17.75 16.28 25.00 23.36  0.71  0.70
    jnp.add                    3.93  3.67  4.37  4.13  0.90  0.89
    jnp.multiply by scalar     4.84  4.85  5.40  5.36  0.90  0.90
    jnp.sin                    3.64  3.44  3.22  3.05  1.13  1.13
    jnp.sum                    3.99  3.98  4.26  4.25  0.94  0.94
    jnp.dot                    9.98 25.82  7.84 27.72  1.27  0.93

The `lax` rows meet the target: a binary op reads its operands' dtypes for JAX's
dtype check without building their avals. The `jnp` rows were 2.9-3.9x JAX's while
`minijax.numpy` promoted and broadcast in Python and dispatched each primitive on
every call; now the jnp functions that JAX jits run an eager call as one cached
`minijax.jit` program (`minijax/frontend/eager_jit.py`), so a call is a few checks in
Python (the root trace, plain operands, NaN checking off) and then JAX's C++
dispatch of the executable. `jnp.add`, `multiply` and `sum` meet the target.
`jnp.sin` misses it (and `jnp.dot` at times) by those checks, about 0.4 us: JAX's
`jnp.sin` *is* its C++ `jax.jit` object, and the executable minijax calls costs what
JAX's does (2.9 against 2.9 us for `sin`, 7.6 against 7.9 for `dot`, timed alone).
The `jnp.dot` row swings with the machine's load (0.86-1.27 over four runs; 5.5
against 6.4 us at load 3).
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
    # from C++; minijax's run an eager call as one cached `minijax.jit` program.
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
