"""A linear recurrence by associative_scan, smoothed by an FFT low-pass filter, then fitted."""
import jax
import jax.numpy as jnp
from jax import lax, random


def recurrence(decay, inputs):
    # h_t = decay_t * h_{t-1} + x_t as a scan over affine maps (a, b): h -> a * h + b
    def combine(left, right):
        a_l, b_l = left
        a_r, b_r = right
        return a_l * a_r, a_r * b_l + b_r

    _, h = lax.associative_scan(combine, (decay, inputs))
    return h


def sequential(decay, inputs):
    def step(h, ab):
        a, b = ab
        h = a * h + b
        return h, h
    return lax.scan(step, jnp.zeros(()), (decay, inputs))[1]


def low_pass(signal, keep=5):
    spectrum = jnp.fft.rfft(signal)
    freqs = jnp.fft.rfftfreq(signal.shape[-1])
    spectrum = jnp.where(jnp.arange(freqs.shape[0]) < keep, spectrum, 0)
    return jnp.fft.irfft(spectrum, n=signal.shape[-1])


def model(params, inputs):
    decay = jax.nn.sigmoid(params["logit"]) * jnp.ones_like(inputs)
    return low_pass(recurrence(decay, inputs * params["gain"]))


@jax.jit
def report(params, inputs):
    decay = jnp.full((32,), 0.8)
    spectrum = jnp.fft.fft(inputs[:8] + 1j * inputs[8:16])
    return {"params": params, "fit": model(params, inputs),
            "scan_matches": jnp.max(jnp.abs(recurrence(decay, inputs) -
                                            sequential(decay, inputs))) < 1e-5,
            "power": jnp.abs(spectrum) ** 2, "angle": jnp.angle(spectrum),
            "fft2": jnp.fft.ifft2(jnp.fft.fft2(inputs.reshape(4, 8))).real}


def main():
    k1, k2 = random.split(random.PRNGKey(28))
    inputs = random.normal(k1, (32,))
    true = {"logit": jnp.array(1.0), "gain": jnp.array(0.7)}
    observed = jax.jit(model)(true, inputs) + 0.01 * random.normal(k2, (32,))
    params = {"logit": jnp.array(0.0), "gain": jnp.array(1.0)}

    @jax.jit
    def update(params):
        grads = jax.grad(lambda p: jnp.mean((model(p, inputs) - observed) ** 2))(params)
        return jax.tree_util.tree_map(lambda p, g: p - 0.5 * g, params, grads)

    for _ in range(10):
        params = update(params)
    return report(params, inputs)
