"""`minijax.numpy`: the NumPy API on minijax values, with JAX's semantics.

`import minijax.numpy as jnp` gives what a JAX user expects of `jax.numpy`: float32
by default (x64 off), JAX's promotion lattice with weakly typed Python scalars,
NumPy broadcasting, axes (negative, tuples, keepdims), and results that are
`jax.Array`s eagerly and tracers under `minijax.jit` and the other transformations.
Every function is built from `minijax.lax`, so it works under every transformation.

Read in this order:
  _dtypes.py          dtype names (`jnp.float32`) and dtype queries
  _promotion.py       promotion, weak types and broadcasting: every function starts here
  _creation.py        asarray, zeros/ones/full, arange, linspace, eye
  _ufuncs.py          elementwise arithmetic, comparisons, logic, math
  _reductions.py      sum, mean, max, argmax, cumsum, ...
  _shape.py           reshape, transpose, concatenate, split, flip, roll, ...
  _pad.py             pad, in every mode
  _linalg.py          matmul, dot, tensordot, einsum
  _sorting.py         sort, argsort, searchsorted, nonzero
  _indexing.py        x[idx], x.at[idx].set/add
  _take.py            take, take_along_axis
  _index_tricks.py    tril_indices, diag_indices, indices, unravel_index, ix_, s_
  _calculus.py        diff, ediff1d, trapezoid, cross, polyval
  _extras.py          isclose, nan-reductions, logaddexp, ...
  _nan_stats.py       quantile/median and their nan forms, nanvar, nanargmax, ...
  _functional.py      vectorize, apply_along_axis, apply_over_axes, fromfunction
  _setops.py          isin, unique_all/..., intersect1d/union1d/... with size=
  _math_more.py       ldexp/frexp/modf, gcd/lcm, nextafter, spacing, interp, unwrap
  _statistics.py      bincount, digitize, histogram*, ravel_multi_index, cov, corrcoef
  _array_edit.py      insert/delete, block, compress, put/place, lexsort, partition, ...
  _assorted.py        vecdot/matvec, cumulative_sum, gradient, vander, windows, I/O
  _polynomials.py     poly, polyadd/sub/mul/div, polyder/polyint, polyfit
  _grids.py           mgrid, ogrid, r_, c_
  _convolve.py        convolve, correlate (one conv_general_dilated each)
  _ufunc_objects.py   jnp.ufunc: add.reduce/outer/at/..., frompyfunc
  _tracer_methods.py  operators and methods on tracers (`x + y`, `x.sum()`, `x.T`)
"""
import numpy as _np

from ._dtypes import *  # noqa: F401,F403
from ._dtypes import bool_ as bool  # noqa: A001  (jnp.bool is jnp.bool_, as in JAX)
from ._promotion import result_type, promote_types
from ._creation import *  # noqa: F401,F403
from ._ufuncs import *  # noqa: F401,F403
from ._classify import *  # noqa: F401,F403
from ._reductions import *  # noqa: F401,F403
from ._shape import *  # noqa: F401,F403
from ._pad import pad
from ._linalg import *  # noqa: F401,F403
from ._sorting import *  # noqa: F401,F403
from ._extras import *  # noqa: F401,F403
from ._nan_stats import *  # noqa: F401,F403
from ._functional import *  # noqa: F401,F403
from ._setops import *  # noqa: F401,F403
from ._math_more import *  # noqa: F401,F403
from ._statistics import *  # noqa: F401,F403
from ._array_edit import *  # noqa: F401,F403
from ._assorted import *  # noqa: F401,F403
from ._polynomials import *  # noqa: F401,F403
from ._grids import *  # noqa: F401,F403
from ._take import take, take_along_axis
from ._index_tricks import *  # noqa: F401,F403
from ._calculus import *  # noqa: F401,F403
from ._convolve import convolve, correlate
from ._complex import *  # noqa: F401,F403
from ._ufunc_objects import *  # noqa: F401,F403  (last: jnp.add & co. become ufuncs)
from . import linalg  # noqa: F401  (jnp.linalg)
from . import fft  # noqa: F401  (jnp.fft)
from . import _tracer_methods  # noqa: F401  (its methods are attached by minijax/__init__.py)
from . import _array_interop  # noqa: F401  (jax.Array indexed by a tracer)

pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
euler_gamma = _np.euler_gamma
newaxis = None
from ._select import select, piecewise  # noqa: E402  (control flow)


def _with_out_sharding():
    """The functions JAX's sharding in types gives an `out_sharding=` keyword take it
    (libraries pass `out_sharding=jax.typeof(x).sharding` on; see
    `frontend/sharding.py`, `takes_out_sharding`)."""
    from ..frontend.sharding import takes_out_sharding
    for name in ("arange", "array", "asarray", "bincount", "broadcast_to", "dot", "einsum",
                 "empty", "full", "full_like", "matmul", "ones", "ones_like", "percentile",
                 "ravel", "repeat", "reshape", "tensordot", "zeros", "zeros_like"):
        globals()[name] = takes_out_sharding(globals()[name])


_with_out_sharding()
