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
