"""`jnp.ufunc` objects: `jnp.add.reduce`, `jnp.multiply.outer`, `jnp.add.at`, ...

In JAX `jnp.add` is not a function but an instance of the class `jnp.ufunc`, which
wraps the elementwise function and adds NumPy's ufunc methods: `outer`, `reduce`,
`accumulate`, `at` and `reduceat`. This module builds the same class and the same
instances (their `nin`, `nout` and `identity` are JAX's).

A method uses the instance's own implementation where JAX gives it one (`add.reduce`
is `sum`, `add.accumulate` is `cumsum`, `add.at` is a scatter-add, `maximum.reduce`
is `max`, `logaddexp.reduce` is a log-sum-exp, ...), so a program traces to the
primitives JAX's does. Otherwise it takes JAX's generic path: `reduce` is a
`fori_loop` over the axis, `accumulate` and `at` are `scan`s, `reduceat` is a
`fori_loop` of masked updates, `outer` is two nested `vmap`s. User ufuncs
(`frompyfunc`) always take the generic paths, and their call is the function
`vectorize`d.

Calling an instance runs the eager frame of the elementwise function of `_ufuncs.py`
with `out` and `where` added (`jitted_eagerly`'s `frame_refusing`): `__call__` is a
property that hands Python that frame, so `jnp.add(x, y)` costs the one Python frame
the function does (a method frame in front of it cost 3-9% of the call). minijax's
own modules keep calling the functions, not the instances.
"""
from __future__ import annotations

import inspect
import math
import operator

import jax
import numpy as np

from .. import lax
from ..frontend.control_flow import fori_loop, scan
from ..frontend.eager_jit import jitted_eagerly
from ..frontend.tracing import eval_shape
from ..frontend.vmap import vmap
from . import _extras, _math_more, _reductions as R, _ufuncs as U
from ._creation import asarray
from ._functional import vectorize
from ._promotion import (as_operand, shape_of, dtype_of, is_weak, is_bool, is_integer,
                         is_complex, canonicalize_axis, canonicalize_axes, convert,
                         broadcast_shapes, broadcast_to_shape, promote_args_inexact)
from ._shape import moveaxis
from ._take import take

_AT_INPLACE = ("JAX arrays are immutable, so jnp.ufunc.at() cannot update its operand "
               "in place as numpy.ufunc.at() does: pass inplace=False and use the "
               "array it returns, e.g. x = jnp.add.at(x, idx, vals, inplace=False).")


def _arraylike(fname, *values):
    """JAX's `check_arraylike`: a list or another non-array raises TypeError."""
    for value in values:
        as_operand(fname, value)


class ufunc:
    """NumPy's universal function, on minijax values: an elementwise function of
    `nin` operands with the methods `outer`, `reduce`, `accumulate`, `at` and
    `reduceat`. Most programs use the instances (`jnp.add`, `jnp.maximum`, ...);
    `jnp.frompyfunc` makes one of a scalar function."""

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None,
                 call=None, reduce=None, accumulate=None, at=None, reduceat=None):
        self.__doc__ = func.__doc__
        self.__name__ = name or func.__name__
        self._func = func
        self._nin = operator.index(nin)
        self._nout = operator.index(nout)
        self._nargs = operator.index(nargs or nin)
        self._identity = identity
        # What a call of the instance runs (`__call__` below): for a user ufunc, the
        # function vectorized.
        call = call or _vectorized(func)
        frame_refusing = getattr(call, "frame_refusing", None)
        self._call = (frame_refusing(("out", "where"), self._refuse) if frame_refusing
                      else self._calling(call))
        self.__signature__ = _CALL_SIGNATURE       # (`inspect` reads it off the instance)
        if hasattr(call, "eager_jit"):    # its compiled program, for tests
            self.eager_jit = call.eager_jit
        self._overrides = {"reduce": reduce, "accumulate": accumulate, "at": at,
                           "reduceat": reduceat}

    nin = property(lambda self: self._nin)
    nout = property(lambda self: self._nout)
    nargs = property(lambda self: self._nargs)
    identity = property(lambda self: self._identity)

    def _key(self):
        return (self._func, self.__name__, self._identity, self._nin, self._nout,
                self._nargs)

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    # A C-level descriptor: `jnp.add(x, y)` runs `_call` with no Python method frame.
    __call__ = property(operator.attrgetter("_call"))

    def _calling(self, call):
        """The instance's call for a function with no `frame_refusing`."""
        def call_with(*args, out=None, where=None):
            if out is None and where is None:
                return call(*args)
            return self._refuse(*args, out=out, where=where)
        call_with.__name__ = call_with.__qualname__ = self.__name__
        return call_with

    def _refuse(self, *args, out=None, where=None):
        """A call with `out` or `where`, which JAX's ufuncs do not implement."""
        _arraylike(self.__name__, *args)
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        raise NotImplementedError(f"where argument of {self}")

    def _binary_only(self, method):
        if self._nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self._nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single "
                             f"value")

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
               where=None):
        """`a` reduced with this binary function along `axis` (None: all axes)."""
        fname = f"{self.__name__}.reduce"
        _arraylike(fname, a)
        self._binary_only("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {fname}()")
        if initial is not None:
            _arraylike(fname, initial)
        if where is not None:
            _arraylike(fname, where)
            if self._identity is None and initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an "
                                 f"identity, so to use a where mask one has to specify "
                                 f"'initial'.")
            if not is_bool(dtype_of(where)):
                raise ValueError(f"where argument must have dtype=bool; got "
                                 f"dtype={dtype_of(where)}")
        own = self._overrides["reduce"]
        if own is not None:
            return own(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                       where=where)
        return _reduce_via_loop(a, initial, where, ufunc=self, axis=_hashable(axis),
                                dtype=dtype, keepdims=keepdims)

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """The running reduction along `axis` (`add.accumulate` is `cumsum`)."""
        self._binary_only("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        own = self._overrides["accumulate"]
        if own is not None:
            return own(a, axis=axis, dtype=dtype)
        _arraylike(f"{self.__name__}.accumulate", a)
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("accumulate does not allow multiple axes")
        return _accumulate_via_scan(a, ufunc=self, axis=axis, dtype=dtype)

    def at(self, a, indices, b=None, /, *, inplace=True):
        """`a` with the function applied at `indices` (with `b`'s values for a binary
        ufunc), each time an index repeats; returns the new array (inplace=False)."""
        if inplace:
            raise NotImplementedError(_AT_INPLACE)
        own = self._overrides["at"] or self._at_via_scan
        return own(a, indices) if b is None else own(a, indices, b)

    def _at_via_scan(self, a, indices, *args):
        fname = f"{self.__name__}.at"
        _arraylike(fname, a, *args)
        dtype = eval_shape(self._func, *map(_one, (a, *args))).dtype
        a = asarray(a).astype(dtype)
        args = tuple(asarray(arg).astype(dtype) for arg in args)
        indices = _index_tuple(fname, indices)
        if not indices:
            return a
        shapes = [shape_of(i) for i in indices if not isinstance(i, slice)]
        shape = shapes and broadcast_shapes(fname, *shapes)
        if not shape:
            return a.at[indices].set(self(a.at[indices].get(), *args))
        count = math.prod(shape)
        if args:
            rest = shape_of(args[0])[len(shape):]
            args = (lax.reshape(broadcast_to_shape(fname, args[0], (*shape, *rest)),
                                (count, *rest)),)
        indices = [i if isinstance(i, slice)
                   else lax.reshape(broadcast_to_shape(fname, as_operand(fname, i), shape),
                                    (count,))
                   for i in indices]

        def step(carry, _):
            i, a = carry
            idx = tuple(ind if isinstance(ind, slice) else ind[i] for ind in indices)
            a = a.at[idx].set(self(a.at[idx].get(), *(arg[i] for arg in args)))
            return (i + 1, a), None
        (_, out), _ = scan(step, (0, a), None, count)
        return out

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """Reductions of the slices of `a` between consecutive `indices` along `axis`."""
        self._binary_only("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        own = self._overrides["reduceat"]
        if own is not None:
            return own(a, indices, axis=axis, dtype=dtype)
        fname = f"{self.__name__}.reduceat"
        _arraylike(fname, a, indices)
        if not shape_of(a):
            raise ValueError(f"reduceat: a must have 1 or more dimension, got "
                             f"a.shape={shape_of(a)}")
        if len(shape_of(indices)) != 1:
            raise ValueError(f"reduceat: indices must be one-dimensional, got "
                             f"indices.shape={shape_of(indices)}")
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        return _reduceat_via_loop(a, indices, ufunc=self, axis=axis, dtype=dtype)

    def outer(self, A, B, /):
        """The function of every pair: shape `A.shape + B.shape`."""
        self._binary_only("outer")
        _arraylike(f"{self.__name__}.outer", A, B)
        return _outer(A, B, ufunc=self)


def _hashable(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _one(x):
    """A scalar of x's type, to find a function's result type by tracing."""
    return jax.ShapeDtypeStruct((), dtype_of(x), weak_type=is_weak(x))


def _index_tuple(fname, indices):
    if isinstance(indices, list):
        raise TypeError(f"{fname}: using a non-tuple sequence for multidimensional "
                        f"indexing is not allowed; use arr[array(seq)] instead of "
                        f"arr[seq]")
    return indices if isinstance(indices, tuple) else (indices,)


def _call_signature(*args, out=None, where=None):
    pass


_CALL_SIGNATURE = inspect.signature(_call_signature)


def _vectorized(func):
    """A user ufunc's call: `func` vectorized, one compiled program eagerly (JAX's
    is a `jax.jit` of it too)."""
    body = vectorize(func)

    def call(*args):
        return body(*args)
    call.__name__ = getattr(func, "__name__", "ufunc")
    return jitted_eagerly()(call)


# -- the generic paths (JAX's for a user ufunc), each one compiled program eagerly --------

@jitted_eagerly("ufunc", "axis", "dtype", "keepdims")
def _reduce_via_loop(arr, initial, where, *, ufunc, axis, dtype, keepdims):
    arr = asarray(arr)
    if initial is None:
        initial = ufunc.identity
    if dtype is None:
        dtype = eval_shape(ufunc._func, _one(arr), _one(arr)).dtype
    shape = shape_of(arr)
    if where is not None:
        where = broadcast_to_shape("reduce", as_operand("reduce", where), shape)
    if isinstance(axis, tuple):
        canonicalize_axes(f"{ufunc.__name__}.reduce", axis, len(shape))
        raise NotImplementedError("tuple of axes")
    if axis is None:
        final_shape = (1,) * len(shape) if keepdims else ()
        arr = arr.ravel()
        where = None if where is None else where.ravel()
        axis = 0
    else:
        axis = canonicalize_axis(f"{ufunc.__name__}.reduce", axis, len(shape))
        final_shape = (*shape[:axis], *((1,) if keepdims else ()), *shape[axis + 1:])
    if axis != 0:
        arr = moveaxis(arr, axis, 0)
        where = None if where is None else moveaxis(where, axis, 0)
    if shape_of(arr)[0] == 0:
        if initial is None:
            raise ValueError(f"zero-size array to reduction operation {ufunc.__name__} "
                             f"which has no identity")
        return lax.full(final_shape, initial, dtype)

    def body(i, val):
        new = ufunc(val, arr[i].astype(dtype))
        return new if where is None else U.where(where[i], new, val)
    if initial is None:
        start, value = 1, arr[0]
    else:
        start, value = 0, initial
    value = broadcast_to_shape("reduce", asarray(value).astype(dtype), shape_of(arr)[1:])
    result = fori_loop(start, shape_of(arr)[0], body, value)
    return result.reshape(final_shape) if keepdims else result


@jitted_eagerly("ufunc", "axis", "dtype")
def _accumulate_via_scan(arr, *, ufunc, axis, dtype):
    arr = asarray(arr)
    if dtype is None:
        dtype = eval_shape(ufunc._func, _one(arr), _one(arr)).dtype
    axis = canonicalize_axis(f"{ufunc.__name__}.accumulate", axis, len(shape_of(arr)))
    if math.prod(shape_of(arr)) == 0:
        return lax.full(shape_of(arr), 0, dtype)
    arr = moveaxis(arr, axis, 0)

    def step(carry, _):
        i, x = carry
        y = U.where(i == 0, arr[0].astype(dtype), ufunc(x.astype(dtype), arr[i].astype(dtype)))
        return (i + 1, y), y
    _, result = scan(step, (0, arr[0].astype(dtype)), None, length=shape_of(arr)[0])
    return moveaxis(result, 0, axis)


@jitted_eagerly("ufunc", "axis", "dtype")
def _reduceat_via_loop(a, indices, *, ufunc, axis, dtype):
    a = asarray(a)
    indices = as_operand(f"{ufunc.__name__}.reduceat", indices)
    if dtype is not None:
        a = a.astype(dtype)
    ndim = len(shape_of(a))
    axis = canonicalize_axis(f"{ufunc.__name__}.reduceat", axis, ndim)
    out = take(a, indices, axis=axis)
    others = [d for d in range(ndim) if d != axis]
    bounds = lax.expand_dims(_extras.append(indices, shape_of(a)[axis]), others)
    starts = lax.slice_in_dim(bounds, 0, shape_of(bounds)[axis] - 1, axis=axis)
    ends = lax.slice_in_dim(bounds, 1, shape_of(bounds)[axis], axis=axis)

    def body(i, out):
        inside = U.logical_and(U.greater(i, starts), U.less(i, ends))
        return U.where(inside, ufunc(out, take(a, lax.expand_dims(i, (0,)), axis=axis)),
                       out)
    return fori_loop(0, shape_of(a)[axis], body, out)


@jitted_eagerly("ufunc")
def _outer(A, B, *, ufunc):
    A, B = as_operand("outer", A), as_operand("outer", B, 1)
    flat = [lax.reshape(x, (math.prod(shape_of(x)),)) for x in (A, B)]
    result = vmap(vmap(ufunc, (None, 0)), (0, None))(*flat)
    return result.reshape(*shape_of(A), *shape_of(B))


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A `jnp.ufunc` of a scalar function of `nin` arguments returning `nout` values;
    its call is `vectorize(func)` and its methods take the generic paths."""
    return ufunc(func, nin, nout, identity=identity)


# -- JAX's own implementations for its instances ---------------------------------------

def _reduction(fn):
    """Call a jnp reduction with keyword statics, and initial/where only when given
    (so the common eager call stays on the reduction's fast path)."""
    def reduce(a, *, axis, dtype, keepdims, initial, where):
        extra = {k: v for k, v in (("initial", initial), ("where", where)) if v is not None}
        return fn(a, axis=_hashable(axis), dtype=dtype, keepdims=keepdims, **extra)
    return reduce


def _extremum(fn):
    def reduce(a, *, axis, dtype, keepdims, initial, where):
        if dtype is not None:
            a = asarray(a).astype(dtype)
        extra = {k: v for k, v in (("initial", initial), ("where", where)) if v is not None}
        return fn(a, axis=_hashable(axis), keepdims=keepdims, **extra)
    return reduce


def _bits_reduction(fname, reducer, identity, logical):
    """`bitwise_*.reduce` (integer or bool operands) and `logical_*.reduce` (operands
    as truth values; JAX takes a complex number's real part)."""
    @jitted_eagerly("axis", "dtype", "keepdims")
    def reduce(a, axis=None, dtype=None, keepdims=False, initial=None, where=None):
        a = as_operand(fname, a)
        if logical:
            if is_complex(dtype_of(a)):
                a = lax.real(a)
            a = convert(fname, a, np.bool_)
        elif not (is_integer(dtype_of(a)) or is_bool(dtype_of(a))):
            raise ValueError(f"integer argument required; got dtype={dtype_of(a)}")
        out_dtype = np.dtype(dtype) if dtype is not None else dtype_of(a)
        unit = np.array(identity).astype(out_dtype)
        return R._reduce(fname, reducer, a, axis, dtype, keepdims, initial,
                         _BITWISE[reducer], widen=False, where=where, identity=unit)
    reduce.__name__ = fname
    return _reduction(reduce)


_BITWISE = {lax.reduce_and: lax.bitwise_and, lax.reduce_or: lax.bitwise_or,
            lax.reduce_xor: lax.bitwise_xor}


@jitted_eagerly("axis", "dtype", "keepdims")
def _logsumexp(a, axis=None, dtype=None, keepdims=False, initial=None, where=None):
    # JAX's `logaddexp.reduce` ignores `dtype`; so does this.
    a, = promote_args_inexact("logsumexp", a)
    ndim = len(shape_of(a))
    axes = canonicalize_axes("logsumexp", axis, ndim)
    extra = {} if where is None else {"where": where}
    amax = R.max(lax.real(a) if is_complex(dtype_of(a)) else a, axis=axes,
                 keepdims=keepdims, initial=-np.inf, **extra)
    amax = lax.stop_gradient(U.where(lax.is_finite(amax), amax, lax.full_like(amax, 0)))
    amax_dims = amax if keepdims else lax.expand_dims(amax, axes)
    amax_dims = broadcast_to_shape("logsumexp", convert("logsumexp", amax_dims, dtype_of(a)),
                                   shape_of(a))
    exp_a = lax.exp(lax.sub(a, amax_dims))
    sumexp = R.sum(exp_a, axis=axes, keepdims=keepdims, **extra)
    result = lax.add(lax.log(sumexp), convert("logsumexp", amax, dtype_of(sumexp)))
    return result if initial is None else _extras.logaddexp(initial, result)


@jitted_eagerly("axis", "dtype", "keepdims")
def _logsumexp2(a, axis=None, dtype=None, keepdims=False, initial=None, where=None):
    ln2 = float(np.log(2))
    _arraylike("logsumexp2", a)
    if initial is not None:
        initial = U.multiply(initial, ln2)
    return U.true_divide(_logsumexp(U.multiply(a, ln2), axis=axis, dtype=dtype,
                                    keepdims=keepdims, initial=initial, where=where), ln2)


def _as_int32_at(kind):
    """`add.at`/`multiply.at`: a scatter of that kind; bools count as int32 0/1."""
    def at(a, indices, b):
        a = asarray(a)
        if is_bool(dtype_of(a)):
            a = a.astype(np.int32)
            b = convert(f"{kind}.at", as_operand(f"{kind}.at", b), np.bool_).astype(np.int32)
            return getattr(a.at[indices], kind)(b).astype(np.bool_)
        return getattr(a.at[indices], kind)(b)
    return at


def _subtract_at(a, indices, b):
    return asarray(a).at[indices].subtract(b)


def _binary_ufunc(func, identity, reduce=None, accumulate=None, at=None):
    return ufunc(func, nin=2, nout=1, call=func, identity=identity, reduce=reduce,
                 accumulate=accumulate, at=at)


add = _binary_ufunc(U.add, 0, _reduction(R.sum),
                    lambda a, *, axis, dtype: R.cumsum(a, axis=axis, dtype=dtype),
                    _as_int32_at("add"))
multiply = _binary_ufunc(U.multiply, 1, _reduction(R.prod),
                         lambda a, *, axis, dtype: R.cumprod(a, axis=axis, dtype=dtype),
                         _as_int32_at("multiply"))
subtract = _binary_ufunc(U.subtract, None, at=_subtract_at)
negative = ufunc(U.negative, nin=1, nout=1, call=U.negative)
maximum = _binary_ufunc(U.maximum, None, _extremum(R.max))
minimum = _binary_ufunc(U.minimum, None, _extremum(R.min))
bitwise_and = _binary_ufunc(U.bitwise_and, -1, _bits_reduction(
    "reduce_bitwise_and", lax.reduce_and, -1, logical=False))
bitwise_or = _binary_ufunc(U.bitwise_or, 0, _bits_reduction(
    "reduce_bitwise_or", lax.reduce_or, 0, logical=False))
bitwise_xor = _binary_ufunc(U.bitwise_xor, 0, _bits_reduction(
    "reduce_bitwise_xor", lax.reduce_xor, 0, logical=False))
logical_and = _binary_ufunc(U.logical_and, True, _bits_reduction(
    "reduce_logical_and", lax.reduce_and, True, logical=True))
logical_or = _binary_ufunc(U.logical_or, False, _bits_reduction(
    "reduce_logical_or", lax.reduce_or, False, logical=True))
logical_xor = _binary_ufunc(U.logical_xor, False, _bits_reduction(
    "reduce_logical_xor", lax.reduce_xor, False, logical=True))
logaddexp = _binary_ufunc(_extras.logaddexp, -np.inf, _reduction(_logsumexp))
logaddexp2 = _binary_ufunc(_math_more.logaddexp2, -np.inf, _reduction(_logsumexp2))


def from_dlpack(x, /, *, device=None, copy=None):
    """An array sharing (or, with copy=True, copying) the memory of an object that
    implements the DLPack protocol (`__dlpack__`), as `jax.numpy.from_dlpack`."""
    return jax.dlpack.from_dlpack(x, device=device, copy=copy)


__all__ = ["ufunc", "frompyfunc", "from_dlpack", "add", "multiply",
           "subtract", "negative", "maximum", "minimum", "bitwise_and", "bitwise_or",
           "bitwise_xor", "logical_and", "logical_or", "logical_xor", "logaddexp",
           "logaddexp2"]
