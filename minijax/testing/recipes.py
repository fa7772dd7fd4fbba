"""The transforms `cross_check` applies, written once for both sides.

Each recipe is `recipe(side, leaves) -> pytree of results`: `side.api` is the `jax`
module or the `minijax` module, `side.fn` the flat program that side runs. Both
sides run literally the same code with their own machinery.

This module imports nothing but NumPy, on purpose: a reproducer written by the
shrinker (`shrink.py`) embeds its source verbatim, so the file runs under `python`
(where `import jax` is JAX) and under `python -m minijax run` (where it is minijax)
and applies the very transform that disagreed.
"""
import contextlib
import importlib
import io

import numpy as np

HESSIAN_MAX_SIZE = 64       # hessians of larger inputs are skipped: small inputs only


class Side:
    """One side of the comparison: the `jax` or `minijax` module as `api`, and `fn`,
    the flat program (argument leaves -> tuple of output leaves) that side runs."""

    def __init__(self, name, api, fn, batched=None):
        self.name, self.api, self.np, self.fn = name, api, api.numpy, fn
        # The leaves `vmap` rows map over, each with a leading batch axis (None: add
        # one to the arguments, see `_batched`).
        self.batched = batched

    def is_ref(self, x):
        # Both APIs name their concrete ref type `Ref` (jax.Ref, minijax.Ref).
        return type(x).__name__ == "Ref"

    def new_ref(self, value):
        return self.api.new_ref(value)

    def saved_residuals(self, f, *args):
        """The sorted types of what the backward pass of `f` saves, as both APIs'
        `print_saved_residuals` print them."""
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            # `ad_checkpoint` is imported by name on both sides
            checkpoints = importlib.import_module(self.api.__name__ + ".ad_checkpoint")
            checkpoints.print_saved_residuals(f, *args)
        return SavedResiduals(sorted(line.split(" ")[0]
                                     for line in out.getvalue().splitlines() if line))


class Skip(Exception):
    """The transform does not apply to this program."""


class SavedResiduals(tuple):
    """The sorted types of the residuals a backward pass saves (one pytree leaf:
    compared as a whole, by equality)."""


def _dtype(x):
    return x.dtype if hasattr(x, "dtype") else np.result_type(x)


def _is_inexact(side, x):
    # The side's own `issubdtype`: NumPy's does not count ml_dtypes' bfloat16 as
    # inexact, so NumPy's would never differentiate bfloat16 arguments nor put
    # bfloat16 outputs in the loss.
    return side.np.issubdtype(_dtype(x), side.np.inexact)


def _float_positions(side, leaves):
    return [i for i, x in enumerate(leaves) if not side.is_ref(x) and _is_inexact(side, x)]


def _float_outputs(side, outs):
    return [o for o in outs if _is_inexact(side, o)]


def _restricted(side, leaves, positions):
    """The program as a function of the leaves at `positions` only, the rest fixed,
    keeping only its float outputs."""
    def fn(*diff):
        full = list(leaves)
        for i, x in zip(positions, diff):
            full[i] = x
        return tuple(_float_outputs(side, side.fn(*full)))
    return fn


def _loss(side, fn):
    def loss(*args):
        outs = fn(*args)
        if not outs:
            raise Skip("the program has no float output")
        total = side.np.sum(outs[0])
        for o in outs[1:]:
            total = total + side.np.sum(o)
        return total
    return loss


def _diff_args(side, leaves):
    positions = _float_positions(side, leaves)
    if not positions:
        raise Skip("no float argument to differentiate")
    return positions, [leaves[i] for i in positions]


def _tangent_like(x):
    # At the value's declared dtype: JAX's vjp hands a weak scalar output back as a
    # float subclass whose `dtype` is float32, which np.asarray would make float64.
    # Only the type is read, never the value: under `run_recipe_under_jit` (JAX's side
    # as one traced program) `x` is a tracer.
    declared = getattr(x, "dtype", None)
    dtype = declared if isinstance(declared, np.dtype) else np.asarray(x).dtype
    shape = np.shape(x)
    # (NumPy promotes a bfloat16 array plus a Python float to float32: cast back)
    return (np.linspace(-1.0, 1.0, int(np.prod(shape)), dtype=dtype).reshape(shape) + 0.25
            ).astype(dtype)


def _batched(side, leaves):
    """The batch the `vmap` rows map over: the side's given `batched` leaves, or each
    non-ref leaf with a leading axis of size 2 added (the value, and a shifted copy
    for floats). Refs are shared (in_axes None)."""
    if side.batched is not None:
        given = fresh_leaves(side, side.batched)
        return given, tuple(None if side.is_ref(x) else 0 for x in given)
    out, axes = [], []
    for x in leaves:
        if side.is_ref(x):
            out.append(x)
            axes.append(None)
            continue
        x = np.asarray(x)
        other = x * 0.5 + 0.25 if np.issubdtype(x.dtype, np.inexact) else x
        out.append(np.stack([x, other.astype(x.dtype)]))
        axes.append(0)
    return out, tuple(axes)


def _grad_recipe(side, leaves):
    positions, diff = _diff_args(side, leaves)
    return side.api.grad(_loss(side, _restricted(side, leaves, positions)),
                         argnums=tuple(range(len(diff))))(*diff)


def _value_and_grad_recipe(side, leaves):
    positions, diff = _diff_args(side, leaves)
    return side.api.value_and_grad(_loss(side, _restricted(side, leaves, positions)),
                                   argnums=tuple(range(len(diff))))(*diff)


def _vjp_recipe(side, leaves):
    positions, diff = _diff_args(side, leaves)
    out, pullback = side.api.vjp(_restricted(side, leaves, positions), *diff)
    if not out:
        raise Skip("the program has no float output")
    return out, pullback(tuple(_tangent_like(o) for o in out))


def _jvp_recipe(side, leaves):
    positions, diff = _diff_args(side, leaves)
    return side.api.jvp(_restricted(side, leaves, positions), tuple(diff),
                        tuple(_tangent_like(x) for x in diff))


def _linearize_recipe(side, leaves):
    positions, diff = _diff_args(side, leaves)
    out, lin = side.api.linearize(_restricted(side, leaves, positions), *diff)
    return out, lin(*(_tangent_like(x) for x in diff))


def _jac_recipe(kind):
    def recipe(side, leaves):
        positions, diff = _diff_args(side, leaves)
        jac = getattr(side.api, kind)
        return jac(_restricted(side, leaves, positions),
                   argnums=tuple(range(len(diff))))(*diff)
    return recipe


def _hessian_recipe(side, leaves):
    positions, diff = _diff_args(side, leaves)
    if sum(np.size(x) for x in diff) > HESSIAN_MAX_SIZE:
        raise Skip(f"inputs larger than {HESSIAN_MAX_SIZE} elements")
    return side.api.hessian(_loss(side, _restricted(side, leaves, positions)),
                            argnums=tuple(range(len(diff))))(*diff)


def _vmap_recipe(side, leaves):
    batched, axes = _batched(side, leaves)
    return side.api.vmap(side.fn, in_axes=axes)(*batched)


def _jit_grad_recipe(side, leaves):
    positions, diff = _diff_args(side, leaves)
    return side.api.jit(side.api.grad(_loss(side, _restricted(side, leaves, positions)),
                                      argnums=tuple(range(len(diff)))))(*diff)


def _vmap_grad_recipe(side, leaves):
    positions, _ = _diff_args(side, leaves)
    batched, axes = _batched(side, leaves)

    def grad_at(*full):
        diff = [full[i] for i in positions]
        return side.api.grad(_loss(side, _restricted(side, list(full), positions)),
                             argnums=tuple(range(len(diff))))(*diff)
    return side.api.vmap(grad_at, in_axes=axes)(*batched)


def _grad_vmap_recipe(side, leaves):
    positions, _ = _diff_args(side, leaves)
    batched, axes = _batched(side, leaves)

    def total(*diff):
        full = list(batched)
        for i, x in zip(positions, diff):
            full[i] = x
        outs = side.api.vmap(lambda *a: tuple(_float_outputs(side, side.fn(*a))),
                             in_axes=axes)(*full)
        return _loss(side, lambda: outs)()
    return side.api.grad(total, argnums=tuple(range(len(positions))))(
        *[batched[i] for i in positions])


def _grad_grad_recipe(side, leaves):
    positions, diff = _diff_args(side, leaves)
    loss = _loss(side, _restricted(side, leaves, positions))
    argnums = tuple(range(len(diff)))

    def grad_total(*d):
        grads = side.api.grad(loss, argnums=argnums)(*d)
        return _loss(side, lambda: grads)()
    return side.api.grad(grad_total, argnums=argnums)(*diff)


def _policy(side, spec):
    name, args = (spec, ()) if isinstance(spec, str) else (spec[0], tuple(spec[1:]))
    policy = getattr(side.api.checkpoint_policies, name)
    return policy(*args) if args else policy


def checkpoint_recipe(spec):
    def recipe(side, leaves):
        positions, diff = _diff_args(side, leaves)
        loss = _loss(side, _restricted(side, leaves, positions))
        remat = side.api.checkpoint(loss, policy=_policy(side, spec))
        grads = side.api.grad(remat, argnums=tuple(range(len(diff))))(*diff)
        return {"grad": grads, "saved_residuals": side.saved_residuals(remat, *diff)}
    recipe.spec = spec      # what a reproducer writes to rebuild this recipe
    return recipe



def vmap_axes_recipe(in_axes, out_axes):
    """vmap with the given `in_axes` (one entry per leaf; None: unbatched) and
    `out_axes` (one per output): each batched leaf gets an axis of size 2 there."""
    def recipe(side, leaves):
        batched, axes = [], []
        for x, axis in zip(leaves, in_axes):
            if side.is_ref(x) or axis is None:
                batched.append(x)
                axes.append(None)
                continue
            x = np.asarray(x)
            other = x * 0.5 + 0.25 if np.issubdtype(x.dtype, np.inexact) else x
            batched.append(np.stack([x, other.astype(x.dtype)], axis=axis))
            axes.append(axis)
        return side.api.vmap(side.fn, in_axes=tuple(axes), out_axes=tuple(out_axes))(*batched)
    recipe.source = f"vmap_axes_recipe({tuple(in_axes)!r}, {tuple(out_axes)!r})"
    return recipe


TRANSFORMS = {
    "eager": lambda side, leaves: side.fn(*leaves),
    "jit": lambda side, leaves: side.api.jit(side.fn)(*leaves),
    "grad": _grad_recipe,
    "value_and_grad": _value_and_grad_recipe,
    "vjp": _vjp_recipe,
    "jvp": _jvp_recipe,
    "linearize": _linearize_recipe,
    "jacfwd": _jac_recipe("jacfwd"),
    "jacrev": _jac_recipe("jacrev"),
    "hessian": _hessian_recipe,
    "vmap": _vmap_recipe,
    "jit(grad)": _jit_grad_recipe,
    "vmap(grad)": _vmap_grad_recipe,
    "grad(vmap)": _grad_vmap_recipe,
    "grad(grad)": _grad_grad_recipe,
}


def policy_label(spec) -> str:
    if isinstance(spec, str):
        return spec
    return f"{spec[0]}({', '.join(repr(a) for a in spec[1:])})"


# -- running and comparing ---------------------------------------------------------------------------

def fresh_leaves(side, leaves):
    """The arguments as this side's values: each ref (of either API: a ref is anything
    with a `[...]` read that is not an array) a new ref of this side holding a copy
    of its contents, so transforms never share state."""
    out = []
    for x in leaves:
        if type(x).__name__ == "Ref":
            out.append(side.new_ref(np.array(x[...])))
        else:
            out.append(x)
    return out


def run_recipe(side, recipe, leaves):
    """(result, ref contents after it) or raises what the side raised."""
    fresh = fresh_leaves(side, leaves)
    result = recipe(side, fresh)
    refs_after = [np.asarray(x[...]) for x in fresh if side.is_ref(x)]
    return {"result": result, "refs": refs_after}
