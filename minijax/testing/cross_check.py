"""`cross_check(f, *args)`: does minijax transform this JAX program as JAX does?

`f` is ordinary JAX code. JAX traces it (`jax.make_jaxpr`); minijax imports the
program (`minijax.interop.import_jaxpr`) and applies *its own* transforms to it; JAX
applies *its own* transforms to `f`. Each transform is written once, as a recipe
over a `Side` -- the API (`jax` or `minijax`), its numpy, and the flat function that
side runs -- so both sides do literally the same thing with their own machinery:

    recipe(side, leaves) -> pytree of results

The results are compared per transform (`report.py`), along with the contents of
every ref the program was given: a transform that writes a ref must leave both
sides' refs equal. When a row differs, `shrink.py` reduces the imported program
while the difference persists and writes a standalone reproducer.

Only this module and `minijax.interop` call JAX's transforms, and only for JAX's
side of a comparison.
"""
from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from typing import Callable

import jax
import jax.ad_checkpoint
import jax.numpy as jnp
import numpy as np
from jax import tree_util

from . import assert_trees_match
from .report import Row, Report

__all__ = ["cross_check", "assert_cross_check", "TRANSFORMS", "DEFAULT_POLICIES", "Side",
           "jax_side", "minijax_side", "run_recipe", "compare"]

DEFAULT_POLICIES = ("nothing_saveable", "dots_saveable", "everything_saveable")
_HESSIAN_MAX_SIZE = 64       # hessians of larger inputs are skipped: small inputs only


@dataclass
class Side:
    """One side of the comparison: `api` is `jax` or `minijax`, `fn` the flat
    program (leaves -> tuple of output leaves) that side runs."""
    name: str
    api: object
    np: object
    fn: Callable
    new_ref: Callable
    read_ref: Callable
    is_ref: Callable
    saved_residuals: Callable     # (f, *args) -> sorted list of aval texts


class Skip(Exception):
    """The transform does not apply to this program."""


# -- the two sides ---------------------------------------------------------------------------

def _jax_saved_residuals(f, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        jax.ad_checkpoint.print_saved_residuals(f, *args)
    return sorted(line.split(" ")[0] for line in out.getvalue().splitlines() if line)


def _is_jax_ref(x) -> bool:
    return isinstance(x, jax.ref.Ref) if hasattr(jax.ref, "Ref") else False


def jax_side(fn) -> Side:
    return Side("jax", jax, jnp, fn, jax.new_ref, lambda r: r[...], _is_jax_ref,
                _jax_saved_residuals)


def minijax_side(fn) -> Side:
    import minijax
    import minijax.numpy as mnp
    from minijax.ad_checkpoint import saved_residuals, aval_text

    def residuals(f, *args):
        return sorted(aval_text(aval) for aval, _ in saved_residuals(f, *args))
    return Side("minijax", minijax, mnp, fn, minijax.new_ref, lambda r: r[...],
                minijax.refs.is_ref, residuals)


# -- the recipes ---------------------------------------------------------------------------------

def _float_positions(side, leaves):
    return [i for i, x in enumerate(leaves)
            if not side.is_ref(x) and jnp.issubdtype(np.result_type(x), jnp.inexact)]


def _float_outputs(side, outs):
    return [o for o in outs if jnp.issubdtype(np.result_type(o), jnp.inexact)]


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
    x = np.asarray(x)
    return np.linspace(-1.0, 1.0, x.size, dtype=x.dtype).reshape(x.shape) + 0.25


def _batched(side, leaves):
    """Each non-ref leaf with a leading axis of size 2 (the value, and a shifted copy
    for floats); refs are shared (in_axes None)."""
    out, axes = [], []
    for x in leaves:
        if side.is_ref(x):
            out.append(x)
            axes.append(None)
            continue
        x = np.asarray(x)
        other = x * 0.5 + 0.25 if jnp.issubdtype(x.dtype, jnp.inexact) else x
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
    if sum(np.size(x) for x in diff) > _HESSIAN_MAX_SIZE:
        raise Skip(f"inputs larger than {_HESSIAN_MAX_SIZE} elements")
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


def _checkpoint_recipe(spec):
    def recipe(side, leaves):
        positions, diff = _diff_args(side, leaves)
        loss = _loss(side, _restricted(side, leaves, positions))
        remat = side.api.checkpoint(loss, policy=_policy(side, spec))
        grads = side.api.grad(remat, argnums=tuple(range(len(diff))))(*diff)
        return {"grad": grads,
                "saved_residuals": SavedResiduals(side.saved_residuals(remat, *diff))}
    return recipe


class SavedResiduals(tuple):
    """The sorted types of the residuals a backward pass saves (one pytree leaf:
    compared as a whole, by equality)."""



TRANSFORMS: dict[str, Callable] = {
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


def _policy_label(spec) -> str:
    if isinstance(spec, str):
        return spec
    return f"{spec[0]}({', '.join(repr(a) for a in spec[1:])})"


# -- running and comparing ---------------------------------------------------------------------------

def _fresh_leaves(side, leaves):
    """The arguments as this side's values: each ref a new ref of this side holding a
    copy of the given ref's contents (so transforms never share state)."""
    out = []
    for x in leaves:
        if _is_jax_ref(x) or _is_minijax_ref(x):
            out.append(side.new_ref(np.array(x[...])))
        else:
            out.append(x)
    return out


def _is_minijax_ref(x) -> bool:
    from minijax.refs import is_ref
    try:
        return is_ref(x)
    except Exception:  # noqa: BLE001 -- not a value minijax knows
        return False


def run_recipe(side, recipe, leaves):
    """(result, ref contents after it) or raises what the side raised."""
    fresh = _fresh_leaves(side, leaves)
    result = recipe(side, fresh)
    refs_after = [np.asarray(side.read_ref(x)) for x in fresh if side.is_ref(x)]
    return {"result": result, "refs": refs_after}


def _max_error(actual, expected):
    worst = None
    for a, e in zip(tree_util.tree_leaves(actual), tree_util.tree_leaves(expected)):
        a, e = np.asarray(a), np.asarray(e)
        if a.shape != e.shape or a.dtype.kind not in "fciub" or e.dtype.kind not in "fciub":
            continue
        diff = np.abs(a.astype(np.float64) - e.astype(np.float64))
        diff = np.where(np.isnan(diff), np.where(np.isnan(a) == np.isnan(e), 0, np.inf), diff)
        value = float(np.max(diff)) if diff.size else 0.0
        worst = value if worst is None else max(worst, value)
    return worst


def compare(transform, mini_run, jax_run, rtol=None, atol=None) -> Row:
    """Run both sides of one transform (zero-argument callables) and judge them."""
    results, errors = {}, {}
    for name, run in (("minijax", mini_run), ("jax", jax_run)):
        try:
            results[name] = run()
        except Skip as skip:
            return Row(transform, "skipped", detail=str(skip))
        except Exception as error:  # noqa: BLE001 -- any failure is a finding
            errors[name] = f"{type(error).__name__}: {error}"
    if errors:
        status = "both raise" if len(errors) == 2 else "error"
        return Row(transform, status, minijax_error=errors.get("minijax", ""),
                   jax_error=errors.get("jax", ""))
    actual, expected = results["minijax"], results["jax"]
    try:
        actual, expected = _compare_residuals(actual, expected)
        assert_trees_match(actual, expected, rtol=rtol, atol=atol, what=transform)
    except AssertionError as difference:
        return Row(transform, "differ", max_error=_max_error(actual, expected),
                   detail=str(difference).strip().splitlines()[0])
    return Row(transform, "agree")


def _compare_residuals(actual, expected):
    """Check the `SavedResiduals` leaves for equality; return the trees without them."""
    def is_residuals(x):
        return isinstance(x, SavedResiduals)
    a_leaves, a_tree = tree_util.tree_flatten(actual, is_leaf=is_residuals)
    e_leaves, e_tree = tree_util.tree_flatten(expected, is_leaf=is_residuals)
    if a_tree != e_tree:
        raise AssertionError(f"tree structures differ: minijax {a_tree}, jax {e_tree}")
    for a, e in zip(a_leaves, e_leaves):
        if is_residuals(a) and tuple(a) != tuple(e):
            raise AssertionError(f"saved residuals differ: minijax saves {list(a)}, "
                                 f"jax saves {list(e)}")
    keep = [not is_residuals(a) for a in a_leaves]
    return ([a for a, k in zip(a_leaves, keep) if k], [e for e, k in zip(e_leaves, keep) if k])


def _program_words(closed) -> set:
    from minijax.ir.core import jaxprs_in_params
    words = set()

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            words.add(eqn.primitive.name)
            for sub in jaxprs_in_params(eqn.params):
                walk(sub)
    walk(closed.jaxpr)
    if words & {"new_ref", "get", "swap", "addupdate", "freeze"} or any(
            type(v.aval).__name__ == "RefType" for v in closed.jaxpr.invars):
        words.add("new_ref")
    if "remat" in words:
        words |= {"checkpoint", "checkpoint_policies"}
    if "debug_callback" in words or "debug_print" in words:
        words |= {"debug", "print"}
    return words


_TRANSFORM_WORDS = {"grad", "vjp", "jvp", "linearize", "vmap", "jit", "remat", "checkpoint",
                    "jacfwd", "jacrev", "hessian"}


def known_divergence(transform: str, closed) -> str:
    """The registered divergence that explains a difference of `transform` on this
    program: one whose transforms include the row's and whose other words (the
    features it needs: refs, remat, debug printing) the program all has."""
    from minijax.divergences import DIVERGENCES
    row_words = {w for w in _TRANSFORM_WORDS if w in transform}
    if transform.startswith("checkpoint"):
        row_words |= {"checkpoint", "remat", "grad"}
    if "value_and_grad" in transform:
        row_words.add("grad")
    program = _program_words(closed)
    for entry in DIVERGENCES:
        words = set(entry.transforms)
        needs = words - _TRANSFORM_WORDS
        if words & row_words and needs <= program | row_words:
            return entry.name
    return ""


def cross_check(f: Callable, *args, transforms=None, policies=DEFAULT_POLICIES,
                rtol=None, atol=None, shrink: bool = True, reproducer_dir=None) -> Report:
    """Compare minijax's transforms of the JAX function `f` with JAX's, at `args`.

    `transforms` picks rows by name (default: all of `TRANSFORMS`); `policies` adds a
    `checkpoint[policy]` row per entry (a policy name, or a tuple `(name, *args)`
    such as `("save_only_these_names", "h")`). With `shrink`, each unexplained
    difference is reduced to a small program and written as a standalone reproducer
    into `reproducer_dir` (a temporary folder when None)."""
    from minijax.interop import import_jaxpr
    from minijax.transforms.ad_util import eval_jaxpr

    leaves, in_tree = tree_util.tree_flatten(args)
    closed_jax = jax.make_jaxpr(lambda *a: f(*tree_util.tree_unflatten(in_tree, a)))(*leaves)
    imported = import_jaxpr(closed_jax)

    def jax_fn(*flat):
        return tuple(tree_util.tree_leaves(f(*tree_util.tree_unflatten(in_tree, flat))))

    def mini_fn(*flat):
        return tuple(eval_jaxpr(imported.jaxpr, imported.consts, flat))

    recipes = _selected_recipes(transforms, policies)
    report = Report(getattr(f, "__name__", repr(f)))
    mini, ref_side = minijax_side(mini_fn), jax_side(jax_fn)
    for name, recipe in recipes.items():
        row = compare(name, lambda: run_recipe(mini, recipe, leaves),
                      lambda: run_recipe(ref_side, recipe, leaves), rtol, atol)
        if not row.ok:
            row.divergence = known_divergence(name, imported)
            if row.divergence:
                row.status = "divergence"
        report.rows.append(row)
    if shrink and not report.ok:
        from .shrink import shrink_and_write
        for row in report.failures:
            report.reproducers[row.transform] = shrink_and_write(
                imported, leaves, row.transform, recipes[row.transform], rtol, atol,
                reproducer_dir)
    return report


def _selected_recipes(transforms, policies) -> dict:
    recipes = dict(TRANSFORMS)
    for spec in policies or ():
        recipes[f"checkpoint[{_policy_label(spec)}]"] = _checkpoint_recipe(spec)
    if transforms is None:
        return recipes
    unknown = [t for t in transforms if t not in recipes]
    if unknown:
        raise ValueError(f"unknown transforms {unknown}; known: {sorted(recipes)}")
    return {t: recipes[t] for t in transforms}


def assert_cross_check(f: Callable, *args, **kwargs) -> Report:
    """`cross_check`, raising AssertionError with the report when anything differs
    that no known divergence explains."""
    report = cross_check(f, *args, **kwargs)
    if not report.ok:
        raise AssertionError(str(report))
    return report
