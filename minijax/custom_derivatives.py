"""`minijax.custom_derivatives`: the names of JAX's module of that name that minijax
has -- `custom_jvp`, `custom_vjp`, `custom_gradient` and `closure_convert` (the same
objects as `minijax.custom_jvp`, ...). JAX's module also has `linear_call` and, for
`symbolic_zeros=True` rules, `SymbolicZero`/`zero_from_primal`: minijax has no
`linear_call`, and its rules always receive instantiated zero tangents (the
`symbolic_zeros` flag is accepted and changes nothing), so those names are absent."""
from .frontend.autodiff import custom_jvp, custom_vjp
from .frontend.autodiff_more import custom_gradient, closure_convert

__all__ = ["custom_jvp", "custom_vjp", "custom_gradient", "closure_convert"]
