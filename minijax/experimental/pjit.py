"""`minijax.experimental.pjit`: `pjit`, which JAX merged into `jit` and keeps here,
deprecated (reading it warns, as JAX's does), for programs written before the merge."""
from __future__ import annotations

import warnings

from ..frontend.jit import jit

__all__: list = []     # as JAX's module, whose one name is deprecated


def pjit(fun, in_shardings=None, out_shardings=None, static_argnums=None,
         static_argnames=None, donate_argnums=None, donate_argnames=None,
         keep_unused: bool = False, device=None, backend=None, inline: bool = False,
         compiler_options=None):
    """`minijax.jit` under its older name, with the same options."""
    return jit(fun, in_shardings=in_shardings, out_shardings=out_shardings,
               static_argnums=static_argnums, static_argnames=static_argnames,
               donate_argnums=donate_argnums, donate_argnames=donate_argnames,
               keep_unused=keep_unused, device=device, backend=backend, inline=inline,
               compiler_options=compiler_options)


_pjit = pjit
del pjit


def __getattr__(name):
    if name == "pjit":
        warnings.warn("jax.experimental.pjit.pjit has been deprecated. Please use "
                      "`jax.jit` instead.", DeprecationWarning, stacklevel=2)
        return _pjit
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
