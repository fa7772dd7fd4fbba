"""Refs in programs found by generating random programs (issue 17).

Pinned in tests/test_refs_found.py."""
from minijax.divergences.registry import register

register(
    "jax_jacfwd_of_while_with_internal_ref_fails", "0.10.2",
    "jax.jacfwd of a function whose lax.while_loop body creates a ref from the carry "
    "and reads it back (`r = new_ref(v); r[...] = r[...] * 2.; return i + 1, "
    "freeze(r)`) raises ValueError('at vmap out_axes[0], got axis spec None but output "
    "was batched on axis 0'), although jax.jvp and jax.linearize of it are right",
    "the derivative that jvp gives",
    "issue 17: a ref created inside a loop body is pure from outside; every forward-"
    "mode transform of the loop works",
    transforms=("jacfwd", "while_loop", "new_ref"))

register(
    "jax_linearize_of_checkpoint_writing_earlier_ref_is_wrong", "0.10.2",
    "for a function that makes `r = new_ref(x)` and then calls a jax.checkpoint-ed "
    "function writing `r[...] = r[...] * y`, jax.linearize returns a wrong tangent "
    "(the write's derivative is counted again: 3.82 instead of jvp's 3.07 at x=1.5 "
    "for `sin(y) + r[...]`), and jax.grad / jax.vjp / jax.jacrev crash with "
    "AttributeError: 'ValAccum' object has no attribute 'ref'",
    "linearize, grad, vjp and jacrev agree with jvp",
    "issue 17: a checkpoint-ed function may write a ref created earlier in the "
    "differentiated function; the ref's tangent and cotangent go through it",
    transforms=("linearize", "grad", "vjp", "jacrev", "checkpoint", "new_ref"))

register(
    "jax_jit_of_custom_jvp_using_refs_fails", "0.10.2",
    "jax.jit of a function calling a jax.custom_jvp function that uses refs -- its own "
    "(`t = new_ref(x)` inside), or one passed as an argument, read or written -- raises "
    "NotImplementedError('No state discharge rule implemented for primitive: "
    "custom_jvp_call'); eagerly and under grad it works",
    "the same value and ref contents as eagerly",
    "issue 17: custom_jvp / custom_vjp functions may use refs of their own and refs "
    "passed in, eagerly and under jit alike",
    transforms=("jit", "custom_jvp", "new_ref"))

register(
    "jax_grad_of_scan_over_custom_jvp_using_refs_fails", "0.12.0.1",
    "jax.grad of a function whose lax.scan body calls a jax.custom_jvp function that "
    "makes a ref of its own (`t = new_ref(x)` inside) raises NotImplementedError('No "
    "state discharge rule implemented for primitive: custom_jvp_call'), also when the "
    "function is given no ref; the same loop written out in Python, or the call under "
    "checkpoint, is differentiated, and 0.10.2 and 0.11.2 differentiate the scan",
    "the gradient of the loop written out, with the user's jvp rule",
    "issue 17: a custom_jvp function may use refs of its own, and a scan body may call "
    "any function that runs outside one; JAX 0.11 differentiated this very program",
    transforms=("grad", "scan", "custom_jvp", "new_ref"), intended_on="0.10.2, 0.11.2")

register(
    "jax_scan_over_custom_jvp_using_refs_fails", "0.10.2, 0.11.2, 0.12.0.1",
    "a lax.scan, lax.while_loop (fori_loop) or lax.cond whose body calls a "
    "jax.custom_jvp function using a ref -- one passed in, read or written, or its own "
    "`t = new_ref(x)` -- fails without any differentiation, eagerly and under jit: "
    "NotImplementedError('No state discharge rule implemented for primitive: "
    "custom_jvp_call'). Minimal: f = jax.custom_jvp(lambda x, r: x * r[...]) with any "
    "rule, r = jax.new_ref(2.0), jax.lax.scan(lambda c, _: (f(c, r), None), 1.5, "
    "length=2). The call outside the loop, the loop under jax.jvp or jax.grad, and a "
    "custom_vjp function in the same loop run. The cause is the one of "
    "jax_jit_of_custom_jvp_using_refs_fails (custom_jvp_call has no discharge rule), "
    "met here by the loop's own discharge of its body rather than by jit",
    "the values and ref contents of the loop written out in Python, eagerly and under "
    "minijax.jit",
    "issue 17: a custom_jvp function may use refs of its own and refs passed in, and "
    "a loop or cond body may call any function that runs outside one",
    transforms=("scan", "while_loop", "fori_loop", "cond", "custom_jvp", "new_ref"))

register(
    "jax_jit_of_custom_vjp_with_unused_ref_argument_fails", "0.10.2",
    "jax.jit of a function passing a ref to a jax.custom_vjp function whose primal "
    "body does not use it -- the gradient-stashing recipe `f(x, r)` (fwd keeps r as the "
    "residual, bwd writes into it), or a body using only refs of its own -- fails "
    "without differentiating: TypeError('No constant handler for type: <class "
    "'jax._src.core.Ref'>') or ValueError('Did not ask for inval to be discharged but "
    "it was'); jax.jit(jax.grad(...)) of the same works",
    "the primal value; bwd never runs, so the ref is unchanged",
    "issue 17: a ref may be a primal argument of a custom_vjp function, under jit too",
    transforms=("jit", "custom_vjp", "new_ref"))

register(
    "jax_donating_a_ref_argument_fails", "0.10.2",
    "jax.jit(f, donate_argnums=0)(r, x) with a ref r that f writes fails before running: "
    "JaxRuntimeError('INVALID_ARGUMENT: Parameter 0 index {} is already aliased with one "
    "output, thus it cannot be added as a buffer donor'); where f only reads r the call "
    "runs but donates nothing (a warning says the donated buffer was not usable)",
    "the call runs and donates the ref's buffer: the jax.Array the ref held is deleted, "
    "the new contents are written into that buffer, and the ref keeps working",
    "issue 17: donate_argnums may name a ref argument; donating hands its buffer to XLA",
    transforms=("jit", "donate_argnums", "new_ref"))

register(
    "jax_custom_vjp_taking_a_ref_in_a_differentiated_cond_fails", "0.10.2, 0.11.2",
    "jax.grad (and jax.jit of it) of a function whose lax.cond branch calls a "
    "jax.custom_vjp function given a ref, when fwd keeps the ref as a residual -- the "
    "gradient-stashing recipe, `bwd` writing the cotangent into it -- raises "
    "KeyError(<class 'jax._src.state.types.AbstractRef'>); without the cond it works"
    ". Fixed in 0.12.0.1: bwd writes the cotangent into the ref, as minijax's",
    "what the recipe gives without the cond: bwd of the branch that ran writes the "
    "cotangent into the ref, once",
    "issue 17: a custom_jvp / custom_vjp function taking a ref works inside a "
    "differentiated cond branch as it does outside",
    transforms=("grad", "cond", "custom_vjp", "new_ref"), intended_on="0.12.0.1")

register(
    "jax_custom_jvp_with_own_refs_in_differentiated_control_flow_fails", "0.10.2",
    "jax.jvp of a function whose lax.cond branch or lax.while_loop body calls a "
    "jax.custom_jvp function given a ref, which makes a ref of its own inside, raises "
    "NotImplementedError('No state discharge rule implemented for primitive: "
    "custom_jvp_call'); the same program without the cond, or with the loop written "
    "out in Python, works",
    "the jvp of the program without the cond / with the loop written out: the user's "
    "jvp rule runs where the function is called",
    "issue 17: a custom function taking a ref works inside a differentiated cond branch "
    "or while_loop body (forward mode) as it does outside",
    transforms=("jvp", "cond", "while_loop", "custom_jvp", "new_ref"))

register(
    "jax_linearize_of_while_with_custom_jvp_ref_write_writes_twice", "0.10.2",
    "jax.linearize of a function whose lax.while_loop body calls a jax.custom_jvp "
    "function whose jvp rule writes a ref passed to it (`r[...] += x`) performs every "
    "write twice: the ref gains twice what jax.jvp of the same function adds",
    "each write happens once, under linearize as under jvp",
    "issue 17: the effects on a ref happen once whatever the transform",
    transforms=("linearize", "while_loop", "custom_jvp", "new_ref"))
