"""Fuzzer findings (docs/fuzzing_findings.md): where JAX does otherwise than it intends.

A record's words are its transforms plus what the program must have: `clamp` (a
primitive), and for J1/J2 `float64` / `bfloat16`, which stand for the float64 tangent
and the all-bfloat16 outputs that provoke them (no program word names those, so
`cross_check`'s word matching never files a new difference under them). The fuzzer
matches these rows precisely instead: `FUZZ_ROW_MATCHERS`, record name -> predicate
on (transform, row), also for records of other areas."""
import re
from collections import Counter

from .registry import register

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
    transforms=("jvp", "linearize", "jacfwd", "hessian", "float64"))
register(
    "jax_jacrev_of_a_function_without_outputs_fails", "0.10.2",
    "jax.jacrev(f)(x) and jax.hessian(f)(x) of a function returning an empty tuple raise "
    "ValueError('at least one array or dtype is required') from the standard basis of "
    "the (empty) outputs; jax.jacfwd(f)(x) returns ()",
    "jacrev and hessian return (), as jacfwd does",
    "the Jacobian of a function with no outputs is the empty pytree, whichever mode "
    "computes it (jacfwd and jacrev are documented as computing the same Jacobian); "
    "found by the fuzzer (finding J2)",
    transforms=("jacrev", "hessian", "bfloat16"))
register(
    "jax_clamp_jvp_with_scalar_bound_fails", "0.10.2",
    "jax.jvp / jax.grad of lax.clamp(lo, x, hi) with respect to a rank-0 bound `lo` (or "
    "`hi`) when `x` is an array raise TypeError('select cases must have the same shapes, "
    "got [(3,), ()]'): the bound's tangent rule selects between the scalar tangent and "
    "an array of zeros without broadcasting",
    "the scalar bound's tangent is broadcast to x's shape: d clamp / d lo is 1 where x < "
    "lo, summed by grad",
    "lax.clamp's documentation allows a scalar min/max with an array operand, and the "
    "primal accepts it; found while fixing fuzz finding F8 (finding J3)",
    transforms=("jvp", "grad", "vjp", "linearize", "clamp"))
register(
    "jax_checkpoint_of_complex_values_fails", "0.10.2",
    "jax.grad of jax.checkpoint(f, policy=everything_saveable) raises TypeError("
    "'reduce_precision does not accept dtype complex64') when f has complex "
    "intermediates, e.g. f = lambda x: sum(real(complex(x, x) * complex(0.5, -x))), "
    "eagerly and under jit",
    "the gradient is computed as without checkpoint ([2.5] at x = [1.0])",
    "checkpoint is documented as not changing what a function computes, only what is "
    "saved, and complex values are differentiable in JAX; found by the fuzzer "
    "(finding G5)",
    transforms=("checkpoint", "complex"))
register(
    "jax_linearized_while_loop_reruns_its_effects", "0.10.2",
    "the function jax.linearize returns for a while_loop whose carry has a tangent runs "
    "the whole loop again, its debug.print lines included, each time it is called "
    "(JAX's partial evaluation of a while_loop stages the entire loop into the linear "
    "function, as a recomputation)",
    "the linear function computes tangents only: the loop's lines are printed once, "
    "when linearize evaluates the primal",
    "linearize's documented contract is that the returned function evaluates the "
    "Jacobian-vector product without redoing the primal work, and a debug.print "
    "prints the primal computation's values as it runs; found by the fuzzer "
    "(finding G6)",
    transforms=("linearize", "while", "debug_print"))

register(
    "jax_jacfwd_of_an_unused_custom_vjp_result_fails", "0.10.2",
    "jax.jacfwd of a function that calls a custom_vjp function and never uses its result "
    "raises TypeError(\"can't apply forward-mode autodiff (jvp) to a custom_vjp "
    "function.\"), eagerly and of a jitted function: jacfwd vmaps the jvp, and the "
    "batching rule of the dead custom_lin raises before anything drops it; "
    "jax.jvp under jit, jax.jvp of a jitted function and jax.linearize of the same "
    "function succeed; jax.hessian (jacfwd of jacrev) raises alike where a custom_vjp "
    "rule's bwd differentiates a body with an unused custom_vjp result",
    "jacfwd and hessian succeed, as linearize does (the dead tangent map is dropped); "
    "a used custom_vjp result raises in jacfwd as in JAX",
    "jacfwd is documented as the Jacobian by forward mode, which this function has: "
    "JAX computes its jvp under jit; found by the fuzzer (finding J30; the hessian "
    "case at seed s6fz6b-w:12)",
    transforms=("jacfwd", "hessian", "custom_vjp_call"))
register(
    "jax_scatter_mul_grad_requires_unique_indices", "0.10.2",
    "every derivative of lax.scatter_mul (grad, vjp, jvp, linearize, jacfwd, jacrev, "
    "hessian) raises NotImplementedError('scatter_mul gradients are only implemented "
    "if `unique_indices=True`') unless the caller promises unique indices, even for "
    "indices that are unique",
    "scatter_mul is differentiated for any indices: the derivative in update u is "
    "x[j] times the product of the other updates sent to j (exact at zeros), checked "
    "against float64 finite differences",
    "a limitation JAX states in its error; found by the fuzzer (finding J31)",
    transforms=("grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev", "hessian",
                "scatter_mul"))
register(
    "jax_second_derivative_of_unused_igamma_fails", "0.10.2",
    "jax.hessian and grad(grad) of a function that computes lax.igamma of its argument "
    "without using the result (in a while_loop body whose outputs are dropped, or "
    "at top level) raise NotImplementedError(\"Differentiation rule for "
    "'igamma_grad_a' not implemented\"): the dead code is differentiated twice",
    "the unused computation is dropped before the second derivative; a used "
    "igamma's second derivative in `a` raises as in JAX (no rule on either side)",
    "the derivative of a function does not depend on values it discards; found by "
    "the fuzzer (finding J32)",
    transforms=("hessian", "grad", "igamma"))

register(
    "jax_vmap_of_a_custom_function_over_a_numpy_constant_under_jit_fails",
    "0.10.2, 0.11.2, 0.12.0.1",
    "inside a trace (jax.jit or jax.make_jaxpr), jax.vmap of a custom_vjp or custom_jvp "
    "function over a NumPy array the traced function closes over (not an argument of "
    "the trace) raises an internal AssertionError('non-canonical constant of type "
    "ndarray: array([-0.25, 0.125])'), for float32 and float64 arrays, also when "
    "another mapped operand is traced: e.g. g = jax.custom_vjp(lambda x: x * 2.0) with "
    "any rule, x = np.array([-0.25, 0.125], np.float32), jax.jit(lambda: "
    "jax.vmap(g)(x))(); eagerly, with x a jit argument or a jax array, or with a "
    "function without custom rule, it works. One bug for both kinds of custom function: "
    "same error, same triggers, on each version seen",
    "the batched call runs ([-0.5, 0.25]), under minijax.jit and make_jaxpr as eagerly",
    "an internal assertion, not an error about the user's program: a constant NumPy "
    "array is an ordinary jit operand everywhere else (the same vmap of a function "
    "without custom rule works); found by the fuzzer (finding J33), whose compiled "
    "oracle closes over the arguments",
    # the words besides transforms name no program feature: the record explains rows
    # only through its matcher below, never every vmap or jit row of cross_check
    transforms=("vmap", "jit", "non_canonical_constant"))

register(
    "jax_jit_of_grad_changes_its_weak_type", "0.10.2",
    "jax.jit(jax.grad(f))(1.5) is weakly typed where jax.grad(f)(1.5) is not, for "
    "f = lambda a: jnp.sum(lax.mul(a, np.float32(2))) + jnp.sum(a): the two cotangent "
    "contributions of `a` (a strong one through the mul, a weak one through jnp.sum's "
    "convert) are summed by add_any, whose staged type is its first operand's, while "
    "eagerly the sum follows the ordinary rule (weak only if both are); likewise "
    "jax.jit(jax.grad(jax.checkpoint(g)))(-0.25) for g = lambda a: "
    "jnp.sum(broadcast(a) + c) (c a float32 array) is weak where jax.grad of it is "
    "strong: remat's transpose stages its body for cotangents typed as the body's "
    "tangent outputs (weak: the tangent of a weak input), not as the cotangent given "
    "(the strong 1.0 seed), while eagerly remat evaluates the body on the given value",
    "grad and jit(grad) are both strong (3.0, float32), as JAX's eager grad; the same "
    "for the checkpointed function (F62)",
    "jit is documented as not changing what a function computes, and JAX's weak-type "
    "rule makes a sum of a weak and a strong value strong; found by the fuzzer "
    "(finding J34)",
    transforms=("jit", "grad", "weak_type"))      # matcher-only, as J33

register(
    "jax_while_loop_grad_of_a_passed_through_carry_fails", "0.10.2",
    "jax.grad / vjp / jacrev of a function whose while_loop carries the differentiated "
    "value through unchanged (the body returns it as it is, the predicate may read it) "
    "raise ValueError('Reverse-mode differentiation does not work for lax.while_loop "
    "...'): JAX moves every carry with a tangent into the unknown part of the loop, "
    "even one the loop never changes",
    "the unchanged carry's tangent is its input's, so reverse mode needs no pass "
    "through the loop: grad of `while_loop(y < lim, ..., (0, 1.0, lim))[2] * 3` in "
    "`lim` is 3.0; a carry the body changes still raises, as in JAX",
    "JAX documents that while_loop has no reverse mode because the loop's residuals "
    "would need unbounded memory; a carry passed through unchanged needs none, and "
    "JAX's forward mode (jvp) of the same function works; found while triaging the "
    "fuzzer's findings (J35)",
    transforms=("grad", "vjp", "jacrev", "while"))


def _float64_tangent(transform, row) -> bool:
    return transform in ("jvp", "linearize", "jacfwd", "hessian") and (
        "float64" in row.detail or "float64" in row.summary())


def _jax_select_shapes_error(transform, row) -> bool:
    return "select cases must have the same shapes" in row.jax_error


def _jax_jacrev_without_outputs(transform, row) -> bool:
    return transform in ("jacrev", "hessian") and \
        "at least one array or dtype is required" in row.jax_error


def _jax_complex_checkpoint(transform, row) -> bool:
    return transform.startswith("checkpoint") and \
        "reduce_precision does not accept" in row.jax_error


def _jax_linearized_loop_prints_again(transform, row) -> bool:
    return transform == "linearize" and row.detail.startswith("printed output differs")


def _jax_eager_view(transform, row) -> bool:
    # to_jax runs a view `ref.at[...]` eagerly only in the eager row
    return transform == "eager" and row.jax_error.startswith("NotImplementedError")


def _jax_eager_ds_array_start(transform, row) -> bool:
    # the fuzzer's ds starts are computed from the data: arrays, run eagerly in the
    # eager row only (to_jax stages the other rows); on JAX 0.10 and 0.11 a start out
    # of range fails in the indexer's own bounds check first (a ValueError)
    return transform == "eager" and not row.minijax_error and (
        row.jax_error.startswith("TracerBoolConversionError")
        or row.jax_error.startswith("ValueError: Out of bound slice: start="))


def _jax_jacfwd_of_unused_custom_vjp(transform, row) -> bool:
    return transform == "jacfwd" and not row.minijax_error and \
        "can't apply forward-mode autodiff (jvp) to a custom_vjp" in row.jax_error


def _jax_scatter_mul_derivative(transform, row) -> bool:
    return not row.minijax_error and \
        "scatter_mul gradients are only implemented if" in row.jax_error


def _jax_second_derivative_of_unused_igamma(transform, row) -> bool:
    return transform in ("hessian", "grad(grad)") and not row.minijax_error and \
        "Differentiation rule for 'igamma_grad_a' not implemented" in row.jax_error


def _jax_vmap_non_canonical_constant(transform, row) -> bool:
    return "vmap" in transform and not row.minijax_error and \
        "AssertionError: non-canonical constant of type ndarray" in row.jax_error


def _jax_jit_grad_weak(transform, row) -> bool:
    # only jit(grad): the eager grad row of the same program still compares minijax's
    # weak types with eager JAX's, so a weak-type bug of minijax shows there
    return transform == "jit(grad)" and not row.minijax_error and \
        re.search(r"leaf \d+: weak_type False != jax's True$", row.detail) is not None


_SAVED_LIST = r"(\[(?:'[^']*'(?:, )?)*\])"
_SAVED = re.compile(rf"saved residuals differ: minijax saves {_SAVED_LIST}, "
                    rf"jax saves {_SAVED_LIST}")


def _jax_cholesky_tangent_unmirrored(transform, row) -> bool:
    # Only a JAX before 0.11 reads the whole tangent; there minijax's checkpoint saves
    # in addition, per Cholesky of an [n, n] matrix, the bool masks and the zeros of
    # the two triangle selects that mirror the tangent, and nothing else differs.
    import jax
    found = _SAVED.search(row.detail) if transform.startswith("checkpoint") else None
    if tuple(jax.__version_info__) >= (0, 11) or found is None:
        return False
    mini, theirs = (Counter(re.findall(r"'([^']*)'", side)) for side in found.groups())
    extra = mini - theirs
    dims = {r.split("[", 1)[1].rstrip("]") for r in extra}
    if theirs - mini or len(dims) != 1:
        return False
    rows, cols = (dims.pop().split(",") + ["", ""])[:2]
    masks = sum(n for r, n in extra.items() if r.startswith("bool["))
    return rows == cols != "" and masks == sum(extra.values()) - masks and masks % 2 == 0 \
        and masks > 0


def _jax_while_loop_reverse_mode(transform, row) -> bool:
    return not row.minijax_error and \
        "Reverse-mode differentiation does not work for lax.while_loop" in row.jax_error


def _jax_barrier_constant_tangent(transform, row) -> bool:
    return transform.startswith("checkpoint") and not row.minijax_error and \
        "has no attribute 'accum'" in row.jax_error


def _jax_offload_policy_grad_of_grad(transform, row) -> bool:
    # Only a row whose policy offloads (the generator makes none today) and where JAX
    # met the host-memory cotangent; other checkpoint crashes are not this record's.
    return "offload" in transform and not row.minijax_error and "<host>" in row.jax_error


# Record name (of any area) -> predicate on (transform, row): the rows of the fuzzer a
# record explains. A record listed here explains exactly these rows; the others are
# matched by their words (minijax/testing/fuzz.py, known_divergence).
FUZZ_ROW_MATCHERS = {
    "jax_jvp_passes_an_input_tangent_through_uncanonicalized": _float64_tangent,
    "jax_clamp_jvp_with_scalar_bound_fails": _jax_select_shapes_error,
    "ref_eager_views": _jax_eager_view,
    "ref_eager_ds_array_start_fails": _jax_eager_ds_array_start,
    "jax_jacrev_of_a_function_without_outputs_fails": _jax_jacrev_without_outputs,
    "jax_checkpoint_of_complex_values_fails": _jax_complex_checkpoint,
    "jax_linearized_while_loop_reruns_its_effects": _jax_linearized_loop_prints_again,
    "jax_jacfwd_of_an_unused_custom_vjp_result_fails": _jax_jacfwd_of_unused_custom_vjp,
    "jax_scatter_mul_grad_requires_unique_indices": _jax_scatter_mul_derivative,
    "jax_second_derivative_of_unused_igamma_fails": _jax_second_derivative_of_unused_igamma,
    "jax_vmap_of_a_custom_function_over_a_numpy_constant_under_jit_fails":
        _jax_vmap_non_canonical_constant,
    "jax_jit_of_grad_changes_its_weak_type": _jax_jit_grad_weak,
    "cholesky_derivative_reads_the_ignored_triangle": _jax_cholesky_tangent_unmirrored,
    "jax_while_loop_grad_of_a_passed_through_carry_fails": _jax_while_loop_reverse_mode,
    "jax_checkpoint_grad_of_a_barrier_with_a_constant_tangent_fails":
        _jax_barrier_constant_tangent,
    "offload_policy_grad_of_grad_fails": _jax_offload_policy_grad_of_grad,
}
