"""Scan memory: compiled XLA temp memory of grad-of-scan, minijax beside JAX.

    .venv/bin/python benchmarks/scan_memory.py [--width 64] [--lengths 10 100 1000]

An RNN cell `h = tanh(w @ h + x)` scanned over `n` inputs, gradient with respect to
`w`, lowered with `jit(grad(...))` by both libraries. Reverse mode of a scan keeps
residuals for every iteration, so temp memory grows linearly in `n` for both; the
target (issue 5) is that minijax's lowered gradient never uses more than JAX's, and
runs the same FLOPs (`cost_analysis()['flops']`).

On one NVIDIA H100 (session 11: jax and jaxlib 0.11.2 with CUDA 13, Python 3.12;
`JAX_PLATFORMS=cuda,cpu`, the session's final code, one run of the command above):

     n  minijax temp B   jax temp B  ratio  minijax flops  jax flops
    10            7984         7984   1.00          24773      24773
   100           54064        54064   1.00          24773      24773
  1000          514864       514864   1.00          24773      24773

Earlier in that session, before minijax's tanh derivative went through
`one_minus_square` as JAX 0.11's does, minijax used 1.50x JAX 0.11.2's temp memory
(771,384 bytes against 514,864 at n = 1000): two residuals per step where JAX 0.11
saves one. On this CPU with jax 0.10.2, which still saves two, minijax now uses 0.67x.
"""
from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np

import minijax
import minijax.numpy as mnp


def rnn_grad(lib, np_):
    def loss(w, xs):
        def cell(h, x):
            return np_.tanh(np_.dot(w, h) + x), None
        h, _ = lib.lax.scan(cell, np_.ones(w.shape[0]), xs)
        return np_.sum(h)
    return lib.jit(lib.grad(loss))


def measure(lib, np_, width, length):
    w = np.eye(width, dtype=np.float32) * 0.5
    xs = np.ones((length, width), np.float32)
    compiled = rnn_grad(lib, np_).lower(w, xs).compile()
    return (compiled.memory_analysis().temp_size_in_bytes,
            compiled.cost_analysis().get("flops", float("nan")))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 100, 1000])
    args = parser.parse_args()
    print(f"{'n':>6} {'minijax temp B':>15} {'jax temp B':>12} {'ratio':>6} "
          f"{'minijax flops':>14} {'jax flops':>10}")
    worst = 0.0
    for n in args.lengths:
        ours_mem, ours_flops = measure(minijax, mnp, args.width, n)
        jax_mem, jax_flops = measure(jax, jnp, args.width, n)
        ratio = ours_mem / max(jax_mem, 1)
        worst = max(worst, ratio)
        print(f"{n:>6} {ours_mem:>15} {jax_mem:>12} {ratio:>6.2f} {ours_flops:>14.0f} "
              f"{jax_flops:>10.0f}")
    print("target met (minijax temp <= jax temp)" if worst <= 1.0 else
          f"TARGET MISSED: minijax uses {worst:.2f}x JAX's temp memory")


if __name__ == "__main__":
    main()
