"""The fuzzer's structured numeric operations: linear algebra, convolutions and
window reductions, and collectives.

Entries of the same table as fuzz_ops.py (see its docstring).

**Linear algebra.** A matrix decomposition is a well-posed function only away from
its singular points (repeated eigenvalues or singular values, singular pivots), and
its derivatives blow up near them. So each matrix is a small perturbation of a
well-conditioned one: entries `0.3 tanh(data)` (finite, small) plus a diagonal that
keeps it far from singular -- the identity times the size for Cholesky and solves,
distinct values 0, 3, 6, ... for eigh and svd, so eigenvalues and singular values stay
apart. Eigenvectors and singular vectors are defined up to sign (LAPACK and NumPy's
reference may pick different ones), so the outputs are sign-invariant: the squared
vectors, and for QR, Q and R normalised so that R's diagonal is positive.

**Collectives** exist only under a named axis; here that is `vmap` with `axis_name`
(the battery's `vmap` rows then vmap a program that already vmapped). Tracing the
vmap applies the collectives' batching rules, so the program holds their batched
forms (reductions, gathers, ...): the rows check what the rules produce downstream
(its transforms and lowering), not the rules against JAX's (tests/test_collectives.py
does that), since both sides run the same batched program.
"""
from __future__ import annotations

import numpy as np

import minijax
import minijax.lax as lax
import minijax.numpy as jnp
from .fuzz_ops import floating, op
from .fuzz_ops_special import as_float32


def _matrix(b, rows, cols):
    """A float32 [rows, cols] matrix of small entries (|m| < 0.3) computed from data in
    scope, or None."""
    x = b.pick(floating)
    if x is None:
        return None
    flat = jnp.ravel(as_float32(x))
    need = rows * cols
    size = int(np.prod(b.aval(x).shape))
    if size == 0:
        flat = b.derive((need,), np.float32)
    elif size < need:
        flat = jnp.concatenate([flat] * -(-need // size))
    # an iota spreads repeated entries apart, so the matrix is not of rank one
    entries = lax.add(flat[:need], lax.mul(lax.iota(np.float32, need), 0.37))
    return lax.mul(lax.tanh(jnp.reshape(entries, (rows, cols))), 0.3)


def _spread_diagonal(n, step):
    return jnp.diag(lax.mul(lax.iota(np.float32, n), float(step)))


@op("linalg:cholesky", ["cholesky", "triangular_solve"], "linalg", weight=0.4)
def _cholesky(b):
    n = b.rng.randint(1, 3)
    m = _matrix(b, n, n)
    if m is None:
        return None
    spd = lax.add(jnp.matmul(m, m.T), jnp.eye(n, dtype=np.float32))
    factor = lax.linalg.cholesky(spd)
    if b.rng.random() < 0.5:
        return [factor]
    rhs = _matrix(b, n, b.rng.randint(1, 2))
    left = b.rng.random() < 0.5
    if not left:
        rhs = rhs.T
    return [lax.linalg.triangular_solve(factor, rhs, left_side=left, lower=True,
                                        transpose_a=b.rng.random() < 0.5)]


@op("linalg:triangular_solve", ["triangular_solve"], "linalg", weight=0.3)
def _triangular_solve(b):
    n = b.rng.randint(1, 3)
    m = _matrix(b, n, n)
    if m is None:
        return None
    lower = b.rng.random() < 0.5
    triangle = jnp.tril(m) if lower else jnp.triu(m)
    a = lax.add(triangle, lax.mul(jnp.eye(n, dtype=np.float32), float(n + 1)))
    rhs = _matrix(b, n, b.rng.randint(1, 2))
    return [lax.linalg.triangular_solve(a, rhs, left_side=True, lower=lower,
                                        transpose_a=b.rng.random() < 0.5,
                                        unit_diagonal=b.rng.random() < 0.2)]


@op("linalg:lu", ["lu"], "linalg", weight=0.3, smooth=False)
def _lu(b):
    n = b.rng.randint(1, 3)
    m = _matrix(b, n, n)
    if m is None:
        return None
    # a dominant anti-diagonal makes partial pivoting swap rows, without ties
    anti = jnp.flip(lax.add(jnp.eye(n, dtype=np.float32),
                            _spread_diagonal(n, 1.0)), axis=1)
    lu, pivots, permutation = lax.linalg.lu(lax.add(m, lax.mul(anti, 2.0)))
    return [lu, pivots, permutation]


@op("linalg:qr", ["qr"], "linalg", weight=0.3)
def _qr(b):
    rows, cols = b.rng.randint(1, 3), b.rng.randint(1, 3)
    m = _matrix(b, rows, cols)
    if m is None:
        return None
    k = min(rows, cols)
    well = lax.add(m, jnp.eye(rows, cols, dtype=np.float32))
    q, r = lax.linalg.qr(well, full_matrices=False)
    # R's diagonal is nonzero (the matrix is close to [I 0]); its signs are LAPACK's
    # choice, so normalise them away
    signs = jnp.sign(jnp.diagonal(r))
    return [jnp.multiply(q, signs.reshape(1, k)), jnp.multiply(r, signs.reshape(k, 1))]


@op("linalg:eigh", ["eigh"], "linalg", weight=0.3)
def _eigh(b):
    n = b.rng.randint(1, 3)
    m = _matrix(b, n, n)
    if m is None:
        return None
    symmetric = lax.add(lax.add(m, m.T), _spread_diagonal(n, 3.0))
    vectors, values = lax.linalg.eigh(symmetric)
    return [values, lax.mul(vectors, vectors)]


@op("linalg:svd", ["svd"], "linalg", weight=0.3)
def _svd(b):
    rows, cols = b.rng.randint(1, 3), b.rng.randint(1, 3)
    m = _matrix(b, rows, cols)
    if m is None:
        return None
    k = min(rows, cols)
    diagonal = lax.add(_spread_diagonal(k, 3.0), jnp.eye(k, dtype=np.float32))
    spread = lax.pad(diagonal, np.float32(0), [(0, rows - k, 0), (0, cols - k, 0)])
    well = lax.add(m, spread)
    if b.rng.random() < 0.3:
        return [lax.linalg.svd(well, full_matrices=False, compute_uv=False)]
    u, s, vt = lax.linalg.svd(well, full_matrices=False)
    return [s, lax.mul(u, u), lax.mul(vt, vt)]


# -- convolutions and window reductions ------------------------------------------------------------

@op("conv_general_dilated", ["conv_general_dilated"], "windows", weight=0.5)
def _conv(b):
    x = b.pick(lambda a: floating(a) and len(a.shape) >= 1)
    if x is None:
        return None
    batch, channels, width = 1, b.rng.randint(1, 2), b.rng.randint(2, 4)
    flat = jnp.ravel(as_float32(x))
    size = int(np.prod(b.aval(x).shape))
    need = batch * channels * width
    if size == 0:
        flat = b.derive((need,), np.float32)
    elif size < need:
        flat = jnp.concatenate([flat] * -(-need // size))
    lhs = jnp.reshape(flat[:need], (batch, channels, width))
    groups = channels if channels > 1 and b.rng.random() < 0.4 else 1
    out_channels = groups * b.rng.randint(1, 2)
    kernel = b.rng.randint(1, 2)
    rhs = b.value_of((out_channels, channels // groups, kernel), np.float32)
    rhs = jnp.where(lax.is_finite(rhs), rhs, 0.0)
    lhs_dilation = b.rng.randint(1, 2)
    padding = b.rng.choice(["VALID", "SAME", [(b.rng.randint(0, 1), b.rng.randint(0, 1))]])
    if lhs_dilation > 1:      # a transposed convolution takes explicit padding only
        padding = [(b.rng.randint(0, 1), b.rng.randint(-1, 1))]
    return [lax.conv_general_dilated(
        lhs, rhs, window_strides=(b.rng.randint(1, 2),), padding=padding,
        lhs_dilation=(lhs_dilation,), rhs_dilation=(b.rng.randint(1, 2),),
        feature_group_count=groups)]


@op("reduce_window", ["reduce_window_sum", "reduce_window_max", "reduce_window_min"],
    "windows", weight=0.5, smooth=False)
def _reduce_window(b):
    x = b.pick(lambda a: floating(a) and len(a.shape) >= 1 and 0 not in a.shape)
    if x is None:
        return None
    shape = b.aval(x).shape
    kind = b.rng.choice(["sum", "max", "min"])
    b.note_smooth(kind == "sum")
    computation = {"sum": lax.add, "max": lax.max, "min": lax.min}[kind]
    dtype = b.aval(x).dtype
    init = {"sum": 0, "max": -np.inf, "min": np.inf}[kind]
    window = tuple(b.rng.randint(1, min(d, 2)) for d in shape)
    strides = tuple(b.rng.randint(1, 2) for _ in shape)
    padding = b.rng.choice(["VALID", "SAME"])
    return [lax.reduce_window(x, np.array(init, dtype), computation, window, strides,
                              padding)]


# -- collectives, under vmap with an axis name -----------------------------------------------------

def _collective(kind, size):
    def body(v):
        if kind == "psum":
            return lax.psum(v, "i")
        if kind == "pmax":
            return lax.pmax(v, "i")
        if kind == "pmin":
            return lax.pmin(v, "i")
        if kind == "axis_index":
            return lax.add(v, lax.convert_element_type(lax.axis_index("i"), v.dtype))
        if kind == "ppermute":
            return lax.ppermute(v, "i", [(j, (j + 1) % size) for j in range(size)])
        if kind == "all_gather":
            return lax.all_gather(v, "i")
        if kind == "psum_scatter":
            return lax.psum_scatter(v, "i", tiled=True)
        return lax.all_to_all(v, "i", 0, 0, tiled=True)
    return body


@op("collective", ["psum", "pmax", "pmin", "axis_index", "ppermute", "all_gather",
                   "psum_scatter", "all_to_all"], "collectives", weight=0.5)
def _collectives(b):
    x = b.pick(lambda a: floating(a) and len(a.shape) >= 1 and a.shape[0] > 0)
    if x is None:
        return None
    shape = b.aval(x).shape
    size = shape[0]
    kinds = ["psum", "pmax", "pmin", "axis_index", "ppermute", "all_gather"]
    if len(shape) >= 2 and shape[1] % size == 0:
        kinds += ["psum_scatter", "all_to_all"]
    kind = b.rng.choice(kinds)
    b.note_smooth(kind not in ("pmax", "pmin"))
    return [minijax.vmap(_collective(kind, size), axis_name="i")(x)]


__all__ = []
