"""Every primitive's batching rule against `jax.vmap`, with the batch axis at every
position of every operand and with some operands unbatched.

For each case, all in_axes combinations go into ONE jitted program on each side (so
the suite pays two XLA compiles per case, not two per combination); where many
primitives share one rule, each combination runs a few of them in turn (every primitive
still meets two combinations or more), since XLA's compile time grows with the number
of operations in the program. The oracle is
`jax.vmap` of the primitive's own JAX implementation (the XLA lowering rule), so what
is tested is minijax's batching rule, not its lowering. Every batched jaxpr goes
through the verifier, both from tracing and from `vmap_jaxpr`.
"""
from __future__ import annotations

import collections
import functools
import itertools
import zlib

import jax
import numpy as np
import pytest

import minijax
from minijax.backends.xla import lowering_rules
from minijax.ir.primitives import primitives_by_name
from minijax.ir.trace import bind
from minijax.ir.types import ShapedArray
from minijax.ir.verify import verify_jaxpr
from minijax.transforms.vmap import vmap_rules, vmap_jaxpr

B = 3                    # batch size; per-example axes avoid 3 to catch axis mix-ups
MAX_COMBINATIONS = 8     # beyond this, a covering sample of in_axes combinations


# Operand kinds: how to draw one example's value.
def _draw(rng, shape, kind):
    if kind == "f":                         # safe domain for every float unary op
        return rng.uniform(0.1, 0.9, shape).astype(np.float32)
    if kind == "f>1":
        return rng.uniform(1.1, 2.0, shape).astype(np.float32)
    if kind == "w":                         # whole numbers 2..4 as floats
        return rng.integers(2, 5, shape).astype(np.float32)
    if kind == "n":
        return rng.standard_normal(shape).astype(np.float32)
    if kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(
            np.complex64)
    if kind == "b":
        return rng.random(shape) < 0.5
    if kind.startswith("i"):                # "i5": int32 in [0, 5)
        return rng.integers(0, int(kind[1:]), shape).astype(np.int32)
    if kind.startswith("u"):                # "u5": distinct int32 indices in [0, 5)
        high = int(kind[1:])
        return rng.permutation(high)[:int(np.prod(shape))].reshape(shape).astype(np.int32)
    raise ValueError(kind)


class Case:
    """Primitives sharing one operand signature and params, tested in one program."""

    def __init__(self, prims, operands, id=None, take_turns=0, **params):
        names = [prims] if isinstance(prims, str) else list(prims)
        self.prims = [primitives_by_name[name] for name in names]
        self.operands = operands            # [(per-example shape, kind)]
        self.params = params
        self.id = id or "-".join(names)
        # Primitives sharing one batching rule, many of them or with big lowerings
        # (the special functions expand to long XLA loops, a second of compile each):
        # each in_axes combination runs `take_turns` of them in turn instead of all, so
        # every combination still meets the rule and every primitive meets at least
        # two combinations (asserted). XLA's compile time grows with the operations.
        self.take_turns = take_turns

    def prims_at(self, combination_index):
        """The primitives the `combination_index`-th in_axes combination runs."""
        if not self.take_turns:
            return self.prims
        start = combination_index * self.take_turns
        return [self.prims[(start + k) % len(self.prims)] for k in range(self.take_turns)]

    def minijax_fn(self, *args, prims=None):
        return [bind(prim, *args, **self.params) for prim in prims or self.prims]

    def jax_fn(self, *args, prims=None):
        # Shaped as `minijax_fn`'s results (a single result bare), so that where
        # minijax's batching gives JAX's program exactly, the module texts are equal
        # and the run's compilation cache compiles it once.
        return [_bare(prim, lowering_rules[prim](*args, **self.params))
                for prim in prims or self.prims]


def _bare(prim, outs):
    return outs if prim.multiple_results else outs[0]


def _cases():
    c = []
    unary_kinds = {"acosh": "f>1", "not": "i100", "is_finite": "n", "sign": "n",
                   "abs": "n", "neg": "n", "floor": "n", "ceil": "n", "round": "n"}
    for kind, names in [("f", ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
                                "tanh", "asinh", "atanh", "exp", "exp2", "log", "log2", "log1p",
                                "expm1", "logistic", "sqrt", "rsqrt", "cbrt", "erf",
                                "stop_gradient", "erf_inv"]),
                        ("f>1", ["acosh"]), ("i100", ["not", "population_count"]),
                        ("n", ["floor", "ceil", "neg", "abs", "sign", "square",
                               "one_minus_square", "is_finite"])]:
        c.append(Case(names, [((2, 4), kind)], id=f"unary-{names[0]}",
                      take_turns=16 if len(names) > 16 else 0))
    c.append(Case("sin", [((), "f")], id="sin-rank0"))
    c.append(Case(["lgamma", "digamma", "erfc"], [((2, 4), "f")], id="unary-special"))
    # The binary special functions, each lowered to a long XLA loop, take turns over
    # the in_axes combinations; the first operand is a whole number (polygamma's
    # order, where a fraction gives NaN), the second above 1 (zeta's and
    # random_gamma_grad's domain).
    c.append(Case(["igamma", "igammac", "igamma_grad_a", "polygamma", "zeta",
                   "random_gamma_grad"], [((2, 4), "w"), ((2, 4), "f>1")],
                  id="binary-special", take_turns=1))
    c.append(Case("igamma", [((), "f>1"), ((2, 4), "f")], id="igamma-splat-lhs"))
    c.append(Case(["bessel_i0e", "bessel_i1e"], [((2, 4), "f")], id="unary-bessel"))
    c.append(Case("reduce_precision", [((2, 4), "f")], exponent_bits=5, mantissa_bits=10))
    c.append(Case("regularized_incomplete_beta", [((2, 4), "f>1"), ((), "f>1"),
                                                  ((2, 4), "f")]))
    c.append(Case("round", [((2, 4), "n")], rounding_method=1))
    c.append(Case("integer_pow", [((2, 4), "n")], y=3))
    c.append(Case("convert_element_type", [((2, 4), "n")], new_dtype=np.dtype(np.int32),
                  weak_type=False))
    c.append(Case(["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "eq",
                   "ne", "lt", "le", "gt", "ge"], [((2, 4), "f"), ((2, 4), "f")],
                  id="binary-float", take_turns=5))
    c.append(Case(["and", "or", "xor"], [((2, 4), "i100"), ((2, 4), "i100")],
                  id="binary-int", take_turns=1))
    c.append(Case(["shift_left", "shift_right_logical", "shift_right_arithmetic"],
                  [((2, 4), "i100"), ((2, 4), "i6")], id="binary-shift", take_turns=1))
    c.append(Case("nextafter", [((2, 4), "n"), ((2, 4), "n")]))
    c.append(Case(["real", "imag", "conj"], [((2, 4), "c")], id="unary-complex"))
    c.append(Case("complex", [((2, 4), "n"), ((2, 4), "n")]))
    c.append(Case("add", [((2, 4), "n"), ((), "n")], id="add-splat-rhs"))
    c.append(Case("mul", [((), "n"), ((2, 4), "n")], id="mul-splat-lhs"))
    c.append(Case("sub", [((), "n"), ((), "n")], id="sub-rank0"))
    c.append(Case("select_n", [((2, 4), "b"), ((2, 4), "n"), ((2, 4), "n")]))
    c.append(Case("select_n", [((), "b"), ((2, 4), "n"), ((2, 4), "n")], id="select_n-scalar-pred"))
    c.append(Case("select_n", [((2,), "i3"), ((2,), "n"), ((2,), "n"), ((2,), "n")],
                  id="select_n-int-pred"))
    c.append(Case("select_n", [((), "b"), ((), "n"), ((), "n")], id="select_n-rank0"))
    c.append(Case("clamp", [((), "f"), ((2, 4), "n"), ((), "f")]))
    c.append(Case("clamp", [((2, 4), "n"), ((2, 4), "n"), ((2, 4), "f")], id="clamp-full"))
    # shapes
    c.append(Case("broadcast_in_dim", [((2, 4), "n")], shape=(2, 5, 4),
                  broadcast_dimensions=(0, 2)))
    c.append(Case("broadcast_in_dim", [((1, 4), "n")], shape=(2, 4),
                  broadcast_dimensions=(0, 1), id="broadcast_in_dim-size1"))
    c.append(Case("broadcast_in_dim", [((), "n")], shape=(2, 4), broadcast_dimensions=(),
                  id="broadcast_in_dim-scalar"))
    c.append(Case("reshape", [((2, 4, 5), "n")], new_sizes=(8, 5), dimensions=None))
    c.append(Case("reshape", [((2, 4), "n")], new_sizes=(4, 2), dimensions=None,
                  id="reshape-2d"))
    c.append(Case("reshape", [((), "n")], new_sizes=(1, 1), dimensions=None,
                  id="reshape-scalar"))
    c.append(Case("transpose", [((2, 4, 5), "n")], permutation=(2, 0, 1)))
    c.append(Case("squeeze", [((2, 1, 4), "n")], dimensions=(1,)))
    c.append(Case("rev", [((2, 4, 5), "n")], dimensions=(0, 2)))
    c.append(Case("expand_dims", [((2, 4), "n")], dimensions=(0, 2)))
    c.append(Case("expand_dims", [((2, 4), "n")], dimensions=(2,), id="expand_dims-last"))
    c.append(Case("expand_dims", [((), "n")], dimensions=(0,), id="expand_dims-scalar"))
    c.append(Case("concatenate", [((2, 4), "n"), ((5, 4), "n")], dimension=0))
    c.append(Case("concatenate", [((2, 1), "n"), ((2, 4), "n"), ((2, 2), "n")],
                  dimension=1, id="concatenate-3"))
    c.append(Case("pad", [((2, 4), "n"), ((), "n")],
                  padding_config=((1, 2, 1), (0, -1, 0))))
    c.append(Case("slice", [((5, 6), "n")], start_indices=(1, 0), limit_indices=(5, 6),
                  strides=(2, 4)))
    c.append(Case("slice", [((5, 6), "n")], start_indices=(1, 2), limit_indices=(4, 6),
                  strides=None, id="slice-unit"))
    c.append(Case("dynamic_slice", [((5, 6), "n"), ((), "i6"), ((), "i6")],
                  slice_sizes=(2, 4)))
    c.append(Case("dynamic_update_slice", [((5, 6), "n"), ((2, 4), "n"), ((), "i6"),
                                           ((), "i6")]))
    # reductions, scans, contractions, sorting
    c.append(Case(["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"],
                  [((2, 4, 5), "f")], axes=(0, 2)))
    c.append(Case(["reduce_and", "reduce_or"], [((2, 4, 5), "b")], axes=(0, 2)))
    c.append(Case("reduce_sum", [((2, 4), "n")], axes=(1,), id="reduce_sum-last"))
    c.append(Case(["argmax", "argmin"], [((2, 4, 5), "n")], axes=(1,),
                  index_dtype=np.dtype(np.int32)))
    c.append(Case(["cumsum", "cumprod", "cummax", "cummin"], [((2, 4), "f")], axis=1,
                  reverse=False))
    c.append(Case("cumsum", [((4, 2), "n")], axis=0, reverse=True, id="cumsum-reverse"))
    mm = (((1,), (0,)), ((), ()))
    c.append(Case("dot_general", [((2, 4), "n"), ((4, 5), "n")], dimension_numbers=mm,
                  precision=None, preferred_element_type=None))
    c.append(Case("dot_general", [((2, 4, 5), "n"), ((2, 5, 6), "n")],
                  dimension_numbers=(((2,), (1,)), ((0,), (0,))), precision=None,
                  preferred_element_type=None, id="dot_general-batched"))
    c.append(Case("dot_general", [((4, 2), "n"), ((4, 5), "n")],
                  dimension_numbers=(((0,), (0,)), ((), ())), precision=None,
                  preferred_element_type=None, id="dot_general-contract-first"))
    c.append(Case("dot_general", [((4,), "n"), ((4,), "n")],
                  dimension_numbers=(((0,), (0,)), ((), ())), precision=None,
                  preferred_element_type=None, id="dot_general-vector"))
    c.append(Case("sort", [((4, 5), "n")], dimension=0, is_stable=True, num_keys=1))
    c.append(Case("sort", [((4, 5), "n"), ((4, 5), "i100")], dimension=1, is_stable=True,
                  num_keys=1, id="sort-key-val"))
    # indexing
    c.append(Case("gather", [((5, 4), "n"), ((2, 1), "i5")], offset_dims=(1,),
                  collapsed_slice_dims=(0,), start_index_map=(0,), slice_sizes=(1, 4),
                  mode="clip", id="gather-rows"))
    c.append(Case("gather", [((4, 5), "n"), ((2, 6, 2), "i4")], offset_dims=(),
                  collapsed_slice_dims=(0, 1), start_index_map=(0, 1), slice_sizes=(1, 1),
                  mode="clip", id="gather-points"))
    c.append(Case("gather", [((5, 6), "n"), ((4, 1), "i8")], offset_dims=(1, 2),
                  collapsed_slice_dims=(), start_index_map=(1,), slice_sizes=(5, 2),
                  mode="fill", id="gather-windows-fill"))
    c.append(Case("gather", [((5, 6), "n"), ((1,), "i5")], offset_dims=(0,),
                  collapsed_slice_dims=(1,), start_index_map=(1,), slice_sizes=(5, 1),
                  mode="clip", id="gather-column"))
    c.append(Case(["scatter_add", "scatter", "scatter_mul", "scatter_min", "scatter_max"],
                  [((5, 4), "n"), ((2, 1), "u5"), ((2, 4), "n")],
                  update_window_dims=(1,), inserted_window_dims=(0,),
                  scatter_dims_to_operand_dims=(0,), mode="fill", id="scatter-rows",
                  take_turns=2))
    c.append(Case(["scatter_add", "scatter_mul", "scatter_max"],
                  [((4, 5), "n"), ((2, 2, 2), "i5"), ((2, 2), "n")],
                  update_window_dims=(), inserted_window_dims=(0, 1),
                  scatter_dims_to_operand_dims=(0, 1), mode="clip", id="scatter_add-points",
                  take_turns=1))
    c.append(Case("scatter", [((5, 6), "n"), ((1,), "i6"), ((5,), "n")],
                  update_window_dims=(0,), inserted_window_dims=(1,),
                  scatter_dims_to_operand_dims=(1,), mode="fill", id="scatter-column"))
    # windows (rules in window_rules.py): the batch axis at every position of each operand
    c.append(Case("conv_general_dilated", [((2, 4, 5), "n"), ((6, 2, 2), "n")],
                  window_strides=(2,), padding=((1, 0),), lhs_dilation=(1,),
                  rhs_dilation=(2,), dimension_numbers=((0, 1, 2), (0, 1, 2), (0, 1, 2)),
                  feature_group_count=2, batch_group_count=1, precision=None,
                  preferred_element_type=None, id="conv-feature-groups"))
    c.append(Case("conv_general_dilated", [((4, 5, 2), "n"), ((2, 2, 6), "n")],
                  window_strides=(1,), padding=((0, 1),), lhs_dilation=(2,),
                  rhs_dilation=(1,), dimension_numbers=((0, 2, 1), (2, 1, 0), (1, 2, 0)),
                  feature_group_count=1, batch_group_count=2, precision=None,
                  preferred_element_type=None, id="conv-batch-groups"))
    c.append(Case(["reduce_window_sum", "reduce_window_max", "reduce_window_min"],
                  [((4, 5), "n")], window_dimensions=(2, 3), window_strides=(1, 2),
                  padding=((1, 0), (1, 1)), base_dilation=(1, 2), window_dilation=(2, 1)))
    return c


CASES = _cases()
# Ref primitives get their batching rules in a later issue. `custom_lin` (a
# custom_vjp's linear map) only lives between linearize and transpose, where forward
# evaluation is an error anyway, so batching it is not supported.
_NO_RULE_YET = {"new_ref", "empty_ref", "get", "swap", "addupdate", "freeze", "free_ref",
                "custom_lin"}
# Rules in vmap.py / vmap_rules.py tested outside this file: test_vmap.py (jit),
# test_vmap_ad.py (custom calls); iota is never batched.
_TESTED_ELSEWHERE = {"iota", "jit", "custom_jvp_call", "custom_vjp_call"}


def _axis_combinations(case, rng):
    """in_axes combinations: all of them when few; else a sample in which every
    operand is batched at every position and is unbatched at least once, and which
    is large enough for each primitive taking turns to meet two combinations."""
    options = [[None] + list(range(len(shape) + 1)) for shape, _ in case.operands]
    every = [c for c in itertools.product(*options) if any(a is not None for a in c)]
    needed = -(-2 * len(case.prims) // case.take_turns) if case.take_turns else 0
    if len(every) <= max(MAX_COMBINATIONS, needed):
        return every
    chosen = {tuple(0 for _ in options)}
    for i, opts in enumerate(options):
        for position in opts:
            combo = [opts_j[rng.integers(len(opts_j))] for opts_j in options]
            combo[i] = position
            if all(a is None for a in combo):
                combo[(i + 1) % len(options)] = 0
            chosen.add(tuple(combo))
    rest = [c for c in every if c not in chosen]
    while len(chosen) < needed:
        chosen.add(rest.pop(rng.integers(len(rest))))
    return sorted(chosen, key=str)


def _batched_args(case, combo, rng):
    args = []
    for (shape, kind), axis in zip(case.operands, combo):
        if axis is None:
            args.append(_draw(rng, shape, kind))
        else:
            args.append(np.stack([_draw(rng, shape, kind) for _ in range(B)], axis=axis))
    return args


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_batching_rule_matches_jax(case):
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    combos = _axis_combinations(case, rng)
    arg_sets = [_batched_args(case, combo, rng) for combo in combos]
    flat = [a for args in arg_sets for a in args]
    n = len(case.operands)

    if case.take_turns:     # every primitive meets at least two combinations
        met = collections.Counter(p for i in range(len(combos)) for p in case.prims_at(i))
        assert all(met[prim] >= 2 for prim in case.prims), (case.id, len(combos), met)

    def program(vmap, fn):
        def run(*flat_args):
            return [vmap(functools.partial(fn, prims=case.prims_at(i)), in_axes=combo)(
                        *flat_args[i * n:(i + 1) * n])
                    for i, combo in enumerate(combos)]
        return run

    ours = minijax.jit(program(minijax.vmap, case.minijax_fn))(*flat)
    theirs = jax.jit(program(jax.vmap, case.jax_fn))(*flat)
    for combo, a, b in zip(combos, ours, theirs):
        a, b = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
        for x, y in zip(a, b):
            assert x.shape == y.shape and x.dtype == y.dtype, (combo, x.shape, y.shape)
            np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=2e-6, atol=2e-6,
                                       err_msg=f"in_axes={combo}")
    # The traced program and vmap_jaxpr's output both verify.
    verify_jaxpr(minijax.make_jaxpr(program(minijax.vmap, case.minijax_fn))(*flat))
    avals = [ShapedArray(shape, _draw(rng, (), kind).dtype) for shape, kind in case.operands]
    unbatched = minijax.make_jaxpr(case.minijax_fn)(*[np.zeros(a.shape, a.dtype) for a in avals])
    for combo in combos[:4]:
        batched = vmap_jaxpr(unbatched, combo, B)
        verify_jaxpr(batched.jaxpr)


def test_every_primitive_has_a_rule_and_a_case():
    """Every primitive has a batching rule; every rule written in vmap.py or
    vmap_rules.py has a case here. (Control flow, remat and the like register their
    rules next to their other passes and test them there.)"""
    tested = {prim.name for case in CASES for prim in case.prims} | _TESTED_ELSEWHERE
    ours = ("minijax.transforms.vmap", "minijax.transforms.vmap_rules")
    for name, prim in primitives_by_name.items():
        if name in _NO_RULE_YET:
            continue
        assert prim in vmap_rules, f"no batching rule for {name}"
        if vmap_rules[prim].__module__ in ours:
            assert name in tested, f"no batching test case for {name}"


def test_out_of_bounds_dynamic_starts_clamp_like_jax():
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    starts = np.array([0, 3, 4, 9], np.int32)    # 4 and 9 are clamped to fit
    ours = minijax.vmap(lambda i: minijax.lax.dynamic_slice(x, (i, i), (2, 2)))(starts)
    theirs = jax.vmap(lambda i: jax.lax.dynamic_slice(x, (i, i), (2, 2)))(starts)
    np.testing.assert_array_equal(ours, theirs)
    upd = np.ones((2, 2), np.float32)
    ours = minijax.vmap(lambda i: minijax.lax.dynamic_update_slice(x, upd, (i, i)))(starts)
    theirs = jax.vmap(lambda i: jax.lax.dynamic_update_slice(x, upd, (i, i)))(starts)
    np.testing.assert_array_equal(ours, theirs)


def test_batched_start_on_a_full_size_axis_is_ignored_like_jax():
    # A window as large as its axis always starts at 0, whatever the batched index.
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    starts = np.array([0, 3, 4, 9], np.int32)

    def slices(lax):
        return lambda i, j: lax.dynamic_slice(x, (i, j), (2, 6))

    def updates(lax):
        return lambda i, j: lax.dynamic_update_slice(x, np.ones((5, 2), np.float32), (i, j))
    for program in (slices, updates):
        for in_axes in [(0, None), (None, 0), (0, 0)]:
            args = [starts if axis == 0 else np.int32(2) for axis in in_axes]
            ours = minijax.vmap(program(minijax.lax), in_axes)(*args)
            theirs = jax.vmap(program(jax.lax), in_axes)(*args)
            np.testing.assert_array_equal(ours, theirs)
