"""Tracing speed: minijax against JAX on a deep MLP, forward and under grad.

    .venv/bin/python benchmarks/trace_speed.py [--layers 10 100 1000] [--repeat 5]

For each depth, times `make_jaxpr(mlp)` and `make_jaxpr(grad(mlp))` with minijax and
with JAX on the same program (written with each library's `lax`, so both trace the
same primitives). The two sides run in interleaved rounds, so both see the same
machine load, and each keeps its best CPU time (`_timed` says why not wall time).
Printed: those times, the ratio JAX / minijax (above 1: minijax is faster), the
microseconds per layer (flat across depths: cost linear in depth) and the equation
counts of both jaxprs.

Targets (issue 18): at 1000 layers, grad ratio >= 10 and forward ratio >= 5; cost
linear in depth; no more equations than JAX.

Measured on the shared 2-core development machine (CPU, jax 0.10.2, load about 11),
`PYTHONPATH=. .venv/bin/python benchmarks/trace_speed.py --layers 100 1000`:

    layers       what  minijax ms    jax ms  ratio mj us/layer  mj eqns jax eqns
       100    forward        1.62      7.95   4.90        16.2      402      402
       100       grad       20.66    213.07  10.31       206.6     1105     1205
      1000    forward       16.79     71.34   4.25        16.8     4002     4002
      1000       grad      217.03   2532.33  11.67       217.0    11005    12005

Gradient tracing meets its target and both are linear in depth (CPU time per layer
at 100 / 300 / 1000 layers: 15.8 / 15.5 / 16.9 us forward). Forward tracing does not
yet: 4.3-4.9x across runs (4.6 typical), against a target of 5. Earlier figures
(forward 5.65x, grad 13.5x) were wall times: on the loaded machine a long run is
paused while other jobs run, which inflated JAX's longer runs more than minijax's
and made per-layer cost seem to grow with depth. Forward tracing costs about 4 us
per equation (dot_general 2.9, add 2.7, broadcast_in_dim 2.5, tanh 2.1, plus 1.3 us
per input leaf to flatten and check); no single step dominates what is left.
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


def _timed(fn):
    # CPU time of this process, not wall time: on a shared machine a run longer than
    # the scheduler's time slice (every 1000-layer run) is paused while others run,
    # and wall time would count those pauses -- more the longer the run, so tracing
    # would look superlinear in depth when it is not. Both sides trace on this one
    # thread, so CPU time is what each costs.
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def interleaved_best_times(mini, ref, repeat):
    """Best time and last result of each side, the two run in alternating rounds."""
    best_mini = best_ref = float("inf")
    for _ in range(repeat):
        t_mini, mini_out = _timed(mini)
        t_ref, ref_out = _timed(ref)
        best_mini, best_ref = min(best_mini, t_mini), min(best_ref, t_ref)
    return best_mini, mini_out, best_ref, ref_out


def count_eqns(closed):
    return len(closed.jaxpr.eqns)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.RandomState(0)
    print(f"{'layers':>6} {'what':>10} {'minijax ms':>11} {'jax ms':>9} {'ratio':>6} "
          f"{'mj us/layer':>11} {'mj eqns':>8} {'jax eqns':>8}")
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
            t_mini, mini_jaxpr, t_jax, jax_jaxpr = interleaved_best_times(
                lambda: mini()(params, x), lambda: ref()(params, x), args.repeat)
            print(f"{depth:>6} {what:>10} {t_mini * 1e3:>11.2f} {t_jax * 1e3:>9.2f} "
                  f"{t_jax / t_mini:>6.2f} {t_mini * 1e6 / depth:>11.1f} "
                  f"{count_eqns(mini_jaxpr):>8} {count_eqns(jax_jaxpr):>8}")


if __name__ == "__main__":
    main()
