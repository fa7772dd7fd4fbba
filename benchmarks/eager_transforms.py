"""Eager transformations of jitted jnp functions: first and repeat call, minijax vs JAX.

JAX's jnp functions are `jax.jit` functions; under an eager `grad` or `vmap` each
stays one `pjit` equation, which the transformation turns into one transformed
program, compiled once and cached. minijax's `jitted_eagerly` functions do the same
(`minijax/frontend/eager_jit.py`): under an eager transformation each is one `jit`
call, whose body the call rules transform once (`transforms/calls.py`) and the root
compiles once (`backends/xla.py`).

    PYTHONPATH=. .venv/bin/python benchmarks/eager_transforms.py

prints, per case, the programs each side makes on a first call (after
`minijax.clear_caches()` and `jax.clear_caches()`), the CPU milliseconds of that first
call, and the CPU microseconds of a repeat call, with the ratios (minijax / jax; below
1.0 means minijax is faster). First calls are timed in interleaved rounds (caches
cleared before each), repeat calls with `jit_dispatch.py`'s interleaved helper; each
side keeps its minimum.

Measured on the shared 2-core development machine (CPU, jax 0.10.2, load 9-11), two
interleaved runs of each tree with the command above; "before" is the tree without
eager transformations keeping jnp calls whole (the body ran inline under the
transformation, so each primitive of each transformed piece was its own eager
program). Programs made are exact; times are the two runs' minima:

    case       tree     programs mj/jax  first ms mj      jax  ratio  repeat us mj      jax  ratio
    grad svd   before        50 / 17     1315-1390  728-748  1.81-1.86   2487-2531  4777-5750  0.44-0.52
    grad svd   after         17 / 17       760-795  765-785  0.99-1.01   1254-1288  4806-5143  0.24-0.27
    vmap inv   before        18 / 1        873-926  294-311  2.97-2.98     480-512    205-215  2.35-2.38
    vmap inv   after          1 / 1        330-334  331-337  0.99-1.00     105-106    185-186  0.57

A first call now costs what JAX's does (the same number of programs, of the same
size); a repeat call is a fraction of JAX's, which re-runs its Python transformation
machinery on every eager call where minijax's call rules find the transformed bodies
in their caches.

On the test suite the effect is mixed (profiling plugin of session 8, CPU seconds and
XLA compiles, two interleaved runs of each tree, load 6-10): `test_linalg.py`
676 -> 423 compiles, 41.4/44.7 -> 40.9/42.7 s; `test_grad.py` 1031 -> 1045,
23.5/24.6 -> 23.9/24.7 s; `test_jacobian_batched.py` 391 -> 447, 13.2/13.9 ->
15.2/15.9 s. Whole programs are fewer but each is larger, and a one-primitive jnp call
(`jnp.sin`, `jnp.sum`) under nested transformations now compiles its own transformed
program per (function, transformation), as JAX's does, where op by op it reused the
programs compiled per primitive by earlier tests of the same process.
"""
from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

import minijax
import minijax.numpy as mnp
from jit_dispatch import _interleaved_min_us   # this folder is on sys.path when run

_rng = np.random.RandomState(0)
_A = _rng.randn(6, 4).astype(np.float32)
_SQUARES = (_rng.randn(8, 4, 4) + 4 * np.eye(4)).astype(np.float32)


def _svd_loss(np_):
    def loss(a):
        u, s, vt = np_.linalg.svd(a, full_matrices=False)
        return np_.sum(s ** 2) + np_.sum(u[0] * vt[0])
    return loss


CASES = [
    ("grad svd", lambda t, np_: t.grad(_svd_loss(np_)), _A),
    ("vmap inv", lambda t, np_: t.vmap(np_.linalg.inv), _SQUARES),
]


def _fresh():
    minijax.clear_caches()
    jax.clear_caches()


def _first_call(f, x, made):
    """(programs made, CPU ms) of a first call of `f(x)` from empty caches."""
    _fresh()
    before = len(made)
    start = time.process_time()
    jax.block_until_ready(f(x))
    return len(made) - before, (time.process_time() - start) * 1e3


def main(rounds: int = 5):
    made = []

    def listen(event, duration, **kwargs):
        if event == "/jax/core/compile/jaxpr_to_mlir_module_duration":
            made.append(event)
    jax.monitoring.register_event_duration_secs_listener(listen)
    print(f"{'case':10s} {'programs mj/jax':>16s} {'first ms mj':>12s} {'jax':>7s} "
          f"{'ratio':>6s} {'repeat us mj':>13s} {'jax':>7s} {'ratio':>6s}")
    for name, make, x in CASES:
        mini, ref = make(minijax, mnp), make(jax, jnp)
        first = {"mini": [], "ref": []}
        for _ in range(rounds):         # interleaved, so both sides see the same load
            for side, f in (("mini", mini), ("ref", ref)):
                first[side].append(_first_call(f, x, made))
        programs = {side: first[side][0][0] for side in first}
        first_ms = {side: min(ms for _, ms in first[side]) for side in first}
        repeat_us = _interleaved_min_us(lambda: jax.block_until_ready(mini(x)),
                                        lambda: jax.block_until_ready(ref(x)),
                                        rounds=10, number=20)
        print(f"{name:10s} {programs['mini']:7d} / {programs['ref']:<6d} "
              f"{first_ms['mini']:12.1f} {first_ms['ref']:7.1f} "
              f"{first_ms['mini'] / first_ms['ref']:6.2f} {repeat_us[0]:13.1f} "
              f"{repeat_us[1]:7.1f} {repeat_us[0] / repeat_us[1]:6.2f}")
    jax.monitoring.unregister_event_duration_listener(listen)


if __name__ == "__main__":
    main()
