"""`jax.custom_batching.custom_vmap` where JAX's vmap rule handling departs from its
own contract. Pinned in tests/test_custom_batching.py."""
from minijax.divergences.registry import register

register(
    "custom_vmap_rule_gets_numpy_arrays_eagerly", "0.10.2, 0.11.2, 0.12.0.1",
    "eager jax.vmap of a custom_vmap function calls the rule with NumPy arrays (a Python "
    "scalar argument as JAX's TypedFloat) and returns what it computes from them: a rule "
    "`x * scale` makes jax.vmap return a float64 numpy.ndarray (x64 off); under jax.jit "
    "the rule gets tracers and the result is a float32 jax.Array",
    "the rule gets jax Arrays eagerly as under jit, and vmap returns the float32 "
    "jax.Array (`transforms/custom_vmap_rules.py`)",
    "vmap returns jax Arrays of JAX's dtypes, and a custom_vmap rule is written against "
    "JAX's arrays (its docstring's rules use jnp); the result must not depend on jit",
    transforms=("vmap", "custom_vmap"))

register(
    "custom_vmap_rule_output_shape_unchecked", "0.10.2, 0.11.2, 0.12.0.1",
    "an output the rule marks not batched but returns with the batch axis comes out of "
    "jax.vmap with an extra axis (float32[3] per example becomes float32[3, 3]); one "
    "marked batched but returned without it fails with an IndexError from inside JAX",
    "a ValueError naming the output, its shape, its flag and the shape expected",
    "def_vmap's contract: out_batched says whether each output has the batch axis; "
    "an output that contradicts it is the rule's mistake, to be reported as such",
    transforms=("vmap", "custom_vmap"))
