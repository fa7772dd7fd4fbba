"""The Fourier transform against JAX: the `fft` primitive (`minijax.lax.fft`, all four
types over one to three axes) and `minijax.numpy.fft`, for values, dtypes and weak
types (eagerly and under jit), derivatives (grad/jvp/vjp, so every transpose rule
runs), vmap, JAX programs imported through the interop bridge, and bad input."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax import lax as mlax
from minijax.testing import assert_cross_check
from tests.numpy_helpers import check, assert_values_close

rng = np.random.default_rng(7)
X = rng.normal(size=(3, 4)).astype(np.float32)
X5 = rng.normal(size=(2, 5)).astype(np.float32)
Z = (rng.normal(size=(3, 4)) + 1j * rng.normal(size=(3, 4))).astype(np.complex64)
CUBE = rng.normal(size=(2, 3, 4)).astype(np.float32)
INTS = rng.integers(-4, 4, size=(2, 4)).astype(np.int32)
TOL = dict(rtol=2e-5, atol=2e-5)


def _lax(np_):
    return jax.lax if np_ is jnp else mlax


LAX_CASES = {
    "fft_1d": (lambda np_, z: _lax(np_).fft(z, "FFT", (4,)), (Z,)),
    "ifft_2d": (lambda np_, z: _lax(np_).fft(z, _lax(np_).FftType.IFFT, (3, 4)), (Z,)),
    "fft_3d_of_reals": (lambda np_, x: _lax(np_).fft(x, "fft", (2, 3, 4)), (CUBE,)),
    "rfft": (lambda np_, x: (_lax(np_).fft(x, "RFFT", (4,)),
                             _lax(np_).fft(x, "rfft", (3, 4))), (X,)),
    "rfft_odd": (lambda np_, x: _lax(np_).fft(x, "RFFT", (5,)), (X5,)),
    "irfft": (lambda np_, z: (_lax(np_).fft(z[:, :3], "IRFFT", (4,)),
                              _lax(np_).fft(z[:, :3], "IRFFT", (5,)),
                              _lax(np_).fft(z[:, :3], "irfft", (3, 4))), (Z,)),
    "no_lengths": (lambda np_, x: _lax(np_).fft(x, "FFT", ()), (X,)),
    "ints": (lambda np_, x: (_lax(np_).fft(x, "FFT", (4,)), _lax(np_).fft(x, "RFFT", (4,))),
             (INTS,)),
}


@pytest.mark.parametrize("name", sorted(LAX_CASES))
def test_lax_fft_matches_jax(name):
    fn, args = LAX_CASES[name]
    check(fn, *args, eager=True, **TOL)


def _jnp_cases(np_, x, z):
    f = np_.fft
    return (f.fft(x), f.fft(z, n=6), f.fft(z, n=2, axis=0), f.ifft(z, norm="ortho"),
            f.fft2(z), f.ifft2(z, s=(2, 5), norm="forward"), f.fftn(z), f.ifftn(x, axes=(0,)),
            f.rfft(x), f.rfft(x, n=7, norm="ortho"), f.irfft(z), f.irfft(z, n=5, axis=0),
            f.rfft2(x), f.irfft2(z, s=(3, 6)), f.rfftn(x, axes=(1, 0), norm="forward"),
            f.irfftn(z, norm="backward"), f.hfft(z), f.hfft(z, n=5, norm="ortho"),
            f.ihfft(x), f.ihfft(x, n=6, axis=0, norm="forward"))


def test_numpy_fft_matches_jax():
    check(_jnp_cases, X, Z, eager=True, **TOL)


def test_numpy_fft_of_cube_over_named_axes():
    check(lambda np_, x: (np_.fft.fftn(x, axes=(2, 0)), np_.fft.rfftn(x, s=(2, 2, 6)),
                          np_.fft.irfftn(np_.fft.rfftn(x), s=x.shape),
                          np_.fft.fft(x, axis=1)), CUBE, eager=True, **TOL)


def test_frequencies_and_shifts_match_jax():
    check(lambda np_, x: (np_.fft.fftfreq(5), np_.fft.fftfreq(6, 0.25),
                          np_.fft.rfftfreq(7, d=2.0), np_.fft.rfftfreq(8),
                          np_.fft.fftfreq(4, dtype=np_.float16),
                          np_.fft.fftshift(x), np_.fft.ifftshift(x),
                          np_.fft.fftshift(x, axes=1), np_.fft.ifftshift(x, axes=(0,)),
                          np_.fft.fftshift(np_.fft.fftfreq(5))), X, eager=True)


def test_fftfreq_with_traced_spacing():
    f = lambda np_, d: np_.fft.fftfreq(4, d)  # noqa: E731
    check(f, np.float32(0.5), eager=True)


def _loss(np_, transform, weights):
    """A real loss of a (possibly complex) transform result: every part weighted."""
    def loss(x):
        y = transform(np_, x)
        if np_.iscomplexobj(y):
            return np_.sum(np_.real(y) * weights[: y.shape[-1]] + np_.imag(y) ** 2)
        return np_.sum(y * weights[: y.shape[-1]] + y ** 2)
    return loss


GRAD_CASES = {
    "fft": (lambda np_, x: np_.fft.fft(x), X),
    "ifft_of_complex": (lambda np_, z: np_.fft.ifft(z), Z),
    "fft2_of_complex": (lambda np_, z: np_.fft.fft2(z, norm="ortho"), Z),
    "rfft_even": (lambda np_, x: np_.fft.rfft(x), X),
    "rfft_odd": (lambda np_, x: np_.fft.rfft(x), X5),
    "rfft2": (lambda np_, x: np_.fft.rfft2(x), X),
    "rfftn_cube": (lambda np_, x: np_.fft.rfftn(x), CUBE),
    "irfft_even": (lambda np_, z: np_.fft.irfft(z), Z),
    "irfft_odd": (lambda np_, z: np_.fft.irfft(z, n=5), Z),
    "irfft2": (lambda np_, z: np_.fft.irfft2(z, norm="forward"), Z),
    "hfft": (lambda np_, z: np_.fft.hfft(z), Z),
    "ihfft": (lambda np_, x: np_.fft.ihfft(x), X),
    "roundtrip": (lambda np_, x: np_.fft.irfft(np_.fft.rfft(x) * (1 + 2j), n=4), X),
}
WEIGHTS = np.linspace(0.5, 2.0, 8).astype(np.float32)


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grad_matches_jax(name):
    transform, x = GRAD_CASES[name]
    # JAX's side as one jitted program (the comparison has a tolerance), not op by op
    expected = jax.jit(jax.grad(_loss(jnp, transform, WEIGHTS)))(x)
    ours = _loss(mnp, transform, WEIGHTS)
    assert_values_close(minijax.grad(ours)(x), expected, 1e-4, 1e-4)
    assert_values_close(minijax.jit(minijax.grad(ours))(x), expected, 1e-4, 1e-4)


@pytest.mark.parametrize("fft_type, lengths, x", [
    ("FFT", (4,), Z), ("IFFT", (3, 4), Z), ("RFFT", (4,), X), ("RFFT", (5,), X5),
    ("RFFT", (3, 4), X), ("IRFFT", (4,), Z[:, :3]), ("IRFFT", (5,), Z[:, :3]),
    ("IRFFT", (3, 4), Z[:, :3])])
def test_jvp_and_vjp_of_each_type_match_jax(fft_type, lengths, x):
    """The transpose rules, with a complex cotangent (JAX's convention, Re(ct . t))."""
    def run(api, lax):
        f = lambda v: lax.fft(v, fft_type, lengths)  # noqa: E731
        out, pullback = api.vjp(f, x)
        ct = (np.cos(np.arange(out.size)).reshape(out.shape)
              + (1j * np.sin(np.arange(out.size)).reshape(out.shape)
                 if np.iscomplexobj(out) else 0)).astype(out.dtype)
        return api.jvp(f, (x,), (np.ones_like(x),)), pullback(ct)
    assert_values_close(run(minijax, mlax), run(jax, jax.lax), 1e-4, 1e-4)


def test_vmap_matches_jax():
    def run(api, np_, lax):
        return (api.vmap(np_.fft.fft, in_axes=1)(X),
                api.vmap(lambda z: lax.fft(z, "IRFFT", (4,)), in_axes=0)(Z[:, :3]),
                api.vmap(lambda x: np_.fft.rfft2(x), in_axes=2)(CUBE),
                api.vmap(api.grad(lambda x: np_.sum(np_.abs(np_.fft.rfft(x)) ** 2)))(X))
    # JAX's side as one jitted program (the comparison has a tolerance), not op by op
    assert_values_close(run(minijax, mnp, mlax), jax.jit(lambda: run(jax, jnp, jax.lax))(),
                        1e-4, 1e-4)


def test_imported_jax_programs_cross_check():
    assert_cross_check(lambda x: jnp.sum(jnp.abs(jnp.fft.rfft2(x)) ** 2), X,
                       transforms=["eager", "jit", "grad", "jvp", "vmap"], policies=(),
                       jit_oracle=True)
    assert_cross_check(lambda z: jnp.real(jnp.fft.irfft(jnp.fft.ifft(z), n=6)), Z,
                       transforms=["eager", "vmap"], policies=(), jit_oracle=True)


def test_text_form_prints_the_type_by_name():
    closed = minijax.make_jaxpr(lambda x: mnp.fft.rfft2(x))(X)
    assert "fft[fft_lengths=(3, 4) fft_type='RFFT']" in str(closed)


def test_lax_fft_errors_match_jax():
    for lax in (jax.lax, mlax):
        with pytest.raises(ValueError, match="Unknown FFT type"):
            lax.fft(Z, "dct", (4,))
        with pytest.raises(TypeError, match="Unknown FFT type value"):
            lax.fft(Z, 0, (4,))
        with pytest.raises(ValueError, match="only real valued inputs"):
            lax.fft(Z, "RFFT", (4,))
        with pytest.raises(ValueError, match="minor dimensions"):
            lax.fft(Z, "FFT", (5,))
        with pytest.raises(ValueError, match="at least as many"):
            lax.fft(Z, "FFT", (2, 3, 4))
        with pytest.raises(ValueError, match="RFFT input must be float32 or float64"):
            lax.fft(np.ones(4, np.float16), "RFFT", (4,))


@pytest.mark.parametrize("call, message", [
    (lambda f: f.fft(X, norm="sideways"), "Invalid norm value"),
    (lambda f: f.fft(X, axis=(0, 1)), "does not support multiple axes"),
    (lambda f: f.fftn(X, axes=(1, 1)), "does not support repeated axes"),
    (lambda f: f.fftn(X, s=(2, 0)), "Shape should be positive"),
    (lambda f: f.fftn(X, s=(2, 2), axes=(0,)), "Shape and axes have different lengths"),
    (lambda f: f.fft2(X, axes=(0,)), "only supports 2 axes"),
    (lambda f: f.fftfreq([4]), "only takes an int"),
    (lambda f: f.rfftfreq(4, d=[1.0]), "only takes a single value"),
])
def test_numpy_fft_errors_match_jax(call, message):
    for fft in (jnp.fft, mnp.fft):
        with pytest.raises(ValueError, match=message):
            call(fft)


def test_lists_are_refused_as_in_jax():
    for fft in (jnp.fft, mnp.fft):
        with pytest.raises(TypeError):
            fft.fft([1.0, 2.0])


def test_more_than_three_axes_are_split_as_in_jax():
    x4 = rng.normal(size=(2, 3, 2, 4)).astype(np.float32)
    x5 = rng.normal(size=(2, 2, 1, 2, 4)).astype(np.float32)
    check(lambda np_, x, y: (np_.fft.fftn(x), np_.fft.ifftn(x, axes=(3, 0, 1, 2)),
                             np_.fft.rfftn(x), np_.fft.irfftn(np_.fft.rfftn(y)),
                             np_.fft.fftn(y, norm="ortho")), x4, x5, **TOL)
    assert_values_close(minijax.grad(lambda x: mnp.sum(mnp.abs(mnp.fft.rfftn(x))))(x4),
                        jax.jit(jax.grad(lambda x: jnp.sum(jnp.abs(jnp.fft.rfftn(x)))))(x4),
                        1e-4, 1e-4)
