"""`minijax.dlpack`: arrays exchanged with other libraries through DLPack.

A minijax array is a `jax.Array`, so exchanging one is JAX's business: `from_dlpack`
(any object with `__dlpack__`, such as a NumPy or PyTorch array, to a `jax.Array`) and
`is_supported_dtype` are JAX's own functions, and a minijax array hands itself to
another library through its own `__dlpack__`."""
from jax.dlpack import from_dlpack, is_supported_dtype

__all__ = ["from_dlpack", "is_supported_dtype"]
