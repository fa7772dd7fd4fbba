"""`minijax.ref`: JAX's `jax.ref` namespace -- the ref operations as functions.

    minijax.ref.get(r, idx)            r[idx]
    minijax.ref.set(r, idx, v)         r[idx] = v
    minijax.ref.swap(r, idx, v)        old value at r[idx], then r[idx] = v
    minijax.ref.addupdate(r, idx, v)   r[idx] += v, accumulating at repeated indices

`idx` may be None for the whole ref. The implementation (the tracing front end) is `minijax/frontend/refs.py`.
"""
from .frontend.refs import (Ref, RefView, new_ref, empty_ref, freeze, free_ref, get, set, swap,
                   addupdate)
from .ir.types import RefType as AbstractRef

__all__ = ["Ref", "RefView", "AbstractRef", "new_ref", "empty_ref", "freeze", "free_ref",
           "get", "set", "swap", "addupdate"]
