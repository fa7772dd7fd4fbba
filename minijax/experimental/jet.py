"""`minijax.experimental.jet`: Taylor-mode higher-order differentiation, as
`jax.experimental.jet`.

`jet(f, (x0,), ((x1, ..., xK),))` pushes the truncated Taylor polynomial
`x0 + x1 t + x2 t^2/2! + ...` through `f` in one pass and returns `f(x0)` with the
K derivatives of `f(x(t))` at t = 0 (`factorial_scaled=False`, or `jet2`: the raw
coefficients instead). The trace and the method are in `minijax/transforms/jet.py`,
the rules per primitive in `transforms/jet_rules.py`; the rules of cumprod, cummax
and cummin, which run a jet of `lax.associative_scan`, are here, above the layer
that holds associative_scan.
"""
from __future__ import annotations

import functools

from .. import lax
from .. import numpy as jnp
from ..frontend.lax_extras import associative_scan
from ..ir import primitives as P
from ..transforms import jet_rules as _jet_rules  # noqa: F401  fills `jet_rules`
from ..transforms.jet import (jet_flat, jet_composition, jet_rules, zero_series,
                              zero_term, ZeroSeries, ZeroTerm, JetTrace, JetTracer)
from ..tree_util import tree_flatten, tree_unflatten

__all__ = ["jet", "jet2", "fact", "jet_rules", "zero_series", "zero_term", "ZeroSeries",
           "ZeroTerm", "JetTrace", "JetTracer"]


def _is_leaf_value(x) -> bool:
    leaves, _ = tree_flatten(x)
    return len(leaves) == 1 and leaves[0] is x


def fact(n):
    """n!, computed as JAX's jet computes it: exp(lgamma(n + 1))."""
    return lax.exp(lax.lgamma(n + 1.))


def jet(fun, primals, series, factorial_scaled=True, **_):
    """Taylor-mode differentiation of `fun` at `primals` along the Taylor coefficients
    `series`: `series[i]` holds the K terms of argument i (the same K for all).
    Returns `(primals_out, series_out)`: `fun(*primals)` and, for each of its outputs
    (in the same tree structure), the list of its K terms. With `factorial_scaled`
    (the default) term k is the k-th derivative along the curve; without, the k-th
    Taylor coefficient."""
    try:
        order, = set(map(len, series))
    except ValueError:
        raise ValueError("jet terms have inconsistent lengths for different "
                         "arguments") from None
    for i, (x, terms) in enumerate(zip(primals, series)):
        if not _is_leaf_value(x):
            raise ValueError(f"primal value at position {i} is not an array")
        for j, t in enumerate(terms):
            if not _is_leaf_value(t):
                raise ValueError(f"term {j} for argument {i} is not an array")
    if factorial_scaled:
        series = [[jnp.true_divide(t, fact(k + 1)) for k, t in enumerate(terms)]
                  for terms in series]
    n = min(len(primals), len(series))
    out_tree = []

    def flat_fun(*args):
        out, tree = tree_flatten(fun(*args))
        out_tree.append(tree)
        return out

    primals_out, series_out = jet_flat(flat_fun, list(primals[:n]),
                                       [list(s) for s in series[:n]], order,
                                       instantiate=False)
    # A zero series becomes zeros like the output (its weak type kept), as in JAX.
    series_out = [[jnp.zeros_like(p)] * order if s is zero_series else s
                  for p, s in zip(primals_out, series_out)]
    if factorial_scaled:
        series_out = [[jnp.multiply(t, fact(k + 1)) for k, t in enumerate(terms)]
                      for terms in series_out]
    return tree_unflatten(out_tree[0], primals_out), tree_unflatten(out_tree[0], series_out)


jet2 = functools.partial(jet, factorial_scaled=False)


# -- cumprod, cummax, cummin: a jet of the parallel prefix scan, as JAX's rules ---------

def _cumulative_rule(combine, primals_in, series_in, *, axis, reverse):
    return jet_composition(functools.partial(associative_scan, combine, axis=axis,
                                             reverse=reverse), primals_in, series_in)


jet_rules[P.cumprod_p] = functools.partial(_cumulative_rule, lax.mul)
jet_rules[P.cummax_p] = functools.partial(_cumulative_rule, lax.max)
jet_rules[P.cummin_p] = functools.partial(_cumulative_rule, lax.min)
