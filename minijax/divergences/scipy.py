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
