"""The FFT-based parts of `minijax.scipy.signal`: `fftconvolve`, `detrend`, `stft`,
`istft`, `csd`, `welch`, with JAX's signatures, defaults and results.

The spectral estimators share one helper, as SciPy's and JAX's do: the signal is
extended at its ends (`boundary`), padded to whole segments (`padded`), cut into
overlapping segments of `nperseg` samples `nperseg - noverlap` apart (one gather),
each segment detrended and windowed, and transformed (`rfft` for real input, `fft`
otherwise). `csd` multiplies one signal's conjugate spectrum by the other's and
averages over the segments; `welch` is `csd` of a signal with itself. `istft` undoes
`stft` by overlap-add of the windowed inverse transforms (one scatter-add), divided
by the overlapping squared window.

JAX does not jit these functions; minijax compiles each whole for an eager call
(`jitted_eagerly`, the window, lengths and modes static), which spares a program per
operation. Only the 'hann' window is built here; other window names are computed by SciPy's
`get_window`, which needs SciPy installed (as in JAX); an array is taken as the
window itself.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..frontend.eager_jit import jitted_eagerly
from ..frontend.vmap import vmap
from ..numpy import fft as jnp_fft
from ..numpy._promotion import as_operand, canonicalize_axis, promote_dtypes_inexact

__all__ = ["fftconvolve", "detrend", "stft", "istft", "csd", "welch"]


def _complex_dtype(dtype):
    return np.dtype(np.complex128 if np.dtype(dtype) == np.float64 else
                    (dtype if jnp.issubdtype(dtype, np.complexfloating) else np.complex64))


def _to_complex(x):
    return x.astype(_complex_dtype(x.dtype))


# -- fftconvolve ------------------------------------------------------------------------------

def _fftconvolve_all_axes(in1, in2, mode):
    full = tuple(a + b - 1 for a, b in zip(in1.shape, in2.shape))
    if mode == "valid":
        smaller = all(a <= b for a, b in zip(in1.shape, in2.shape))
        if not smaller and not all(a >= b for a, b in zip(in1.shape, in2.shape)):
            raise ValueError("For 'valid' mode, One input must be at least as large as "
                             "the other in every dimension.")
        if smaller:
            in1, in2 = in2, in1
    if all(a == 1 or b == 1 for a, b in zip(in1.shape, in2.shape)):
        product = in1 * in2         # an outer product: no transform needed
    elif jnp.iscomplexobj(in1):
        product = jnp_fft.ifftn(jnp_fft.fftn(in1, full) * jnp_fft.fftn(in2, full), full)
    else:
        product = jnp_fft.irfftn(jnp_fft.rfftn(in1, full) * jnp_fft.rfftn(in2, full), full)
    if mode == "full":
        shape = full
    elif mode == "same":
        shape = in1.shape
    else:
        shape = tuple(a - b + 1 for a, b in zip(in1.shape, in2.shape))
    starts = tuple((f - s) // 2 for f, s in zip(full, shape))
    return lax.slice(product, starts, tuple(b + s for b, s in zip(starts, shape)))


@jitted_eagerly("mode", "axes")
def fftconvolve(in1, in2, mode: str = "full", axes=None):
    """The n-d convolution of `in1` and `in2` through FFTs, over `axes` (all by
    default); the other axes must match and are mapped over."""
    in1, in2 = (as_operand("fftconvolve", a) for a in (in1, in2))
    in1, in2 = promote_dtypes_inexact("fftconvolve", in1, in2)
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ("same", "full", "valid"):
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    if axes is None:
        return _fftconvolve_all_axes(in1, in2, mode)
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    axes = tuple(canonicalize_axis("fftconvolve", a, in1.ndim) for a in axes)
    mapped = sorted(set(range(in1.ndim)) - set(axes))
    if any(in1.shape[i] != in2.shape[i] for i in mapped):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape} "
                         f"in2.shape={in2.shape} axes={axes}")
    fun = lambda a, b: _fftconvolve_all_axes(a, b, mode)  # noqa: E731
    for axis in mapped:
        fun = vmap(fun, in_axes=axis, out_axes=axis)
    return fun(in1, in2)


# -- detrend -----------------------------------------------------------------------------------

@jitted_eagerly("axis", "type", "bp", "overwrite_data")
def detrend(data, axis: int = -1, type: str = "linear", bp=0, overwrite_data=None):
    """`data` less its mean ('constant') or less a least-squares line fitted piece by
    piece between the breakpoints `bp` ('linear')."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    data, = promote_dtypes_inexact("detrend", jnp.asarray(data))
    data = jnp.asarray(data)
    if type == "constant":
        return data - data.mean(axis, keepdims=True)
    n = data.shape[axis]
    breaks = np.sort(np.unique(np.r_[0, bp, n]))
    if breaks[0] < 0 or breaks[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data "
                         "along given axis.")
    moved = jnp.moveaxis(data, axis, 0)
    rows = moved.reshape(n, -1)
    for lo, hi in zip(breaks[:-1], breaks[1:]):
        count = hi - lo
        design = jnp.stack([jnp.ones(count, dtype=rows.dtype),
                            jnp.arange(1, count + 1, dtype=rows.dtype)
                            / np.asarray(count).astype(rows.dtype)], axis=1)
        coef = jnp.linalg.lstsq(design, rows[lo:hi])[0]
        rows = rows.at[lo:hi].add(-jnp.matmul(design, coef, precision=lax.Precision.HIGHEST))
    return jnp.moveaxis(rows.reshape(moved.shape), 0, axis)


# -- the shared segment spectra ------------------------------------------------------------------

def _static_int(value, what):
    try:
        return operator.index(value) if not isinstance(value, float) else int(value)
    except TypeError as e:
        raise TypeError(f"{what} must be a concrete integer, got {value!r}") from e


def _hann(n):
    if n == 1:
        return jnp.array([1.0])
    return jnp.sin(jnp.linspace(0, np.pi, n, endpoint=False)) ** 2


def _named_window(window, n):
    if window == "hann":
        return _hann(n)
    try:
        from scipy.signal import get_window   # noqa: PLC0415
    except ImportError as err:
        raise ImportError(f"scipy must be available to use window={window!r}") from err
    return get_window(window, n)


def _window(window, nperseg, length, dtype):
    """(the window as an array of `dtype`, the segment length)."""
    if isinstance(window, (str, tuple)):
        n = length if nperseg is None else int(nperseg)
        if n > length:
            warnings.warn(f"nperseg={n} is greater than input_length={length}, using "
                          f"nperseg={length}")
            n = length
        return jnp.array(_named_window(window, n), dtype=dtype), n
    win = jnp.asarray(window, dtype=dtype)
    n = win.size if nperseg is None else int(nperseg)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if length < win.size:
        raise ValueError("window is longer than input signal")
    if n != win.size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, n


def _odd_extension(x, n):
    if n < 1:
        return x
    if n > x.shape[-1] - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                         f"x.shape[axis]-1, which is {x.shape[-1] - 1}.")
    left, right = x[..., :1], x[..., -1:]
    return jnp.concatenate([2 * left - jnp.flip(x[..., 1:n + 1], -1), x,
                            2 * right - jnp.flip(x[..., -(n + 1):-1], -1)], axis=-1)


def _padder(mode, **kwargs):
    def pad(x, n):
        return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode, **kwargs)
    return pad


_BOUNDARIES = {"even": _padder("reflect"), "odd": _odd_extension,
               "constant": _padder("edge"), "zeros": _padder("constant", constant_values=0.0),
               None: lambda x, n: x}


def _segments_spectrum(x, win, detrend_func, nperseg, noverlap, nfft, twosided):
    """The transforms of x's windowed segments: shape (..., segments, frequencies)."""
    if x.dtype.kind == "i":
        x = x.astype(win.dtype)
    length = x.shape[-1]
    if nperseg == 1 and noverlap == 0:
        segments = x[..., None]
    else:
        starts = np.arange(0, length - nperseg + 1, nperseg - noverlap)
        segments = x[..., starts[:, None] + np.arange(nperseg)[None, :]]
    segments = detrend_func(segments)
    if jnp.iscomplexobj(win):
        segments = _to_complex(segments)
    segments = win * segments
    if twosided:
        return jnp_fft.fft(segments, n=nfft)
    return jnp_fft.rfft(jnp.real(segments), n=nfft)


def _array(x, fname):
    return jnp.asarray(as_operand(fname, x))


def _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend_type, return_onesided,
              scaling, axis, mode, boundary=None, padded=False):
    """(frequencies, segment times, spectra) for stft (mode 'stft') and csd ('psd')."""
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                         f"{list(_BOUNDARIES)}")
    x = _array(x, "spectral_helper")
    axis = canonicalize_axis("spectral_helper", _static_int(axis, "axis"), x.ndim)
    if y is None:
        x, = promote_dtypes_inexact("spectral_helper", x)
        x = jnp.asarray(x)
        outer = x.shape[:axis] + x.shape[axis + 1:]
    else:
        y = _array(y, "spectral_helper")
        x, y = (jnp.asarray(a) for a in promote_dtypes_inexact("spectral_helper", x, y))
        if x.ndim != y.ndim:
            raise ValueError(f"two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
        try:
            outer = jnp.broadcast_shapes(x.shape[:axis] + x.shape[axis + 1:],
                                         y.shape[:axis] + y.shape[axis + 1:])
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    result_dtype = _complex_dtype(x.dtype)
    freq_dtype = np.finfo(result_dtype).dtype
    if nperseg is not None:
        nperseg = _static_int(nperseg, "nperseg")
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg = _window(window, nperseg, x.shape[axis], x.dtype)
    noverlap = nperseg // 2 if noverlap is None else _static_int(noverlap, "noverlap")
    nfft = nperseg if nfft is None else _static_int(nfft, "nfft")
    if x.size == 0 or (y is not None and y.size == 0):
        shape = x.shape if y is None else \
            outer[:axis] + (min(x.shape[axis], y.shape[axis]),) + outer[axis:]
        return (jnp.zeros(shape, freq_dtype), jnp.zeros(shape, freq_dtype),
                jnp.zeros(shape, result_dtype))
    x = jnp.moveaxis(x, axis, -1)
    if y is not None:
        if y.ndim > 1:
            y = jnp.moveaxis(y, axis, -1)
        # the shorter signal is zero-padded to the longer's length
        extra = y.shape[-1] - x.shape[-1]
        if extra > 0:
            x = jnp.concatenate([x, jnp.zeros(x.shape[:-1] + (extra,), x.dtype)], -1)
        elif extra < 0:
            y = jnp.concatenate([y, jnp.zeros(y.shape[:-1] + (-extra,), x.dtype)], -1)
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    if boundary is not None:
        x = _BOUNDARIES[boundary](x, nperseg // 2)
        if y is not None:
            y = _BOUNDARIES[boundary](y, nperseg // 2)
    if padded:
        extra = (-(x.shape[-1] - nperseg) % step) % nperseg
        x = jnp.concatenate([x, jnp.zeros(x.shape[:-1] + (extra,), x.dtype)], -1)
        if y is not None:
            y = jnp.concatenate([y, jnp.zeros(y.shape[:-1] + (extra,), x.dtype)], -1)
    if isinstance(detrend_type, str):
        detrend_func = lambda d: detrend(d, type=detrend_type, axis=-1)  # noqa: E731
    elif callable(detrend_type):
        detrend_func = detrend_type if axis == -1 else (
            lambda d: jnp.moveaxis(detrend_type(jnp.moveaxis(d, axis, -1)), -1, axis))
    elif not detrend_type:
        detrend_func = lambda d: d  # noqa: E731
    else:
        raise ValueError(f"Unsupported detrend type: {detrend_type}")
    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = jnp.sqrt(scale)
    scale = _to_complex(jnp.asarray(scale))
    twosided = not return_onesided
    if return_onesided and (jnp.iscomplexobj(x) or (y is not None and jnp.iscomplexobj(y))):
        twosided = True
        warnings.warn("Input data is complex, switching to return_onesided=False")
    freqs = (jnp_fft.fftfreq if twosided else jnp_fft.rfftfreq)(nfft, 1 / fs, dtype=freq_dtype)
    result = _segments_spectrum(x, win, detrend_func, nperseg, noverlap, nfft, twosided)
    if y is not None:
        result = jnp.conjugate(result) * _segments_spectrum(y, win, detrend_func, nperseg,
                                                            noverlap, nfft, twosided)
    elif mode == "psd":
        result = jnp.conjugate(result) * result
    result = result * scale
    if not twosided and mode == "psd":
        # a one-sided density counts the negative frequencies in the positive ones
        result = result.at[..., 1:None if nfft % 2 else -1].mul(2)
    time = jnp.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, step, dtype=freq_dtype) / fs
    if boundary is not None:
        time = time - (nperseg / 2) / fs
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = jnp.real(result)
    return freqs, time, jnp.moveaxis(result, -1, axis)


@jitted_eagerly("window", "nperseg", "noverlap", "nfft", "detrend", "return_onesided",
                "boundary", "padded", "axis")
def stft(x, fs=1.0, window="hann", nperseg: int = 256, noverlap=None, nfft=None,
         detrend: bool = False, return_onesided: bool = True, boundary="zeros",
         padded: bool = True, axis: int = -1):
    """(frequencies, segment times, the short-time Fourier transform of x)."""
    return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                     "spectrum", axis, "stft", boundary, padded)


@jitted_eagerly("window", "nperseg", "noverlap", "nfft", "detrend", "return_onesided",
                "scaling", "axis", "average")
def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend: str = "constant", return_onesided: bool = True, scaling: str = "density",
        axis: int = -1, average: str = "mean"):
    """(frequencies, the cross power spectral density of x and y), Welch's method:
    segment cross-spectra averaged by mean or median."""
    freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                              return_onesided, scaling, axis, "psd")
    if y is not None:
        pxy = pxy + 0j
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                # the median of segment periodograms is biased low against their
                # mean; SciPy's factor for the segment count corrects it
                evens = jnp.arange(2.0, pxy.shape[-1], 2)
                bias = (1 + jnp.sum(1.0 / (evens + 1) - 1.0 / evens)).astype(pxy.dtype)
                if jnp.iscomplexobj(pxy):
                    pxy = (jnp.median(jnp.real(pxy), axis=-1)
                           + 1j * jnp.median(jnp.imag(pxy), axis=-1))
                else:
                    pxy = jnp.median(pxy, axis=-1)
                pxy = pxy / bias
            elif average == "mean":
                pxy = pxy.mean(axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = jnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


@jitted_eagerly("window", "nperseg", "noverlap", "nfft", "detrend", "return_onesided",
                "scaling", "axis", "average")
def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend: str = "constant", return_onesided: bool = True, scaling: str = "density",
          axis: int = -1, average: str = "mean"):
    """(frequencies, the power spectral density of x), Welch's method."""
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, jnp.real(pxx)


def _overlap_add(frames, step):
    """Frames (..., count, length) laid `step` apart and summed where they overlap."""
    count, length = frames.shape[-2:]
    out = jnp.zeros(frames.shape[:-2] + (step * (count - 1) + length,), frames.dtype)
    where = np.arange(count)[:, None] * step + np.arange(length)[None, :]
    return out.at[..., where].add(frames)


def _above(x, bound):
    # JAX orders complex numbers lexicographically (real part, then imaginary), and
    # the two-sided inverse's window sums are complex
    if not jnp.iscomplexobj(x):
        return x > bound
    return (jnp.real(x) > bound) | ((jnp.real(x) == bound) & (jnp.imag(x) > 0))


@jitted_eagerly("window", "nperseg", "noverlap", "nfft", "input_onesided", "boundary",
                "time_axis", "freq_axis")
def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided: bool = True, boundary: bool = True, time_axis: int = -1,
          freq_axis: int = -2):
    """(times, the signal) whose `stft` is `Zxx`: inverse transforms overlap-added."""
    Zxx = jnp.asarray(as_operand("istft", Zxx))
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = canonicalize_axis("istft", freq_axis, Zxx.ndim)
    time_axis = canonicalize_axis("istft", time_axis, Zxx.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = Zxx.astype(_complex_dtype(Zxx.dtype))
    default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]
    nperseg = _static_int(nperseg or default, "nperseg")
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        # an odd segment length gives no padding in the transform
        nfft_int = default + 1 if input_onesided and nperseg == default + 1 else default
    else:
        nfft_int = _static_int(nfft, "nfft")
    if nfft_int < nperseg:
        raise ValueError(f"FFT length ({nfft_int}) must be longer than nperseg ({nperseg}).")
    # (as in JAX, noverlap=0 means the default, half a segment)
    noverlap = _static_int(noverlap or nperseg // 2, "noverlap")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    if time_axis != Zxx.ndim - 1 or freq_axis != Zxx.ndim - 2:
        outer = tuple(i for i in range(Zxx.ndim) if i not in (time_axis, freq_axis))
        Zxx = jnp.transpose(Zxx, outer + (freq_axis, time_axis))
    inverse = jnp_fft.irfft if input_onesided else jnp_fft.ifft
    # (JAX passes the caller's nfft here, so an odd nperseg with nfft=None fails
    # there: divergence istft_odd_nperseg_needs_nfft)
    frames = inverse(Zxx, axis=-2, n=nfft_int)[..., :nperseg, :]
    if isinstance(window, (str, tuple)):
        win = jnp.array(_named_window(window, nperseg)).astype(frames.dtype)
    else:
        win = jnp.asarray(window)
        if len(win.shape) != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg:
            raise ValueError(f"window must have length of {nperseg}")
    frames = frames * win.sum()     # undoes stft's 'spectrum' scaling
    win = lax.expand_dims(win, (*range(frames.ndim - 2), -1))
    x = _overlap_add(jnp.swapaxes(frames * win, -2, -1), nperseg - noverlap)
    norm = _overlap_add(jnp.swapaxes(jnp.repeat(win * win, frames.shape[-1], axis=-1), -2, -1),
                        nperseg - noverlap)
    if boundary:
        x = x[..., nperseg // 2:-(nperseg // 2)]
        norm = norm[..., nperseg // 2:-(nperseg // 2)]
    x = x / jnp.where(_above(norm, 1e-10), norm, 1.0)
    if x.ndim > 1 and time_axis != Zxx.ndim - 1:
        x = jnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    return jnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs, x
