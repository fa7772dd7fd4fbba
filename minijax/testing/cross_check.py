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

from typing import Callable

import jax
import numpy as np
from jax import tree_util

import minijax
from ..divergences import DIVERGENCES
from ..interop import import_jaxpr
from ..ir.core import eqns_nested
from ..ir.trace import Tracer
from ..transforms.ad_util import eval_jaxpr
from .comparison import assert_trees_match
from .recipes import (Side, Skip, SavedResiduals, TRANSFORMS, run_recipe, policy_label,
                      checkpoint_recipe)
from .report import Row, Report

__all__ = ["cross_check", "assert_cross_check", "DEFAULT_POLICIES", "compare",
           "known_divergence", "select_recipes"]

DEFAULT_POLICIES = ("nothing_saveable", "dots_saveable", "everything_saveable")


# -- comparing ---------------------------------------------------------------------------------

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
    leaked = [x for x in tree_util.tree_leaves(results.get("minijax"))
              if isinstance(x, Tracer)]
    if leaked:      # a minijax bug (F86 was one), not a value to compare
        errors["minijax"] = f"leaked tracer: minijax returned {leaked[0]!r}"
    if errors:
        status = "both raise" if len(errors) == 2 else "error"
        return Row(transform, status, minijax_error=errors.get("minijax", ""),
                   jax_error=errors.get("jax", ""))
    actual, expected = results["minijax"], results["jax"]
    try:
        # values first: a "saved residuals" row then says the gradients agreed
        actual, expected, residuals_differ = _split_residuals(actual, expected)
        assert_trees_match(actual, expected, rtol=rtol, atol=atol, what=transform)
        if residuals_differ:
            raise AssertionError(residuals_differ)
    except AssertionError as difference:
        return Row(transform, "differ", max_error=_max_error(actual, expected),
                   detail=str(difference).strip().splitlines()[0],
                   jax_nan_for_infinity=_jax_nan_for_infinity(actual, expected))
    return Row(transform, "agree")


def _jax_nan_for_infinity(actual, expected) -> bool:
    """Whether the values differ only where JAX's are NaN and minijax's infinite (past
    rounding: closeness as the loosest battery tolerance), in leaves of equal shape."""
    found = False
    for a, e in zip(tree_util.tree_leaves(actual), tree_util.tree_leaves(expected)):
        a, e = np.asarray(a), np.asarray(e)
        if a.shape != e.shape or a.dtype.kind not in "fc" or e.dtype.kind not in "fc":
            if not (a.shape == e.shape and np.array_equal(a, e)):
                return False
            continue
        apart = ~np.isclose(a.astype(np.complex128), e.astype(np.complex128), rtol=2e-2,
                            atol=2e-2, equal_nan=True)
        if not np.all(np.isnan(e[apart]) & np.isinf(a[apart])):
            return False
        found = found or bool(apart.any())
    return found


def _split_residuals(actual, expected):
    """The trees without their `SavedResiduals` leaves, and the first difference of
    those leaves ('' when they are equal)."""
    def is_residuals(x):
        return isinstance(x, SavedResiduals)
    a_leaves, a_tree = tree_util.tree_flatten(actual, is_leaf=is_residuals)
    e_leaves, e_tree = tree_util.tree_flatten(expected, is_leaf=is_residuals)
    if a_tree != e_tree:
        raise AssertionError(f"tree structures differ: minijax {a_tree}, jax {e_tree}")
    difference = next((f"saved residuals differ: minijax saves {list(a)}, jax saves {list(e)}"
                       for a, e in zip(a_leaves, e_leaves)
                       if is_residuals(a) and tuple(a) != tuple(e)), "")
    keep = [not is_residuals(a) for a in a_leaves]
    return ([a for a, k in zip(a_leaves, keep) if k],
            [e for e, k in zip(e_leaves, keep) if k], difference)


def _program_words(closed) -> set:
    words = {eqn.primitive.name for eqn in eqns_nested(closed)}
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


def run_recipe_under_jit(side, recipe, leaves):
    """`run_recipe` as ONE `jax.jit` program: the recipe (the transform, its tangents,
    its loss) is traced with the arguments closed over as constants. Eagerly, JAX
    compiles a program per distinct operation (dozens per transform); this compiles
    one. The values agree with the eager ones up to rounding, so it serves as the
    oracle where results are compared with a tolerance. A `SavedResiduals` leaf (a
    trace-time fact, not an array) is handed out beside the program. Arguments
    holding refs run eagerly, through `run_recipe`, so their contents can be read."""
    if any(side.is_ref(x) for x in leaves):
        return run_recipe(side, recipe, leaves)
    found = {}

    def program():
        flat, tree = tree_util.tree_flatten(recipe(side, list(leaves)),
                                            is_leaf=lambda x: isinstance(x, SavedResiduals))
        found.update(flat=flat, tree=tree)
        return [x for x in flat if not isinstance(x, SavedResiduals)]
    arrays = iter(jax.jit(program)())
    flat = [x if isinstance(x, SavedResiduals) else next(arrays) for x in found["flat"]]
    return {"result": tree_util.tree_unflatten(found["tree"], flat), "refs": []}


def cross_check(f: Callable, *args, transforms=None, policies=DEFAULT_POLICIES,
                vmap_args=None, rtol=None, atol=None, shrink: bool = True,
                reproducer_dir=None, jit_oracle: bool = False) -> Report:
    """Compare minijax's transforms of the JAX function `f` with JAX's, at `args`.

    `transforms` picks rows by name (default: all of `TRANSFORMS`); `policies` adds a
    `checkpoint[policy]` row per entry (a policy name, or a tuple `(name, *args)`
    such as `("save_only_these_names", "h")`). `vmap_args` are the arguments the
    `vmap` rows map over, each with a leading batch axis (default: the arguments
    with an axis of two examples added). With `shrink`, each unexplained difference
    is reduced to a small program and written as a standalone reproducer into
    `reproducer_dir` (a temporary folder when None); a row that maps over given
    `vmap_args` is not shrunk, since shrinking changes the program's inputs. With
    `jit_oracle`, JAX's side of each row runs as one `jax.jit` program
    (`run_recipe_under_jit`): a few compiles instead of one per eager JAX
    operation, for a comparison that is up to tolerance anyway."""

    leaves, in_tree = tree_util.tree_flatten(args)
    closed_jax = jax.make_jaxpr(lambda *a: f(*tree_util.tree_unflatten(in_tree, a)))(*leaves)
    imported = import_jaxpr(closed_jax)

    def jax_fn(*flat):
        return tuple(tree_util.tree_leaves(f(*tree_util.tree_unflatten(in_tree, flat))))

    def mini_fn(*flat):
        return tuple(eval_jaxpr(imported.jaxpr, imported.consts, flat))

    recipes = select_recipes(transforms, policies)
    report = Report(getattr(f, "__name__", repr(f)))
    batched = None
    if vmap_args is not None:
        batched, batched_tree = tree_util.tree_flatten(tuple(vmap_args))
        if batched_tree != in_tree:
            raise ValueError(f"vmap_args must have the structure of the arguments: got "
                             f"{batched_tree}, expected {in_tree}")
    mini = Side("minijax", minijax, mini_fn, batched)
    ref_side = Side("jax", jax, jax_fn, batched)
    run_oracle = run_recipe_under_jit if jit_oracle else run_recipe
    for name, recipe in recipes.items():
        row = compare(name, lambda: run_recipe(mini, recipe, leaves),
                      lambda: run_oracle(ref_side, recipe, leaves), rtol, atol)
        if not row.ok:
            row.divergence = known_divergence(name, imported)
            if row.divergence:
                row.status = "divergence"
        report.rows.append(row)
    if shrink and not report.ok:
        from .shrink import shrink_and_write

        def retrace(new_leaves):
            return import_jaxpr(jax.make_jaxpr(
                lambda *a: f(*tree_util.tree_unflatten(in_tree, a)))(*new_leaves))
        for row in report.failures:
            if batched is not None and "vmap" in row.transform:
                continue
            report.reproducers[row.transform] = shrink_and_write(
                imported, leaves, row.transform, recipes[row.transform], rtol, atol,
                reproducer_dir, retrace)
    return report


def select_recipes(transforms, policies) -> dict:
    """Transform name -> recipe: the named transforms (all of `TRANSFORMS` when None),
    then one `checkpoint[policy]` row per policy."""
    if transforms is None:
        recipes = dict(TRANSFORMS)
    else:
        unknown = [t for t in transforms if t not in TRANSFORMS]
        if unknown:
            raise ValueError(f"unknown transforms {unknown}; known: {list(TRANSFORMS)} "
                             f"(checkpoint rows come from `policies`)")
        recipes = {t: TRANSFORMS[t] for t in transforms}
    for spec in policies or ():
        recipes[f"checkpoint[{policy_label(spec)}]"] = checkpoint_recipe(spec)
    return recipes


def assert_cross_check(f: Callable, *args, **kwargs) -> Report:
    """`cross_check`, raising AssertionError with the report when anything differs
    that no known divergence explains."""
    report = cross_check(f, *args, **kwargs)
    if not report.ok:
        raise AssertionError(str(report))
    return report
