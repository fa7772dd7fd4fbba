"""`minijax.experimental.jet`: where `jax.experimental.jet` does otherwise than intended."""
from .registry import register

register(
    "jet_of_custom_jvp_or_custom_vjp_leaks_a_tracer", "0.10.2, 0.11.2, 0.12.0.1",
    "jet of a custom_jvp or custom_vjp function (jax.nn.relu among them) raises "
    "UnexpectedTracerError: a JetTracer escapes from the call of the primal body",
    "the jet of the function's primal body, its custom rules unused",
    "JAX's JetTrace.process_custom_jvp_call and process_custom_vjp_call say so: they "
    "drop the rules and call the primal function on the jet tracers (the rules are "
    "first order and say nothing of higher terms)",
    transforms=("jet", "custom_jvp", "custom_vjp"))
