"""Tracing speed: minijax against JAX on a deep MLP, forward and under grad.

    .venv/bin/python benchmarks/trace_speed.py [--layers 10 100 1000] [--repeat 3]

For each depth, times `make_jaxpr(mlp)` and `make_jaxpr(grad(mlp))` with minijax and
with JAX on the same program (written with each library's `lax`, so both trace the
same primitives), prints the best-of-N times, the ratio JAX / minijax (above 1:
minijax is faster) and the equation counts of both jaxprs. Targets (docs/design.md,
section 10): ratio >= 3 at 1000 layers, cost linear in depth, no more equations than JAX.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import jax
from jax import lax as jlax

import minijax
from minijax import lax as mlax

WIDTH, BATCH = 16, 8


def make_mlp(lax):
    def mlp(params, x):
        for W, b in params:
            h = lax.dot_general(x, W, (((1,), (0,)), ((), ())))
            x = lax.tanh(lax.add(h, lax.broadcast_in_dim(b, (BATCH, WIDTH), (1,))))
        return lax.reduce_sum(lax.mul(x, x), (0, 1))
    return mlp


def best_time(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def count_eqns(closed):
    return len(closed.jaxpr.eqns)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.RandomState(0)
    print(f"{'layers':>6} {'what':>10} {'minijax ms':>11} {'jax ms':>9} {'ratio':>6} "
          f"{'mj eqns':>8} {'jax eqns':>8}")
    for depth in args.layers:
        params = [(rng.randn(WIDTH, WIDTH).astype(np.float32),
                   rng.randn(WIDTH).astype(np.float32)) for _ in range(depth)]
        x = rng.randn(BATCH, WIDTH).astype(np.float32)
        # A fresh Python function per measurement: jax.make_jaxpr caches traces by
        # function identity, and a cache hit would not measure tracing at all.
        cases = [("forward", lambda: minijax.make_jaxpr(make_mlp(mlax)),
                  lambda: jax.make_jaxpr(make_mlp(jlax))),
                 ("grad", lambda: minijax.make_jaxpr(minijax.grad(make_mlp(mlax))),
                  lambda: jax.make_jaxpr(jax.grad(make_mlp(jlax))))]
        for what, mini, ref in cases:
            t_mini, mini_jaxpr = best_time(lambda: mini()(params, x), args.repeat)
            t_jax, jax_jaxpr = best_time(lambda: ref()(params, x), args.repeat)
            print(f"{depth:>6} {what:>10} {t_mini * 1e3:>11.2f} {t_jax * 1e3:>9.2f} "
                  f"{t_jax / t_mini:>6.2f} {count_eqns(mini_jaxpr):>8} "
                  f"{count_eqns(jax_jaxpr):>8}")


if __name__ == "__main__":
    main()
