"""`jax.scipy`: where its functions do otherwise than they intend."""
from .registry import register

register(
    "istft_odd_nperseg_needs_nfft", "0.10.2, 0.11.2, 0.12.0.1",
    "jax.scipy.signal.istft of a one-sided STFT with an odd nperseg and nfft=None "
    "raises a TypeError (incompatible shapes): it works out the transform length "
    "nperseg ('Odd nperseg, no FFT padding') but hands the caller's nfft=None to "
    "irfft, which inverts to an even length one sample short of the window",
    "the inverse transform has the length istft worked out (nperseg), as SciPy's "
    "does, and the signal comes back",
    "istft computes that length for this very case; passing nfft explicitly "
    "(nfft=nperseg) already gives the result minijax gives",
    transforms=("istft",))

register(
    "bessel_jn_complex_type_error", "0.10.2, 0.11.2, 0.12.0.1",
    "jax.scipy.special.bessel_jn of a complex argument raises a TypeError from deep in "
    "its recurrence (rem does not accept complex64): its check for complex input, "
    "meant to raise ValueError('complex input not supported.'), asks "
    "issubdtype(dtype, complex), which is False for complex64",
    "raises the ValueError bessel_jn's check and docstring promise, before tracing",
    "bessel_jn documents 'ValueError if elements of array z are not float' and "
    "writes the check for it; the TypeError names an internal rem, not the mistake",
    transforms=("bessel_jn",))
