"""Fuzzer findings (docs/fuzzing.md): where JAX does otherwise than it intends.

Each record here also says which rows of the fuzzer it explains (`FUZZ_ROW_MATCHERS`:
record name -> predicate on a row), since a record's words alone (a transform name)
would explain every difference of that transform."""
from minijax.divergences import register

register(
    "jax_jvp_passes_an_input_tangent_through_uncanonicalized", "0.10.2",
    "with 64-bit mode off, jax.jvp / jax.linearize / jax.jacfwd of a function whose output "
    "is its Python-float input (lambda x: x, or a value carried unchanged through a loop) "
    "return the caller's tangent object itself: a float64 NumPy tangent comes back as a "
    "float64 NumPy scalar, while any computed output is a canonical float32 jax.Array",
    "the tangent of a Python-float primal is a float32 minijax Array (for NumPy-array "
    "primals minijax passes the tangent through as JAX does)",
    "JAX's stated default: 'JAX enforces single-precision numbers by default' (the "
    "jax_enable_x64 docs), and jvp's contract that tangent outputs have the primal "
    "outputs' tangent dtype; found by the fuzzer (finding J1)",
    transforms=("jvp", "linearize", "jacfwd", "hessian"))
register(
    "jax_jacrev_of_a_function_without_outputs_fails", "0.10.2",
    "jax.jacrev(f)(x) and jax.hessian(f)(x) of a function returning an empty tuple raise "
    "ValueError('at least one array or dtype is required') from the standard basis of "
    "the (empty) outputs; jax.jacfwd(f)(x) returns ()",
    "jacrev and hessian return (), as jacfwd does",
    "the Jacobian of a function with no outputs is the empty pytree, whichever mode "
    "computes it (jacfwd and jacrev are documented as computing the same Jacobian); "
    "found by the fuzzer (finding J2)",
    transforms=("jacrev", "hessian"))

def _float64_tangent(row) -> bool:
    return "float64" in row.detail or "float64" in row.summary()


FUZZ_ROW_MATCHERS = {
    "jax_jvp_passes_an_input_tangent_through_uncanonicalized": _float64_tangent,
}
