"""Vectors that are pytrees, for the Krylov solvers: scalar products at
`Precision.HIGHEST` (as JAX's solvers take them), norms, sums and scalings leaf by leaf,
and the linear operator a user passes as a function, a matrix or a `@`-able object."""
from __future__ import annotations

import operator
from functools import partial

import numpy as np
from jax import tree_util

from ... import numpy as jnp
from ...frontend import lax_ops as _lax_ops
from ...frontend.lax_dot import Precision
from ...numpy._promotion import result_type_and_weak

dot = partial(jnp.dot, precision=Precision.HIGHEST)
vdot = partial(jnp.vdot, precision=Precision.HIGHEST)


# -- vectors that are pytrees ----------------------------------------------------------

def vdot_real(x, y):
    """The real part of <x, y> without the cross terms: a real scalar."""
    out = vdot(jnp.real(x), jnp.real(y))
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        out = out + vdot(jnp.imag(x), jnp.imag(y))
    return out


def vdot_real_tree(x, y):
    return sum(tree_util.tree_leaves(tree_util.tree_map(vdot_real, x, y)))


def vdot_tree(x, y):
    return sum(tree_util.tree_leaves(tree_util.tree_map(vdot, x, y)))


def norm(x):
    leaves = tree_util.tree_leaves(x)
    return jnp.sqrt(sum(vdot_real(v, v) for v in leaves))


def scale(scalar, tree):
    return tree_util.tree_map(lambda v: scalar * v, tree)


add = partial(tree_util.tree_map, operator.add)
sub = partial(tree_util.tree_map, operator.sub)


@tree_util.Partial
def identity(x):
    return x


def as_operator(f):
    """A function for A x, from a function, a square matrix or a `@`-able object."""
    if callable(f):
        return f
    if isinstance(f, np.ndarray) or hasattr(f, "__matmul__"):
        shape = getattr(f, "shape", None)
        if shape is not None and (len(shape) != 2 or shape[0] != shape[1]):
            raise ValueError(f"linear operator must be a square matrix, but has shape: "
                             f"{tuple(shape)}")
        return partial(dot, f) if hasattr(f, "ndim") else partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def shapes(tree):
    return [np.shape(v) for v in tree_util.tree_leaves(tree)]


def checked_start(b, x0):
    if x0 is None:
        x0 = tree_util.tree_map(jnp.zeros_like, b)
    b = tree_util.tree_map(jnp.asarray, b)
    x0 = tree_util.tree_map(jnp.asarray, x0)
    if tree_util.tree_structure(x0) != tree_util.tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: "
                         f"{tree_util.tree_structure(x0)} vs {tree_util.tree_structure(b)}")
    return b, x0


def one_like(tree):
    dtype, weak = result_type_and_weak(*tree_util.tree_leaves(tree))
    return _lax_ops.convert_element_type(1, dtype, weak)
