"""The public autodiff API: jvp, linearize, vjp, grad, value_and_grad, jacfwd, jacrev,
hessian (plus custom_jvp / custom_vjp from `transforms/custom_derivatives.py`).

Everything here is pytree handling and argument checking around three functions of
`minijax.transforms` (read those for the actual differentiation):

* `jvp_flat`       -- forward mode on flat lists (transforms/jvp.py);
* `linearize_flat` -- jvp + partial evaluation: primal outputs and a linear jaxpr
                      (transforms/linearize.py);
* `transpose_linear` -- that linear jaxpr transposed (transforms/transpose.py),
                      called by the pullback (`vjp_function.py`).

The pullback `vjp` returns is a pytree of its residuals (`vjp_function.py`), which is
what `fwd_and_bwd` hands from its jitted forward to its jitted backward pass.
`grad(f)(x)` is `vjp` with the cotangent 1.0. `jacfwd`/`jacrev` apply the linear
jaxpr (or its transpose) once, batched by `vmap` over the stacked standard basis.
Every function works eagerly (op by op, Python control flow on values allowed) and
under any other transformation, including itself: `grad(grad(f))`, `jvp(grad(f))`, `jit(grad(f))`, `grad(jit(f))`.
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np
from jax import tree_util

from . import lax_ops as lax
from . import refs as _refs
from .pytrees import FlatFun, flatten_checked, fun_name
from .jit import jit
from .vmap import vmap
from ..backends.eager_ref_runtime import all_or_nothing
from ..ir import primitives as P
from ..ir.trace import MinijaxError, aval_of, bind, current_trace
from ..ir.types import RefType, float0, is_inexact, is_float, is_complex, dtype_long_name
from ..transforms.ad_util import Zero, tangent_aval, instantiate, scalar, as_results
from ..transforms.jvp import jvp_flat
from ..transforms.linearize import linearize_flat, apply_linear
from .vjp_function import PullbackSpec, TangentMismatchError, VJP, instantiate_result
from ..transforms.custom_derivatives import custom_jvp, custom_vjp  # noqa: F401


class NonScalarOutputError(MinijaxError, TypeError):
    """`grad` of a function whose output is not a real scalar."""


class NonDifferentiableInputError(MinijaxError, TypeError):
    """Differentiating with respect to an integer or boolean input."""


class ArgnumsError(MinijaxError, TypeError):
    """`argnums` names arguments the function was not called with, or is malformed."""


class TangentTreeError(MinijaxError, TypeError):
    """jvp's tangents in another tree structure than its primals (JAX's TypeError)."""


class TangentDtypeError(MinijaxError, TypeError):
    """A tangent or cotangent of the wrong dtype (integers need float0 tangents)."""


# -- flattening and linearizing ---------------------------------------------------------------

# -- differentiating with respect to a ref argument ----------------------------------------
#
# grad/vjp with respect to a ref mean "with respect to its contents": the ref leaf is
# replaced by its value (an ordinary array input, so its cotangent is an array of the
# contents' shape and dtype), and the function runs on a fresh ref holding that value.
# A function that writes the ref would need the cotangent of its *initial* contents
# through a write the caller observes -- not supported: the fresh ref refuses writes
# (refs.py `_check_writable`), before anything has been written anywhere.

def _leaf_text(i, n):
    return "" if n == 1 else f" (leaf {i} of the flattened differentiated arguments)"


def _refs_as_values(flat_fun, leaves, where: str):
    """(leaves with each ref replaced by its contents, the function on those leaves)."""
    positions = [i for i, x in enumerate(leaves) if _refs.is_ref(x)]
    if not positions:
        return leaves, flat_fun
    leaves = list(leaves)
    for i in positions:
        leaves[i] = _refs.get(leaves[i])

    def on_values(*values):
        values = list(values)
        proxies = []
        try:
            for n, i in enumerate(positions):
                proxy = bind(P.new_ref_p, values[i])
                aval = aval_of(proxy)
                _refs.refuse_writes(proxy, (
                    f"{where}: the function writes (by {{doing}}) the {aval} passed "
                    f"as a differentiated input{_leaf_text(i, len(leaves))}; "
                    f"differentiating with respect to a ref that is written is not "
                    f"supported. Pass its value r[...] as the argument instead (and, "
                    f"if the function needs a ref, create one inside with "
                    f"minijax.new_ref), or close over the ref instead of "
                    f"differentiating with respect to it."))
                proxies.append(proxy)
                values[i] = proxy
            return flat_fun(*values)
        finally:
            for proxy in proxies:
                _refs.allow_writes(proxy)
    return leaves, on_values


def _all_or_nothing(transform):
    """Run `transform` so that, if it fails part-way (say, grad of a non-scalar
    function that has already written a ref), every ref it wrote is put back."""
    @functools.wraps(transform)
    def run(*args, **kwargs):
        with all_or_nothing():
            return transform(*args, **kwargs)
    return run


class _Linearized:
    """`fun` at `primals` (pytrees) linearized once: what linearize, vjp, jacfwd and
    jacrev all start from. `refs_as_values`: differentiate a ref argument with respect
    to its contents (as vjp does)."""

    def __init__(self, fun, primals, has_aux: bool, where: str, refs_as_values=False):
        self.leaves, self.in_tree = flatten_checked(primals, f"{where}: input leaf")
        self.flat_fun = FlatFun(fun, self.in_tree, has_aux=has_aux, where=where)
        traced = self.flat_fun
        if refs_as_values:
            self.leaves, traced = _refs_as_values(self.flat_fun, self.leaves, where)
        lin = self.lin = linearize_flat(traced, self.leaves)
        self.out, self.aux = self.flat_fun.split(lin.primals_out)
        self.n_out = n_out = len(lin.primals_out) - self.flat_fun.num_aux
        self.out_avals = [aval_of(p) for p in lin.primals_out[:n_out]]
        self.in_avals = [aval_of(x) for x in self.leaves]

    def pull_back(self, out_cts, finish):
        """`PullbackSpec.pull_back` with this linearization's own residuals."""
        return PullbackSpec(self).pull_back(self.lin.linear_jaxpr.consts, out_cts, finish)


# -- jvp and linearize --------------------------------------------------------------------------

@_all_or_nothing
def jvp(fun: Callable, primals, tangents, has_aux: bool = False):
    """`(fun(*primals), d fun(primals)[tangents])`, as `jax.jvp`."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}")
    primal_leaves, in_tree = flatten_checked(tuple(primals), "jvp: input leaf")
    tangent_leaves, tangent_tree = tree_util.tree_flatten(tuple(tangents))
    if tangent_tree != in_tree:
        raise TangentTreeError(f"jvp: primals have tree structure {in_tree} but "
                               f"tangents have {tangent_tree}")
    flat_tangents = [_check_tangent(p, t) for p, t in zip(primal_leaves, tangent_leaves)]
    flat_fun = FlatFun(fun, in_tree, has_aux=has_aux, where="jvp")
    result = jvp_flat(flat_fun, primal_leaves, flat_tangents, current_trace())
    n_out = len(result.primals_out) - flat_fun.num_aux
    tangents_out = [instantiate_result(t) for t in result.tangents_out[:n_out]]
    out, aux = flat_fun.split(result.primals_out)
    tangent_tree = tree_util.tree_unflatten(flat_fun.out_tree, tangents_out)
    return (out, tangent_tree, aux) if has_aux else (out, tangent_tree)


def _check_tangent(primal, tangent):
    p_aval, t_aval = aval_of(primal), aval_of(tangent)
    if isinstance(p_aval, RefType) or isinstance(t_aval, RefType):
        # The tangent of a ref is a ref (transforms/ref_rules.py): jvp writes into it.
        if not (isinstance(p_aval, RefType) and isinstance(t_aval, RefType)):
            raise TangentMismatchError(
                f"jvp: a primal of type {p_aval} needs a tangent of type "
                f"{RefType(p_aval.inner) if isinstance(p_aval, RefType) else p_aval}, got "
                f"{t_aval}: the tangent of a ref is a ref (minijax.new_ref of the tangent "
                f"value), and the tangent of an array is an array")
        if p_aval != t_aval:
            raise TangentMismatchError(f"jvp: a ref primal of type {p_aval} needs a tangent "
                                       f"ref of the same type, got {t_aval}")
        return tangent if is_inexact(p_aval.dtype) else Zero(p_aval)
    expected = tangent_aval(p_aval)
    if t_aval.dtype != expected.dtype:
        raise TangentDtypeError(
            f"jvp: a primal of dtype {dtype_long_name(p_aval.dtype)} needs a tangent of "
            f"dtype {dtype_long_name(expected.dtype)} (float0 for integer and boolean "
            f"primals), got {dtype_long_name(t_aval.dtype)}")
    if t_aval.shape != p_aval.shape:
        raise TangentMismatchError(f"jvp: primal shape {p_aval.shape} and tangent shape "
                                   f"{t_aval.shape} differ")
    return tangent if is_inexact(p_aval.dtype) else Zero(expected)


@_all_or_nothing
def linearize(fun: Callable, *primals, has_aux: bool = False):
    """`(fun(*primals), f_jvp)` where `f_jvp(*tangents)` is the JVP at `primals`,
    evaluated from the saved linear jaxpr without re-running `fun`."""
    linearized = _Linearized(fun, primals, has_aux, "linearize")
    lin, leaves, in_tree = linearized.lin, linearized.leaves, linearized.in_tree
    out, aux, n_out = linearized.out, linearized.aux, linearized.n_out

    def f_jvp(*tangents):
        tangent_leaves, tree = tree_util.tree_flatten(tangents)
        if tree != in_tree:
            raise TangentMismatchError(f"linearize: tangents have tree structure {tree}, "
                                       f"the primals had {in_tree}")
        checked = [_check_tangent(p, t) for p, t in zip(leaves, tangent_leaves)]
        outs = iter(apply_linear(lin, [t for t, d in zip(checked, lin.differentiable) if d]))
        flat = [next(outs) if d else np.zeros(a.shape, float0)
                for a, d in zip(linearized.out_avals, lin.out_differentiable[:n_out])]
        return tree_util.tree_unflatten(linearized.flat_fun.out_tree, flat)
    return (out, f_jvp, aux) if has_aux else (out, f_jvp)


# -- vjp, grad, value_and_grad ----------------------------------------------------------------

@_all_or_nothing
def vjp(fun: Callable, *primals, has_aux: bool = False, reduce_axes=()):
    """`(fun(*primals), vjp_fun)` where `vjp_fun(cotangent)` is the tuple of
    cotangents of `primals`, as `jax.vjp`. A ref among the primals is differentiated
    with respect to its contents (its cotangent is an array), if `fun` only reads it."""
    return _vjp(fun, primals, has_aux, "vjp")


def _vjp(fun, primals, has_aux, where):
    linearized = _Linearized(fun, primals, has_aux, where, refs_as_values=True)
    vjp_fun = VJP(PullbackSpec(linearized), linearized.lin.linear_jaxpr.consts)
    # An output that is an input passed through (or a constant) is handed back as
    # the array JAX's vjp gives: canonical (a NumPy float64 becomes float32 with x64
    # off) and weak where it was a Python scalar (finding F60).
    out, aux = as_results(linearized.out), linearized.aux
    return (out, vjp_fun, aux) if has_aux else (out, vjp_fun)


def fwd_and_bwd(fun: Callable, argnums, has_aux: bool = False, jitted: bool = True):
    """`(fwd, bwd)`, as `jax.fwd_and_bwd`: `fwd(*args)` is `vjp` of `fun` with respect
    to the arguments `argnums` names, `(out, residuals)` (`(out, residuals, aux)` with
    `has_aux`), and `bwd(residuals, cotangent)` their cotangents (one, where `argnums`
    is an int). The residuals are the pullback itself, a pytree (`vjp_function.py`),
    so with `jitted` both are `jit`s and a loop's `bwd` compiles once."""
    if not callable(fun):
        raise TypeError(f"fwd_and_bwd expects a callable, got {fun!r}")
    single, _ = _argnums_tuple(argnums, "fwd_and_bwd")

    def fwd(*args):
        _, dyn_args, partial_fun = _argnums_partial(fun, argnums, args, {}, "fwd_and_bwd")
        return vjp(partial_fun, *dyn_args, has_aux=has_aux)

    def bwd(residuals, cotangent):
        cts = residuals(cotangent)
        return cts[0] if single else cts

    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd


def _argnums_tuple(argnums, where: str):
    """(whether `argnums` is one int, its ints as a sequence), or ArgnumsError."""
    single = isinstance(argnums, (int, np.integer)) and not isinstance(argnums, bool)
    nums = (argnums,) if single else argnums
    if not isinstance(nums, (tuple, list)) or not all(
            isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in nums):
        raise ArgnumsError(f"{where}: argnums must be an int or a tuple of ints, got "
                           f"{argnums!r}")
    return single, nums


def _normalize_argnums(argnums, n_args: int, where: str):
    single, nums = _argnums_tuple(argnums, where)
    if not nums:
        raise ArgnumsError(f"{where}: argnums is empty: there is nothing to differentiate "
                           f"with respect to")
    for n in nums:
        if not -n_args <= n < n_args:
            raise ArgnumsError(f"{where}: differentiating with respect to argnums={n} needs "
                               f"at least {n + 1 if n >= 0 else -n} positional arguments, "
                               f"but the function was called with {n_args}")
    return single, tuple(int(n) % n_args for n in nums)


def _argnums_partial(fun, argnums, args, kwargs, where):
    single, nums = _normalize_argnums(argnums, len(args), where)
    dyn_args = tuple(args[i] for i in nums)

    def partial_fun(*dyn):
        full = list(args)
        for i, value in zip(nums, dyn):
            full[i] = value
        return fun(*full, **kwargs)
    return single, dyn_args, partial_fun


def _check_differentiable_inputs(dyn_args, where, allow_int, holomorphic, real_only=False):
    for leaf in tree_util.tree_leaves(dyn_args):
        dtype = aval_of(leaf).dtype
        if holomorphic and not is_complex(dtype):
            raise NonDifferentiableInputError(
                f"{where} with holomorphic=True requires complex inputs, got {dtype.name}")
        ok = is_float(dtype) if real_only else is_inexact(dtype)
        if not ok and not (allow_int and not real_only):
            advice = ("For holomorphic differentiation pass holomorphic=True; for a "
                      "non-holomorphic function of complex inputs use jacrev or vjp."
                      if is_complex(dtype) else
                      "To differentiate with respect to integer or boolean inputs use "
                      "vjp" + ("" if real_only else " or pass allow_int=True") + ".")
            raise NonDifferentiableInputError(
                f"{where} requires {'real' if real_only else 'real- or complex'}-valued "
                f"(floating point) inputs, but got {dtype.name}. {advice}")


def value_and_grad(fun: Callable, argnums=0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False, reduce_axes=()):
    """`f -> (f(x), grad f(x))` for a scalar-output `f`, as `jax.value_and_grad`."""
    where = f"grad({fun_name(fun)})"

    @functools.wraps(fun)
    @_all_or_nothing
    def value_and_grad_f(*args, **kwargs):
        single, dyn_args, partial_fun = _argnums_partial(fun, argnums, args, kwargs, where)
        _check_differentiable_inputs(dyn_args, where, allow_int, holomorphic)
        result = _vjp(partial_fun, dyn_args, has_aux, where)
        out, vjp_fun = result[0], result[1]
        out_aval = _check_scalar_output(out, where, holomorphic)
        # The seed is an array, as JAX's is: the gradient of `lambda x: x` is the
        # seed itself, and the caller gets an array back, not a Python float.
        grads = vjp_fun(as_results(scalar(1, out_aval.dtype, out_aval.weak_type)))
        grads = grads[0] if single else grads
        value = (out, result[2]) if has_aux else out
        return value, grads
    return value_and_grad_f


def _check_scalar_output(out, where, holomorphic):
    leaves = tree_util.tree_leaves(out)
    if len(leaves) != 1 or tree_util.tree_structure(out).num_nodes != 1:
        raise NonScalarOutputError(f"{where}: gradient is only defined for functions with "
                                   f"one scalar array output, got {type(out).__name__}")
    aval = aval_of(leaves[0])
    if aval.shape != ():
        raise NonScalarOutputError(f"{where}: gradient is only defined for scalar-output "
                                   f"functions. Output had shape: {aval.shape}.")
    _check_output_dtype(aval, where, holomorphic, NonScalarOutputError)
    return aval


def _check_output_dtype(aval, where, holomorphic, error=TypeError, real_only=True):
    """grad and jacrev (`real_only`) pull back only from real floating outputs, or
    complex ones with holomorphic=True, as JAX's; jacfwd checks only that a
    holomorphic function's outputs are complex."""
    dtype = aval.dtype
    if holomorphic:
        if not is_complex(dtype):
            raise error(f"{where} with holomorphic=True requires outputs with complex "
                        f"dtype, but got {dtype.name}.")
    elif real_only and not is_float(dtype):
        advice = ("For holomorphic differentiation pass holomorphic=True; for a "
                  "non-holomorphic function with complex outputs use vjp directly."
                  if is_complex(dtype) else
                  "For a function with integer or boolean outputs use vjp directly.")
        raise error(f"{where} requires real-valued (floating point) outputs, but got "
                    f"{dtype.name}. {advice}")


def grad(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False, reduce_axes=()):
    """The gradient of a scalar-output `fun` with respect to `argnums`, as `jax.grad`."""
    value_and_grad_f = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        (value, grads) = value_and_grad_f(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return grad_f


# -- Jacobians ------------------------------------------------------------------------------
#
# As in JAX, a Jacobian is ONE batched linear pass: the standard basis of the inputs
# (jacfwd) or of the outputs (jacrev) is stacked along a new leading axis -- row k is
# one-hot at flat position k across all leaves -- and the linear map (the linearized
# jvp, or the pullback) runs once under `vmap` over that axis. A custom rule therefore
# runs once per Jacobian, not once per basis vector, and a jitted Jacobian (a Hessian)
# holds one copy of the linear program. The rows are then cut per leaf and reshaped to
# the Jacobian's layout (output shape + input shape).

def _typed_like(block, example_aval):
    """A Jacobian block with the weak type of its example, as JAX casts each block:
    jacrev's to its input leaf's, jacfwd's to its output leaf's (so a Python-float
    argument's jacrev block is weak even where the function's value is strong)."""
    if bool(aval_of(block).weak_type) == bool(example_aval.weak_type):
        return block
    return lax.convert_element_type(block, aval_of(block).dtype,
                                    weak_type=bool(example_aval.weak_type))


def _stacked_basis(avals, wanted):
    """The standard basis of the flattened leaves `avals`, stacked: for each leaf i
    with `wanted[i]` (an inexact one) an array (n,) + its shape, n the total size of
    all the leaves, whose row k is one-hot at flat position k. A rank-0 weak leaf (a
    Python scalar's) gets a weak basis, so its Jacobian block stays weak, as JAX's."""
    n = sum(a.size for a in avals)
    basis, start = [], 0
    for aval, keep in zip(avals, wanted):
        start += aval.size
        if not keep:
            continue
        rows = np.eye(n, aval.size, -(start - aval.size), dtype=aval.dtype)
        rows = rows.reshape((n,) + aval.shape)
        weak = aval.shape == () and bool(aval.weak_type)
        basis.append(lax.convert_element_type(rows, aval.dtype, weak_type=True)
                     if weak else rows)
    return basis


def _once_over_basis(linear_fun, basis, n):
    """`linear_fun` (a list of arrays to a list of arrays) applied to each row of the
    stacked `basis` in one batched pass: each result has the batch axis first."""
    return vmap(lambda *rows: linear_fun(list(rows)), axis_size=n)(*basis)


def _rows(batched, start, size, n):
    """Rows start:start+size of a batched result (all of it without a slice)."""
    return batched if size == n else lax.slice_in_dim(batched, start, start + size, axis=0)


def _by_input(per_input_leaves, in_tree, single):
    tree = tree_util.tree_unflatten(in_tree, per_input_leaves)
    return tree[0] if single else tree


def jacfwd(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Jacobian by forward mode: linearize once, apply to the stacked input basis
    in one batched pass."""
    where = f"jacfwd({fun_name(fun)})"

    @_all_or_nothing
    def jacfun(*args, **kwargs):
        single, dyn_args, partial_fun = _argnums_partial(fun, argnums, args, kwargs, where)
        _check_differentiable_inputs(dyn_args, where, False, holomorphic, not holomorphic)
        linearized = _Linearized(partial_fun, dyn_args, has_aux, where)
        lin, in_avals = linearized.lin, linearized.in_avals
        for aval in linearized.out_avals:
            _check_output_dtype(aval, where, holomorphic, real_only=False)
        for kept in linearized.flat_fun.aux_kept.values():
            # JAX's jacfwd maps the aux over the basis with vmap: it must be values
            raise TypeError(f"{where}: the aux output {kept!r} of type {type(kept)} is "
                            f"not a valid JAX type (jacfwd and hessian batch the aux)")
        n = sum(a.size for a in in_avals)
        # The linear jaxpr's outputs are the differentiable outputs' tangents only.
        columns = iter(_once_over_basis(lambda basis: apply_linear(lin, basis),
                                        _stacked_basis(in_avals, lin.differentiable), n))
        blocks = []
        for out_aval, differentiable in zip(linearized.out_avals, lin.out_differentiable):
            batched = next(columns) if differentiable else None
            per_input, start = [], 0
            for aval in in_avals:
                shape = out_aval.shape + aval.shape
                if batched is None:      # an integer output: zeros of its dtype, as JAX
                    per_input.append(_typed_like(lax.full(shape, 0, out_aval.dtype),
                                                 out_aval))
                    continue
                cols = _rows(batched, start, aval.size, n)      # (size,) + out shape
                moved = lax.transpose(cols, tuple(range(1, out_aval.ndim + 1)) + (0,))
                per_input.append(_typed_like(lax.reshape(moved, shape), out_aval))
                start += aval.size
            blocks.append(_by_input(per_input, linearized.in_tree, single))
        jac = as_results(tree_util.tree_unflatten(linearized.flat_fun.out_tree, blocks))
        return (jac, linearized.aux) if has_aux else jac
    return jacfun


def jacrev(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False,
           allow_int: bool = False):
    """The Jacobian by reverse mode: one vjp, pulled back from the stacked output
    basis in one batched pass."""
    where = f"jacrev({fun_name(fun)})"

    @_all_or_nothing
    def jacfun(*args, **kwargs):
        single, dyn_args, partial_fun = _argnums_partial(fun, argnums, args, kwargs, where)
        _check_differentiable_inputs(dyn_args, where, allow_int, holomorphic)
        linearized = _Linearized(partial_fun, dyn_args, has_aux, where)
        out_avals, in_avals = linearized.out_avals, linearized.in_avals
        for aval in out_avals:
            _check_output_dtype(aval, where, holomorphic)
        lin = linearized.lin
        n = sum(a.size for a in out_avals)
        out_basis = _stacked_basis(out_avals, lin.out_differentiable)

        def pull_back(cts):
            return [ct for ct, d in zip(linearized.pull_back(cts, instantiate),
                                        lin.differentiable) if d]
        batched = iter(_once_over_basis(pull_back, out_basis, n))
        by_input = [next(batched) if d else None for d in lin.differentiable]
        blocks, start = [], 0
        for aval in out_avals:
            per_input = []
            for in_aval, rows in zip(in_avals, by_input):
                shape = aval.shape + in_aval.shape
                if rows is None:
                    # An integer or boolean input (allow_int): JAX casts every block to
                    # its input's dtype, so this one is zeros of that dtype, not float0.
                    per_input.append(_typed_like(lax.full(shape, 0, in_aval.dtype),
                                                 in_aval))
                    continue
                block = lax.reshape(_rows(rows, start, aval.size, n), shape)
                per_input.append(_typed_like(block, in_aval))
            start += aval.size
            blocks.append(_by_input(per_input, linearized.in_tree, single))
        jac = as_results(tree_util.tree_unflatten(linearized.flat_fun.out_tree, blocks))
        return (jac, linearized.aux) if has_aux else jac
    return jacfun


# As in JAX, `jacobian` is reverse mode.
jacobian = jacrev


def hessian(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Hessian: `jacfwd(jacrev(fun))`, as `jax.hessian`."""
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)
