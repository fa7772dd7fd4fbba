"""State in mutable arrays: a counter and a running sum, across jit and a scan."""
import jax
import jax.numpy as jnp
from jax import lax


def main():
    counter = jax.new_ref(jnp.zeros((), jnp.int32))
    total = jax.new_ref(jnp.zeros(3))

    @jax.jit
    def observe(x):
        counter[...] += 1
        total[...] += x
        return jnp.sum(x)

    results = [observe(jnp.arange(3.0) * i) for i in range(4)]

    def body(carry, x):
        total[...] = total[...] * 0.5 + x
        return carry + 1, total[...]

    steps, history = jax.jit(lambda xs: lax.scan(body, 0, xs))(jnp.ones((3, 3)))
    return {"counter": counter[...], "total": total[...], "results": jnp.stack(results),
            "steps": steps, "history": history}
