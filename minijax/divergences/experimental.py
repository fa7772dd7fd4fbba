"""`jax.experimental` modules where JAX departs from its own contract. Pinned in
tests/test_experimental_checkify.py."""
from minijax.divergences.registry import register

register(
    "checkify_check_error_codes_collide", "0.10.2",
    "checkify of a function that runs check(...) and then check_error(e) on an Error "
    "from an inner checkify, both failing: Error.get() reports the inner (later) "
    "error, because the discharged error's codes start from 0 again and tie with the "
    "codes already handed out",
    "the first error in program order (the outer check): the merged error's codes are "
    "shifted past every code used so far, as JAX 0.11 and later do",
    "checkify's docstring: the Error 'will correspond to the first error which "
    "occurred'",
    transforms=("checkify",), intended_on="0.11.2, 0.12.0.1")

register(
    "checkify_grad_of_custom_jvp_with_nan_checks_crashes", "0.10.2, 0.11.2, 0.12.0.1",
    "grad of the output of checkify(f, errors=nan_checks) where f calls jax.nn.softplus "
    "(jnp.logaddexp, a custom_jvp function) fails inside JAX with 'ValueError: foreach() "
    "argument 2 is shorter than argument 1'",
    "the gradient through the custom function's own rule (sigmoid, for softplus), with "
    "the function's checks still made",
    "checkify's docstring and JAX's documentation say a checkified function can be "
    "differentiated; the failure is an internal arity mismatch, not a refusal",
    transforms=("checkify", "grad", "custom_jvp"))
