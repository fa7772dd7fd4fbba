"""Eager transformations of jitted jnp functions: first and repeat call, minijax vs JAX.

JAX's jnp functions are `jax.jit(..., inline=True)` functions; under an eager `grad`
or `vmap` each stays one `pjit` equation, which the transformation turns into one
transformed program, compiled once and cached. minijax's `jitted_eagerly` functions
do the same (`minijax/frontend/eager_jit.py`): under an eager transformation each is
one `jit` call marked `inline`, whose body the call rules transform once
(`transforms/calls.py`) and the root compiles once (`backends/eager_dispatch.py`; a body that
came down to one primitive goes through that primitive's eager dispatch, one that
only forwards its inputs returns them). Traced later, the inline calls become their
bodies' equations (`ir/staging.py`).

    PYTHONPATH=. .venv/bin/python benchmarks/eager_transforms.py

prints, per case, the programs each side makes on a first call (after
`minijax.clear_caches()` and `jax.clear_caches()`), the CPU milliseconds of that first
call, and the CPU microseconds of a repeat call, with the ratios (minijax / jax; below
1.0 means minijax is faster). First calls are timed in interleaved rounds (caches
cleared before each), repeat calls with `jit_dispatch.py`'s interleaved helper; each
side keeps its minimum.

Measured on the shared 2-core development machine (CPU, jax 0.10.2, load 7-9), the
command above; "before" is main at ae2deaf (the body ran inline under the
transformation, so each primitive of each transformed piece was its own eager
program), run with this script; "after" two runs, the second with one-equation bodies
through the eager dispatch (the grad's 16 -> 15 programs). Programs made are exact:

    case       tree     programs mj/jax  first ms mj    jax  ratio      repeat us mj    jax  ratio
    grad svd   before        50 / 17          1362    730  1.87              2280   4863  0.47
    grad svd   after     16-15 / 17        657-706 653-739 0.96-1.01    1012-1166 3470-4986 0.23-0.29
    vmap inv   before        18 / 1            899    320  2.81               473    203  2.33
    vmap inv   after          1 / 1        315-336 322-340 0.98-0.99      102-124 178-252 0.49-0.57

A first call now costs what JAX's does (no more programs, of the same size); a repeat
call is a fraction of JAX's, which re-runs its Python transformation machinery on
every eager call where minijax's call rules find the transformed bodies in their
caches. (Last round's version, a plain nested `jit` call, measured the same: 17 / 17
programs, 0.99-1.01 first; it was reverted because traced pullbacks showed the nested
call with the first caller's source lines.)

On the test suite (profiling plugin of session 8, `tests/test_linalg.py
tests/test_grad.py tests/test_jacobian_batched.py` in one process, load 7-10; two
runs of main, then this tree without and with the one-equation dispatch): XLA
compiles 2,091 / 2,091 -> 1,906 -> 1,845 (linalg 753 -> 440 -> 423, grad 968 ->
1,034 -> 1,020, jacobian_batched 370 -> 432 -> 402); the plugin's CPU seconds
82.2 / 85.3 -> 82.4 -> 81.6 (linalg 44.1 / 44.6 -> 40.6 -> 40.3, grad 25.4 / 26.7 ->
26.6 -> 26.3, jacobian_batched 12.8 / 14.0 -> 15.2 -> 15.0). Whole programs are
fewer but each is larger, and a jnp call under nested transformations compiles its
own transformed program per (function, transformation), as JAX's does, where op by
op it reused the programs compiled per primitive by earlier tests of the process.

On one NVIDIA H100 (session 11: jax and jaxlib 0.11.2 with CUDA 13, Python 3.12, a
16-core host; `JAX_PLATFORMS=cuda`, one run of the command above):

    case        programs mj/jax  first ms mj     jax  ratio  repeat us mj     jax  ratio
    grad svd        15 / 17           1083.7  1141.6   0.95        4870.2 10986.6   0.44
    vmap inv         1 / 1             157.6   182.5   0.86         554.2   912.8   0.61

On one NVIDIA H200 (session 19: jax and jaxlib 0.11.2 with CUDA 13, Python 3.12, a
16-core host; the GPU; one run):

    case        programs mj/jax  first ms mj     jax  ratio  repeat us mj     jax  ratio
    grad svd        15 / 17            754.9   909.4   0.83        4903.2 10772.2   0.46
    vmap inv         1 / 1             127.0   146.6   0.87         893.5  1279.9   0.70

On one NVIDIA H200 (session 23, the same software; one run):

    case        programs mj/jax  first ms mj     jax  ratio  repeat us mj     jax  ratio
    grad svd        15 / 17            799.2  1048.5   0.76        4901.0 10841.3   0.45
    vmap inv         1 / 1             132.7   131.0   1.01         506.7   813.1   0.62
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
