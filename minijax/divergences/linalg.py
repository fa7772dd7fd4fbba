"""Linear algebra (`frontend/linalg_ops.py`, `transforms/linalg_rules.py`): where the
derivatives of jax.lax.linalg do otherwise than intended."""
from .registry import register

register(
    "cholesky_derivative_reads_the_ignored_triangle", "0.10.2",
    "the derivative of lax.linalg.cholesky(a, symmetrize_input=False) reads the whole "
    "tangent of a, so its gradient has nonzero entries in the strict upper triangle "
    "(and jax.scipy.linalg.cholesky(a, lower=False)'s in the strict lower one)",
    "the derivative reads the lower triangle of the tangent, mirrored, as the value "
    "reads the lower triangle of a: the gradient is zero in the other triangle, and "
    "each entry below the diagonal holds what JAX 0.10 spread over the entry and its "
    "mirror image; JAX does the same from 0.11",
    "JAX documents that with symmetrize_input=False only the lower triangle is used and "
    "the upper one is ignored; a function that ignores an entry has no derivative with "
    "respect to it. JAX 0.11 changed its rule to mirror the lower triangle",
    transforms=("grad", "vjp", "jvp", "cholesky"), intended_on="0.11.2, 0.12.0.1")

register(
    "lu_jvp_under_jit_with_a_numpy_tangent_fails", "0.10.2, 0.11.2, 0.12.0.1",
    "jax.jvp of lax.linalg.lu (and so of anything built on it) inside jax.jit or "
    "make_jaxpr raises TracerArrayConversionError when the tangent is a NumPy array: "
    "its rule permutes the tangent's rows by indexing it with the traced permutation, "
    "which NumPy's indexing cannot take; with a jax.Array tangent, or eagerly, it runs",
    "the tangent, the same as with a jax.Array tangent (tangents are operands like any "
    "other, whatever array type they come as)",
    "jax.jvp documents its tangents as arrays, and NumPy arrays are accepted as "
    "tangents everywhere else, jvp of lu included when not traced",
    transforms=("jvp", "lax.linalg.lu", "jit"))
