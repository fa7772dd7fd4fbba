"""`jnp.select` and `jnp.piecewise`: branch-free choices, elementwise.

Read `_ufuncs.py`'s `where` first: both are chains of `where`. Nothing here
branches in Python or in the program -- every choice is computed for every
element and the conditions pick, so these work under jit, grad and vmap alike
(unlike Python `if`, and unlike `lax.cond`, which needs a scalar predicate). The
price is that every choice is evaluated everywhere: a `nan` in an unselected choice
does not show in the value but can still poison a gradient, as in JAX.
"""
from __future__ import annotations

from ._creation import asarray
from ._promotion import result_type
from ._ufuncs import where
from ._shape import broadcast_to

__all__ = ["select", "piecewise"]


def select(condlist, choicelist, default=0):
    """`choicelist[i]` where `condlist[i]` is the *first* true condition, else
    `default`, as `jnp.select`."""
    condlist, choicelist = list(condlist), list(choicelist)
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: condlist and choicelist must have the same length, got "
                         f"{len(condlist)} conditions and {len(choicelist)} choices")
    if not condlist:
        raise ValueError("select: condlist must not be empty")
    dtype = result_type(*choicelist, default)
    out = asarray(default, dtype=dtype)
    # Applied last to first, so that the first true condition is the one that sticks.
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        cond = asarray(cond)
        if cond.dtype != bool:
            raise TypeError(f"select: conditions must be boolean arrays, got {cond.dtype}")
        out = where(cond, asarray(choice, dtype=dtype), out)
    return out


def piecewise(x, condlist, funclist, *args, **kw):
    """`funclist[i](x)` where `condlist[i]` is the *last* true condition, as
    `jnp.piecewise`. One extra function (or constant) at the end of `funclist` is the
    default, used where no condition holds (0 otherwise). Results take `x`'s dtype."""
    x = asarray(x)
    if not isinstance(condlist, (list, tuple)):
        condlist = [condlist]
    condlist = [asarray(c) for c in condlist]
    funclist = list(funclist)
    if len(funclist) == len(condlist) + 1:
        default, funclist = funclist[-1], funclist[:-1]
    elif len(funclist) == len(condlist):
        default = 0
    else:
        raise ValueError(f"piecewise: funclist must have {len(condlist)} or "
                         f"{len(condlist) + 1} entries, got {len(funclist)}")

    def value_of(f):
        out = f(x, *args, **kw) if callable(f) else f
        return asarray(out, dtype=x.dtype)
    out = value_of(default)
    for cond, f in zip(condlist, funclist):
        out = where(cond, value_of(f), out)
    if out.shape != x.shape:
        out = broadcast_to(out, x.shape)
    return out
