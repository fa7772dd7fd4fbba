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

Measured on the shared 2-core development machine (CPU, jax 0.10.2, load 5-6 from
other jobs), `PYTHONPATH=. .venv/bin/python benchmarks/trace_speed.py --layers 100 1000`:

    layers       what  minijax ms    jax ms  ratio mj us/layer  mj eqns jax eqns
       100    forward        1.34      7.04   5.25        13.4      402      402
       100       grad       13.66    170.79  12.50       136.6     1105     1205
      1000    forward       11.83     71.00   6.00        11.8     4002     4002
      1000       grad      143.99   2301.27  15.98       144.0    11005    12005

Across five runs at 1000 layers: forward 5.7-6.3x, grad 16.0-17.6x (before this
round of work 4.3-4.9x and 10.3-11.7x). Both are linear in depth: across the five
runs the CPU time per layer is 11.6-13.5 us forward and 133-153 us under grad at
100 layers, 11.4-12.3 and 140-156 us at 1000.

What a forward trace still costs, per layer of four equations (micro-timings of one
operation in a staging trace, collector paused): `dot_general` 2.1 us,
`broadcast_in_dim` 1.7, `add` 1.75, `tanh` 1.5, plus about 0.4 us for each of the
two input leaves (flattening and checking it 0.2, its input variable and tracer
0.2). Of an operation, about 1.3 us is `bind` and the staging trace: the
type-rule memo's lookup (0.2), the equation, its variable and its tracer (0.4),
the walk to the user's frame for source info (0.15), the rest Python calls; the
`lax` function adds 0.1-0.35 (its checks, its params). On top comes the garbage
collector's first pass after the trace, which scans what the trace made (about
five objects per equation: the equation, its output variable and tuples, a params
dict): 1.6-2.7 ms of a 1000-layer trace here, most of the gap between a standalone
run (about 9 ms) and the interleaved one. What was removed this round: building an
aval per input leaf (NumPy leaves of one type share one), a `(code, offset)` pair per
equation (a call site's `SourceInfo` is shared), comprehensions in the staging loop,
the per-leaf ref check's call (one `isinstance` a leaf now), the generator-based
`set_current_trace` (a class now), the partial-eval trace's unmemoized type rules
and `np.argsort` in transpose rules (the last three mostly for grad).

Session 18 (eager18), the command above, two runs at load 9-10 (other helpers' jobs:
the machine ran 1.5-2x slower than for the table above), jax 0.10.2:

    layers       what  minijax ms    jax ms  ratio mj us/layer  mj eqns jax eqns
       100    forward        4.08     22.84   5.60        40.8      402      402
       100       grad       20.92    416.67  19.92       209.2      905     1205
      1000    forward       26.87    207.43   7.72        26.9     4002     4002
      1000       grad      275.68   5503.89  19.96       275.7     9005    12005

       100    forward        1.92     11.16   5.81        19.2      402      402
       100       grad       18.29    311.61  17.03       182.9      905     1205
      1000    forward       18.34    121.24   6.61        18.3     4002     4002
      1000       grad      180.96   3957.35  21.87       181.0     9005    12005

The targets hold: grad 20-22x, forward 6.6-7.7x, fewer equations, and linear in
depth in the second run (per layer 19.2 / 18.3 us forward, 183 / 181 us grad; the
first run's 1.3x for grad went with its heavier load). minijax now makes 9,005
equations on jax 0.10.2 too, where the first table's run made 11,005: as on 0.11 (the
GPU host's rows below), one `tanh` residual where JAX 0.10 keeps two. No change of
this round touched the trace path.

On the GPU machine's host (twelfth round; an H100 machine's 16-core CPU, jax 0.11.2,
Python 3.12; tracing runs on the CPU, whatever the device), one run:

    layers       what  minijax ms    jax ms  ratio mj us/layer  mj eqns jax eqns
       100    forward        3.47     14.46   4.16        34.7      402      402
       100       grad       14.73    246.82  16.76       147.3      905     1005
      1000    forward       20.13    143.87   7.15        20.1     4002     4002
      1000       grad      155.70   2935.65  18.85       155.7     9005    10005

(jax 0.11's tanh saves one residual where 0.10's saved two: 9,005 equations, not
11,005, on both sides' count of what minijax and JAX each make.)

Session 23: the merge that made `make_jaxpr` share `jit`'s trace cache also made it
run the verifier on every trace, which `jit` does before binding one: forward tracing
at 1000 layers went from 14.1 to 40.8 ms (5.69x to 2.10x JAX on this machine, the
same command). `make_jaxpr` now stores its trace unverified and the first call that
binds it verifies it (`Staged.ensure_verified`, `frontend/tracing.py`): one run after
the fix, load about 1, `--layers 100 1000`: forward 1.72 / 15.70 ms (4.83x / 5.39x),
grad 13.34 / 135.30 ms (15.16x / 18.18x).
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
