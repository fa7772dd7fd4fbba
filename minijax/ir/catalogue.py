"""The op catalogue, continued: reductions, contractions, indexing, sorting, refs, calls.

Read `primitives.py` first: it defines `Primitive`, the rule tables and the
elementwise and shape ops. Params here are chosen so that the text form can print and
parse them: ints, bools, strings, dtypes, None, tuples of those, and sub-jaxprs.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from .core import (ReadEffect, WriteEffect, AccumEffect, AllocEffect, Jaxpr,
                   REF_EFFECT_TYPES)
from .types import ShapedArray, RefType, is_integer, is_bool, is_complex, is_float
from .registry import Primitive, type_rules, effect_rules, _array, _check_axes, _fail
from .ref_indexing import RefIndexer, indexer_shape

__all__ = [
    "reduce_sum_p", "reduce_max_p", "reduce_min_p", "reduce_prod_p", "reduce_and_p",
    "reduce_or_p", "argmax_p", "argmin_p", "dot_general_p", "iota_p", "cumsum_p",
    "cumprod_p", "cummax_p", "cummin_p", "sort_p", "gather_p", "scatter_p",
    "scatter_add_p", "scatter_mul_p", "scatter_min_p", "scatter_max_p", "new_ref_p", "empty_ref_p", "get_p", "swap_p", "addupdate_p",
    "freeze_p", "free_ref_p", "jit_p", "GATHER_MODES",
]


# -- reductions -----------------------------------------------------------------------

def _reduction(name, accepts):
    prim = Primitive(name)

    def rule(x, *, axes):
        _array(name, x)
        _check_axes(name, axes, x.ndim)
        if not accepts(x.dtype):
            _fail(name, f"does not accept dtype {x.dtype.name}")
        return [x.update(shape=tuple(n for i, n in enumerate(x.shape) if i not in axes))]
    type_rules[prim] = rule
    return prim


reduce_sum_p = _reduction("reduce_sum", lambda d: not is_bool(d))
reduce_prod_p = _reduction("reduce_prod", lambda d: not is_bool(d))
reduce_max_p = _reduction("reduce_max", lambda d: True)
reduce_min_p = _reduction("reduce_min", lambda d: True)
reduce_and_p = _reduction("reduce_and", lambda d: is_bool(d) or is_integer(d))
reduce_or_p = _reduction("reduce_or", lambda d: is_bool(d) or is_integer(d))


def _arg_reduction(name):
    prim = Primitive(name)

    def rule(x, *, axes, index_dtype):
        _array(name, x)
        if len(axes) != 1:
            _fail(name, f"reduces exactly one axis, got axes={axes}")
        _check_axes(name, axes, x.ndim)
        if x.shape[axes[0]] == 0:
            _fail(name, f"cannot reduce the empty axis {axes[0]} of {x}")
        if not is_integer(index_dtype):
            _fail(name, f"index_dtype must be an integer dtype, got {index_dtype}")
        return [ShapedArray(tuple(n for i, n in enumerate(x.shape) if i not in axes),
                            index_dtype)]
    type_rules[prim] = rule
    return prim


argmax_p = _arg_reduction("argmax")
argmin_p = _arg_reduction("argmin")


# -- contraction ----------------------------------------------------------------------

dot_general_p = Primitive("dot_general")


def _dot_general_rule(lhs, rhs, *, dimension_numbers, precision=None,
                      preferred_element_type=None):
    _array("dot_general", lhs, "lhs")
    _array("dot_general", rhs, "rhs")
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    if len(lhs_contract) != len(rhs_contract) or len(lhs_batch) != len(rhs_batch):
        _fail("dot_general", f"dimension_numbers {dimension_numbers} pair unequal counts")
    _check_axes("dot_general", tuple(lhs_contract) + tuple(lhs_batch), lhs.ndim)
    _check_axes("dot_general", tuple(rhs_contract) + tuple(rhs_batch), rhs.ndim)
    for a, b in zip(tuple(lhs_contract) + tuple(lhs_batch),
                    tuple(rhs_contract) + tuple(rhs_batch)):
        if lhs.shape[a] != rhs.shape[b]:
            _fail("dot_general", f"lhs axis {a} (size {lhs.shape[a]}) does not match rhs "
                  f"axis {b} (size {rhs.shape[b]}) in {lhs} . {rhs}")
    batch = [lhs.shape[a] for a in lhs_batch]
    lhs_free = [n for i, n in enumerate(lhs.shape)
                if i not in lhs_contract and i not in lhs_batch]
    rhs_free = [n for i, n in enumerate(rhs.shape)
                if i not in rhs_contract and i not in rhs_batch]
    dtype = dot_general_result_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    return [ShapedArray(batch + lhs_free + rhs_free, dtype,
                        lhs.weak_type and rhs.weak_type)]


type_rules[dot_general_p] = _dot_general_rule


def _contraction_rank(dtype) -> tuple:
    """XLA's order of operand dtypes for a contraction (`HigherPrecisionType`):
    complex over real, then the wider exponent range, the longer mantissa, more bits,
    signed over unsigned."""
    real = np.dtype(dtype)
    if is_complex(real):
        real = np.dtype(np.float64 if real == np.complex128 else np.float32)
    bits = 1 if is_bool(real) else real.itemsize * 8
    if is_float(real):
        info = ml_dtypes.finfo(real)
        return (is_complex(dtype), info.maxexp, info.nmant, bits, True)
    return (is_complex(dtype), -1, -1, bits, real.kind != "u")


def dot_general_result_dtype(lhs_dtype, rhs_dtype, preferred_element_type=None):
    """`dot_general`'s result dtype: the operand dtype XLA ranks higher (operands may
    differ, as in JAX: f32 . bf16 is f32), or `preferred_element_type`, which may not
    narrow a result that is not a real float (JAX's and XLA's check)."""
    lhs_rank, rhs_rank = _contraction_rank(lhs_dtype), _contraction_rank(rhs_dtype)
    if lhs_rank == rhs_rank and lhs_dtype != rhs_dtype:
        _fail("dot_general", f"operand dtypes {np.dtype(lhs_dtype).name} and "
              f"{np.dtype(rhs_dtype).name} have no common contraction type")
    result = lhs_dtype if lhs_rank >= rhs_rank else rhs_dtype
    if preferred_element_type is None or preferred_element_type == result:
        return result
    if not is_float(result) and (
            _contraction_rank(preferred_element_type)[3] < _contraction_rank(result)[3]):
        _fail("dot_general", f"preferred_element_type {np.dtype(preferred_element_type).name}"
              f" must not be narrower than the result type {np.dtype(result).name}")
    return preferred_element_type


# -- creation and scans -------------------------------------------------------------------

iota_p = Primitive("iota")


def _iota_rule(*, dtype, shape, dimension):
    if not 0 <= dimension < len(shape):
        _fail("iota", f"dimension {dimension} out of range for shape {tuple(shape)}")
    return [ShapedArray(shape, dtype)]


type_rules[iota_p] = _iota_rule


def _cumulative(name, accepts):
    prim = Primitive(name)

    def rule(x, *, axis, reverse=False):
        _array(name, x)
        _check_axes(name, (axis,), x.ndim)
        if not accepts(x.dtype):
            _fail(name, f"does not accept dtype {x.dtype.name}")
        return [x]
    type_rules[prim] = rule
    return prim


cumsum_p = _cumulative("cumsum", lambda d: not is_bool(d))
cumprod_p = _cumulative("cumprod", lambda d: not is_bool(d))
cummax_p = _cumulative("cummax", lambda d: not is_bool(d))
cummin_p = _cumulative("cummin", lambda d: not is_bool(d))

sort_p = Primitive("sort", multiple_results=True)


def _sort_rule(*operands, dimension, is_stable=True, num_keys=1):
    if not operands:
        _fail("sort", "needs at least one operand")
    for x in operands:
        _array("sort", x)
        if x.shape != operands[0].shape:
            _fail("sort", "operands must have equal shapes, got "
                  + ", ".join(str(o) for o in operands))
    _check_axes("sort", (dimension,), operands[0].ndim)
    if not 1 <= num_keys <= len(operands):
        _fail("sort", f"num_keys={num_keys} but {len(operands)} operands")
    return list(operands)


type_rules[sort_p] = _sort_rule


# -- gather and scatter ---------------------------------------------------------------------
#
# These follow XLA's dimension numbers (see `jax.lax.gather`), flattened into plain
# params so the text form stays simple. The last axis of `indices` is the index
# vector. `mode` is 'clip' (indices clamped into bounds, as JAX clamps NumPy-style
# indexing) or 'fill' (out-of-bounds gathers give `fill_value`-style zeros/NaN and
# out-of-bounds scatters are dropped).

GATHER_MODES = ("clip", "fill")
gather_p = Primitive("gather")


def _check_index_array(name, indices, index_vector_size):
    if not isinstance(indices, ShapedArray) or not is_integer(indices.dtype) or indices.ndim < 1:
        _fail(name, f"indices must be an integer array with an index-vector axis, got "
              f"{indices}")
    if indices.shape[-1] != index_vector_size:
        _fail(name, f"the last axis of indices {indices} must have size {index_vector_size}")


def _gather_rule(operand, indices, *, offset_dims, collapsed_slice_dims, start_index_map,
                 slice_sizes, mode="clip"):
    _array("gather", operand)
    _check_index_array("gather", indices, len(start_index_map))
    if mode not in GATHER_MODES:
        _fail("gather", f"mode must be one of {GATHER_MODES}, got {mode!r}")
    if len(slice_sizes) != operand.ndim or any(
            not 0 <= s <= n for s, n in zip(slice_sizes, operand.shape)):
        _fail("gather", f"slice_sizes {tuple(slice_sizes)} do not fit {operand}")
    _check_axes("gather", tuple(collapsed_slice_dims), operand.ndim)
    _check_axes("gather", tuple(start_index_map), operand.ndim)
    if any(slice_sizes[d] != 1 for d in collapsed_slice_dims):
        _fail("gather", "collapsed slice dims must have slice size 1")
    offset_sizes = [s for i, s in enumerate(slice_sizes) if i not in collapsed_slice_dims]
    out_ndim = indices.ndim - 1 + len(offset_sizes)
    if len(offset_dims) != len(offset_sizes):
        _fail("gather", f"offset_dims {tuple(offset_dims)} must name {len(offset_sizes)} axes")
    _check_axes("gather", tuple(offset_dims), out_ndim)
    batch_sizes = iter(indices.shape[:-1])
    offsets = iter(offset_sizes)
    shape = [next(offsets) if i in offset_dims else next(batch_sizes) for i in range(out_ndim)]
    return [operand.update(shape=shape)]


type_rules[gather_p] = _gather_rule


def _scatter(name):
    prim = Primitive(name)

    def rule(operand, indices, updates, *, update_window_dims, inserted_window_dims,
             scatter_dims_to_operand_dims, mode="fill"):
        _array(name, operand)
        _array(name, updates, "updates")
        _check_index_array(name, indices, len(scatter_dims_to_operand_dims))
        if updates.dtype != operand.dtype:
            _fail(name, f"updates {updates} must have the dtype of the operand {operand}")
        if name in ("scatter_add", "scatter_mul") and is_bool(operand.dtype):
            # as JAX's add and mul, which refuse bool (XLA would take them as or / and)
            _fail(name, f"does not accept the bool operand {operand}")
        if mode not in GATHER_MODES:
            _fail(name, f"mode must be one of {GATHER_MODES}, got {mode!r}")
        _check_axes(name, tuple(inserted_window_dims), operand.ndim)
        _check_axes(name, tuple(update_window_dims), updates.ndim)
        window_rank = operand.ndim - len(inserted_window_dims)
        if len(update_window_dims) != window_rank:
            _fail(name, f"update_window_dims {tuple(update_window_dims)} must name "
                  f"{window_rank} axes of the updates")
        scatter_rank = updates.ndim - len(update_window_dims)
        if scatter_rank != indices.ndim - 1:
            _fail(name, f"updates {updates} do not match indices {indices}")
        return [operand]
    type_rules[prim] = rule
    return prim


scatter_p = _scatter("scatter")
scatter_add_p = _scatter("scatter_add")
# The combining scatters of `x.at[i].multiply/min/max`: repeated indices combine all
# their updates (in an unspecified order, which only matters for rounding).
scatter_mul_p = _scatter("scatter_mul")
scatter_min_p = _scatter("scatter_min")
scatter_max_p = _scatter("scatter_max")


# -- refs -------------------------------------------------------------------------------
#
# A ref op names its ref as input 0 and records the matching effect; `visible_effects`
# in core.py turns those into the effects a whole jaxpr has on the refs it receives.
# get/swap/addupdate take an optional static `indexer` param (ref_indexing.py): absent,
# they touch the whole ref; present, its dynamic index inputs follow the ref and value.

def _ref(name, aval):
    if not isinstance(aval, RefType):
        _fail(name, f"expected a Ref, got {aval}")
    return aval.inner


def _place(name, ref, dynamic, indexer) -> ShapedArray:
    """The type of the part of `ref` that `indexer` picks out."""
    inner = _ref(name, ref)
    if indexer is None:
        if dynamic:
            _fail(name, f"{len(dynamic)} dynamic index inputs but no indexer")
        return inner
    if not isinstance(indexer, RefIndexer):
        _fail(name, f"indexer must be a RefIndexer, got {indexer!r}")
    try:
        return inner.update(shape=indexer_shape(inner.shape, indexer, dynamic))
    except ValueError as e:
        _fail(name, str(e))


def _value_for(name, place, value):
    _array(name, value, "value")
    if value.shape != place.shape or value.dtype != place.dtype:
        _fail(name, f"value {value} does not match the indexed ref contents {place}")


def _new_ref_rule(x):
    if isinstance(x, RefType):
        _fail("new_ref", f"cannot make a ref of a ref ({x}); a ref holds an array")
    _array("new_ref", x)
    return [RefType(x.strip_weak_type())]


new_ref_p = Primitive("new_ref", allocates_ref=True)
type_rules[new_ref_p] = _new_ref_rule
effect_rules[new_ref_p] = lambda x: frozenset({AllocEffect()})

empty_ref_p = Primitive("empty_ref", allocates_ref=True)
type_rules[empty_ref_p] = lambda *, shape, dtype: [RefType(ShapedArray(shape, dtype))]
effect_rules[empty_ref_p] = lambda **params: frozenset({AllocEffect()})

get_p = Primitive("get", ref_op=True)
type_rules[get_p] = lambda ref, *dynamic, indexer=None: [
    _place("get", ref, dynamic, indexer)]
effect_rules[get_p] = lambda ref, *dynamic, indexer=None: frozenset({ReadEffect(0)})

swap_p = Primitive("swap", ref_op=True)


def _swap_rule(ref, value, *dynamic, indexer=None):
    place = _place("swap", ref, dynamic, indexer)
    _value_for("swap", place, value)
    return [place]


type_rules[swap_p] = _swap_rule
effect_rules[swap_p] = lambda ref, value, *dynamic, indexer=None: frozenset({WriteEffect(0)})

addupdate_p = Primitive("addupdate", multiple_results=True, ref_op=True)


def _addupdate_rule(ref, value, *dynamic, indexer=None):
    place = _place("addupdate", ref, dynamic, indexer)
    _value_for("addupdate", place, value)
    if isinstance(value, ShapedArray) and is_bool(value.dtype):
        _fail("addupdate", "cannot accumulate into a bool ref")
    return []


type_rules[addupdate_p] = _addupdate_rule
effect_rules[addupdate_p] = lambda ref, value, *dynamic, indexer=None: frozenset(
    {AccumEffect(0)})

freeze_p = Primitive("freeze", ref_op=True)
type_rules[freeze_p] = lambda ref: [_ref("freeze", ref)]
effect_rules[freeze_p] = lambda ref: frozenset({ReadEffect(0)})

free_ref_p = Primitive("free_ref", multiple_results=True, ref_op=True)


def _free_ref_rule(ref):
    _ref("free_ref", ref)
    return []


type_rules[free_ref_p] = _free_ref_rule
effect_rules[free_ref_p] = lambda ref: frozenset({WriteEffect(0)})


# -- calls ----------------------------------------------------------------------------

# Params: `jaxpr` (the body, its constants passed as leading inputs), `name` (the
# function's), and optionally `inline=True` -- JAX's `jit(..., inline=True)`, which
# `minijax.numpy`'s jitted functions use: a staging trace that meets such a call
# records the body's equations in place of the call (`ir/staging.py`), while eager
# evaluation and the transformations treat it as any call. Absent means False.
jit_p = Primitive("jit", multiple_results=True, has_ref_effects_of_body=True,
                  dce_keeps_effects=True)


def _jit_rule(*in_avals, jaxpr: Jaxpr, name: str, inline: bool = False):
    if not isinstance(jaxpr, Jaxpr) or jaxpr.constvars:
        _fail("jit", "the jaxpr param must be a Jaxpr with its constants passed as inputs")
    if type(inline) is not bool:
        _fail("jit", f"the inline param must be True or False, got {inline!r}")
    expected = jaxpr.in_avals
    if len(in_avals) != len(expected) or any(
            a.strip_weak_type() != b.strip_weak_type() if isinstance(a, ShapedArray)
            and isinstance(b, ShapedArray) else a != b for a, b in zip(in_avals, expected)):
        _fail("jit", f"{name} expects inputs ({', '.join(map(str, expected))}) but got "
              f"({', '.join(map(str, in_avals))})")
    return jaxpr.out_avals


def _call_effects(*in_avals, jaxpr: Jaxpr, **params):
    """A call has the effects of its body, on the inputs it passes in."""
    effects = set()
    for effect in jaxpr.effects:
        if isinstance(effect, REF_EFFECT_TYPES):
            effects.add(type(effect)(effect.input_index))
        else:
            effects.add(effect)
    return frozenset(effects)


type_rules[jit_p] = _jit_rule
effect_rules[jit_p] = _call_effects
