"""vmap: tracing speed of per-example gradients, and the XLA program of a batched
matmul chain, minijax against JAX in the same run.

    .venv/bin/python benchmarks/vmap_speed.py [--layers 10 100 1000] [--repeat 3]
                                              [--chain 8] [--width 512] [--batch 64]

1. Tracing: `make_jaxpr(vmap(grad(mlp), in_axes=(None, 0)))` -- per-example gradients
   of a deep MLP written with each library's `lax` -- timed with minijax and with JAX.
   Prints best-of-N times, the ratio JAX / minijax (above 1: minijax is faster) and
   both equation counts. Target (docs/design.md, section 10): ratio >= 3, no more equations.
2. Lowered program: `jit(vmap(chain, in_axes=(0, None)))` for a chain of matmuls with
   tanh between them. Compares `cost_analysis()` FLOPs of minijax's XLA program with
   JAX's (must be equal) and the run time of the two compiled executables, timed
   interleaved in the same process (target: within 10%).

On one NVIDIA H100 (session 11: jax and jaxlib 0.11.2 with CUDA 13, Python 3.12;
`JAX_PLATFORMS=cuda,cpu`, the session's final code, one run of the command above):

    layers  minijax ms    jax ms  ratio  mj eqns jax eqns
        10        4.44     43.57   9.80       87       97
       100       49.34    369.35   7.49     1007      907      (the run before, 100 layers)

    jit(vmap(chain)): 8 matmuls of 512x512, batch 64, on gpu
      FLOPs   minijax 2.703e+08   jax 2.703e+08   equal
      time    minijax 84.3 us   jax 83.4 us   minijax / jax = 1.011 (target <= 1.10)

The run before measured the chain at 1.754 (160 us against 91): the executable of
`jit(f).lower(...).compile()` re-staged `f` on every call to check its arguments, which
on the GPU cost more than the matrix products; it now hands the call to JAX's
executable (`minijax/frontend/aot.py`). (At 100 layers minijax's jaxpr has 1007
equations to JAX's 907 on jax 0.11.2, where JAX 0.10.2 makes more than minijax: 117 to
107 at 10 layers on this CPU.)
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import jax
from jax import lax as jlax

import minijax
from minijax import lax as mlax

WIDTH = 16


def make_loss(lax):
    """Squared norm of a deep tanh MLP's output for ONE example `x: f32[WIDTH]`."""
    def loss(params, x):
        for w, b in params:
            x = lax.tanh(lax.add(lax.dot(x, w), b))
        return lax.reduce_sum(lax.mul(x, x), (0,))
    return loss


def make_chain(lax):
    """A chain of matmuls with tanh between them, for one example `x: f32[width]`."""
    def chain(x, ws):
        for w in ws:
            x = lax.tanh(lax.dot(x, w))
        return x
    return chain


def best_time(fn, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def bench_tracing(layers, repeat):
    rng = np.random.RandomState(0)
    # A fresh Python function for every trace: JAX caches traces by function
    # identity, and a cache hit would time a dictionary lookup, not tracing.
    def mini():
        return minijax.make_jaxpr(
            minijax.vmap(minijax.grad(make_loss(mlax)), in_axes=(None, 0)))

    def ref():
        return jax.make_jaxpr(jax.vmap(jax.grad(make_loss(jlax)), in_axes=(None, 0)))
    print("make_jaxpr(vmap(grad(mlp))): per-example gradients of 8 examples, width "
          f"{WIDTH}, best of {repeat}")
    print(f"{'layers':>6} {'minijax ms':>11} {'jax ms':>9} {'ratio':>6} {'mj eqns':>8} "
          f"{'jax eqns':>8}")
    for depth in layers:
        params = [(rng.randn(WIDTH, WIDTH).astype(np.float32) / 4,
                   rng.randn(WIDTH).astype(np.float32)) for _ in range(depth)]
        xs = rng.randn(8, WIDTH).astype(np.float32)
        t_mini, mini_jaxpr = best_time(lambda: mini()(params, xs), repeat)
        t_jax, jax_jaxpr = best_time(lambda: ref()(params, xs), repeat)
        print(f"{depth:>6} {t_mini * 1e3:>11.2f} {t_jax * 1e3:>9.2f} {t_jax / t_mini:>6.2f} "
              f"{len(mini_jaxpr.jaxpr.eqns):>8} {len(jax_jaxpr.jaxpr.eqns):>8}")


def _time_executable(compiled, args, number):
    jax.block_until_ready(compiled(*args))
    start = time.perf_counter()
    for _ in range(number):
        out = compiled(*args)
    jax.block_until_ready(out)
    return (time.perf_counter() - start) / number


def bench_lowered(chain_length, width, batch, rounds=7, number=20):
    rng = np.random.RandomState(1)
    ws = [rng.randn(width, width).astype(np.float32) / np.sqrt(width)
          for _ in range(chain_length)]
    xs = rng.randn(batch, width).astype(np.float32)
    ws_dev = [jax.device_put(w) for w in ws]
    xs_dev = jax.device_put(xs)
    ours = minijax.jit(minijax.vmap(make_chain(mlax), in_axes=(0, None)))
    theirs = jax.jit(jax.vmap(make_chain(jlax), in_axes=(0, None)))
    ours_exe = ours.lower(xs_dev, ws_dev).compile()
    theirs_exe = theirs.lower(xs_dev, ws_dev).compile()
    # Both compiled executables take the function's own arguments, pytrees included.
    ours_args = theirs_args = (xs_dev, ws_dev)

    def flops(exe):
        cost = exe.cost_analysis()
        cost = cost[0] if isinstance(cost, (list, tuple)) else cost
        return cost.get("flops")
    ours_flops, theirs_flops = flops(ours_exe), flops(theirs_exe)
    np.testing.assert_allclose(np.asarray(ours_exe(*ours_args)),
                               np.asarray(theirs_exe(*theirs_args)), rtol=1e-4, atol=1e-4)
    # Interleave the two so that drift in machine load hits both alike.
    ours_times, theirs_times = [], []
    for _ in range(rounds):
        ours_times.append(_time_executable(ours_exe, ours_args, number))
        theirs_times.append(_time_executable(theirs_exe, theirs_args, number))
    ours_t, theirs_t = float(np.median(ours_times)), float(np.median(theirs_times))
    print(f"\njit(vmap(chain)): {chain_length} matmuls of {width}x{width}, batch {batch}, "
          f"on {jax.devices()[0].platform}")
    print(f"  FLOPs   minijax {ours_flops:.4g}   jax {theirs_flops:.4g}   "
          f"{'equal' if ours_flops == theirs_flops else 'DIFFERENT'}")
    print(f"  time    minijax {ours_t * 1e6:.1f} us   jax {theirs_t * 1e6:.1f} us   "
          f"minijax / jax = {ours_t / theirs_t:.3f} (target <= 1.10)")
    return ours_flops == theirs_flops, ours_t / theirs_t


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chain", type=int, default=8)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    bench_tracing(args.layers, args.repeat)
    bench_lowered(args.chain, args.width, args.batch)


if __name__ == "__main__":
    main()
