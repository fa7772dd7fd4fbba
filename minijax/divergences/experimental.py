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

register(
    "checkify_index_check_inside_shard_map_crashes", "0.10.2, 0.11.2, 0.12.0.1",
    "checkify(f, errors=index_checks) where f is a shard_map (or a pmap) whose body "
    "indexes with a traced index fails inside JAX with 'ValueError: foreach() argument "
    "2 is shorter than argument 1', whether or not the index is in bounds",
    "each device's out-of-bounds error, reported as 'at mapped index k: out-of-bounds "
    "indexing ...' as for the user, NaN and division checks JAX makes in the same body",
    "checkify's documentation lists shard_map among what a checkified function may use, "
    "and JAX makes the other automatic checks there; the failure is an internal arity "
    "mismatch (the index error's payload), not a refusal",
    transforms=("checkify", "shard_map", "pmap", "gather"))

register(
    "checkify_after_shard_map_crashes", "0.10.2, 0.11.2, 0.12.0.1",
    "checkify of a function that makes a check after a shard_map whose body has one "
    "(or runs a second such shard_map, or runs one in a scan or cond) fails inside JAX: "
    "the shard_map's error has one row per device and the next check's (or the loop "
    "carry's) has none ('TypeError: select cases must have the same shapes', an "
    "IndexError when the error is read, or a carry type mismatch)",
    "the later checks are made on every device's row, so get() names each device's "
    "first error, in program order, the check after the map included; a loop or cond "
    "around a shard_map carries the error per device from the start",
    "checkify's docstring: the Error holds 'the first error which occurred'; a check "
    "after a shard_map is an ordinary check, not a refusal",
    transforms=("checkify", "shard_map"))
