"""Remat (issue 7): where jax.checkpoint does otherwise than intended."""
from minijax.divergences.registry import register

register(
    "remat_grad_external_ref_effect_runs_twice", "0.10.2",
    "under jax.grad of a jax.remat function that increments an external ref, the "
    "increment runs twice and the recompute differentiates against the incremented "
    "value",
    "the effect runs once, in the forward pass; the recompute reads a fresh internal "
    "ref initialised from the ref's value captured as a residual",
    "the intent stated in JAX PR #33050 (docs/remat.md, section 5)",
    transforms=("remat", "checkpoint", "grad", "new_ref"))
register(
    "save_anything_except_these_names_saves_everything", "0.10.2",
    "jax.checkpoint_policies.save_anything_except_these_names(*names) is "
    "`lambda *_, **__: True`: the named values are saved too, as by everything_saveable",
    "every value is saved except the outputs of checkpoint_name with one of the given "
    "names, which are recomputed",
    "its docstring: 'Save any values (not just named ones) excluding the names given'",
    transforms=("checkpoint", "remat", "checkpoint_policies"))
register(
    "offload_policy_grad_of_grad_fails", "0.10.2, 0.11.2, 0.12.0.1",
    "jax.grad(jax.grad(jax.checkpoint(f, policy=P))) with an offloading policy "
    "(save_and_offload_only_these_names, offload_dot_with_no_batch_dims) that offloads a "
    "value of the second-order pass to pinned_host raises ValueError 'Expected cotangent "
    "type float32[2,2] but got float32<host>[2,2]' (first-order grad works)",
    "the offloaded values are saved like any other residual (minijax has no memory "
    "kinds); grad of grad gives what the same policy without offloading gives",
    "the policies' docstrings: 'Same as save_only_these_names / "
    "dots_with_no_batch_dims_saveable, but offload to CPU memory instead of recomputing' "
    "-- where a residual lives is not meant to change what can be differentiated",
    transforms=("checkpoint", "remat", "checkpoint_policies", "grad"))
register(
    "remat_grad_debug_print_runs_again_in_recomputation", "0.10.2",
    "under jax.grad of a jax.checkpoint function that calls jax.debug.print, the "
    "print runs in the forward pass and again in the backward pass's recomputation "
    "(twice per gradient, whatever the policy; once more per call of a vjp pullback)",
    "the print runs once per forward evaluation; the recomputation and the pullback "
    "print nothing",
    "issue 7: debug.print inside a remat-ed function follows the rule of ref effects, "
    "which run once, in the forward pass (JAX PR #33050's intent for effects)",
    transforms=("remat", "grad", "vjp", "debug", "print"))
register(
    "checkpoint_static_argnames_ignored", "0.10.2, 0.11.2, 0.12.0.1",
    "jax.checkpoint(f, static_argnames=...) accepts the parameter and only uses it to "
    "name arguments in its debug information: a named argument is still traced, so a "
    "str one is refused ('not a valid JAX type') and a numeric one cannot steer Python "
    "control flow",
    "the named arguments are static, by keyword or by position, as jax.jit's "
    "static_argnames and checkpoint's own static_argnums make them",
    "the parameter's name, its type (str | Iterable[str]) in checkpoint's signature, "
    "and jit's parameter of the same name all say the named arguments are static",
    transforms=("checkpoint", "remat", "static_argnames"))
register(
    "jax_checkpoint_grad_of_a_barrier_with_a_constant_tangent_fails",
    "0.11.2, 0.12.0.1",
    "jax.grad of a jax.checkpoint function (any policy) that passes, through one "
    "lax.optimization_barrier, a value with a tangent and a custom_jvp result whose "
    "rule returns a concrete zero tangent (jnp.zeros_like) raises AttributeError: the "
    "barrier's transpose rule calls `.accum` on every operand of the linearized "
    "barrier, and that zero is a constant there, not a linear input. Without the "
    "checkpoint, or with a barrier of the custom_jvp result alone, it works; 0.10.2 "
    "gives the gradient",
    "the gradient: 1.0 for optimization_barrier((a, g(a)))[0], as JAX 0.10.2 and "
    "JAX without the checkpoint",
    "checkpoint is documented as changing what is saved, not what is computed, and a "
    "custom_jvp rule may return any tangent of the right type; an internal "
    "AttributeError names nothing wrong with the program; found by the fuzzer (seed "
    "rm16:151)",
    transforms=("checkpoint", "grad", "optimization_barrier", "custom_jvp"),
    intended_on="0.10.2")
