"""Assorted small jnp names: the array-API products `vecdot`/`matvec`/`vecmat`,
`cumulative_sum`/`cumulative_prod`, the tests `array_equiv`, `iscomplex`,
`isreal`, `isrealobj`, `isscalar`, `iterable`; `gradient`, `vander`, the window
functions (`bartlett`, `blackman`, `hamming`, `hanning`, `kaiser`), `mask_indices`,
`einsum_path`, `packbits`/`unpackbits`; and NumPy's I/O and printing helpers, re-exported as JAX does
(`load` returns a jax.Array, `save`/`savez`/`printoptions`/... are NumPy's own).

The products are `vectorize`d `dot`/`matmul` with gufunc signatures, so they
broadcast over leading axes like their array-API definitions say.
"""
from __future__ import annotations

import numpy as np
import opt_einsum

from .. import lax
from ..ir.trace import Tracer
from ._creation import arange, asarray, ones, zeros
from ._complex import conjugate, imag, iscomplexobj
from ..frontend.eager_jit import jitted_eagerly
from ._extras import array_equal
from ._setops import true_positions
from ._functional import vectorize
from ._linalg import dot, matmul
from ._math_more import i0
from ._promotion import (as_operand, shape_of, dtype_of, convert, canonicalize_axes,
                         promote_dtypes_inexact, static_int, like)
from . import _reductions as R
from . import _ufuncs as U
from ._shape import broadcast_arrays, concatenate, moveaxis, reshape

__all__ = ["vecdot", "matvec", "vecmat", "cumulative_sum", "cumulative_prod",
           "array_equiv", "iscomplex", "isreal", "isrealobj", "isscalar", "iterable",
           "gradient", "vander", "bartlett", "blackman", "hamming", "hanning", "kaiser",
           "mask_indices", "einsum_path", "load", "save", "savez", "frombuffer",
           "fromstring", "printoptions", "get_printoptions", "set_printoptions",
           "array_repr", "array_str", "ComplexWarning", "packbits", "unpackbits"]

# NumPy's own, as in JAX: they print, store or warn and compute nothing.
save, savez = np.save, np.savez
printoptions, get_printoptions, set_printoptions = (np.printoptions, np.get_printoptions,
                                                    np.set_printoptions)
array_repr, array_str = np.array_repr, np.array_str
ComplexWarning = np.exceptions.ComplexWarning


def load(file, *args, **kwargs):
    """`numpy.load`, with an array result as a jax.Array."""
    out = np.load(file, *args, **kwargs)
    return asarray(out) if isinstance(out, np.ndarray) else out


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    return asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


# -- array-API products ---------------------------------------------------------------------

def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """`sum(conj(x1) * x2)` along `axis`, broadcasting the other axes."""
    x1, x2 = as_operand("vecdot", x1), as_operand("vecdot", x2, 1)
    if shape_of(x1)[axis] != shape_of(x2)[axis]:
        raise ValueError(f"vecdot: axes must match; got shapes {shape_of(x1)} and "
                         f"{shape_of(x2)} with axis={axis}")
    def product(u, w):
        return dot(conjugate(u), w, precision=precision,
                   preferred_element_type=preferred_element_type)
    return vectorize(product, signature="(n),(n)->()")(moveaxis(x1, axis, -1),
                                                       moveaxis(x2, axis, -1))


@jitted_eagerly()
def matvec(x1, x2, /):
    """Matrix times vector, broadcast over the leading axes."""
    return vectorize(matmul, signature="(n,m),(m)->(n)")(x1, x2)


@jitted_eagerly()
def vecmat(x1, x2, /):
    """Conjugated vector times matrix, broadcast over the leading axes."""
    return vectorize(lambda v, m: matmul(conjugate(v), m), signature="(n),(n,m)->(m)")(x1, x2)


# -- cumulative_* ---------------------------------------------------------------------------

def _cumulative(fname, scan, identity):
    def fn(x, /, *, axis=None, dtype=None, include_initial=False):
        x = as_operand(fname, x)
        ndim = len(shape_of(x))
        if ndim == 0:
            raise ValueError(f"{fname}: the input must be non-scalar, got a scalar")
        if axis is None:
            if ndim > 1:
                raise ValueError(f"{fname}: the input array has rank {ndim}, but axis was "
                                 f"not given; it is optional only for 1-d arrays")
            axis = 0
        if dtype is None:
            # Unlike cumsum, narrow integers (and bools) accumulate in 32 bits, as JAX.
            kind, size = dtype_of(x).kind, dtype_of(x).itemsize
            if kind == "b" or (kind == "i" and size < 4):
                dtype = np.int32
            elif kind == "u" and size < 4:
                dtype = np.uint32
        out = scan(x, axis=axis, dtype=dtype)
        if include_initial:
            axis = canonicalize_axes(fname, axis, ndim)[0]
            shape = list(shape_of(x))
            shape[axis] = 1
            first = U.add(zeros(shape, dtype_of(out)), identity) if identity else \
                zeros(shape, dtype_of(out))
            out = concatenate([convert(fname, first, dtype_of(out)), out], axis=axis)
        return out
    fn.__name__ = fname
    fn.__doc__ = (f"`jnp.{fname}`: `{scan.__name__}` along `axis` (required beyond 1-d); "
                  f"`include_initial` prepends {identity}.")
    return fn


cumulative_sum = _cumulative("cumulative_sum", R.cumsum, 0)
cumulative_prod = _cumulative("cumulative_prod", R.cumprod, 1)


# -- tests ----------------------------------------------------------------------------------

def array_equiv(a1, a2):
    """Whether the arrays broadcast together and are equal elementwise."""
    a1, a2 = as_operand("array_equiv", a1), as_operand("array_equiv", a2, 1)
    try:
        a1, a2 = broadcast_arrays(a1, a2)
    except ValueError:
        return asarray(False)
    return array_equal(a1, a2)


@jitted_eagerly()
def iscomplex(x):
    """Elementwise: whether the imaginary part is nonzero."""
    i = imag(as_operand("iscomplex", x))
    return lax.ne(i, like(i, 0))     # weak when `x` is, as JAX's


@jitted_eagerly()
def isreal(x):
    """Elementwise: whether the imaginary part is zero."""
    i = imag(as_operand("isreal", x))
    return lax.eq(i, like(i, 0))


def isrealobj(x) -> bool:
    return not iscomplexobj(x)


def isscalar(element) -> bool:
    """True for Python and NumPy scalars and, unlike NumPy, for 0-d arrays (as JAX)."""
    if isinstance(element, (np.ndarray, Tracer)) or hasattr(element, "__jax_array__") or \
            type(element).__name__ == "ArrayImpl":
        return len(np.shape(element)) == 0 if not isinstance(element, Tracer) \
            else not shape_of(element)
    return bool(np.isscalar(element))


iterable = np.iterable


# -- numerical helpers ----------------------------------------------------------------------

@jitted_eagerly("axis", "edge_order")
def gradient(f, *varargs, axis=None, edge_order=None):
    """Central differences inside, one-sided at the two ends, along each axis; the
    spacing is a scalar or the coordinates (1-d) per axis."""
    if edge_order is not None:
        raise NotImplementedError("gradient: the edge_order argument is not supported "
                                  "(as in JAX)")
    # the spacings join f's promotion, as in JAX: an int f with a Python float spacing
    # is a weak float, a float16 f with int coordinates stays float16
    f, *varargs = promote_dtypes_inexact("gradient", as_operand("gradient", f),
                                         *(as_operand("gradient", h) for h in varargs))
    shape = shape_of(f)
    axes = canonicalize_axes("gradient", axis, len(shape))
    if not axes:
        return []
    if min(shape[a] for a in axes) < 2:
        raise ValueError("gradient: shape of array too small to calculate a numerical "
                         "gradient, at least 2 elements are required")
    if not varargs:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError(f"gradient: invalid number of spacing arguments: {len(varargs)} "
                        f"for {len(axes)} axes")
    out = [_gradient_along(f, h, a) for a, h in zip(axes, spacings)]
    return out[0] if len(axes) == 1 else out


def _gradient_along(f, h, axis):
    n = shape_of(f)[axis]

    def part(start, stop):
        return lax.slice_in_dim(f, start, stop, axis=axis)
    first = U.subtract(part(1, 2), part(0, 1))
    last = U.subtract(part(n - 1, n), part(n - 2, n - 1))
    h = as_operand("gradient", h)
    if not shape_of(h):
        inner = U.true_divide(U.multiply(U.subtract(part(2, n), part(0, n - 2)), 0.5), h)
        first, last = U.true_divide(first, h), U.true_divide(last, h)
    elif len(shape_of(h)) == 1:
        if shape_of(h)[0] != n:
            raise ValueError("gradient: the spacing must be either a scalar or an array "
                             "of the same length as the axis")
        shape = [1] * len(shape_of(f))
        shape[axis] = n
        x = reshape(h, shape)

        def at(start, stop):
            return lax.slice_in_dim(x, start, stop, axis=axis)
        first = U.true_divide(first, U.subtract(at(1, 2), at(0, 1)))
        last = U.true_divide(last, U.subtract(at(n - 1, n), at(n - 2, n - 1)))
        # Second-order differences on an uneven grid: weights of the three neighbours.
        d1, d2 = U.subtract(at(1, n - 1), at(0, n - 2)), U.subtract(at(2, n), at(1, n - 1))
        w_before = U.true_divide(U.negative(d2), U.multiply(d1, U.add(d1, d2)))
        w_mid = U.true_divide(U.subtract(d2, d1), U.multiply(d1, d2))
        w_after = U.true_divide(d1, U.multiply(d2, U.add(d1, d2)))
        inner = U.add(U.add(U.multiply(w_before, part(0, n - 2)),
                            U.multiply(w_mid, part(1, n - 1))),
                      U.multiply(w_after, part(2, n)))
    else:
        raise ValueError("gradient: spacing arrays must be 1-d arrays or scalars")
    return concatenate([first, inner, last], axis=axis)


@jitted_eagerly("N", "increasing")
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of 1-d x: columns x**(N-1), ..., x**0 (or increasing)."""
    x = as_operand("vander", x)
    if len(shape_of(x)) != 1:
        raise ValueError(f"vander: x must be a one-dimensional array, got shape "
                         f"{shape_of(x)}")
    n = shape_of(x)[0] if N is None else static_int("vander", N, "N")
    if n < 0:
        raise ValueError("vander: N must be nonnegative")
    powers = lax.iota(dtype_of(x), n)
    if not increasing:
        powers = lax.rev(powers, (0,))
    return U.power(reshape(x, (-1, 1)), reshape(powers, (1, -1)))


def _window(fname, formula):
    def fn(M):
        m = static_int(fname, M, "M")
        if m <= 1:
            return ones((max(m, 0),), np.float32)
        return formula(arange(m, dtype=np.float32), m)
    fn.__name__ = fname
    fn.__doc__ = f"NumPy's `{fname}` window of M points (float32)."
    return fn


def _cosine_terms(*coefficients):
    def formula(n, m):
        out = None
        for k, c in enumerate(coefficients):
            term = (asarray(np.float32(c)) if k == 0 else
                    U.multiply(c, U.cos(U.true_divide(U.multiply(2 * k * np.pi, n), m - 1))))
            out = term if out is None else U.add(out, term)
        return out
    return formula


hamming = _window("hamming", _cosine_terms(0.54, -0.46))
hanning = _window("hanning", _cosine_terms(0.5, -0.5))
blackman = _window("blackman", _cosine_terms(0.42, -0.5, 0.08))
bartlett = _window("bartlett", lambda n, m: U.subtract(
    1, U.absolute(U.true_divide(U.subtract(U.multiply(2, n), m - 1), m - 1))))


def kaiser(M, beta):
    """NumPy's Kaiser window of M points: i0(beta sqrt(1 - ((n - a) / a)^2)) / i0(beta)
    with a = (M - 1) / 2; `beta` may be traced."""
    beta, = promote_dtypes_inexact("kaiser", beta)
    return _window("kaiser", lambda n, m: U.true_divide(
        i0(U.multiply(beta, U.sqrt(U.subtract(
            1, U.square(U.true_divide(U.subtract(n, (m - 1) / 2), (m - 1) / 2)))))),
        i0(beta)))(M)


def mask_indices(n, mask_func, k=0, *, size=None):
    """The (row, column) indices where `mask_func(ones((n, n)), k)` is nonzero."""
    n = static_int("mask_indices", n, "n")
    mask = mask_func(ones((n, n), np.int32), k)
    if size is None:
        if isinstance(mask, Tracer):
            mask = mask._concrete_or_raise("mask_indices (pass a static size= under jit)")
        rows, cols = np.nonzero(np.asarray(mask))
        return asarray(rows.astype(np.int32)), asarray(cols.astype(np.int32))
    flat = U.not_equal(reshape(mask, (-1,)), 0)
    positions, valid = true_positions("mask_indices", flat, size)
    positions = U.where(valid, positions, 0)  # padding: index 0, as jnp.nonzero's
    return U.floor_divide(positions, n), U.remainder(positions, n)


def einsum_path(subscripts, *operands, optimize="greedy"):
    """The contraction order `einsum` would use (opt_einsum's `contract_path`, on the
    operands' shapes, as JAX does)."""
    shapes = [shape_of(as_operand("einsum_path", o)) for o in operands]
    return opt_einsum.contract_path(subscripts, *shapes, shapes=True, einsum_call=False,
                                    use_blas=True, optimize=optimize)


# -- bits -----------------------------------------------------------------------------------

def _bit_shifts(bitorder):
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    shifts = np.arange(8, dtype=np.uint8)
    return asarray(shifts[::-1] if bitorder == "big" else shifts)


@jitted_eagerly("axis", "bitorder")
def packbits(a, axis=None, bitorder="big"):
    """Each run of 8 truth values along `axis` (zero-padded) packed into a uint8."""
    a = as_operand("packbits", a)
    kind = dtype_of(a).kind
    if kind not in "biu":
        raise TypeError("packbits: expected an input array of integer or boolean data type")
    shifts = _bit_shifts(bitorder)
    bits = convert("packbits", U.not_equal(a, 0), np.uint8)
    if axis is None:
        bits, axis = reshape(bits, (-1,)), 0
    bits = moveaxis(bits, axis, -1)
    shape = shape_of(bits)
    extra = -shape[-1] % 8
    if extra:
        bits = lax.pad(bits, asarray(np.uint8(0)),
                       [(0, 0, 0)] * (len(shape) - 1) + [(0, extra, 0)])
    bits = reshape(bits, shape[:-1] + ((shape[-1] + extra) // 8, 8))
    packed = R.sum(U.left_shift(bits, shifts), axis=-1, dtype=np.uint8)
    return moveaxis(packed, -1, axis)


@jitted_eagerly("axis", "count", "bitorder")
def unpackbits(a, axis=None, count=None, bitorder="big"):
    """Each uint8 along `axis` unpacked into its 8 bits (uint8 0/1); `count` keeps
    that many (or pads with zeros)."""
    a = as_operand("unpackbits", a)
    if dtype_of(a) != np.uint8:
        raise TypeError("unpackbits: expected an input array of unsigned byte data type")
    shifts = _bit_shifts(bitorder)
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    a = moveaxis(a, axis, -1)
    bits = U.bitwise_and(U.right_shift(a[..., None], shifts), np.uint8(1))
    bits = reshape(bits, shape_of(bits)[:-2] + (-1,))
    if count is not None:
        count = static_int("unpackbits", count, "count")
        n = shape_of(bits)[-1]
        if count > n:
            bits = lax.pad(bits, asarray(np.uint8(0)),
                           [(0, 0, 0)] * (len(shape_of(bits)) - 1) + [(0, count - n, 0)])
        else:
            bits = bits[..., :count]
    return moveaxis(bits, -1, axis)
