"""Loop memory: compiled temp memory and FLOPs of a long scan's gradient, per schedule.

    .venv/bin/python benchmarks/loop_memory.py [--lengths 100 1000 10000] [--width 32]

A scan of `n` steps of `h = tanh(h @ w) * 0.5 + h * 0.5` over a `width x width`
float32 carry (32 x 32: 4 KiB), gradient of `sum(h_n)` with respect to `w` and
`h_0`, lowered with `jit(grad(...))` for:

* JAX's `lax.scan` (every step's residuals stored: O(n) memory);
* JAX's `lax.scan` with a `jax.checkpoint`ed body (a constant factor less);
* minijax's `checkpointed_scan` with each schedule: "all" (minijax's own `lax.scan`),
  "sqrt" (O(sqrt n)) and "binomial" (O(log n)).

Printed per row: `memory_analysis().temp_size_in_bytes`, its ratio to JAX's
`lax.scan`, the FLOPs of the gradient and their ratio to the forward pass. FLOPs
are counted from minijax's / JAX's own IR (each `dot_general` and elementwise op of
the program weighted by the trip counts of the loops around it), because XLA's
`cost_analysis()` counts a loop body once whatever its trip count. Targets (issue
16): at n = 10,000 "binomial" uses at most 1/100 of JAX's `lax.scan` memory, with
FLOPs at most (ceil(log2 n) + 2) x the forward pass; memory grows as O(log n) for
"binomial" and O(sqrt n) for "sqrt".

On one NVIDIA H100 (session 11: jax and jaxlib 0.11.2 with CUDA 13, Python 3.12;
`JAX_PLATFORMS=cuda,cpu`, the session's final code, one run of the command above),
the binomial schedule at n = 10,000 used 182,788 bytes, 0.22% of JAX's `lax.scan`
(81,934,340), with FLOPs 8.52x the forward pass: both targets met, as on the CPU. Growth from 100 to
10,000 steps: binomial 1.75x, sqrt 8.73x, JAX's scan 98.3x. minijax's "all" schedule
(its own `lax.scan`) uses what JAX's scan uses (81,934,340 bytes at n = 10,000); the
run before it used 1.50x, until minijax's tanh saved one residual per step as JAX
0.11's does (`benchmarks/scan_memory.py`).
"""
from __future__ import annotations

import argparse
import math

import jax
import jax.numpy as jnp
import numpy as np

import minijax
import minijax.numpy as mnp
from minijax.ad_checkpoint import checkpointed_scan


def loss_of(np_, scan):
    def loss(w, h):
        def step(h, _):
            return np_.tanh(h @ w) * 0.5 + h * 0.5, None
        h, _ = scan(step, h)
        return np_.sum(h)
    return loss


def variants(n):
    """(name, library, loss) for every row of the table."""
    return [
        ("jax lax.scan", jax, loss_of(jnp, lambda f, h: jax.lax.scan(f, h, None, length=n))),
        ("jax lax.scan + checkpoint", jax, loss_of(
            jnp, lambda f, h: jax.lax.scan(jax.checkpoint(f), h, None, length=n))),
    ] + [(f"minijax {s}", minijax, loss_of(mnp, lambda f, h, s=s: checkpointed_scan(
        f, h, None, length=n, schedule=s))) for s in ("all", "sqrt", "binomial")]


def temp_bytes(lib, fn, args):
    compiled = lib.jit(fn).lower(*args).compile()
    return compiled.memory_analysis().temp_size_in_bytes


# -- FLOPs from the IR --------------------------------------------------------------------------

def _eqn_flops(name, params, in_shapes, out_shapes):
    if name == "dot_general":
        (lc, _), _ = params["dimension_numbers"]
        contracted = math.prod(in_shapes[0][d] for d in lc)
        return 2 * contracted * sum(math.prod(s) for s in out_shapes)
    return sum(math.prod(s) for s in out_shapes)


def minijax_flops(jaxpr) -> float:
    from minijax.ir.core import Jaxpr
    total = 0.0
    for eqn in jaxpr.eqns:
        subs = [v for value in eqn.params.values()
                for v in (value if isinstance(value, tuple) else (value,))
                if isinstance(v, Jaxpr)]
        if subs:
            trips = eqn.params.get("length", 1)
            total += trips * sum(minijax_flops(s) for s in subs)
            continue
        total += _eqn_flops(eqn.primitive.name, eqn.params,
                            [getattr(a.aval, "shape", ()) for a in eqn.inputs],
                            [v.aval.shape for v in eqn.outputs])
    return total


def jax_flops(jaxpr) -> float:
    total = 0.0
    for eqn in jaxpr.eqns:
        subs = [v.jaxpr if hasattr(v, "jaxpr") and hasattr(v.jaxpr, "eqns") else v
                for value in eqn.params.values()
                for v in (value if isinstance(value, (tuple, list)) else (value,))
                if hasattr(v, "eqns") or (hasattr(v, "jaxpr") and hasattr(v.jaxpr, "eqns"))]
        if subs:
            trips = eqn.params.get("length", 1)
            total += trips * sum(jax_flops(s) for s in subs)
            continue
        total += _eqn_flops(eqn.primitive.name, eqn.params,
                            [getattr(a.aval, "shape", ()) for a in eqn.invars],
                            [v.aval.shape for v in eqn.outvars])
    return total


def flops(lib, fn, args) -> float:
    closed = lib.make_jaxpr(fn)(*args)
    return (jax_flops if lib is jax else minijax_flops)(closed.jaxpr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--width", type=int, default=32)
    opts = parser.parse_args()
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((opts.width, opts.width)) / opts.width).astype(np.float32)
    h = rng.standard_normal((opts.width, opts.width)).astype(np.float32)
    print(f"carry: f32[{opts.width},{opts.width}] = {h.nbytes} bytes")
    print(f"{'n':>6} {'variant':26s} {'temp bytes':>12s} {'vs jax scan':>11s} "
          f"{'grad FLOPs':>12s} {'x forward':>9s}")
    results = {}
    for n in opts.lengths:
        forward = flops(jax, loss_of(jnp, lambda f, h: jax.lax.scan(f, h, None, length=n)),
                        (w, h))
        base = None
        for name, lib, loss in variants(n):
            grad = lib.grad(loss, argnums=(0, 1))
            mem = temp_bytes(lib, grad, (w, h))
            fl = flops(lib, grad, (w, h))
            base = mem if base is None else base
            results[(n, name)] = (mem, fl / forward)
            print(f"{n:>6} {name:26s} {mem:>12d} {mem / base:>11.4f} {fl:>12.3g} "
                  f"{fl / forward:>9.2f}")
    lo, n = min(opts.lengths), max(opts.lengths)
    for name, law, expected in (("minijax binomial", "log n", math.log(n) / math.log(lo)),
                                ("minijax sqrt", "sqrt n", math.sqrt(n / lo)),
                                ("jax lax.scan", "n", n / lo)):
        grown = results[(n, name)][0] / results[(lo, name)][0]
        print(f"{name}: {n // lo}x the steps, {grown:.2f}x the memory "
              f"({law} grows {expected:.2f}x)")
    mem, ratio = results[(n, "minijax binomial")]
    jax_mem = results[(n, "jax lax.scan")][0]
    bound = math.ceil(math.log2(n)) + 2
    print(f"\nat n = {n}: binomial uses {mem / jax_mem:.4%} of jax lax.scan's temp memory "
          f"(target <= 1%): {'met' if mem * 100 <= jax_mem else 'MISSED'}; "
          f"FLOPs {ratio:.2f}x forward (target <= {bound}x): "
          f"{'met' if ratio <= bound else 'MISSED'}")


if __name__ == "__main__":
    main()
