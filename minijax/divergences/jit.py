"""Valid programs that JAX fails on only under `jax.jit`: in tracing or in XLA.

Pinned in tests/test_divergences_jit.py."""
from minijax.divergences.registry import register

register(
    "xla_aborts_on_rev_of_a_whole_operand_scatter", "0.10.2",
    "jax.jit of `jnp.flip(jnp.zeros(2).at[:].set(x))` kills the whole Python process "
    "(SIGABRT, a CHECK failure in XLA's algebraic simplifier: 'Invalid binary "
    "instruction opcode map'); `.at[:].add` / `.multiply` / `.max` do the same, on any "
    "axis; a scatter that leaves part of its operand (`.at[1:]`), one with an index "
    "array, or any operation between the two runs; eagerly it runs",
    "the reversed array, eagerly and under minijax.jit: the XLA lowering puts an "
    "optimization_barrier between a scatter and a rev of its result, also where the "
    "rev is inside a jit call (`backends/xla.py` `barrier_between_scatter_and_rev`)",
    "reversing the result of an indexed update is a valid program; jit means to run "
    "what runs eagerly, and no input should crash the interpreter",
    transforms=("jit", "flip"))

register(
    "jax_jit_of_float16_dot_product_attention_fails_on_cpu", "0.10.2",
    "jax.jit(jax.nn.dot_product_attention) of float16 query/key/value raises "
    "ValueError(\"The precision 'F16_F16_F32' is not supported by dot_general on "
    "CPU\"); the same call without jit runs and gives float16 results",
    "the float16 attention, under minijax.jit as eagerly (equal to JAX's eager values)",
    "jit means to run what runs eagerly; the float16 inputs are valid and JAX's own "
    "eager call accepts them on the same CPU",
    transforms=("jit", "dot_product_attention", "float16"))

register(
    "jax_explain_cache_misses_cannot_explain_a_static_argument_change",
    "0.11.2, 0.12.0.1",
    "under jax.explain_cache_misses, a jit call that traces again because a static "
    "argument's value changed (f(x, 1), then f(x, 3) with static_argnums=1) logs "
    "'cache miss explanation unavailable' for the closest previous key; 0.10.2 "
    "named the static node whose value differs",
    "'different static arguments:' and '* at n (by position), now 3 and before 1' "
    "(frontend/cache_misses.py)",
    "the flag exists to say why a call traced again, and a changed static value is "
    "the cause JAX's own jit documentation names first for retracing",
    transforms=("jit", "explain_cache_misses", "static_argnums"),
    intended_on="0.10.2")

register(
    "monitoring_clear_keeps_scalar_listeners", "0.10.2, 0.11.2, 0.12.0.1",
    "jax.monitoring.clear_event_listeners() leaves the listeners registered with "
    "register_scalar_listener in place: a later record_scalar still calls them (the "
    "function's `global` statement omits `_scalar_listeners`, so it rebinds a local)",
    "minijax.monitoring.clear_event_listeners() unregisters listeners of all four "
    "kinds; a later record_scalar calls none",
    "the function clears the registry (its docstring: 'Clear event listeners'), and "
    "its body assigns the scalar list an empty one beside the other three",
    transforms=("monitoring", "clear_event_listeners", "record_scalar"))
