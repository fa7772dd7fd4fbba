"""Shrinking a disagreement to a small program, and writing it as a reproducer.

When `cross_check` finds that a transform disagrees, the program it imported may be
large. `shrink` reduces it while the disagreement persists, trying candidate
reductions in a fixed order and keeping the first that still disagrees, until none
does or the budget (checks and seconds) is spent -- so it is deterministic and
bounded. The candidates, smallest result first:

* keep one output of the program;
* cut the program after one equation (that equation's results become the outputs);
* replace the results of one equation by new inputs (their values become arguments),
  or by constants;
* unnest: replace a `jit`/`remat`/custom-derivative call by its body, a `cond`
  by one of its branches, or the whole program by a loop's body at its first
  iteration.

Before that, `shrink_arguments` makes the arguments smaller (each axis cut to 1, 2
or half its length) where the function traces again at the smaller shape: the
shapes of a program's intermediate values are baked into its params, so shapes
shrink by tracing the user's function anew.

Each candidate is rebuilt by re-tracing the program (so it verifies and prints like
any minijax program) and pruned with dead-code elimination. "Still disagrees" is
judged as `cross_check` judges -- minijax's transform of the candidate against JAX's
transform of the candidate exported with `to_jax` -- or by the caller's `judge` (the
fuzzer judges as its battery did, `fuzz.shrink_judge`), and means the same KIND of
difference as the original row (a weak type stays a weak type, a JAX `TypeError`
stays one): a candidate that differs otherwise would be another finding.

`write_reproducer` writes the result as one standalone Python file: the program from
`to_python_source`, its arguments, the transform's recipe (`recipes.py`, verbatim),
and a loop printing every result leaf. `python FILE.py` runs it on JAX, and
`python -m minijax run FILE.py` on minijax; the printed values show the difference.
"""
from __future__ import annotations

import inspect
import os
import tempfile
import time

import numpy as np

from ..ir.control_flow_primitives import cond_p, scan_p, while_p
from ..ir.core import Var, eqns_nested
from ..ir.custom_primitives import custom_jvp_call_p, custom_vjp_call_p
from ..ir.catalogue import jit_p
from ..ir.remat_primitive import remat_p
from ..ir.staging import trace_to_jaxpr
from ..ir.trace import current_trace
from ..ir.types import RefType, ShapedArray, aval_of_value
from ..transforms.ad_util import eval_jaxpr
from ..transforms.dce import dce_jaxpr
from . import recipes as recipes_module
from .report import difference_kind

__all__ = ["shrink", "write_reproducer", "shrink_and_write", "still_differs"]

_CALLS = {jit_p: "jaxpr", remat_p: "jaxpr", custom_jvp_call_p: "call_jaxpr",
          custom_vjp_call_p: "call_jaxpr"}


def still_differs(program, leaves, transform, recipe, rtol=None, atol=None):
    """The row `cross_check` would give `transform` on this program when JAX's side is
    the program exported with `to_jax`; None when it agrees (or does not apply)."""
    import jax
    import minijax
    from .cross_check import compare
    from ..interop import to_jax

    exported = to_jax(program)

    def mini_fn(*flat):
        return tuple(eval_jaxpr(program.jaxpr, program.consts, flat))

    def jax_fn(*flat):
        return tuple(exported(*flat))
    mini = recipes_module.Side("minijax", minijax, mini_fn)
    other = recipes_module.Side("jax", jax, jax_fn)
    row = compare(transform, lambda: recipes_module.run_recipe(mini, recipe, leaves),
                  lambda: recipes_module.run_recipe(other, recipe, leaves), rtol, atol)
    return None if row.ok else row


# -- rebuilding programs ---------------------------------------------------------------------

def _avals(leaves):
    out = []
    for leaf in leaves:
        if type(leaf).__name__ == "Ref":
            out.append(RefType(aval_of_value(np.asarray(leaf[...]))))
        else:
            out.append(aval_of_value(leaf))
    return out


def _retrace(program, leaves, replace=None, extra_avals=()):
    """Re-trace `program` with equation `i` computed by `replace[i](inputs, extra)`
    instead (`extra`: tracers of `extra_avals`, appended as inputs)."""
    replace = replace or {}
    jaxpr, n = program.jaxpr, len(program.jaxpr.invars)

    def run(*args):
        args, extra = args[:n], args[n:]
        env = dict(zip(jaxpr.constvars, program.consts))
        env.update(zip(jaxpr.invars, args))
        for i, eqn in enumerate(jaxpr.eqns):
            inputs = [_literal(a) if not isinstance(a, Var) else env[a] for a in eqn.inputs]
            if i in replace:
                outs = replace[i](inputs, extra)
            else:
                outs = current_trace().process_primitive(eqn.primitive, inputs, eqn.params)
            env.update(zip(eqn.outputs, outs))
        return [env[v] if isinstance(v, Var) else _literal(v) for v in jaxpr.outvars]
    return trace_to_jaxpr(run, [v.aval for v in jaxpr.invars] + list(extra_avals))


def _literal(literal):
    from ..transforms.ad_util import literal_value
    return literal_value(literal)


def _pruned(closed, leaves, used_outputs=None):
    result = dce_jaxpr(closed, used_outputs, prune_inputs=True)
    kept = [leaf for leaf, used in zip(leaves, result.used_inputs) if used]
    return result.jaxpr, kept


def _intermediate_values(program, leaves):
    """The value of every array output of every equation, by running the program."""
    from ..ir.core import Jaxpr
    jaxpr = program.jaxpr
    wanted = [v for eqn in jaxpr.eqns for v in eqn.outputs if isinstance(v.aval, ShapedArray)]
    probe = Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.eqns, wanted)
    fresh = recipes_module.fresh_leaves(recipes_module.Side("minijax", _minijax(), None),
                                         leaves)
    return dict(zip(wanted, eval_jaxpr(probe, program.consts, fresh)))


def _minijax():
    import minijax
    return minijax


def _candidates(program, leaves):
    """(description, thunk -> (program, leaves)) in the fixed order of trial."""
    jaxpr = program.jaxpr
    outs = jaxpr.outvars
    if len(outs) > 1:
        for i in range(len(outs)):
            yield f"keep output {i}", lambda i=i: _pruned(
                program, leaves, [j == i for j in range(len(outs))])
    for k, eqn in enumerate(jaxpr.eqns):
        if all(isinstance(v.aval, ShapedArray) for v in eqn.outputs) and eqn.outputs:
            yield f"cut after equation {k}", lambda k=k: _cut_after(program, leaves, k)
    values = None
    for k, eqn in enumerate(jaxpr.eqns):
        if eqn.effects or not eqn.outputs or not all(
                isinstance(v.aval, ShapedArray) for v in eqn.outputs):
            continue
        if values is None:
            values = _intermediate_values(program, leaves)
        vals = [np.asarray(values[v]) for v in eqn.outputs]
        yield f"equation {k} as inputs", lambda k=k, vals=vals: _as_inputs(
            program, leaves, k, vals)
        yield f"equation {k} as constants", lambda k=k, vals=vals: _as_constants(
            program, leaves, k, vals)
    for k, eqn in enumerate(jaxpr.eqns):
        if eqn.primitive in _CALLS:
            yield f"inline equation {k}", lambda k=k: _inline(program, leaves, k)
        elif eqn.primitive is cond_p:
            for b in range(len(eqn.params["branches"])):
                yield f"equation {k} as branch {b}", lambda k=k, b=b: _take_branch(
                    program, leaves, k, b)
    for k, eqn in enumerate(jaxpr.eqns):
        if eqn.primitive in (scan_p, while_p) and all(
                isinstance(_aval(a), ShapedArray) for a in eqn.inputs):
            if values is None:
                values = _intermediate_values(program, leaves)
            yield f"the body of equation {k}", lambda k=k: _loop_body(
                program, leaves, k, values)


def _cut_after(program, leaves, k):
    eqn = program.jaxpr.eqns[k]
    closed = _retrace(program, leaves)
    # The retraced program has the same equations in order: output k's results.
    new_eqn = closed.jaxpr.eqns[k]
    from ..ir.core import Jaxpr, ClosedJaxpr
    assert new_eqn.primitive is eqn.primitive
    cut = ClosedJaxpr(Jaxpr(closed.jaxpr.constvars, closed.jaxpr.invars, closed.jaxpr.eqns,
                            new_eqn.outputs), closed.consts)
    return _pruned(cut, leaves)


def _as_inputs(program, leaves, k, values):
    avals = [aval_of_value(v) for v in values]
    n = len(values)
    closed = _retrace(program, leaves, {k: lambda inputs, extra: list(extra[:n])}, avals)
    return _pruned(closed, list(leaves) + list(values))


def _as_constants(program, leaves, k, values):
    closed = _retrace(program, leaves, {k: lambda inputs, extra: list(values)})
    return _pruned(closed, leaves)


def _inline(program, leaves, k):
    eqn = program.jaxpr.eqns[k]
    body = eqn.params[_CALLS[eqn.primitive]]
    closed = _retrace(program, leaves, {k: lambda inputs, extra: eval_jaxpr(body, (), inputs)})
    return _pruned(closed, leaves)


def _take_branch(program, leaves, k, b):
    branch = program.jaxpr.eqns[k].params["branches"][b]
    closed = _retrace(program, leaves,
                      {k: lambda inputs, extra: eval_jaxpr(branch, (), inputs[1:])})
    return _pruned(closed, leaves)


def _aval(atom):
    return atom.aval


def _loop_body(program, leaves, k, values):
    """The body of loop equation `k` as the whole program, at its first iteration's
    inputs (a scan's x slices are the first rows)."""
    from ..ir.core import ClosedJaxpr
    jaxpr, eqn = program.jaxpr, program.jaxpr.eqns[k]
    known = dict(zip(jaxpr.invars, leaves))
    known.update(zip(jaxpr.constvars, program.consts))
    known.update(values)
    inputs = [np.asarray(_literal(a)) if not isinstance(a, Var) else np.asarray(known[a])
              for a in eqn.inputs]
    p = eqn.params
    if eqn.primitive is scan_p:
        if p["length"] == 0:
            raise ValueError("an empty scan has no first iteration")
        split = p["num_consts"] + p["num_carry"]
        first = -1 if p["reverse"] else 0       # a reverse scan starts at the last row
        inputs = inputs[:split] + [x[first] for x in inputs[split:]]
        body = p["jaxpr"]
    else:
        inputs = inputs[p["cond_nconsts"]:]      # the body's consts, then the carry
        body = p["body_jaxpr"]
    return _pruned(ClosedJaxpr(body, []), inputs)


def _size(program) -> int:
    return sum(1 for _ in eqns_nested(program))


def _judge_or_default(judge, transform, recipe, rtol, atol):
    if judge is not None:
        return judge
    return lambda program, leaves: still_differs(program, leaves, transform, recipe,
                                                 rtol, atol)


def _same_difference(row, first) -> bool:
    """Whether a candidate's row shows the difference the shrinking started from: the
    same kind (`report.difference_kind`: which side raised what, or weak type vs dtype
    vs values ...). A smaller program that differs in another way is another finding,
    and its reproducer would mislead."""
    return row is not None and not row.ok and difference_kind(row) == difference_kind(first)


def shrink(program, leaves, transform, recipe, rtol=None, atol=None, *, max_checks=150,
           time_limit=60.0, judge=None, row=None):
    """The smallest program (and its arguments) found that still disagrees on
    `transform` as `program` does; `program` itself if it is already minimal, or if
    the disagreement does not survive export. `judge(program, leaves)` gives a
    candidate's row, None where it agrees (default: `still_differs`, as `cross_check`
    judges); `row`, the row being shrunk (default: the judge's row of `program`): a
    candidate is kept only when it shows the same kind of difference."""
    start = time.monotonic()
    judge = _judge_or_default(judge, transform, recipe, rtol, atol)
    start_row = judge(program, leaves)
    first = row if row is not None else start_row
    if first is None or not _same_difference(start_row, first):
        return program, list(leaves)
    checks = 0
    current, current_leaves = program, list(leaves)
    improved = True
    while improved:
        improved = False
        for _, make in _candidates(current, current_leaves):
            if checks >= max_checks or time.monotonic() - start > time_limit:
                return current, current_leaves
            try:
                candidate, candidate_leaves = make()
            except Exception:  # noqa: BLE001 -- a reduction that does not build is skipped
                continue
            if _size(candidate) >= _size(current) and len(candidate.jaxpr.outvars) >= len(
                    current.jaxpr.outvars) and len(candidate_leaves) >= len(current_leaves):
                continue
            checks += 1
            try:
                verdict = judge(candidate, candidate_leaves)
            except Exception:  # noqa: BLE001 -- export or evaluation failed: not kept
                verdict = None
            if _same_difference(verdict, first):
                current, current_leaves = candidate, candidate_leaves
                improved = True
                break
    return current, current_leaves


# -- reproducers ------------------------------------------------------------------------------------

def reproducer_source(program, leaves, transform, recipe, custom_rules=None) -> str:
    """A standalone Python file showing `transform` of `program` at `leaves`.
    `custom_rules="derivatives_of_body"` (the fuzzer's programs) writes custom
    derivative calls too (`to_python_source`)."""
    from ..interop.source import to_python_source, value_source
    args = []
    for leaf, aval in zip(leaves, program.in_avals):
        if type(leaf).__name__ == "Ref":
            args.append(f"jax.new_ref({value_source(np.asarray(leaf[...]))})")
        else:
            # a weak argument (the program says so; shrinking may have made its value
            # a NumPy scalar) is written as the Python scalar that makes it weak
            weak = isinstance(leaf, (bool, int, float, complex)) or bool(
                getattr(leaf, "weak_type", False))
            if getattr(aval, "weak_type", False) and np.ndim(leaf) == 0:
                leaf, weak = np.asarray(leaf, aval.dtype), True
            args.append(value_source(leaf, weak))
    spec = getattr(recipe, "spec", None)
    recipe_text = getattr(recipe, "source", None) or (
        f"checkpoint_recipe({spec!r})" if spec is not None else f"TRANSFORMS[{transform!r}]")
    doc = (f'"""Reproducer written by minijax.testing.cross_check: `{transform}` of the '
           f'program below\ngives different results on JAX and on minijax.\n\n'
           f'    python {{file}}                      # JAX\n'
           f'    python -m minijax run {{file}}       # minijax\n"""')
    recipes_text = inspect.getsource(recipes_module)
    recipes_text = recipes_text.split('"""', 2)[2].lstrip()   # drop its docstring
    return "\n".join([
        doc, to_python_source(program, custom_rules=custom_rules),
        "# -- the transform, as minijax.testing.recipes applies it " + "-" * 20,
        recipes_text,
        "# -- running it " + "-" * 60,
        f"ARGS = [{', '.join(args)}]",
        f"side = Side(jax.__name__, jax, lambda *a: tuple(program(*a)))",
        f"result = run_recipe(side, {recipe_text}, ARGS)",
        "np.set_printoptions(precision=8, suppress=False)",
        "",
        "",
        "def leaf_type(leaf):",
        "    # what a dtype or weak-type difference shows: the type next to the values",
        "    if isinstance(leaf, (bool, int, float, complex)):",
        "        return f'Python {type(leaf).__name__}'",
        "    weak = ' weak_type=True' if getattr(leaf, 'weak_type', False) else ''",
        "    return f'{type(leaf).__name__} {np.asarray(leaf).dtype.name}{weak}'",
        "",
        "",
        "for i, leaf in enumerate(jax.tree_util.tree_leaves(result)):",
        "    print(f'leaf {i}:', np.asarray(leaf).tolist(), ' # ' + leaf_type(leaf))",
        ""])


def write_reproducer(program, leaves, transform, recipe, folder=None) -> str:
    """Write `reproducer_source(...)` to a new file in `folder`; return its path."""
    folder = folder or tempfile.mkdtemp(prefix="minijax_repro_")
    os.makedirs(folder, exist_ok=True)
    safe = "".join(c if c.isalnum() else "_" for c in transform).strip("_")
    path = os.path.join(folder, f"repro_{safe}.py")
    text = reproducer_source(program, leaves, transform, recipe)
    with open(path, "w", encoding="utf-8") as out:
        out.write(text.replace("{file}", os.path.basename(path)))
    return path


def shrink_arguments(retrace, program, leaves, transform, recipe, rtol=None, atol=None,
                     *, max_checks=40, judge=None):
    """Smaller array arguments, while the same kind of disagreement persists (`judge`
    as in `shrink`): each axis of each argument is cut to its first 1, 2 or half its
    elements, and the function is traced again at the new shapes (`retrace(leaves) ->
    program`; a function that cannot take the smaller shape is left as it is).
    Returns (program, leaves)."""
    judge = _judge_or_default(judge, transform, recipe, rtol, atol)
    first = judge(program, leaves)
    if first is None or first.ok:
        return program, list(leaves)
    leaves, checks = list(leaves), 0
    for i in range(len(leaves)):
        for axis in range(np.ndim(leaves[i]) if type(leaves[i]).__name__ != "Ref" else 0):
            for size in (1, 2, np.shape(leaves[i])[axis] // 2):
                if not 0 < size < np.shape(leaves[i])[axis] or checks >= max_checks:
                    continue
                candidate_leaves = list(leaves)
                candidate_leaves[i] = np.take(np.asarray(leaves[i]), np.arange(size), axis)
                checks += 1
                try:
                    candidate = retrace(candidate_leaves)
                    verdict = judge(candidate, candidate_leaves)
                except Exception:  # noqa: BLE001 -- the function needs its shapes
                    continue
                if _same_difference(verdict, first):
                    program, leaves = candidate, candidate_leaves
                    break
    return program, leaves


def shrink_and_write(program, leaves, transform, recipe, rtol=None, atol=None,
                     folder=None, retrace=None) -> str:
    """Shrink the arguments (when `retrace` can trace the function again), then the
    program, and write the reproducer; returns its path."""
    if retrace is not None:
        program, leaves = shrink_arguments(retrace, program, leaves, transform, recipe,
                                           rtol, atol)
    small, small_leaves = shrink(program, leaves, transform, recipe, rtol, atol)
    return write_reproducer(small, small_leaves, transform, recipe, folder)
