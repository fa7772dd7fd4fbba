"""`minijax.scipy.signal`'s FFT-based functions against `jax.scipy.signal`:
`fftconvolve`, `detrend`, `stft`, `istft`, `csd`, `welch` on short signals, eagerly
and under jit (values, dtypes, weak types), under grad and vmap over a batch of
signals; their errors; and the one divergence (istft with an odd nperseg)."""
from __future__ import annotations

import jax
import jax.scipy.signal  # noqa: F401
import numpy as np
import pytest

import minijax
import minijax.scipy.signal  # noqa: F401
from tests.library_helpers import assert_raises_as_jax, check_everywhere
from tests.test_divergences import pins

rng = np.random.default_rng(41)
# two signals of 40 samples: vmap takes the leading axis, the functions work on the last
X = rng.normal(size=(2, 40)).astype(np.float32)
Y = rng.normal(size=(2, 40)).astype(np.float32)


def _parts(z):
    # complex results compared (and differentiated) as their real and imaginary parts
    return (z.real, z.imag)


def _like(x, y):
    # y's first row when vmap has taken x's leading axis: operands of one rank
    return y[(0,) * (y.ndim - x.ndim)]


def _fftconvolve(mod, x, y):
    s = mod.scipy.signal
    y = _like(x, y)
    return (s.fftconvolve(x, y[..., :7]), s.fftconvolve(x, y[..., :6], "same"),
            s.fftconvolve(x[..., :5], y, "valid"), s.fftconvolve(x, y[..., :5], axes=-1),
            *_parts(s.fftconvolve(x + 1j * y, y[..., :3])))


def _detrend(mod, x):
    s = mod.scipy.signal
    return (s.detrend(x), s.detrend(x, type="constant"), s.detrend(x, bp=[10, 25]))


def _stft_istft(mod, x):
    # stft's options, and the round trip: istft of three of them
    s, swap = mod.scipy.signal, mod.numpy.swapaxes
    f1, t1, z1 = s.stft(x, nperseg=16)
    f2, t2, z2 = s.stft(x, fs=2.0, nperseg=8, noverlap=2, nfft=10, boundary="even",
                        padded=False, detrend="constant")
    f3, t3, z3 = s.stft(x, nperseg=9, noverlap=3, boundary="odd", return_onesided=False)
    z_odd = s.stft(x, nperseg=9, noverlap=3)[2]
    return (f1, t1, *_parts(z1), f2, t2, *_parts(z2), f3, t3, *_parts(z3),
            s.istft(z1, nperseg=16), s.istft(z_odd, nperseg=9, noverlap=3, nfft=9),
            s.istft(swap(z1, -1, -2), time_axis=-2, freq_axis=-1),
            *_parts(s.istft(z3, nperseg=9, noverlap=3, input_onesided=False,
                            boundary=False)[1]))


def _welch_csd(mod, x, y):
    s = mod.scipy.signal
    y = _like(x, y)
    f1, p1 = s.welch(x, nperseg=16)
    f2, p2 = s.welch(x, fs=3.0, nperseg=10, noverlap=3, nfft=12, scaling="spectrum",
                     detrend=False)
    f3, p3 = s.csd(x, y, nperseg=16)
    f4, p4 = s.csd(x, y[..., :30], nperseg=8, average="median", return_onesided=True)
    return (f1, p1, f2, p2, f3, *_parts(p3), f4, *_parts(p4))


CASES = {
    "fftconvolve": (_fftconvolve, (X, Y), dict(argnums=(0, 1))),
    "detrend": (_detrend, (X,), {}),
    "stft_istft": (_stft_istft, (X,), {}),
    "welch_csd": (_welch_csd, (X, Y), dict(argnums=(0, 1))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_against_jax(name):
    fn, args, options = CASES[name]
    check_everywhere(fn, *args, **{"rtol": 1e-4, "atol": 1e-5, **options})


def test_complex_input_switches_to_two_sided_with_jaxs_warning():
    z = (X[0] + 1j * Y[0]).astype(np.complex64)
    for mod in (minijax, jax):
        with pytest.warns(UserWarning, match="switching to return_onesided=False"):
            f, p = mod.scipy.signal.welch(z, nperseg=8)
        assert f.shape == p.shape == (8,)


ERRORS = {
    "fftconvolve_mode": lambda s: s.fftconvolve(X, Y, "circular"),
    "fftconvolve_rank": lambda s: s.fftconvolve(X, Y[0]),
    "fftconvolve_valid": lambda s: s.fftconvolve(X[:, :5], Y[:1], "valid"),
    "fftconvolve_mapped": lambda s: s.fftconvolve(X, Y[:1], axes=1),
    "detrend_type": lambda s: s.detrend(X, type="quadratic"),
    "detrend_bp": lambda s: s.detrend(X, bp=[50]),
    "detrend_overwrite": lambda s: s.detrend(X, overwrite_data=True),
    "stft_boundary": lambda s: s.stft(X, nperseg=8, boundary="periodic"),
    "stft_noverlap": lambda s: s.stft(X, nperseg=8, noverlap=8),
    "stft_nfft": lambda s: s.stft(X, nperseg=8, nfft=4),
    "stft_nperseg": lambda s: s.stft(X, nperseg=0),
    "stft_detrend": lambda s: s.stft(X, nperseg=8, detrend=True),
    "welch_scaling": lambda s: s.welch(X, nperseg=8, scaling="power"),
    "welch_average": lambda s: s.welch(X, nperseg=8, average="max"),
    "welch_window_length": lambda s: s.welch(X, window=np.ones(50, np.float32)),
    "welch_window_rank": lambda s: s.welch(X, window=np.ones((2, 4), np.float32)),
    "csd_rank": lambda s: s.csd(X, Y[0], nperseg=8),
    "istft_rank": lambda s: s.istft(X[0]),
    "istft_axes": lambda s: s.istft(X, time_axis=0, freq_axis=0),
    "istft_noverlap": lambda s: s.istft(X, nperseg=8, noverlap=9),
    "istft_nfft": lambda s: s.istft(X, nperseg=8, nfft=6),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_jaxs(name):
    ours, _ = assert_raises_as_jax(lambda mod: ERRORS[name](mod.scipy.signal),
                                   same_message=name != "csd_rank")
    if name == "csd_rank":   # JAX's message lacks its f-string prefix: names unfilled
        assert str(ours) == "two-arguments must have the same rank (2 vs 1)."


@pins("istft_odd_nperseg_needs_nfft")
def test_istft_of_an_odd_segment_length():
    z = jax.scipy.signal.stft(X[0], nperseg=9)[2]
    with pytest.raises(TypeError, match="incompatible shapes"):
        jax.scipy.signal.istft(z, nperseg=9)
    _, ours = minijax.scipy.signal.istft(z, nperseg=9)
    _, theirs = jax.scipy.signal.istft(z, nperseg=9, nfft=9)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(ours)[:40], X[0], atol=1e-5)
