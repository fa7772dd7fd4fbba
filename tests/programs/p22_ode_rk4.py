"""A damped pendulum integrated with RK4 in fori_loop, fitted to data by gradient descent."""
import jax
import jax.numpy as jnp
from jax import lax


def vector_field(state, params):
    theta, omega = state
    return jnp.stack([omega, -params["g"] * jnp.sin(theta) - params["damping"] * omega])


def rk4_step(state, params, dt):
    k1 = vector_field(state, params)
    k2 = vector_field(state + 0.5 * dt * k1, params)
    k3 = vector_field(state + 0.5 * dt * k2, params)
    k4 = vector_field(state + dt * k3, params)
    return state + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)


def integrate(params, state0, n_steps=40, dt=0.05):
    def body(i, carry):
        state, trajectory = carry
        state = rk4_step(state, params, dt)
        return state, trajectory.at[i].set(state[0])

    trajectory = jnp.zeros(n_steps)
    _, trajectory = lax.fori_loop(0, n_steps, body, (state0, trajectory))
    return trajectory


def main():
    true_params = {"g": jnp.array(9.0), "damping": jnp.array(0.3)}
    state0 = jnp.array([1.0, 0.0])
    observed = jax.jit(integrate)(true_params, state0)

    def loss(params):
        return jnp.mean((integrate(params, state0) - observed) ** 2)

    @jax.jit
    def update(params):
        value, grads = jax.value_and_grad(loss)(params)
        return {k: params[k] - 0.5 * grads[k] for k in params}, value

    params = {"g": jnp.array(7.0), "damping": jnp.array(0.1)}
    history = []
    for _ in range(10):
        params, value = update(params)
        history.append(value)
    @jax.jit
    def sensitivities(params, state0):
        return {"params": jax.jacfwd(integrate)(params, state0),
                "state0": jax.jacrev(lambda s: integrate(params, s)[-1])(state0)}

    return {"params": params, "losses": jnp.stack(history),
            "sensitivity": sensitivities(params, state0)}
