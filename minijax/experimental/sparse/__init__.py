"""`minijax.experimental.sparse`: the BCOO core of `jax.experimental.sparse`.

A `BCOO` array is a pytree of two arrays, `data` (`batch + (nse,) + dense`) and
`indices` (`batch + (nse, n_sparse)`), and a static shape. Implemented here:
`BCOO` (`shape`, `nse`, `n_batch`, `n_sparse`, `n_dense`, `dtype`, `todense`, `T` /
`transpose`, `@` with a dense operand, `*` with a dense, scalar or BCOO operand, `sum`,
`astype`, `sum_duplicates`, `sort_indices`, `BCOO.fromdense`), `bcoo_fromdense`,
`bcoo_todense`, `bcoo_dot_general` (one operand sparse), `bcoo_transpose`,
`bcoo_reduce_sum`, `bcoo_multiply_dense`, `bcoo_multiply_sparse` (equal `n_batch`),
`bcoo_sort_indices`, `bcoo_sum_duplicates`, `empty`, `eye` and `todense`.

Design: JAX defines one primitive per sparse operation (`bcoo_dot_general_p`, ...),
each with its own jvp, transpose and batching rule. minijax writes every operation as a
composition of the primitives it already has: `todense` is a scatter-add, `fromdense`
a `nonzero` and a gather, `bcoo_dot_general` a gather of the dense operand's rows, a
batched `dot_general` and a scatter-add, `sum_duplicates` a sort, a cumulative sum and
a scatter-add; batch dimensions are `vmap`s. So jvp, grad, vmap, remat and jit work on
them by construction, with no rules of their own to keep in step with JAX's, and the
IR shows the gathers and scatters themselves. The cost is that a traced program holds
those steps rather than one named sparse operation, and that minijax cannot lower a
sparse operation to a sparse library call (JAX uses cuSPARSE on GPU for some).

As in JAX, `fromdense` without `nse` counts the nonzeros, which needs a concrete array
(under jit, pass `nse`); unused slots hold data 0 at the out-of-bounds index
`shape[n_batch:n_batch + n_sparse]`, which `todense` and the products ignore.

Not here: `sparsify`, the BCSR/COO/CSR formats, sparse-sparse `dot_general`,
`update_layout`, slicing, reshaping and the rest of `jax.experimental.sparse`. And a
BCOO is a plain pytree to `vmap`: JAX maps a BCOO argument over a batch dimension of
its layout, minijax maps its leaves and cannot rebuild the shape, so vmap over the
dense arrays a BCOO is built from instead.
"""
from .bcoo import (BCOO, bcoo_fromdense, bcoo_sort_indices,
                   bcoo_sum_duplicates, bcoo_todense, bcoo_transpose)
from ._bcoo_ops import (bcoo_dot_general, bcoo_multiply_dense, bcoo_multiply_sparse,
                        bcoo_reduce_sum)
from ... import numpy as _jnp


def empty(shape, dtype=None, index_dtype="int32", sparse_format="bcoo", **kwds):
    """An all-zero sparse array storing nothing (`nse=0` unless given)."""
    _check_format(sparse_format)
    return BCOO._empty(tuple(shape), dtype=dtype, index_dtype=index_dtype, **kwds)


def eye(N, M=None, k=0, dtype=None, index_dtype="int32", sparse_format="bcoo", **kwds):
    """The sparse identity (ones on diagonal `k`) of shape `(N, M)`."""
    _check_format(sparse_format)
    return BCOO._eye(N, N if M is None else M, k, dtype=dtype, index_dtype=index_dtype,
                     **kwds)


def todense(arr):
    """`arr` as a dense array; a dense array passes through."""
    return bcoo_todense(arr) if isinstance(arr, BCOO) else _jnp.asarray(arr)


def _check_format(sparse_format):
    formats = ["bcsr", "bcoo", "coo", "csr", "csc"]
    if sparse_format not in formats:
        raise ValueError(f"sparse_format={sparse_format!r} not recognized; "
                         f"must be one of {formats}")
    if sparse_format != "bcoo":
        raise NotImplementedError(f"minijax.experimental.sparse has the 'bcoo' format only, "
                                  f"not {sparse_format!r}")


__all__ = ["BCOO", "bcoo_dot_general", "bcoo_fromdense", "bcoo_multiply_dense",
           "bcoo_multiply_sparse", "bcoo_reduce_sum", "bcoo_sort_indices",
           "bcoo_sum_duplicates", "bcoo_todense", "bcoo_transpose", "empty", "eye",
           "todense"]
