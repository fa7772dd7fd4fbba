"""Refs under autodiff and vmap (issue 6)."""
from minijax.divergences.registry import register

register(
    "jax_grad_of_ref_overwritten_with_constant_crashes", "0.10.2",
    "jax.grad of a function that overwrites an internal ref holding a differentiated "
    "value with a constant (`r = new_ref(3*x); r[...] = ones; (r[...]*x).sum()`) "
    "crashes with AttributeError: 'ArrayImpl' object has no attribute 'accum'"
    ". Fixed in 0.11.2: the gradient is minijax's",
    "the overwrite drops the cotangent: swap transposes to swap, which writes the "
    "(zero) cotangent of the old contents, so the gradient is ones",
    "issue 6: overwriting a ref that held a differentiated value with a constant "
    "simply drops the cotangent (no crash)",
    transforms=("grad", "vjp", "new_ref"), intended_on="0.11.2, 0.12.0.1")


register(
    "jax_jacobians_of_internal_ref_functions_fail", "0.10.2",
    "jax.jacfwd / jax.jacrev / jax.hessian of a function that creates and writes its "
    "own ref (`r = new_ref(x); r[...] += x*x; r[...].sum()`) raise ValueError('at vmap "
    "out_axes[0], got axis spec None but output was batched on axis 0')",
    "the Jacobian, the same as column-by-column jvp gives: the ref made inside is "
    "batched once a batched tangent is written into it",
    "issue 6: jacfwd, jacrev and hessian of functions using internal refs work",
    transforms=("jacfwd", "jacrev", "hessian", "vmap", "new_ref"))


register(
    "jax_vmap_of_ref_views_fails", "0.10.2",
    "jax.vmap of a function that takes a view (`r.at[i]`, `r.T`) of a batched ref "
    "argument raises TypeError('Cannot transform type: VmapTracer(aval=Ref...)')",
    "views of batched refs read and write through to the right part of each example's "
    "contents, under any in_axes, eagerly and under jit",
    "issue 6: views work with every transform; batched ref arguments on any in_axes",
    transforms=("vmap", "new_ref"))


register(
    "jax_grad_wrt_ref_argument_fails", "0.10.2, 0.11.2, 0.12.0.1",
    "jax.grad / jax.vjp with respect to a jax.new_ref argument raise ValueError("
    "'Expected cotangent type Ref{float32[3]} but got float32[3]'), whether the function "
    "only reads the ref or writes it; a function that writes it has already written "
    "the ref when the error is raised"
    " (0.10.2). From 0.11.2 JAX refuses by design before running, the ref untouched: "
    "TypeError('grad cannot differentiate with respect to a Ref-typed argument ... use "
    "`jax.vjp` and bind a gradient ref using ... `with_refs`'), for a read-only ref too",
    "with respect to a ref that is only read: the cotangent of its contents, an array of "
    "their shape and dtype; with respect to a ref that is written: a RefError at trace "
    "time, at the write, saying to pass its value r[...] instead -- the ref keeps its "
    "contents",
    "issue 6: grad/vjp with respect to a ref argument that is only read gives the "
    "cotangent of its contents as an array; with respect to a ref that is written, a "
    "clear error; a failed call leaves every ref's contents as they were",
    transforms=("grad", "vjp", "value_and_grad", "new_ref"))


register(
    "jax_failed_transformation_leaves_ref_written", "0.10.2",
    "jax.grad of a function that writes a closed-over ref and then turns out not to "
    "return a scalar raises TypeError with the ref already written",
    "the same error, with every ref the failed call wrote put back as it was (eagerly, "
    "transformations run all-or-nothing: `eager_ref_runtime.all_or_nothing`)",
    "issue 6: a failed call leaves every ref's contents as they were",
    transforms=("grad", "vjp", "jvp", "vmap", "new_ref"))


register(
    "jax_jvp_of_integer_ref_crashes", "0.11.2, 0.12.0.1",
    "jax.jvp of a function that makes an integer ref (`c = new_ref(np.int32(0)); "
    "c[...] += 1; x * c[...]`) raises an internal AttributeError(\"'TypedNdArray' "
    "object has no attribute 'committed'\"); jax.jacrev of the same function works, "
    "and jax.linearize does on 0.12.0.1 but crashes alike on 0.11.2 (jax 0.10.2 gets "
    "all three right)",
    "the tangent, as linearize gives: an integer ref has no tangent and is simply run",
    "jvp, linearize and jacrev are the same derivative; misuse-free code should never "
    "meet an internal AttributeError",
    transforms=("jvp", "new_ref"), intended_on="0.10.2")
