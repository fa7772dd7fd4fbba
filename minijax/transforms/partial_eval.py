"""Partial evaluation: split a computation into what can run now and what must wait.

This is the hub of minijax's autodiff (docs/design.md, section 4): linearize is jvp + partial
evaluation, vjp is linearize + transpose, and checkpointing is the same partial
evaluation with a policy. Read `jvp.py` first.

Some inputs are *known* (values we have, or values being traced by an enclosing
trace) and some are *unknown* (not available yet). The `PartialEvalTrace` runs a
computation in which the unknown inputs are its tracers:

* an application with only known inputs is *evaluated* right away -- handed to the
  parent trace, so it runs eagerly, or is staged into the enclosing jaxpr;
* an application with an unknown input is *staged*: recorded as an equation of the
  staged jaxpr. Known values it uses become **residuals**: the constvars of the
  staged jaxpr, whose values the known side computed.

Under `linearize` the tangent inputs are unknown and everything else is known, so
the primal computation runs (concrete Python control flow still works) and the
tangent computation -- linear in the unknowns -- is what gets staged.

`partial_eval_jaxpr(jaxpr, unknowns, policy)` is the same trace as an IR -> IR pass:
it re-runs a jaxpr whose known inputs are tracers of a staging trace (which records
the *known jaxpr*) and whose unknown inputs are partial-eval tracers (which record
the *staged jaxpr*), and returns both with the residuals between them.

The `policy` decides which known values may be saved as residuals:
`policy(prim, *in_avals, **params) -> bool` for each known equation. A value whose
equation may not be saved is recomputed on the staged side instead (from values
that are saved), which is what checkpointing (remat) needs. The default,
`everything_saveable` (`policies.py`), saves every residual and records no recipes.

Primitives with sub-jaxprs (`jit`) have rules in `partial_eval_rules`, one signature:
`rule(trace, args, params) -> list of outputs`.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from ..ir.control_flow_primitives import scan_p
from ..ir.core import Var, Literal, Eqn, Jaxpr, ClosedJaxpr
from ..ir.primitives import (effects_of, out_avals_of, register_rule_table, GenericPath,
                             signature_of)
from ..ir.source_info import current_source_info
from ..ir.staging import StagingTrace, StagingTracer, convert_constvars_to_invars
from ..ir.trace import Trace, Tracer, aval_of, current_trace, set_current_trace
from ..ir.types import ShapedArray, is_key
from .ad_util import eval_jaxpr, fresh_root
from .policies import everything_saveable


partial_eval_rules: dict = register_rule_table(
    "partial_eval", {}, GenericPath(lambda prim: True, "known if every input is known, else staged"))


class PartialEvalTracer(StagingTracer):
    """An unknown value: a variable of the staged jaxpr. (A staging tracer of another
    type, so that each trace recognises its own tracers by type.)"""
    __slots__ = ()
    _short_repr = Tracer._short_repr    # JAX's JaxprTracer shows no contents


class _Recipe(NamedTuple):
    """How a known value was computed, kept so the staged side can recompute it."""
    prim: object
    args: list
    params: dict
    outs: list
    source_info: object = None     # its recomputation is from the same line


class PartialEvalTrace(Trace):
    kind = "partial_eval"

    def __init__(self, parent: Trace, policy=everything_saveable):
        super().__init__(parent)
        self.policy = None if policy is everything_saveable else policy
        self.invars: list[Var] = []
        self.eqns: list[Eqn] = []
        self.residual_vars: list[Var] = []
        self.residual_values: list = []
        self._residual_by_id: dict[int, tuple] = {}   # id(value) -> (value, atom)
        self._recipes: dict[int, tuple] = {}          # id(value) -> (recipe, output index)
        self.ref_redirects: dict[int, tuple] = {}     # id(known ref) -> (it, staged ref)

    def new_arg(self, aval) -> PartialEvalTracer:
        var = Var(aval)
        self.invars.append(var)
        return PartialEvalTracer(self, var)

    def receive_known(self, known) -> None:
        """Make the known value `known` an input of the staged jaxpr too: reading it
        on the staged side reads that input, not a residual."""
        var = Var(aval_of(known))
        self.invars.append(var)
        self._residual_by_id[id(known)] = (known, var)

    def is_unknown(self, x) -> bool:
        return type(x) is PartialEvalTracer and x._trace is self

    def process_primitive(self, prim, args, params):
        if self.ref_redirects:
            # A known ref that was written with an unknown value lives on as a staged
            # ref (transforms/ref_rules.py): every later use of it goes there.
            args = [self.ref_redirects[id(x)][1] if id(x) in self.ref_redirects else x
                    for x in args]
        for x in args:
            if type(x) is PartialEvalTracer and x._trace is self:
                break
        else:
            return self._evaluate_known(prim, args, params)
        rule = partial_eval_rules.get(prim)
        if rule is not None:
            return rule(self, args, params)
        return self.stage(prim, args, params)

    def _evaluate_known(self, prim, args, params):
        parent = self.parent
        with set_current_trace(parent):
            outs = parent.process_primitive(prim, args, params)
        if self.policy is not None and not self.policy(
                prim, *[aval_of(x) for x in args], **params):
            recipe = _Recipe(prim, list(args), params, outs, current_source_info())
            for i, out in enumerate(outs):
                self._recipes[id(out)] = (recipe, i)
        return outs

    def known_results(self, prim, args, params, outs, bodies) -> None:
        """Let the policy reach inside a rule's own known equation.

        A rule for a primitive with sub-jaxprs (a `jit` call, a `scan`, a `cond`, a
        `while`) evaluates its known part as one equation `prim(*args)` in the parent
        trace, with `bodies` the sub-jaxprs whose outputs are its outputs. Each output
        the policy would not save -- because the body equation that makes it may not
        be saved, or because the body merely passes a value along (a loop's carry) --
        gets a recipe, exactly as `_evaluate_known` gives one to a plain equation: the
        staged side that needs it runs the known equation again. `params` are those
        of that re-run (a loop's bodies without their prints). Under the default
        policy this records nothing."""
        if self.policy is None:
            return
        if effects_of(prim, [aval_of(x) for x in args], params):
            # Running it again would repeat its effects (a print, a ref write): its
            # results are saved. (Loop rules pass bodies without their prints, which
            # already ran in the forward pass.)
            return
        recipe = None
        for index, out in enumerate(outs):
            if all(self._body_saves(body, index) for body in bodies):
                continue
            if recipe is None:
                recipe = _Recipe(prim, list(args), params, outs, current_source_info())
            self._recipes[id(out)] = (recipe, index)

    def _body_saves(self, body: Jaxpr, index: int) -> bool:
        outvar = body.outvars[index]
        if type(outvar) is not Var:
            return True                    # a literal costs nothing to keep
        for eqn in body.eqns:
            for position, o in enumerate(eqn.outputs):
                if o is not outvar:
                    continue
                if eqn.primitive is scan_p and position >= eqn.params["num_carry"]:
                    # A nested loop's stacked result is saved as its own body would
                    # save it: its stacked residuals are values the policy already
                    # let that body save. (Its final carries are results like any.)
                    return self._body_saves(eqn.params["jaxpr"], position)
                return self.policy(eqn.primitive, *[a.aval for a in eqn.inputs],
                                   **eqn.params)
        return False                       # an input passed along: not the body's to save

    def stage(self, prim, args, params) -> list:
        """Record `prim(*args)` as an equation of the staged jaxpr."""
        inputs = [self.to_atom(x) for x in args]
        # The memoized rules, as the staging trace asks them: a deep network stages
        # the same few signatures at every layer.
        signature = signature_of(prim, [a.aval for a in inputs], params)
        outputs = [Var(aval) for aval in signature.out_avals]
        self.eqns.append(Eqn(prim, inputs, params, outputs, signature.effects,
                             current_source_info()))
        return [PartialEvalTracer(self, v) for v in outputs]

    def to_atom(self, x):
        if type(x) is PartialEvalTracer and x._trace is self:
            return x.ir_var
        known = self._residual_by_id.get(id(x))
        if known is not None:
            return known[1]
        if not isinstance(x, Tracer):
            aval = aval_of(x)
            if isinstance(aval, ShapedArray) and aval.shape == () and not is_key(aval.dtype):
                return Literal(np.asarray(x), aval)   # scalars stay inline, as in staging
        recipe = self._recipes.get(id(x))
        atom = self._recompute(x, *recipe) if recipe is not None else self._save(x)
        self._residual_by_id[id(x)] = (x, atom)       # keeps x alive: ids stay unique
        return atom

    def _save(self, value) -> Var:
        var = Var(aval_of(value))
        self.residual_vars.append(var)
        self.residual_values.append(value)
        return var

    def _recompute(self, value, recipe: _Recipe, index: int):
        # The policy would not save `value`: stage its equation again, from its inputs
        # (themselves saved or recomputed), on the staged side.
        inputs = [self.to_atom(x) for x in recipe.args]
        in_avals = [a.aval for a in inputs]
        outputs = [Var(aval) for aval in out_avals_of(recipe.prim, in_avals, recipe.params)]
        self.eqns.append(Eqn(recipe.prim, inputs, recipe.params, outputs,
                             effects_of(recipe.prim, in_avals, recipe.params),
                             recipe.source_info))
        for out, var in zip(recipe.outs, outputs):
            self._residual_by_id[id(out)] = (out, var)
        return outputs[index]

    def to_jaxpr(self, outs) -> ClosedJaxpr:
        """The staged jaxpr: constvars are the residuals (with their known values as
        consts), invars the unknown inputs."""
        outvars = [self.to_atom(x) for x in outs]
        jaxpr = Jaxpr(self.residual_vars, self.invars, self.eqns, outvars)
        return ClosedJaxpr(jaxpr, self.residual_values)


# -- the IR -> IR pass ----------------------------------------------------------------------

class PartialEvalResult(NamedTuple):
    """`known_jaxpr`: known inputs -> known outputs + residuals.
    `staged_jaxpr`: residuals + unknown inputs -> unknown outputs.
    `residuals`: the staged jaxpr's residual inputs, in order (their avals say what is
    saved). `out_unknowns[i]`: whether output i is computed by the staged jaxpr.
    `known_refs_written[i]`: input i is a known ref into which an unknown value is
    written -- from there on the staged side works on a staged copy of it, so a
    caller whose ref must see those writes should pass it as unknown instead."""
    known_jaxpr: ClosedJaxpr
    staged_jaxpr: ClosedJaxpr
    residuals: tuple
    out_unknowns: tuple
    known_refs_written: tuple = ()

    @property
    def num_residuals(self) -> int:
        return len(self.residuals)

    def __str__(self):
        return (f"known:\n{self.known_jaxpr}\nstaged ({self.num_residuals} residuals):\n"
                f"{self.staged_jaxpr}")


def partial_eval_jaxpr(jaxpr, unknowns, policy=everything_saveable,
                       instantiate=False, available=None) -> PartialEvalResult:
    """Split `jaxpr` given which inputs are `unknowns` (a bool per input).

    `instantiate` (a bool, or a bool per output) forces outputs onto the staged side
    even when they could be computed from known inputs. `available` (a bool per
    input, or None) marks known inputs that the staged jaxpr *also* receives as its
    own inputs, so that reading one there is no residual: a loop's staged body under
    a remat policy gets the known carries this way and recomputes them itself
    (`scan.py`). The staged jaxpr's inputs are the residuals, then the inputs that
    are unknown or available, in input order. A `Jaxpr` with constvars is treated
    as having them as leading known inputs."""
    closed = jaxpr if isinstance(jaxpr, ClosedJaxpr) else ClosedJaxpr(
        convert_constvars_to_invars(jaxpr), [])
    jaxpr = closed.jaxpr
    if len(unknowns) != len(jaxpr.invars):
        raise ValueError(f"partial_eval_jaxpr: {len(unknowns)} unknowns flags for a "
                         f"jaxpr with {len(jaxpr.invars)} inputs")
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(jaxpr.outvars)

    known_trace = StagingTrace(parent=current_trace())
    staged_trace = PartialEvalTrace(parent=known_trace, policy=policy)
    if available is None:
        available = [False] * len(unknowns)
    args = []
    for v, unknown, also_staged in zip(jaxpr.invars, unknowns, available):
        if unknown:
            args.append(staged_trace.new_arg(v.aval))
            continue
        args.append(known_trace.new_arg(v.aval))
        if also_staged:
            staged_trace.receive_known(args[-1])
    with set_current_trace(staged_trace):
        outs = eval_jaxpr(jaxpr, closed.consts, args)
    out_unknowns = tuple(staged_trace.is_unknown(x) or bool(force)
                         for x, force in zip(outs, instantiate))
    staged = staged_trace.to_jaxpr([x for x, u in zip(outs, out_unknowns) if u])
    staged_jaxpr = Jaxpr((), staged.jaxpr.constvars + staged.jaxpr.invars,
                         staged.jaxpr.eqns, staged.jaxpr.outvars)
    known_outs = [x for x, u in zip(outs, out_unknowns) if not u] + staged.consts
    known_jaxpr = known_trace.to_closed_jaxpr(known_outs)
    known_refs_written = tuple(id(x) in staged_trace.ref_redirects for x in args)
    return PartialEvalResult(known_jaxpr, ClosedJaxpr(staged_jaxpr, []),
                             tuple(staged.jaxpr.constvars), out_unknowns,
                             known_refs_written)


@functools.lru_cache(maxsize=1024)
def partial_eval_jaxpr_for_call(jaxpr: Jaxpr, unknowns: tuple, policy) -> PartialEvalResult:
    """Cached partial evaluation of a call's body, for the `jit` rule."""
    with set_current_trace(fresh_root()):
        return partial_eval_jaxpr(jaxpr, unknowns, policy)
