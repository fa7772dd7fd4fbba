"""The cached call path of `jit`: what a repeated call of a jitted function costs.

After the first call has traced and compiled, a call of `minijax.jit(f)` should cost
what a call of `jax.jit(f)` costs: flatten the arguments, find the executable by the
cache key (tree structure, avals with weak types, static arguments), run it,
unflatten. minijax hands that whole path to JAX's own C++ dispatch (one `jax.jit`
function per jitted function and options, `minijax/frontend/jit.py`); a ref argument takes
minijax's own path (check, discharge, run, write back).

    PYTHONPATH=. .venv/bin/python benchmarks/jit_dispatch.py

Each case times minijax and JAX in interleaved rounds (so both see the same machine
load) of CPU time (a round the scheduler preempts on a shared machine does not count)
and keeps the minimum per side. Target: every ratio (minijax / jax) <= 1.2.
What remains above 1.0 is the Python of `JitFunction.__call__` in front of JAX's C++
call, about 0.3 us: calling an instance of a Python class (0.1 us more than a bare
Python wrapper around the same call, which costs 0.1-0.2 us), reading the function's
cache, and one test of a per-thread flag (`minijax/ir/root_modes.py`: the root
trace, `disable_jit` and the NaN/inf checks, kept together and recomputed where they
change; a thread-local read, 0.03 us more than a module global would be). Refs and
misses of JAX's cache cost nothing here: they surface as exceptions from JAX
(`UncheckedCall`), and the arguments are looked at only then. A miss pays for that
with a refused first attempt, 0.4 ms against the 27 ms of trace and compile that
follow for a one-op function (a BaseException, so JAX does not filter its
traceback, which took another 0.9 ms). When `__call__`
tested the trace, `disable_jit` and the NaN/inf flags one by one and noted the
arguments in a thread-local on every call (for a cache miss), the gap was 0.6 us
(ratios 1.13-1.23). JAX's own ref path is slower than minijax's.

Measured on the shared 2-core development machine (CPU, jax 0.10.2, load about 6;
before this path, a cached call cost about 15 us against JAX's 5); three runs of the
same tree (and two more at load 13) put each of the first four rows between 1.05
and 1.11:

    case                     minijax us    jax us   ratio
    one op (sin)                   3.34      3.09    1.08
    jit(grad(f))                   3.35      3.05    1.10
    dict of four arrays            4.45      4.13    1.08
    static argument                3.45      3.12    1.10
    ref argument                  17.55     47.99    0.37

`one op, second shape` (session 10, eager10) calls the same jitted function on a
second shape after the row above. It cost 36.7 us against JAX's 3.2 (11.45) until
a miss of JAX's cache from the fast path stopped leaving that signature on JAX's
Python dispatch for good (JAX's C++ cache marks an entry whose miss raised that way;
`_JitCache.forget_refused_entry` now drops the function's C++ entries before the
checked call). After: 3.46 us against 3.16 (1.10), as the first shape (load 4-5).

Session 11 (aot11) added two rows. `list of 9 arrays` is a function of a list of
nine arrays (the weights of a layer stack): its ratio is that of the dict of four,
the same fixed cost of `JitFunction.__call__` and nothing per leaf (the XLA programs
are the same text; the 1.29 first seen for a list of nine was a wall-clock
measurement on a loaded machine, where this script's CPU-time minimum gives
1.06-1.11). `compiled (AOT) call` calls `jit(combine).lower(tree).compile()`, the
dict function above ahead of time. Its executable re-staged the function on every
call to check the arguments' types; it is now lowered as a function of the call's
own pytrees, so a call is a call of JAX's executable, whose C++ flattens, checks and
unflattens (`minijax/frontend/aot.py`). The same shared machine (load 10.5-10.7),
the tree before (3ad9ce8) and after, run one after the other:

    case                     before us  jax us  ratio    after us  jax us  ratio
    one op (sin)                  6.27    5.77   1.09        6.04    5.31   1.14
    one op, second shape          6.60    5.76   1.15        6.14    5.37   1.14
    jit(grad(f))                  6.57    5.62   1.17        6.31    5.71   1.11
    dict of four arrays           8.91    7.92   1.13        8.48    7.86   1.08
    list of 9 arrays             10.94   10.29   1.06       10.85    9.74   1.11
    compiled (AOT) call          28.54    8.72   3.27        8.93    8.55   1.04
    static argument               6.45    5.68   1.14        6.37    5.43   1.17
    ref argument                 41.34  101.40   0.41       38.24  100.00   0.38

(An executable of a ref program, `accumulate` below ahead of time, still looks at
its arguments on every call, for live and unaliased refs, but no longer traces:
34.8 us against JAX's 57.8 before, 30.1 against 59.0 after. On `jit(vmap(chain))`
of `benchmarks/vmap_speed.py`, eight 8x8 weights and a batch of 4, the executable's
call went from 80.3 us against JAX's 26.5 (3.03) to 25.2 against 25.7 (0.98).)

On one NVIDIA H100 (session 11: jax and jaxlib 0.11.2 with CUDA 13, Python 3.12, a
16-core host; `JAX_PLATFORMS=cuda,cpu`, the final code of the session, one run), a
call costs 65-85 us of CPU time on both sides, most of it in JAX's GPU runtime (on
the CPU a call costs 3-9 us), so the ratios sit at 1.0:

    case                      minijax us    jax us   ratio
    one op (sin)                   66.77     67.38    0.99
    one op, second shape           64.53     64.03    1.01
    jit(grad(f))                   69.31     67.68    1.02
    dict of four arrays            73.69     71.20    1.03
    list of 9 arrays               81.48     82.97    0.98
    compiled (AOT) call            84.00     82.53    1.02
    static argument                72.01     69.81    1.03
    ref argument                  128.01    233.94    0.55

On one NVIDIA H200 (session 19: jax and jaxlib 0.11.2 with CUDA 13, Python 3.12, a
16-core host; `JAX_PLATFORMS` unset, so the GPU; the session's first code, one run):
every ratio meets the target.

    case                      minijax us    jax us   ratio
    one op (sin)                   61.85     59.74    1.04
    one op, second shape           63.17     65.19    0.97
    jit(grad(f))                   63.15     61.93    1.02
    dict of four arrays            62.77     61.42    1.02
    list of 9 arrays               69.02     69.17    1.00
    compiled (AOT) call            72.20     71.93    1.00
    static argument                56.08     58.42    0.96
    ref argument                  101.01    155.41    0.65

On one NVIDIA H200 (session 23: jax and jaxlib 0.11.2 with CUDA 13, Python 3.12, a
16-core host; the GPU; the session's first code, one run, after the whole suite in
the same call): every ratio meets the target.

    case                      minijax us    jax us   ratio
    one op (sin)                   73.53     72.85    1.01
    one op, second shape           77.16     77.29    1.00
    jit(grad(f))                   67.57     66.00    1.02
    dict of four arrays            73.64     73.04    1.01
    list of 9 arrays               79.14     79.35    1.00
    compiled (AOT) call            81.48     80.74    1.01
    static argument                64.80     63.51    1.02
    ref argument                  110.39    164.61    0.67
"""
from __future__ import annotations

import time
import timeit

import jax
import jax.numpy as jnp
import numpy as np

import minijax
import minijax.numpy as mnp


def _interleaved_min_us(mini, ref, rounds=30, number=500):
    """Minimum microseconds per call of each, over rounds that alternate the two."""
    mini(), ref()     # trace, compile and warm the caches
    best_mini = best_ref = float("inf")
    for _ in range(rounds):
        best_mini = min(best_mini, timeit.Timer(mini, timer=time.process_time).timeit(number) / number * 1e6)
        best_ref = min(best_ref, timeit.Timer(ref, timer=time.process_time).timeit(number) / number * 1e6)
    return best_mini, best_ref


def _cases():
    x = jnp.asarray(np.linspace(-1, 1, 16, dtype=np.float32))
    y = jnp.asarray(np.linspace(-1, 1, 32, dtype=np.float32))

    one_op_mini = minijax.jit(mnp.sin)
    one_op_jax = jax.jit(jnp.sin)

    def loss_mini(w):
        return mnp.sum(mnp.sin(w) ** 2)

    def loss_jax(w):
        return jnp.sum(jnp.sin(w) ** 2)
    grad_mini = minijax.jit(minijax.grad(loss_mini))
    grad_jax = jax.jit(jax.grad(loss_jax))

    tree = {k: x + i for i, k in enumerate("abcd")}

    def combine(d):
        return d["a"] * d["b"] + d["c"] - d["d"]
    dict_mini, dict_jax = minijax.jit(combine), jax.jit(combine)

    # A list of nine arrays, as the weights of a layer stack are passed.
    arrays = [x + i for i in range(9)]

    def total(vs):
        out = vs[0]
        for v in vs[1:]:
            out = out + v
        return out
    list_mini, list_jax = minijax.jit(total), jax.jit(total)

    # The ahead-of-time executable of the dict function above.
    aot_mini = minijax.jit(combine).lower(tree).compile()
    aot_jax = jax.jit(combine).lower(tree).compile()

    def scale(v, n):
        return v * n
    static_mini = minijax.jit(scale, static_argnums=1)
    static_jax = jax.jit(scale, static_argnums=1)

    def accumulate(r, v):
        r[...] += v
    ref_mini, ref_jax = minijax.jit(accumulate), jax.jit(accumulate)
    box_mini, box_jax = minijax.new_ref(mnp.zeros(16)), jax.new_ref(jnp.zeros(16))

    return [
        ("one op (sin)", lambda: one_op_mini(x), lambda: one_op_jax(x)),
        # (After the row above: this shape is the function's second signature.)
        ("one op, second shape", lambda: one_op_mini(y), lambda: one_op_jax(y)),
        ("jit(grad(f))", lambda: grad_mini(x), lambda: grad_jax(x)),
        ("dict of four arrays", lambda: dict_mini(tree), lambda: dict_jax(tree)),
        ("list of 9 arrays", lambda: list_mini(arrays), lambda: list_jax(arrays)),
        ("compiled (AOT) call", lambda: aot_mini(tree), lambda: aot_jax(tree)),
        ("static argument", lambda: static_mini(x, 3), lambda: static_jax(x, 3)),
        ("ref argument", lambda: ref_mini(box_mini, x), lambda: ref_jax(box_jax, x)),
    ]


def main():
    print(f"{'case':24s} {'minijax us':>11s} {'jax us':>9s} {'ratio':>7s}")
    for name, mini, ref in _cases():
        mini_us, ref_us = _interleaved_min_us(mini, ref)
        print(f"{name:24s} {mini_us:11.2f} {ref_us:9.2f} {mini_us / ref_us:7.2f}")


if __name__ == "__main__":
    main()
