"""Remat (checkpoint): the `remat` primitive in every pass, and remat with refs.

Read `partial_eval.py` first -- remat is *the same partial evaluation* that
`linearize` does, given a policy -- then `policies.py`, then this file.

What remat changes
------------------
`grad(f)(x)` is linearize + transpose. Linearize runs the primal computation now
(the *forward pass*) and stages the tangent computation for later (the *backward
pass*); every primal value the tangent computation uses is a **residual**: saved
in memory from the forward pass until the backward pass reads it. For `sin(x)`
that is `cos(x)`; for a 100-layer network it is every activation of every layer.

`checkpoint(f, policy=p)` wraps `f`'s jaxpr in one `remat` equation. Nothing
happens to it until partial evaluation meets it with some unknown inputs (the
tangents). Then the rule below splits the body with the remat's own policy:

    split = partial_eval_jaxpr(body, unknowns, policy)

and for each known equation the policy says whether its outputs may be saved. A
value the backward side needs but may not save is not a residual: its equation
is staged *again* on the backward side, recomputing it from values that are saved
(at worst the remat's inputs). The result is two programs:

* the known part (primal outputs + the residuals the policy allows) runs in the
  forward pass, inlined into the enclosing computation -- no remat equation left;
* the staged part becomes a new `remat` equation (`differentiated=True`) in the
  linear program: it recomputes what was not saved and then does the tangent work.

So the *number of residuals goes down* and the *backward pass gets longer*: that
is the whole trade. `print_saved_residuals` shows the residuals; the teaching
report in `ad_checkpoint.py` shows both programs side by side.

Transposing that staged `remat` transposes its body (`transpose_jaxpr`), whose
forward sweep runs the recomputation and whose backward sweep runs the transposed
tangent work -- still inside one `remat` equation, so that the XLA lowering can put
`lax.optimization_barrier` on its inputs when `prevent_cse` (see
`backends/xla_remat.py`). Without the barrier XLA sees that the recomputation equals
the forward computation, merges them, and the memory saving silently disappears.

The other passes are plain call-primitive rules: jvp differentiates the body and
binds a new `remat` (so `grad(grad(remat(f)))` keeps the policy at every level);
vmap batches the body; DCE prunes it; discharge threads refs through it.

Remat with refs (docs/remat.md, section 5)
-------------------------------------------
Recomputing is only sound for pure code: recomputing `r[...] += 1` would bump the
counter twice, and recomputing `x <- r[...]` after the forward pass wrote `r` reads
the wrong value. minijax's rule: **effects on external refs happen once, in the
forward pass; the recomputation reads a fresh internal ref initialised from the
ref's value at entry**, saved as a residual. It is an IR -> IR rewrite of the body
with no retracing of Python, done by the first autodiff rule that meets the remat
(jvp, or partial eval for a remat that reaches it with refs still inside):

    forward (known side)                      backward (staged remat body)
      init <- r[...]        # once, at entry *    r' = new_ref init   # fresh, internal
      outs, final = D(xs, init)                   ... D's recomputation on r' ...
      r[...] <- final       # once, at exit

(* only for a ref whose entry value `D` uses: one the body overwrites whole is not
read, so a write-only ref sees exactly the writes of the program.)

`D` is the body with its refs *discharged* (`discharge.py`): every ref becomes the
value it holds, threaded from op to op, which is exactly "a fresh internal ref
initialised from `init`" with the box written out of the program. `D` is pure, so
the policy may recompute any part of it, and internal refs (created inside the
body) come out as plain values too -- "internal refs are pure and are recomputed
like any value". The body's writes to `r` leave `D` as extra outputs, written back
to `r` by one `swap` at exit, in the forward pass only. Nested remats discharge
the inner body inside the outer (the `remat` discharge rule), so every write is
still done once. The pullbacks of `vjp` and `linearize` hold only `init` values and
never touch a ref: calling them twice gives the same answer and changes nothing.

A write to a ref the body never reads (`r[...] = v`, or a partial `r[0] = 1.0`) is
not discharged at all: it is taken out of the body, which returns the written value
(and dynamic indices), and performed at exit (`PureBody.replays`). So it is a write
and nothing else -- no entry read -- and vmap sees one unbatched write. A ref made
earlier by the differentiated function has a tangent ref, read at entry and written
at exit beside it. And a body calling a custom_jvp/custom_vjp function that takes a
ref is not discharged: the user's rules need the ref itself. Where the body does
nothing to the ref but pass it to such functions (the gradient-stashing recipe,
whose `bwd` writes it only in the backward pass), the body is pure and the remat is
split by its policy as any other, the ref passed to the staged remat as it is;
otherwise the body is differentiated in line (exact, but then nothing is recomputed).

(Real JAX 0.10 instead recomputes the ref operations against the live ref, running
the effect twice: see `minijax/divergences/remat.py`.)
"""
from __future__ import annotations

import functools

from ..ir import primitives as P
from ..ir.core import Jaxpr, ClosedJaxpr, ReadEffect, WriteEffect, AccumEffect
from ..ir.remat_primitive import remat_p, name_p
from ..ir.source_info import source_info_from
from ..ir.types import RefType
from ..ir.trace import MinijaxError, bind, set_current_trace, current_trace, aval_of
from .ad_util import Zero, tangent_aval, eval_jaxpr, zeros, instantiate
from .calls import call_jvp, call_transpose, register_call_rules
from .control_flow_common import custom_rules_take_refs
from .dce import dce_jaxpr
from .discharge import discharge_jaxpr, mentions_refs
from .jvp import jvp_rules, JvpResult, jvp_flat
from .partial_eval import partial_eval_jaxpr_for_call
from .ref_rules import _external_write_error as external_write_error
from .transpose import transpose_rules
from .vmap import vmap_rules, Batched

__all__ = ["remat_p", "name_p", "split_remat_body", "RematSplit", "without_external_refs"]


class RematError(MinijaxError, TypeError):
    """A remat-ed function that cannot be differentiated as asked."""


# -- jvp: differentiate the body, keep the remat ---------------------------------------------

def _remat_jvp(primals, tangents, *, jaxpr, **params):
    if custom_rules_take_refs(jaxpr):
        # A custom derivative rule written for a ref (the gradient-stashing recipe)
        # cannot run on the discharged body, where the ref is a value.
        if _refs_only_reach_custom_rules(jaxpr) and not any(
                type(t) is not Zero for x, t in zip(jaxpr.invars, tangents)
                if isinstance(x.aval, RefType)):
            # The body does nothing to its refs but hand them to custom rules: it is
            # pure, and may be recomputed; the refs stay refs through the remat.
            return call_jvp(remat_p, primals, tangents, jaxpr=jaxpr, **params)
        # Otherwise differentiate the body in line: exact values and effects, nothing
        # recomputed -- so this checkpoint saves no memory.
        return jvp_flat(lambda *xs: eval_jaxpr(jaxpr, (), xs), primals, tangents,
                        current_trace())
    if mentions_refs(jaxpr):
        # Differentiate the pure body instead (the ref rewrite below): entry reads and
        # exit writes happen here, once, and the body needs no ref differentiation.
        return _jvp_with_refs(primals, tangents, jaxpr, params)
    return call_jvp(remat_p, primals, tangents, jaxpr=jaxpr, **params)


jvp_rules[name_p] = lambda primals, tangents, *, name: JvpResult(
    [bind(name_p, primals[0], name=name)], [tangents[0]])


# -- the external-ref rewrite -------------------------------------------------------------------

class PureBody:
    """A remat body with its refs discharged. `jaxpr` takes the original inputs with
    each ref replaced by its value at entry; it returns the original outputs, then the
    operands of each `replays` write (below), then the final value of each ref input
    it writes (`written`: their input positions). `entry_read`: the ref inputs whose
    entry value the body uses -- a ref that is only overwritten whole is never read.

    `first_use`: for each ref input position, the body's first equation that uses it
    (the source line a residual saved for its entry read is reported at).

    `replays`: writes `r[idx] <- v` to a ref input the body never reads (no get,
    no `+=`, no other use), taken out of the body rather than discharged: the
    body returns `v` and the dynamic indices, and the forward pass performs the
    same writes on the ref at exit, in order. So a partial write (`r[0] = 1.0`) is
    a write and nothing else -- no read of `r` at entry, which vmap would see as an
    increment. Each is `(position, params, number of dynamic indices)`."""
    __slots__ = ("jaxpr", "ref_inputs", "written", "num_outputs", "entry_read",
                 "first_use", "replays")

    def __init__(self, jaxpr, ref_inputs, written, num_outputs, entry_read, first_use,
                 replays=()):
        self.jaxpr, self.ref_inputs = jaxpr, ref_inputs
        self.written, self.num_outputs = written, num_outputs
        self.entry_read = entry_read
        self.first_use = first_use      # ref input position -> the body's first eqn using it
        self.replays = replays

    @property
    def finals_start(self) -> int:
        return self.num_outputs + sum(1 + n for _, _, n in self.replays)

    def entry_values(self, args) -> list:
        """`args` with each ref replaced by its value at entry: one read of each ref
        whose value is used (zeros, which nothing reads, stand in for the others).
        The read is reported at the body's first use of the ref -- the user's `r[...]`
        inside the checkpointed function, not the line that called it."""
        entry = list(args)
        for position in self.ref_inputs:
            if position in self.entry_read:
                with source_info_from(self.first_use.get(position)):
                    entry[position] = bind(P.get_p, args[position])
            else:
                entry[position] = zeros(self.jaxpr.invars[position].aval)
        return entry

    def replay_writes(self, outs, check=None):
        """The `replays` writes as `(ref position, params, index of the value in
        `outs`, dynamic indices)`, `outs` being the outputs of `jaxpr`;
        `check(position, value index, dynamic)` is called for each first."""
        writes, at = [], self.num_outputs
        for position, params, n_dynamic in self.replays:
            writes.append((position, params, at, outs[at + 1:at + 1 + n_dynamic]))
            at += 1 + n_dynamic
        if check is not None:
            for position, _, value_at, dynamic in writes:
                check(position, value_at, dynamic)
        return writes


@functools.lru_cache(maxsize=1024)
def without_external_refs(jaxpr: Jaxpr, replay_writes: bool = False) -> PureBody:
    """The IR -> IR rewrite of a remat body that touches refs (module docstring):
    internal refs become values, external ref inputs become their entry values. With
    `replay_writes`, writes to refs the body never reads are taken out (`PureBody`)."""
    replays = ()
    if replay_writes:
        jaxpr, replays = _take_out_blind_writes(jaxpr)
    result = discharge_jaxpr(jaxpr)
    pure = result.jaxpr
    used = {id(v) for eqn in pure.eqns for v in eqn.inputs} | {id(v) for v in pure.outvars}
    entry_read = frozenset(k for k in result.info.ref_inputs
                           if id(pure.invars[k]) in used)
    first_use = {}
    for eqn in jaxpr.eqns:
        for position in result.info.ref_inputs:
            if position not in first_use and any(a is jaxpr.invars[position]
                                                 for a in eqn.inputs):
                first_use[position] = eqn
    n_replayed = sum(1 + n for _, _, n in replays)
    return PureBody(pure, result.info.ref_inputs, result.info.written,
                    result.info.num_outputs - n_replayed, entry_read, first_use, replays)


def _take_out_blind_writes(jaxpr: Jaxpr):
    """`jaxpr` without its `swap`s (old value unused) on ref inputs that nothing else
    uses, each write's value and dynamic indices returned as extra outputs."""
    ref_inputs = {v: k for k, v in enumerate(jaxpr.invars) if isinstance(v.aval, RefType)}
    used = {x for eqn in jaxpr.eqns for x in eqn.inputs} | set(jaxpr.outvars)
    blind = set(ref_inputs)
    for eqn in jaxpr.eqns:
        mentioned = blind.intersection(eqn.inputs)
        if not mentioned:
            continue
        is_blind_write = (eqn.primitive is P.swap_p and eqn.outputs[0] not in used
                          and eqn.inputs[0] in blind and eqn.inputs[0] not in eqn.inputs[1:])
        if not is_blind_write:
            blind -= mentioned
    if not blind:
        return jaxpr, ()
    eqns, extra, replays = [], [], []
    for eqn in jaxpr.eqns:
        if eqn.inputs and eqn.inputs[0] in blind:
            value, *dynamic = eqn.inputs[1:]
            extra += [value, *dynamic]
            replays.append((ref_inputs[eqn.inputs[0]], dict(eqn.params), len(dynamic)))
            continue
        eqns.append(eqn)
    return (Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, list(jaxpr.outvars) + extra),
            tuple(replays))


def _jvp_with_refs(primals, tangents, jaxpr, params):
    """A ref made inside the differentiated function has a tangent ref: its entry
    tangent is read from that, and the final tangent written back beside the final
    value, so tangent refs behave as around any other ref access. A ref from outside
    has none, and may only be written with values that have no tangent."""
    body = without_external_refs(jaxpr, replay_writes=True)
    entry_tangents = list(tangents)
    for position in body.ref_inputs:
        tangent_ref = tangents[position]
        aval = tangent_aval(body.jaxpr.invars[position].aval)
        entry_tangents[position] = (
            bind(P.get_p, tangent_ref) if type(tangent_ref) is not Zero
            and position in body.entry_read else Zero(aval))
    entry = body.entry_values(primals)
    result = _remat_jvp(entry, entry_tangents, jaxpr=body.jaxpr, **params)
    n, start = body.num_outputs, body.finals_start
    finals = list(zip(body.written, result.primals_out[start:], result.tangents_out[start:]))
    for position, _, tangent in finals:     # check everything before writing anything
        if type(tangents[position]) is Zero and type(tangent) is not Zero:
            raise external_write_error("checkpoint", primals[position])
    def check(position, value_at, dynamic):
        if type(tangents[position]) is Zero and type(result.tangents_out[value_at]) is not Zero:
            raise external_write_error("checkpoint", primals[position])
    writes = body.replay_writes(result.primals_out, check)
    # Written once, here: the replayed writes, then the final contents of the refs
    # the body read and wrote (each with its tangent ref's).
    for position, params, value_at, dynamic in writes:
        bind(P.swap_p, primals[position], result.primals_out[value_at], *dynamic, **params)
        if type(tangents[position]) is not Zero:
            bind(P.swap_p, tangents[position], instantiate(result.tangents_out[value_at]),
                 *dynamic, **params)
    for position, final, tangent in finals:
        bind(P.swap_p, primals[position], final)
        if type(tangents[position]) is not Zero:
            bind(P.swap_p, tangents[position], instantiate(tangent))
    return JvpResult(result.primals_out[:n], result.tangents_out[:n])


# -- partial evaluation: the policy decides -------------------------------------------------------

def _refs_only_reach_custom_rules(jaxpr: Jaxpr) -> bool:
    """Whether the body's refs are used only as operands of custom derivative calls
    (`custom_jvp_call`, `custom_vjp_call`, `custom_lin`) that have no effect on them
    in the forward pass: the stashing recipe, whose `bwd` writes its ref only when
    the pullback runs. Such a body is pure, so the policy may recompute any of it."""
    return (custom_rules_take_refs(jaxpr) and not _has_ref_effects(jaxpr)
            and not any(eqn.primitive.ref_op for eqn in jaxpr.eqns))


def _has_ref_effects(jaxpr: Jaxpr) -> bool:
    return any(isinstance(e, (ReadEffect, WriteEffect, AccumEffect)) for e in jaxpr.effects)


def _remat_partial_eval(trace, args, params):
    jaxpr = params["jaxpr"]
    if mentions_refs(jaxpr) and not (_refs_only_reach_custom_rules(jaxpr) and not any(
            trace.is_unknown(x) for x in args if isinstance(aval_of(x), RefType))):
        return _partial_eval_with_refs(trace, args, params)
    unknowns = tuple(trace.is_unknown(x) for x in args)
    split = partial_eval_jaxpr_for_call(jaxpr, unknowns, params["policy"])
    known_args = [x for x, u in zip(args, unknowns) if not u]
    # The known part is inlined into the enclosing computation (evaluated in `trace`, so
    # an enclosing remat's policy sees each of its equations and may recompute them in
    # turn: that is what nesting remats means).
    known = _forward_part(split.known_jaxpr)
    with set_current_trace(trace):
        known_outs = eval_jaxpr(known.jaxpr, known.consts, known_args)
    n_known = len(split.out_unknowns) - sum(split.out_unknowns)
    residuals = known_outs[n_known:]
    staged_jaxpr = split.staged_jaxpr.jaxpr
    if staged_jaxpr.eqns or staged_jaxpr.outvars:
        staged_outs = trace.stage(
            remat_p, residuals + [x for x, u in zip(args, unknowns) if u],
            dict(params, jaxpr=staged_jaxpr, differentiated=True))
    else:
        staged_outs = []
    known_iter, staged_iter = iter(known_outs[:n_known]), iter(staged_outs)
    return [next(staged_iter) if u else next(known_iter) for u in split.out_unknowns]


@functools.lru_cache(maxsize=1024)
def _forward_part(known: ClosedJaxpr) -> ClosedJaxpr:
    # The partial evaluator ran every known equation, including the primal halves of
    # tangent work (`cos x` for `sin x`) that the policy then sent to the backward side
    # to be recomputed; nothing in the forward pass reads them, so drop them here.
    return dce_jaxpr(known).jaxpr


def _partial_eval_with_refs(trace, args, params):
    body = without_external_refs(params["jaxpr"], replay_writes=True)
    for position in body.ref_inputs:
        if trace.is_unknown(args[position]):
            raise RematError("checkpoint: a ref input of a remat-ed function has a "
                             "tangent; differentiating with respect to a ref is not "
                             "supported -- pass its value instead")
    # Forward pass, at entry: capture each external ref's value (the residual that
    # initialises the recomputation's fresh ref). Refs are always known values.
    with set_current_trace(trace.parent):
        entry = body.entry_values(args)
    outs = _remat_partial_eval(trace, entry, dict(params, jaxpr=body.jaxpr))
    # Forward pass, at exit: one write of each ref's final value. The recomputation in
    # the staged remat never sees `args[position]`, only the entry values.
    def check(position, value_at, dynamic):
        if any(trace.is_unknown(x) for x in (outs[value_at], *dynamic)):
            raise RematError("checkpoint: a value written into a ref depends on a tangent")
    writes = body.replay_writes(outs, check)
    with set_current_trace(trace.parent):
        for position, params_, value_at, dynamic in writes:
            bind(P.swap_p, args[position], outs[value_at], *dynamic, **params_)
        for position, final in zip(body.written, outs[body.finals_start:]):
            if trace.is_unknown(final):
                raise RematError("checkpoint: a ref's final value depends on a tangent")
            bind(P.swap_p, args[position], final)
    return outs[:body.num_outputs]



# -- transpose: the recomputation and the transposed tangent work, in one remat ------------------

def _pruned_and_differentiated(params):
    return dict(params, jaxpr=_pruned(params["jaxpr"]), differentiated=True)


@functools.lru_cache(maxsize=1024)
def _pruned(jaxpr: Jaxpr) -> Jaxpr:
    # The backward sweep evaluates every non-linear equation it meets; drop those whose
    # results no cotangent needs, so the recomputation is exactly what is needed.
    return dce_jaxpr(jaxpr).jaxpr


transpose_rules[name_p] = lambda cts, x, *, name: [cts[0]]


# -- the rules every call shares; `name` passes its value through ------------------------------------------------------

vmap_rules[name_p] = lambda axis_size, values, dims, *, name: Batched(
    [bind(name_p, values[0], name=name)], [dims[0]])

register_call_rules(remat_p, jvp=_remat_jvp, partial_eval=_remat_partial_eval,
                    transpose=functools.partial(call_transpose, remat_p,
                                                transform_body=_pruned_and_differentiated))


# -- the split, for teaching ----------------------------------------------------------------------

class RematSplit:
    """What the partial-eval rule does to one remat body, as data (see `split_remat_body`)."""
    __slots__ = ("forward", "backward", "residuals", "out_unknowns", "pure_body")

    def __init__(self, forward, backward, residuals, out_unknowns, pure_body):
        self.forward, self.backward = forward, backward
        self.residuals, self.out_unknowns = residuals, out_unknowns
        self.pure_body = pure_body


def split_remat_body(jaxpr: Jaxpr, unknowns, policy) -> RematSplit:
    """The known (forward) and staged (backward) jaxprs the partial-eval rule makes
    for `jaxpr` with these `unknowns`, refs rewritten first. For printing."""
    body = without_external_refs(jaxpr) if mentions_refs(jaxpr) else None
    target = body.jaxpr if body is not None else jaxpr
    split = partial_eval_jaxpr_for_call(target, tuple(unknowns), policy)
    return RematSplit(split.known_jaxpr, split.staged_jaxpr, split.residuals,
                      split.out_unknowns, body)
