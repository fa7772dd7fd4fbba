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
