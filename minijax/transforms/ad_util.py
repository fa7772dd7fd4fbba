"""Shared vocabulary of automatic differentiation: symbolic zeros and small op helpers.

Read this before `jvp.py` and `transpose.py`.

* `Zero(aval)` is a tangent (or cotangent) that is known to be zero. It is carried
  symbolically, never as an array: most values in a program have no derivative with
  respect to most inputs, and building arrays of zeros for them would double the
  work. A zero becomes an array only when an operation really needs one
  (`instantiate`), e.g. `select_n` choosing between a zero and a non-zero tangent.
* Integer and boolean values have tangents of dtype `float0` (a zero-width dtype,
  as in JAX): they can only ever be zero, so inside minijax they are always `Zero`.
* The op helpers (`add`, `mul`, ...) call `bind` on a primitive directly: the
  transforms sit below `minijax.lax` in the dependency order, and binding directly
  also keeps the traced programs free of convenience conversions.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import tree_util

from ..ir import primitives as P
from ..ir.core import Literal, literal_value
from ..ir.source_info import source_info_from
from ..ir.trace import EvalTrace, bind, aval_of, current_trace
from ..ir.types import ShapedArray, canonical_dtype, float0, is_inexact


class Zero:
    """A symbolic zero tangent or cotangent of type `aval`."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval})"


class SymbolicZero:
    """The user-facing symbolic zero: what a `symbolic_zeros=True` custom rule sees in
    place of a zero tangent or cotangent (and may return for one). Its attributes are
    its tangent type's (`shape`, `dtype`, `ndim`, ...), as in JAX."""

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return "SymbolicZero"

    def __getattr__(self, name):
        if name == "aval":          # not set yet (copying an instance)
            raise AttributeError(name)
        return getattr(self.aval, name)

    @staticmethod
    def from_primal_value(val) -> "SymbolicZero":
        return SymbolicZero(tangent_aval(aval_of(val)))


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """The type of a tangent of a value of type `aval`: the same for inexact dtypes,
    `float0` (same shape) for integers and booleans."""
    if is_inexact(aval.dtype):
        return aval
    return ShapedArray(aval.shape, float0)


def is_differentiable(aval) -> bool:
    return isinstance(aval, ShapedArray) and is_inexact(aval.dtype)


def scalar(value, dtype, weak: bool = False):
    """A rank-0 constant of `dtype`. A weak float32 (complex64) constant is a Python
    float (complex), so that it traces to an inline literal exactly like a scalar the
    user wrote, and stays weak (grad's seed for a weak output, holomorphic or not)."""
    dtype = np.dtype(dtype)
    if weak and dtype == np.float32:
        return float(value)
    if weak and dtype == np.complex64:
        return complex(value)
    return np.asarray(value, dtype)


def const_like(x, value):
    """`value` as a rank-0 constant of `x`'s dtype (binary ops splat rank-0 operands)."""
    aval = aval_of(x)
    return scalar(value, aval.dtype, aval.weak_type)


def zeros(aval):
    """An array of zeros of type `aval`, built in the current trace."""
    if aval.dtype == float0:
        return np.zeros(aval.shape, float0)
    zero = scalar(0, aval.dtype, aval.weak_type)
    if not aval.shape:
        return zero
    return bind(P.broadcast_in_dim_p, zero, shape=aval.shape, broadcast_dimensions=())


def instantiate(t):
    """A tangent as an array: symbolic zeros become real ones."""
    return zeros(t.aval) if type(t) is Zero else t


def add_tangents(a, b):
    """`a + b` where either may be a symbolic zero (both have the same type)."""
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return bind(P.add_p, a, b)


def broadcast_to(x, shape):
    """`x` (rank-0, or already of `shape`) as an array of `shape`."""
    if aval_of(x).shape == tuple(shape):
        return x
    return bind(P.broadcast_in_dim_p, x, shape=tuple(shape), broadcast_dimensions=())


def sum_to_shape(x, shape):
    """Undo the implicit splat of a rank-0 operand: sum `x` down to `shape` (`()`)."""
    x_shape = aval_of(x).shape
    if x_shape == tuple(shape):
        return x
    return bind(P.reduce_sum_p, x, axes=tuple(range(len(x_shape))))


def eval_jaxpr(jaxpr, consts, args) -> list:
    """Run `jaxpr` by binding each equation in the current trace.

    This is how every trace-based pass transforms a jaxpr: evaluate it with the
    pass's tracers as inputs and let `bind` route each equation through the pass."""
    env = {}
    for var, value in zip(jaxpr.constvars, consts):
        env[var] = value
    for var, value in zip(jaxpr.invars, args):
        env[var] = value
    for eqn in jaxpr.eqns:
        inputs = [literal_value(a) if type(a) is Literal else env[a] for a in eqn.inputs]
        with source_info_from(eqn):     # what the pass emits for it is from its line
            outs = current_trace().process_primitive(eqn.primitive, inputs, eqn.params)
        for var, value in zip(eqn.outputs, outs):
            env[var] = value
    return [literal_value(a) if type(a) is Literal else env[a] for a in jaxpr.outvars]


# -- one-line op helpers (each binds one primitive in the current trace) -----------------

def add(x, y): return bind(P.add_p, x, y)
def sub(x, y): return bind(P.sub_p, x, y)
def mul(x, y): return bind(P.mul_p, x, y)
def div(x, y): return bind(P.div_p, x, y)
def neg(x): return bind(P.neg_p, x)
def eq(x, y): return bind(P.eq_p, x, y)


def convert(x, dtype, weak_type: bool = False):
    return bind(P.convert_element_type_p, x, new_dtype=np.dtype(dtype), weak_type=weak_type)


def reduce_sum(x, axes):
    return bind(P.reduce_sum_p, x, axes=tuple(axes))


def broadcast_in_dim(x, shape, dims):
    return bind(P.broadcast_in_dim_p, x, shape=tuple(shape), broadcast_dimensions=tuple(dims))


def transpose(x, permutation):
    permutation = tuple(permutation)
    if permutation == tuple(range(len(permutation))):
        return x
    return bind(P.transpose_p, x, permutation=permutation)


def reshape(x, shape):
    if aval_of(x).shape == tuple(shape):
        return x
    return bind(P.reshape_p, x, new_sizes=tuple(shape), dimensions=None)


def iota(dtype, shape, dimension):
    return bind(P.iota_p, dtype=np.dtype(dtype), shape=tuple(shape), dimension=dimension)


def flat_index_along(indices, axis: int, operand_shape):
    """The position, in an array of `operand_shape` read flat, of each element taken
    along `axis` at `indices` (at its own coordinates along the other axes), shaped
    `indices.shape + (1,)` for `gather_flat`. One index per element in the indices'
    dtype: what a checkpoint that keeps it saves, as JAX's sort and top_k rules save
    (findings F6, F63), not one coordinate per dimension."""
    shape = aval_of(indices).shape
    dtype = aval_of(indices).dtype
    flat, stride = None, 1
    for d in reversed(range(len(shape))):
        if d == axis or shape[d] > 1:      # a size-1 axis's coordinate is 0
            coordinate = indices if d == axis else iota(dtype, shape, d)
            term = coordinate if stride == 1 else mul(coordinate, scalar(stride, dtype))
            flat = term if flat is None else add(flat, term)
        stride *= operand_shape[d]
    return broadcast_in_dim(flat, shape + (1,), tuple(range(len(shape))))


def gather_flat(x, flat_index):
    """`x` read flat at `flat_index` (from `flat_index_along`): one gather."""
    size = aval_of(x).size
    flat = reshape(x, (size,))
    if size == 0:
        # nothing to read, but the gather's slice of size 1 must fit: one padded zero
        flat = bind(P.pad_p, flat, scalar(0, aval_of(x).dtype), padding_config=((0, 1, 0),))
    return bind(P.gather_p, flat, flat_index, offset_dims=(), collapsed_slice_dims=(0,),
                start_index_map=(0,), slice_sizes=(1,), mode="clip")


def take_along_axis(x, indices, axis: int):
    """`x[..., indices, ...]` along `axis` (one gather); `indices` is shaped like `x`
    but for its length along `axis`, which is the result's."""
    return gather_flat(x, flat_index_along(indices, axis, aval_of(x).shape))


def reverse_axes(x, axes):
    """`x` reversed along each of `axes` (the convolution rules flip kernels with this)."""
    axes = tuple(axes)
    return bind(P.rev_p, x, dimensions=axes) if axes else x


def fresh_root():
    """A new root trace. A call body (a jaxpr without constvars) is transformed under
    one, so the result depends on no enclosing trace and can be cached."""
    return EvalTrace()


def as_result(value):
    """A concrete output leaf as JAX hands it back: a `jax.Array`, weakly typed when
    the value is a Python scalar. A function may return its input or a constant (the
    gradient of `lambda x: x` is the seed 1.0 itself), and the caller must still get
    the array JAX would give. Tracers, arrays, float0 zeros and anything that is not
    numeric data (aux objects) pass unchanged."""
    if isinstance(value, (bool, int, float, complex)):
        return jnp.asarray(value)          # a Python scalar stays weak, as in JAX
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype != float0:
        return jnp.asarray(value, dtype=canonical_dtype(value.dtype))
    return value


def as_results(tree):
    """`as_result` on every leaf of `tree`, at the root trace only: under another
    transformation a constant output stays a constant of that trace (a literal in a
    staged program, as JAX prints it)."""
    if not isinstance(current_trace(), EvalTrace):
        return tree
    return tree_util.tree_map(as_result, tree)


def window_inside(indices, operand_shape, slice_sizes, index_axes):
    """bool, one per index vector (the last axis of `indices`): whether its window lies
    inside the operand, the test by which a 'fill' scatter drops and a 'fill' gather
    fills (with `lax.gather`'s `fill_value`, or a cotangent's zero)."""
    index_aval = aval_of(indices)
    # The bounds are built from scalar literals, not a constant array: under remat an
    # array constant of the backward program would count as a saved residual, where
    # JAX's program, which masks a 'fill' gather only when lowering, has none.
    bounds = [operand_shape[a] - slice_sizes[a] for a in index_axes]
    column = index_aval.shape[:-1] + (1,)
    highest = [broadcast_in_dim(scalar(b, index_aval.dtype), column, ()) for b in bounds]
    highest = highest[0] if len(highest) == 1 else bind(P.concatenate_p, *highest,
                                                        dimension=index_aval.ndim - 1)
    ok = bind(P.and_p, bind(P.ge_p, indices, scalar(0, index_aval.dtype)),
              bind(P.le_p, indices, highest))
    return bind(P.reduce_and_p, ok, axes=(index_aval.ndim - 1,))
