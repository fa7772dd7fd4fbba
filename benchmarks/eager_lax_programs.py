"""Audit: programs one eager call of each `lax` function makes, minijax vs JAX.

Where JAX's function is one primitive (or a `jax.jit` function), one eager call is
one compiled program at most (none on a repeat). Where minijax writes the same
function as several primitives and dispatches each, it makes more: this script lists
those, calling every public name that `jax.lax` and `minijax.lax` share (control flow,
collectives and the helpers that return no array excepted) on small inputs, once and
again, and counting the programs each library lowers (`tests/program_counting.py`).

    PYTHONPATH=tests:benchmarks .venv/bin/python benchmarks/eager_lax_programs.py [NAME ...]

prints, per function, (first call, repeat call) programs for minijax and JAX, and
marks with `<<` each row where minijax makes more. With `--time` it prints instead
microseconds per repeated eager call of the functions this audit changed, and of
an imported JAX program of composed primitives evaluated eagerly (`eval_jaxpr`), for
both libraries (interleaved rounds of CPU time, the minimum of each side: the helper
of `jit_dispatch.py`). Both libraries run the same cases
in the same order in one process, so a program one case compiled (`sin` of f32[3])
serves a later case on both sides alike.
"""
from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np

import minijax
from program_counting import programs

F = np.array([0.5, 1.5, 2.5], np.float32)
G = np.array([[0.25, 1.], [2., 3.5]], np.float32)
I = np.array([1, 2, 31], np.int32)
U = np.array([3, 7, 250], np.uint8)
B = np.array([True, False, True])
C = np.array([1 + 2j, 3 - 1j], np.complex64)
IMG = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4) / 8
KER = np.ones((1, 1, 2, 2), np.float32)
DNUMS_G = dict(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
DNUMS_S = dict(update_window_dims=(), inserted_window_dims=(0,),
               scatter_dims_to_operand_dims=(0,))
IDX = np.array([[0], [2]], np.int32)
UPD = np.array([1., 2.], np.float32)


def _unary(name, x=F):
    return lambda lax: getattr(lax, name)(x)


def _binary(name, x=F, y=F):
    return lambda lax: getattr(lax, name)(x, y)


def _scatter(name):
    return lambda lax: getattr(lax, name)(F, IDX, UPD, lax.ScatterDimensionNumbers(**DNUMS_S))


CASES = {name: _unary(name) for name in (
    "abs acos asin asinh atan atanh cbrt ceil cos cosh digamma erf erf_inv erfc exp exp2 "
    "expm1 floor is_finite lgamma log log1p logistic neg reciprocal round rsqrt sign sin "
    "sinh sqrt square stop_gradient tan tanh bessel_i0e bessel_i1e real imag").split()}
CASES.update(acosh=_unary("acosh", F + 1), real=_unary("real", C), imag=_unary("imag", C),
             conj=_unary("conj", C), clz=_unary("clz", I), bitwise_not=_unary("bitwise_not", I),
             population_count=_unary("population_count", U))
CASES.update({name: _binary(name) for name in (
    "add sub mul div rem pow max min atan2 eq ne lt le gt ge nextafter igamma igammac "
    "igamma_grad_a zeta polygamma complex").split()})
CASES.update(polygamma=_binary("polygamma", np.ones(3, np.float32)),
             zeta=_binary("zeta", F + 1), mulhi=_binary("mulhi", I, I * 7),
             bitwise_and=_binary("bitwise_and", I, I), bitwise_or=_binary("bitwise_or", I, I),
             bitwise_xor=_binary("bitwise_xor", I, I),
             shift_left=_binary("shift_left", I, I), shift_right_logical=_binary(
                 "shift_right_logical", I, I), shift_right_arithmetic=_binary(
                 "shift_right_arithmetic", I, I))
CASES.update({
    "betainc": lambda lax: lax.betainc(F, F, F / 3),
    "clamp": lambda lax: lax.clamp(0.6, F, 2.),
    "select": lambda lax: lax.select(B, F, -F),
    "select_n": lambda lax: lax.select_n(B, F, -F),
    "integer_pow": lambda lax: lax.integer_pow(F, 3),
    "random_gamma_grad": lambda lax: lax.random_gamma_grad(F, F),
    "convert_element_type": lambda lax: lax.convert_element_type(F, np.int32),
    "bitcast_convert_type": lambda lax: lax.bitcast_convert_type(F, np.int32),
    "reduce_precision": lambda lax: lax.reduce_precision(F, 4, 2),
    "approx_max_k": lambda lax: lax.approx_max_k(F, 2),
    "approx_min_k": lambda lax: lax.approx_min_k(F, 2),
    "top_k": lambda lax: lax.top_k(F, 2),
    "argmax": lambda lax: lax.argmax(G, 1, np.int32),
    "argmin": lambda lax: lax.argmin(G, 0, np.int32),
    "cumsum": lambda lax: lax.cumsum(F),
    "cumprod": lambda lax: lax.cumprod(F),
    "cummax": lambda lax: lax.cummax(F),
    "cummin": lambda lax: lax.cummin(F),
    "cumlogsumexp": lambda lax: lax.cumlogsumexp(F),
    "reduce": lambda lax: lax.reduce(F, 0., lambda a, b: a + 2 * b, (0,)),
    "reduce_sum": lambda lax: lax.reduce_sum(G, (0,)),
    "reduce_prod": lambda lax: lax.reduce_prod(G, (0,)),
    "reduce_max": lambda lax: lax.reduce_max(G, (0,)),
    "reduce_min": lambda lax: lax.reduce_min(G, (0,)),
    "reduce_and": lambda lax: lax.reduce_and(B, (0,)),
    "reduce_or": lambda lax: lax.reduce_or(B, (0,)),
    "reduce_xor": lambda lax: lax.reduce_xor(I, (0,)),
    "reduce_window": lambda lax: lax.reduce_window(G, 0., lax.add, (2, 1), (1, 1), "VALID"),
    "sort": lambda lax: lax.sort(F[::-1]),
    "sort_key_val": lambda lax: lax.sort_key_val(F[::-1], I),
    "broadcast": lambda lax: lax.broadcast(F, (2,)),
    "broadcast_in_dim": lambda lax: lax.broadcast_in_dim(F, (2, 3), (1,)),
    "broadcast_to_rank": lambda lax: lax.broadcast_to_rank(F, 3),
    "broadcasted_iota": lambda lax: lax.broadcasted_iota(np.int32, (2, 3), 1),
    "iota": lambda lax: lax.iota(np.int32, 5),
    "full": lambda lax: lax.full((2, 2), 3., np.float32),
    "full_like": lambda lax: lax.full_like(F, 2.),
    "empty": lambda lax: lax.empty((2,), np.float32),
    "collapse": lambda lax: lax.collapse(IMG, 1, 3),
    "concatenate": lambda lax: lax.concatenate([F, F], 0),
    "expand_dims": lambda lax: lax.expand_dims(F, (0,)),
    "pad": lambda lax: lax.pad(F, 0., [(1, 2, 1)]),
    "reshape": lambda lax: lax.reshape(G, (4,)),
    "rev": lambda lax: lax.rev(F, (0,)),
    "slice": lambda lax: lax.slice(F, (1,), (3,)),
    "slice_in_dim": lambda lax: lax.slice_in_dim(G, 0, 1, axis=1),
    "index_in_dim": lambda lax: lax.index_in_dim(G, 1, 0),
    "squeeze": lambda lax: lax.squeeze(G[None], (0,)),
    "transpose": lambda lax: lax.transpose(G, (1, 0)),
    "split": lambda lax: lax.split(F, (1, 2)),
    "tile": lambda lax: lax.tile(F, (2,)),
    "stack": lambda lax: lax.stack([F, F], 1),
    "unstack": lambda lax: lax.unstack(G),
    "dynamic_slice": lambda lax: lax.dynamic_slice(F, (1,), (2,)),
    "dynamic_slice_in_dim": lambda lax: lax.dynamic_slice_in_dim(G, 1, 1, 0),
    "dynamic_index_in_dim": lambda lax: lax.dynamic_index_in_dim(G, 1, 0),
    "dynamic_update_slice": lambda lax: lax.dynamic_update_slice(F, UPD, (1,)),
    "dynamic_update_slice_in_dim": lambda lax: lax.dynamic_update_slice_in_dim(G, G[:1], 1, 0),
    "dynamic_update_index_in_dim": lambda lax: lax.dynamic_update_index_in_dim(G, G[0], 1, 0),
    "gather": lambda lax: lax.gather(F, IDX, lax.GatherDimensionNumbers(**DNUMS_G), (1,)),
    "index_take": lambda lax: lax.index_take(G, (np.array([0, 1]), np.array([1, 0])), (0, 1)),
    "scatter": _scatter("scatter"),
    "scatter_add": _scatter("scatter_add"),
    "scatter_sub": _scatter("scatter_sub"),
    "scatter_mul": _scatter("scatter_mul"),
    "scatter_min": _scatter("scatter_min"),
    "scatter_max": _scatter("scatter_max"),
    "scatter_apply": lambda lax: lax.scatter_apply(
        F, IDX, lax.exp, lax.ScatterDimensionNumbers(**DNUMS_S), update_shape=(2,)),
    "dot": lambda lax: lax.dot(G, G),
    "dot_general": lambda lax: lax.dot_general(G, G, (((1,), (0,)), ((), ()))),
    "batch_matmul": lambda lax: lax.batch_matmul(G[None], G[None]),
    "conv": lambda lax: lax.conv(IMG, KER, (1, 1), "VALID"),
    "conv_general_dilated": lambda lax: lax.conv_general_dilated(IMG, KER, (1, 1), "SAME"),
    "conv_with_general_padding": lambda lax: lax.conv_with_general_padding(
        IMG, KER, (1, 1), [(0, 1), (1, 0)], (1, 1), (1, 1)),
    "conv_transpose": lambda lax: lax.conv_transpose(
        IMG, KER, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW")),
    "fft": lambda lax: lax.fft(C, "FFT", (2,)),
    "optimization_barrier": lambda lax: lax.optimization_barrier(F),
})


def count(fun, *args):
    """(first call, repeat call) programs lowered by `fun(*args)`."""
    row = []
    for _ in range(2):
        with programs("lowered") as made:
            jax.block_until_ready(fun(*args))
        row.append(len(made))
    return tuple(row)


def main(names):
    worse = []
    print(f"{'function':30s} minijax  jax")
    for name in names:
        case = CASES.get(name)
        if case is None:
            continue
        mini, real = count(case, minijax.lax), count(case, jax.lax)
        mark = "  <<" if mini[0] > real[0] or mini[1] > real[1] else ""
        print(f"{name:30s} {mini[0]:3d} {mini[1]:2d}  {real[0]:3d} {real[1]:2d}{mark}", flush=True)
        if mark:
            worse.append(name)
    print("minijax makes more programs:", " ".join(worse) or "none")


def _compositions(x, i):
    lax = jax.lax
    return (*lax.split(x, [1, 2]), lax.tile(x, (2,)), lax.stack([x, x], 1),
            lax.reduce_xor(i, (0,)), lax.clz(i), lax.mulhi(i, i), lax.cumlogsumexp(x))


def time_calls():
    from jit_dispatch import _interleaved_min_us
    from minijax.interop import trace_with_jax
    from minijax.transforms.ad_util import eval_jaxpr
    program = trace_with_jax(_compositions)(F, I)
    rows = {name: (lambda c=CASES[name]: c(minijax.lax), lambda c=CASES[name]: c(jax.lax))
            for name in ("approx_min_k", "stack", "index_take", "empty")}
    rows["reduce (one computation)"] = (
        lambda: minijax.lax.reduce(G, 0., _sum_and_product, (1,)),
        lambda: jax.lax.reduce(G, 0., _sum_and_product, (1,)))
    rows["reduce (lambda in the call)"] = (
        lambda: minijax.lax.reduce(G, 0., lambda a, b: a + b + a * b, (1,)),
        lambda: jax.lax.reduce(G, 0., lambda a, b: a + b + a * b, (1,)))
    rows["imported compositions"] = (
        lambda: eval_jaxpr(program.jaxpr, program.consts, [F, I]),
        lambda: _compositions(F, I))
    print(f"{'call':30s} minijax us   jax us   ratio")
    for name, (mini, real) in rows.items():
        number = 5 if "lambda" in name else 200     # JAX compiles on every call
        mini_us, jax_us = _interleaved_min_us(lambda: jax.block_until_ready(mini()),
                                              lambda: jax.block_until_ready(real()),
                                              rounds=10, number=number)
        print(f"{name:30s} {mini_us:9.1f} {jax_us:8.1f} {mini_us / jax_us:7.2f}", flush=True)


def _sum_and_product(a, b):      # associative and commutative, not a lax monoid
    return a + b + a * b


if __name__ == "__main__":
    if "--time" in sys.argv:
        time_calls()
    else:
        main(sys.argv[1:] or sorted(CASES))
