"""The function `vjp` returns: a pullback that is also a pytree of its residuals.

`vjp` linearizes the function once (transforms/linearize.py): a linear jaxpr from
input tangents to output tangents, whose consts are the residuals -- the primal values
the tangent equations read (`cos(x)` for `sin`). Calling the pullback transposes that
jaxpr with those residuals (transforms/transpose.py).

As in JAX, the pullback is data as well as a function: flattened, its leaves are the
residuals and its structure is everything else (the linear jaxpr, the trees and types
of the primals and outputs), kept in one `PullbackSpec`. So it can be returned from a
`jit`, carried through a `scan` or handed to a jitted backward function
(`fwd_and_bwd`); unflattened with other leaves -- the tracers of the trace that
receives it -- it transposes the same jaxpr with them. Two pullbacks have the same
structure only if they share their spec (one `vjp`, or the cached trace of one
jitted forward function), which is what lets a jitted backward function hit its
cache on every step of a loop.
"""
from __future__ import annotations

import numpy as np
from jax import tree_util

from ..ir import primitives as P
from ..ir.core import ClosedJaxpr
from ..ir.trace import MinijaxError, aval_of, bind
from ..ir.types import canonical_dtype, float0
from ..transforms.ad_util import Zero, tangent_aval, instantiate, as_results
from ..transforms.linearize import transpose_linear
from . import refs as _refs


class TangentMismatchError(MinijaxError, ValueError):
    """Tangents or cotangents whose structure or shape does not fit the primals."""


def instantiate_result(t):
    """An output tangent or cotangent for the caller: a symbolic zero becomes an
    array of zeros (a `jax.Array` at the root, as JAX returns); any other value is
    handed back as it is, as JAX hands back a cotangent passed straight through --
    except a NumPy value of a dtype minijax does not compute in (float64 with x64
    off), which becomes the canonical array (the registry's
    `jax_jvp_passes_an_input_tangent_through_uncanonicalized`)."""
    if type(t) is Zero:
        return as_results(instantiate(t))
    if isinstance(t, (np.ndarray, np.generic)) and canonical_dtype(t.dtype) != t.dtype:
        return as_results(np.asarray(t, canonical_dtype(t.dtype)))
    return t


class PullbackSpec:
    """Everything of a pullback but its residuals: the linear jaxpr (without its
    consts), which inputs and outputs are differentiable, and the primals' and
    outputs' trees and types. Compared by identity (a pytree's structure holds it)."""
    __slots__ = ("linear_jaxpr", "differentiable", "out_differentiable",
                 "aux_cotangent_avals", "in_tree", "in_avals", "out_tree", "out_avals")

    def __init__(self, linearized):
        """From a `frontend.autodiff._Linearized` (which holds the residuals too)."""
        lin, n_out = linearized.lin, linearized.n_out
        self.linear_jaxpr = lin.linear_jaxpr.jaxpr
        self.differentiable, self.out_differentiable = lin.differentiable, lin.out_differentiable
        # has_aux: the aux outputs were linearized too; their cotangents are zeros
        self.aux_cotangent_avals = [
            tangent_aval(aval_of(p)) for p, d in
            zip(lin.primals_out[n_out:], lin.out_differentiable[n_out:]) if d]
        self.in_tree, self.in_avals = linearized.in_tree, linearized.in_avals
        self.out_tree, self.out_avals = linearized.flat_fun.out_tree, linearized.out_avals

    def flat_cotangents(self, residuals, cotangent) -> list:
        """The primals' cotangents, flat (float0 zeros for those not differentiable),
        from the outputs' `cotangent` (a pytree shaped as the output)."""
        ct_leaves, ct_tree = tree_util.tree_flatten(cotangent)
        if ct_tree != self.out_tree:
            raise TangentMismatchError(f"vjp: the cotangent has tree structure {ct_tree} "
                                       f"but the function's output has {self.out_tree}")
        cts = []
        for ct, aval, diff in zip(ct_leaves, self.out_avals, self.out_differentiable):
            ct_aval = aval_of(ct)
            if ct_aval.shape != aval.shape or ct_aval.dtype != tangent_aval(aval).dtype:
                raise TangentMismatchError(
                    f"vjp: got a cotangent of type {ct_aval} for an output of type {aval}; "
                    f"they must have the same shape and dtype (float0 for integers)")
            if diff:
                cts.append(ct)
        return self.pull_back(residuals, cts, instantiate_result)

    def pull_back(self, residuals, out_cts, finish) -> list:
        """The primals' cotangents (float0 zeros for those not differentiable) from
        those of the differentiable outputs, each made a result by `finish`."""
        cts = list(out_cts) + [Zero(aval) for aval in self.aux_cotangent_avals]
        cts_in = iter(transpose_linear(ClosedJaxpr(self.linear_jaxpr, residuals), cts))
        return [finish(next(cts_in)) if d else np.zeros(a.shape, float0)
                for a, d in zip(self.in_avals, self.differentiable)]


class VJP:
    """The function `vjp` returns (named as JAX's class is): `pullback(cotangent)` is
    the tuple of the primals' cotangents; `pullback.with_refs(*refs)` is a function of
    the cotangent that adds each primal's cotangent into the ref at its place instead
    (as JAX's). A pytree: its leaves are the residuals (module docstring)."""
    __slots__ = ("_spec", "_residuals")

    def __init__(self, spec: PullbackSpec, residuals):
        self._spec, self._residuals = spec, list(residuals)

    def __call__(self, cotangent):
        spec = self._spec
        return tree_util.tree_unflatten(spec.in_tree,
                                        spec.flat_cotangents(self._residuals, cotangent))

    def with_refs(self, *refs):
        """`refs` mirrors the primals: each leaf a ref to accumulate that primal's
        cotangent into, or None to return it. The function returned gives None where
        the cotangent went into a ref; calling it twice adds twice."""
        spec = self._spec
        leaves, tree = tree_util.tree_flatten(refs, is_leaf=lambda x: x is None)
        as_values = tree_util.tree_unflatten(tree, [0] * tree.num_leaves)
        if tree_util.tree_structure(as_values) != spec.in_tree:
            raise TangentMismatchError(
                f"vjp: with_refs takes one ref (or None) per primal leaf, in the primals' "
                f"structure {spec.in_tree}; got {tree}")
        for k, (ref, aval) in enumerate(zip(leaves, spec.in_avals)):
            if ref is None:
                continue
            if not _refs.is_ref(ref):
                raise TangentMismatchError(
                    f"vjp: with_refs got {_refs._what_is(ref)} for primal leaf {k}; pass "
                    f"a ref to accumulate its cotangent into, or None to return it")
            want = tangent_aval(aval)
            have = aval_of(ref).inner
            if have.shape != want.shape or have.dtype != want.dtype:
                raise TangentMismatchError(
                    f"vjp: with_refs got {_refs.describe_ref(ref)} for primal leaf {k}, "
                    f"whose cotangent is a {want}: the ref must hold that type")

        def accumulate(cotangent):
            flat = spec.flat_cotangents(self._residuals, cotangent)   # all computed first
            for ref, ct in zip(leaves, flat):
                if ref is not None:
                    bind(P.addupdate_p, ref, ct)
            return tree_util.tree_unflatten(
                spec.in_tree, [None if ref is not None else ct
                               for ref, ct in zip(leaves, flat)])
        return accumulate


tree_util.register_pytree_node(
    VJP, lambda pullback: (pullback._residuals, pullback._spec),
    lambda spec, residuals: VJP(spec, residuals))
