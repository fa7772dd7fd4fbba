"""`minijax.flatten_util.ravel_pytree`: a pytree of arrays as one flat vector and back.

Optimizers and solvers written for a vector (Newton steps, L-BFGS, a Hessian as one
matrix) use it on a model's parameter pytree. The vector is the leaves, each raveled,
concatenated in the pytree's flattening order; its dtype is the promotion of the
leaves' dtypes (`minijax.dtypes.result_type` of the dtypes, so weak types do not take
part). The returned `unravel` splits a vector back into leaves of the original shapes:
when every leaf had that dtype it keeps the vector's dtype (so it also unravels, say,
a float32 gradient of an int-free tree given in bfloat16); otherwise it insists on
the promoted dtype and converts each leaf back to its own. `unravel` objects compare
equal (and hash alike) when they unravel alike, so one can be a static jit argument.
"""
from __future__ import annotations

import warnings

import numpy as np

from . import lax
from .dtypes import result_type
from .numpy._promotion import dtype_of as _dtype_of
from .tree_util import tree_flatten, tree_unflatten


class _Unravel:
    """The inverse of one `ravel_pytree`: vector -> pytree."""
    __slots__ = ("treedef", "sizes", "shapes", "from_dtypes", "to_dtype")

    def __init__(self, treedef, sizes, shapes, from_dtypes=None, to_dtype=None):
        self.treedef, self.sizes, self.shapes = treedef, sizes, shapes
        self.from_dtypes, self.to_dtype = from_dtypes, to_dtype

    def _key(self):
        return (self.treedef, self.sizes, self.shapes, self.from_dtypes, self.to_dtype)

    def __eq__(self, other):
        return type(other) is _Unravel and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __call__(self, flat):
        if not self.sizes:
            return tree_unflatten(self.treedef, [])
        if self.to_dtype is not None and _dtype_of(flat) != self.to_dtype:
            raise TypeError(f"unravel function given array of dtype {_dtype_of(flat)}, "
                            f"but expected dtype {self.to_dtype}")
        chunks = lax.split(flat, self.sizes)
        leaves = [lax.reshape(chunk, shape) for chunk, shape in zip(chunks, self.shapes)]
        if self.from_dtypes is not None:
            with warnings.catch_warnings():    # complex leaves given back to real ones
                warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
                leaves = [lax.convert_element_type(leaf, dtype)
                          for leaf, dtype in zip(leaves, self.from_dtypes)]
        return tree_unflatten(self.treedef, leaves)

    def __repr__(self):
        return f"unravel_pytree({self.treedef})"


def ravel_pytree(pytree):
    """`(flat, unravel)`: the leaves of `pytree` raveled into one 1-D array, and the
    function taking such a vector back to a pytree of `pytree`'s structure, as
    `jax.flatten_util.ravel_pytree` (module docstring). A pytree with no leaves gives
    an empty float32 vector."""
    leaves, treedef = tree_flatten(pytree)
    if not leaves:
        return lax.full((0,), 0, np.float32), _Unravel(treedef, (), ())
    from_dtypes = tuple(_dtype_of(leaf) for leaf in leaves)
    to_dtype = result_type(*from_dtypes)
    sizes = tuple(int(np.size(leaf)) for leaf in leaves)
    shapes = tuple(tuple(np.shape(leaf)) for leaf in leaves)
    if all(dtype == to_dtype for dtype in from_dtypes):
        flat = lax.concatenate([lax.reshape(leaf, (size,))
                                for leaf, size in zip(leaves, sizes)], 0)
        return flat, _Unravel(treedef, sizes, shapes)
    flat = lax.concatenate([lax.reshape(lax.convert_element_type(leaf, to_dtype), (size,))
                            for leaf, size in zip(leaves, sizes)], 0)
    return flat, _Unravel(treedef, sizes, shapes, from_dtypes, to_dtype)


__all__ = ["ravel_pytree"]
