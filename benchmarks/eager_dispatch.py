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

Measured on the shared 2-core development machine (CPU, jax 0.10.2, load about 11),
`PYTHONPATH=. .venv/bin/python benchmarks/eager_dispatch.py`:

    op                        minijax us    jax us   ratio
    sin                             4.80      6.90    0.70
    add                             5.70      7.88    0.72
    mul by python scalar            7.26      9.77    0.74
    reduce_sum                      7.18      8.39    0.86
    dot                            17.09     24.33    0.70
    jnp.add                        13.49      4.38    3.08
    jnp.multiply by scalar         17.01      5.52    3.08
    jnp.sin                         8.76      3.06    2.86
    jnp.sum                        16.46      4.24    3.89
    jnp.dot                        31.17      8.21    3.80

The `lax` rows meet the target: a binary op reads its operands' dtypes for JAX's
dtype check without building their avals (`add` and `mul` were 1.24 and 1.21 of
JAX's time). The `jnp` rows miss it by 3-4x: each `jax.numpy` function is itself a
`jax.jit` function, so JAX dispatches it from C++, while `minijax.numpy` promotes and
broadcasts in Python on every call (one aval per operand) and then dispatches each
primitive. Wrapping a minijax jnp function in `minijax.jit` measures 3.9 us for
`add` (JAX 4.3), 4.8 for `multiply` by a scalar (5.5), 3.8 for `sum` (4.1): the way
to the target is to dispatch eager jnp calls the way JAX does.
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
