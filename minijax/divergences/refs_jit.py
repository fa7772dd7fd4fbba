"""Refs passed into (or closed over by) an inner `jit`, under autodiff (issue 6).

Pinned in tests/test_refs_jit.py."""
from minijax.divergences.registry import register

register(
    "jax_jacfwd_of_ref_through_inner_jit_fails", "0.10.2",
    "jax.jacfwd / jax.hessian of a function that makes a ref and passes it into an inner "
    "jax.jit -- even one that only reads it (`r = new_ref(3*x); jit(lambda r: r[...]**2)"
    "(r)`) -- raise ValueError('at vmap out_axes[0], got axis spec None but output was "
    "batched on axis 0')",
    "the Jacobian and the Hessian, the same as column-by-column jvp gives",
    "issue 6: jacfwd, jacrev and hessian of functions using internal refs work, with any "
    "transform composed, jit included",
    transforms=("jacfwd", "hessian", "jit", "new_ref"))


register(
    "jax_grad_of_grad_through_inner_jit_ref_write_crashes", "0.10.2",
    "jax.grad of jax.grad of a function whose inner jax.jit writes a ref made outside "
    "the jit (`r = new_ref(x); jit(g)(r)` with `r[...] = r[...] * 2.` in g) crashes with "
    "AttributeError: DynamicJaxprTracer has no attribute accum (grad alone works)"
    ". Fixed in 0.11.2: grad of grad is minijax's",
    "the second derivative, the same as nested jvp gives",
    "issue 6: grad of grad of a function using internal refs works, whatever the "
    "function does with them (an inner jit included)",
    transforms=("grad", "jit", "new_ref"), intended_on="0.11.2, 0.12.0.1")


register(
    "jax_grad_of_ref_overwritten_in_inner_jit_crashes", "0.10.2",
    "jax.grad / jax.vjp / jax.jacrev of a function that overwrites, inside an inner "
    "jax.jit, an internal ref holding a differentiated value with a constant "
    "(`r = new_ref(3*x); jit(g)(r)` with `r[...] = ones` in g) crash with "
    "AttributeError: DynamicJaxprTracer has no attribute accum"
    ". Fixed in 0.11.2: grad and jacrev are minijax's",
    "the overwrite drops the cotangent, as without the jit: the gradient of "
    "`(r[...] * x).sum()` is ones",
    "issue 6: overwriting a ref that held a differentiated value with a constant "
    "simply drops the cotangent (no crash), with and without jit alike",
    transforms=("grad", "vjp", "jacrev", "jit", "new_ref"), intended_on="0.11.2, 0.12.0.1")


register(
    "jax_grad_of_integer_ref_in_inner_jit_crashes", "0.10.2, 0.11.2",
    "jax.grad of a function that passes an integer ref (a counter) into an inner "
    "jax.jit that increments it crashes with AttributeError: DynamicJaxprTracer has no "
    "attribute accum (jax.jvp, and jax.grad without the inner jit, work)"
    ". On 0.11.2 it crashes with AttributeError(\"'TypedNdArray' object has no "
    "attribute 'committed'\") instead; fixed in 0.12.0.1, whose gradient is minijax's "
    "(from 0.11.2 jax.jvp of it crashes: jax_jvp_of_integer_ref_crashes)",
    "an integer ref has no tangent: the counter counts and the gradient is the one "
    "jvp gives",
    "issue 6: integer refs have no tangent, under every transform, with and without "
    "jit alike",
    transforms=("grad", "jit", "new_ref"), intended_on="0.12.0.1")


register(
    "jax_addupdate_of_closed_over_ref_in_inner_jit_crashes", "0.10.2",
    "jax.grad of a function whose inner jax.jit does `jax.ref.addupdate(r, (), x)` on a "
    "closed-over ref with a differentiated x raises an internal TypeError ('Error "
    "interpreting argument to addupdate as a JAX value ... ad_util.Zero')",
    "the same clear error as a `set` gets, with and without the jit: the ref's tangent "
    "is not tracked; create the ref inside or write lax.stop_gradient(value). The ref "
    "keeps its contents",
    "issue 6: writing a differentiated value into a ref whose tangent is not tracked is "
    "a clear error that says what to do",
    transforms=("grad", "jit", "new_ref"))


register(
    "jax_jit_of_vjp_of_indexed_ref_set_with_numpy_cotangent_fails", "0.10.2",
    "jax.jit of a function that takes the vjp of a function setting a ref at an "
    "integer-array index (`r = new_ref(zeros(3)); r[np.array([0, 1, 2])] = x * x`) and "
    "pulls back a NumPy cotangent it closes over raises an internal AttributeError "
    "(\"'TypedNdArray' object has no attribute 'at'\"); with the cotangent passed as an "
    "argument, or with `r[...] = ...`, or without jit, it runs. Fixed in 0.11.2: "
    "0.11.2 and 0.12.0.1 give the cotangent under jit too",
    "the cotangent, under minijax.jit as eagerly",
    "issue 6: a jitted function may close over NumPy arrays and use them as "
    "cotangents; vjp of ref programs works under jit",
    transforms=("jit", "vjp", "new_ref"), intended_on="0.11.2, 0.12.0.1")
