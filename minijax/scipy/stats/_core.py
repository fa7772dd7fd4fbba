"""`mode`, `rankdata` and `sem`: the summary statistics of `jax.scipy.stats`.

`nan_policy` is 'propagate' (NaN in, NaN out) as in JAX; 'omit' is available for
`sem` only and 'raise' nowhere, since whether data hold NaN is not known when tracing."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...frontend.eager_jit import jitted_eagerly
from ...numpy._promotion import (promote_args_inexact, as_operand, shape_of, dtype_of,
                                 canonicalize_axis)

__all__ = ["ModeResult", "mode", "rankdata", "sem"]

_POLICIES = ("propagate", "omit", "raise")


class ModeResult(NamedTuple):
    mode: object
    count: object


def _check_policy(fname, nan_policy):
    if nan_policy not in _POLICIES:
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not "
                                  "implemented")
    if nan_policy == "raise":
        raise NotImplementedError(f"{fname}: nan_policy='raise' needs to know whether the "
                                  "data hold NaN, which a traced (jit) computation cannot; "
                                  f"check for NaN before calling {fname}")


def _same(a, b):
    """Elementwise equality with NaN equal to NaN (as jnp.unique's equal_nan)."""
    return (a == b) | (jnp.isnan(a) & jnp.isnan(b)) if jnp.issubdtype(
        dtype_of(a), jnp.inexact) else a == b


@jitted_eagerly("axis", "nan_policy", "keepdims")
def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most frequent value along `axis` (the smallest of equally frequent ones) and
    its count; NaNs count as one value."""
    x = jnp.atleast_1d(as_operand("mode", a))
    _check_policy("mode", nan_policy)
    shape = shape_of(x)
    if axis is None:
        out_shape = (1,) * len(shape) if keepdims else ()
        x, axis = jnp.ravel(x), 0
    else:
        axis = canonicalize_axis("mode", axis, len(shape))
        out_shape = tuple(1 if i == axis else s for i, s in enumerate(shape)
                          if keepdims or i != axis)
    x = jnp.moveaxis(x, axis, 0)
    n = shape_of(x)[0]
    x = jnp.reshape(x, (n, -1))
    if n == 0:
        nan = jnp.full(out_shape, np.nan, jnp.float32)
        return ModeResult(nan, jnp.zeros(out_shape, jnp.float32))
    s = jnp.sort(x, axis=0)
    counts = jnp.sum(_same(s[:, None, :], s[None, :, :]), axis=1, dtype=jnp.int32)
    first = jnp.argmax(counts, axis=0)
    values = jnp.take_along_axis(s, first[None, :], axis=0)[0]
    return ModeResult(jnp.reshape(values, out_shape), jnp.reshape(jnp.max(counts, axis=0),
                                                                   out_shape))


_METHODS = ("average", "min", "max", "dense", "ordinal")


def _ranks(a, method):
    n = shape_of(a)[0]
    _, order = lax.sort_key_val(a, jnp.arange(n))
    position = jnp.zeros(n, dtype_of(order)).at[order].set(jnp.arange(n))
    if method == "ordinal":
        return (position + 1).astype(jnp.float32)
    s = a[order]
    starts = jnp.concatenate([jnp.array([True]), s[1:] != s[:-1]])
    dense = jnp.cumsum(starts)[position]
    if method == "dense":
        return dense.astype(jnp.float32)
    # bounds[j]: where the j-th group of ties starts in sorted order (n after the last)
    bounds = jnp.nonzero(starts, size=n + 1, fill_value=n)[0].astype(jnp.float32)
    if method == "max":
        return bounds[dense]
    if method == "min":
        return bounds[dense - 1] + 1
    return 0.5 * (bounds[dense] + bounds[dense - 1] + 1)


@jitted_eagerly("method", "axis", "nan_policy")
def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks from 1, ties resolved by `method`; all NaN where the data hold a NaN."""
    a = as_operand("rankdata", a)
    _check_policy("rankdata", nan_policy)
    if method not in _METHODS:
        raise ValueError(f"unknown method '{method}'")
    if axis is not None:
        return jnp.apply_along_axis(rankdata, axis, a, method)
    a = jnp.ravel(a)
    return lax.cond(jnp.any(jnp.isnan(a)), lambda a: jnp.full_like(a, np.nan, jnp.float32),
                    lambda a: _ranks(a, method), a)


@jitted_eagerly("axis", "nan_policy", "keepdims")
def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean: the standard deviation (with `ddof`) over
    sqrt of the number of values ('omit': of the non-NaN values)."""
    b, = promote_args_inexact("sem", a)
    if nan_policy == "propagate":
        size = int(np.prod(shape_of(b))) if axis is None else shape_of(b)[axis]
        return jnp.std(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(size).astype(
            dtype_of(b))
    if nan_policy == "omit":
        count = jnp.sum(~jnp.isnan(b), axis, keepdims=keepdims)
        return jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count).astype(
            dtype_of(b))
    raise ValueError(f"{nan_policy} is not supported")
