"""A data-parallel training step on 1, 2, 4 and 8 host devices: minijax beside JAX.

The step is the one of tests/shard_map_cases.py: an MLP's parameters replicated, the
batch split over a mesh axis 'd', per-device gradients `pmean`-ed, an SGD update, all
inside `shard_map` under `jit`. For each device count it prints the compiled FLOPs
per device (XLA's cost analysis of the partitioned program) and the time per step,
for minijax and for JAX (`check_vma=False`, the semantics minijax has), and their
ratios. minijax hands the same per-device body to JAX's shard_map, so both ratios
should be within 5% of 1; the script exits non-zero if the FLOPs ratio is not.

    .venv/bin/python benchmarks/sharded_step.py

It sets XLA_FLAGS to give the host 8 devices before JAX starts.

Measured 2026-11-25 on the 2-core development machine when idle (CPU, jax 0.10.2):

    devices  minijax GFLOP/dev  jax GFLOP/dev  ratio  minijax ms   jax ms  ratio
          1             0.0469         0.0470  0.997       0.485    0.489  0.991
          2             0.0235         0.0235  0.997       0.620    0.616  1.006
          4             0.0118         0.0118  0.997       0.759    0.749  1.015
          8             0.0059         0.0059  0.997       0.960    0.977  0.983

Under load from other jobs the time ratio drifted to 1.37, so compare on a quiet machine.
"""
from __future__ import annotations

import os
import sys
import timeit

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, PartitionSpec as P  # noqa: E402

import minijax  # noqa: E402
import minijax.numpy as mnp  # noqa: E402
from minijax.backends.xla import compile_jaxpr  # noqa: E402

BATCH, IN, HIDDEN, OUT = 512, 64, 256, 16


def make_step(lib, np_lib, lax, shard_map, mesh):
    def loss(params, xb, yb):
        hidden = np_lib.tanh(xb @ params["w1"] + params["b1"])
        return ((hidden @ params["w2"] - yb) ** 2).mean()

    def per_shard(params, xb, yb):
        grads = lax.pmean(lib.grad(loss)(params, xb, yb), "d")
        return jax.tree_util.tree_map(lambda p, g: p - 0.05 * g, params, grads)
    kwargs = {} if lib is minijax else {"check_vma": False}
    return shard_map(per_shard, mesh=mesh, in_specs=(P(), P("d"), P("d")),
                     out_specs=P(), **kwargs)


def data():
    rng = np.random.default_rng(0)
    params = {"w1": rng.standard_normal((IN, HIDDEN)).astype(np.float32) * 0.1,
              "b1": np.zeros(HIDDEN, np.float32),
              "w2": rng.standard_normal((HIDDEN, OUT)).astype(np.float32) * 0.1}
    xs = rng.standard_normal((BATCH, IN)).astype(np.float32)
    ys = rng.standard_normal((BATCH, OUT)).astype(np.float32)
    return params, xs, ys


def flops(compiled) -> float:
    analysis = compiled.cost_analysis()
    if isinstance(analysis, list):        # older jax: one dict per program
        analysis = analysis[0]
    return float(analysis.get("flops", 0.0))


def minijax_compiled(step, args):
    """The XLA executable minijax's jit runs for `step`, and a caller of it."""
    closed = minijax.make_jaxpr(step)(*args)
    flat = jax.tree_util.tree_leaves(args)
    fn = compile_jaxpr(closed.jaxpr)
    compiled = fn.lower(*closed.consts, *flat).compile()
    return compiled, lambda: jax.block_until_ready(compiled(*closed.consts, *flat))


def per_step_ms(run, number=20, repeat=5):
    run()
    return min(timeit.repeat(run, number=number, repeat=repeat)) / number * 1e3


def main() -> int:
    args = data()
    ok = True
    print(f"{'devices':>7} {'minijax GFLOP/dev':>18} {'jax GFLOP/dev':>14} {'ratio':>6}"
          f" {'minijax ms':>11} {'jax ms':>8} {'ratio':>6}")
    for n in (1, 2, 4, 8):
        mesh = Mesh(np.array(jax.devices()[:n]), ("d",))
        ours = make_step(minijax, mnp, minijax.lax, minijax.shard_map, mesh)
        theirs = jax.jit(make_step(jax, jnp, jax.lax, jax.shard_map, mesh))
        ours_compiled, ours_run = minijax_compiled(ours, args)
        theirs_compiled = theirs.lower(*args).compile()
        np.testing.assert_allclose(
            jax.tree_util.tree_leaves(minijax.jit(ours)(*args))[0],
            jax.tree_util.tree_leaves(theirs(*args))[0], rtol=1e-4, atol=1e-5)
        f_ours, f_theirs = flops(ours_compiled), flops(theirs_compiled)
        t_ours = per_step_ms(ours_run)
        t_theirs = per_step_ms(lambda: jax.block_until_ready(theirs(*args)))
        flop_ratio = f_ours / f_theirs if f_theirs else float("nan")
        ok &= abs(flop_ratio - 1.0) <= 0.05
        print(f"{n:>7} {f_ours / 1e9:>18.4f} {f_theirs / 1e9:>14.4f} {flop_ratio:>6.3f}"
              f" {t_ours:>11.3f} {t_theirs:>8.3f} {t_ours / t_theirs:>6.3f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
