"""The cost of minijax's `jax.Array` indexing hook on JAX's own indexing.

`minijax/numpy/_array_interop.py` lets a concrete `jax.Array` be indexed by a minijax
tracer. Its hook on `jax.Array.__getitem__`/`.at` exists only while a minijax
transformation runs; after `import minijax`, JAX's indexing is JAX's own, so its cost
there is zero by construction. This measures JAX's indexing three ways in one run:
before minijax is imported, after (hook absent), and with the hook installed (as
during a minijax trace, for JAX code called from inside one).

    .venv/bin/python benchmarks/array_interop_hook.py

prints microseconds per indexing operation and the ratios to the first column.
"""
from __future__ import annotations

import timeit

import jax.numpy as jnp
import numpy as np


def _per_call_us(fn, number=2000, repeat=5):
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def _cases():
    x = jnp.asarray(np.arange(64, dtype=np.float32).reshape(8, 8))
    i = jnp.int32(3)
    return {"x[3]": lambda: x[3], "x[i, 1:5]": lambda: x[i, 1:5],
            "x.at[2].set(1.0)": lambda: x.at[2].set(1.0)}


def main():
    before = {name: _per_call_us(fn) for name, fn in _cases().items()}
    import minijax  # noqa: F401
    from minijax.numpy import _array_interop
    after = {name: _per_call_us(fn) for name, fn in _cases().items()}
    _array_interop.install()
    try:
        hooked = {name: _per_call_us(fn) for name, fn in _cases().items()}
    finally:
        _array_interop.uninstall()
    print(f"{'operation':18} {'jax alone':>10} {'+minijax':>10} {'hooked':>10}  ratios")
    for name in before:
        print(f"{name:18} {before[name]:9.2f}us {after[name]:9.2f}us {hooked[name]:9.2f}us"
              f"  {after[name] / before[name]:.2f} {hooked[name] / before[name]:.2f}")


if __name__ == "__main__":
    main()
