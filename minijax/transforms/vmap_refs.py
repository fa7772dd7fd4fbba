"""What the batching trace checks about refs: aliasing, ambiguous increments.

Read `vmap.py` and the vmap half of `ref_rules.py` first. The batching rules of the ref
primitives (`ref_rules.py`) see one access at a time; a few questions need the whole
vmapped call, so `BatchTrace.process_primitive` asks this module:

* **Aliasing.** A ref mapped as an argument reaches the trace as a `BatchTracer` (a
  ref of stacked contents, one row per example). If the same ref also reaches the
  trace *unbatched*, the function closes over it too: the two names would see one
  box as two different things (one row, the whole array), so a write through one is
  not what the other reads. `jit` rejects the same program (`frontend/ref_checks.py`); so does
  vmap, at the first use of the closure. (Passing one ref twice as arguments is
  caught before tracing, by the same check `jit` uses.)

* **Increments of a ref from outside.** A ref from outside the vmapped function (a
  closure, or an argument with `in_axes=None`) is one box shared by every example.
  Writing a value that is the same for every example into it is fine: every example
  writes the same thing, so it happens once. An *increment* is different: the user
  may mean "add once" or "add once per example", and nothing in the program says
  which. `ref.addupdate(r, i, 1.0)` is one; so is `r[...] += 1.0`, which reads `r`
  and then writes it -- and so is any write after a read of the same ref, since
  "once per example" would have each example see the previous one's write. The
  trace notes which outside refs it has read (in its `ref_ledger`) and rejects
  a later write to one, naming the two readings and what to write for each. A call,
  branch or loop that writes an outside ref gets its body traced (and thrown away)
  under a batching trace with nothing mapped, which applies the same checks inside.

* **Promotion before a call.** A ref made inside the vmapped function is unbatched
  until a batched value is written into it (`ref_rules.py`). When a call, branch or loop
  with a batched operand may write such a ref, it is promoted (made batched) before
  the body is batched, since the body's batching trace cannot promote a ref it did
  not make.
"""
from __future__ import annotations

from ..ir import primitives as P
from ..ir.core import ReadEffect, WriteEffect, AccumEffect
from ..ir.primitives import effects_of
from ..ir.staging import trace_to_jaxpr
from ..ir.trace import aval_of, bind, set_current_trace
from ..ir.types import RefType
from ..ir.ref_box import RefError, describe_ref
from .ad_util import fresh_root
from .batching import BatchTracer, BatchingError, moveaxis, not_mapped, vmap_rules



def watched(prim) -> bool:
    """What `check_unbatched_write` looks at: writes, and bodies that may write."""
    return prim.has_ref_effects_of_body or prim is P.swap_p or prim is P.addupdate_p


def reading(prim) -> bool:
    """What `note_reads` looks at: reads, and bodies that may read."""
    return prim.has_ref_effects_of_body or prim is P.get_p


# -- aliasing --------------------------------------------------------------------------

def check_no_closure_alias(trace, args):
    for x in args:
        name = trace.ref_ledger.mapped_argument_name(x)
        if name is not None:
            raise RefError(
                f"vmap: {describe_ref(x)} is both closed over by the vmapped function "
                f"and passed to it as {name} (aliasing): mapped, each example sees one "
                f"row of it, while the closure sees the whole ref. Use one or the other.")


# -- increments of outside refs ---------------------------------------------------------

def _is_outside(trace, ref) -> bool:
    return not trace.ref_ledger.made_here(ref)


def read_before(trace, ref) -> bool:
    """Has this vmapped call already read `ref`, a ref from outside?"""
    return trace.ref_ledger.was_read_from_outside(ref)


def note_reads(trace, prim, values, params, dims=None):
    """Note the unbatched outside refs a `get` (or a call, branch or loop) reads."""
    if prim is P.get_p:
        read = [0]
    else:
        read = [e.input_index for e in _effects(prim, values, params)
                if isinstance(e, ReadEffect)]
    for k in read:
        ref = values[k]
        if (dims is None or dims[k] is not_mapped) and _is_outside(trace, ref):
            trace.ref_ledger.note_read_from_outside(ref)


def ambiguous_increment(ref, how):
    return BatchingError(
        f"vmap: {how} a {aval_of(ref)} that is the same for every example (a ref from "
        f"outside the vmapped function, or mapped with in_axes=None). An increment of "
        f"it is ambiguous: should it happen once, or once per example (each example "
        f"seeing the previous one's update)? To update it once, do it outside the "
        f"vmapped function. To update it once per example, map the ref (pass it as an "
        f"argument with an in_axes) and combine its rows afterwards.")


def check_unbatched_write(trace, prim, values, params):
    """Before an access (or a call, branch or loop) with nothing batched runs once:
    reject it if it increments a ref from outside."""
    if prim is P.addupdate_p:
        if _is_outside(trace, values[0]):
            raise ambiguous_increment(values[0], "`addupdate` (`ref.addupdate`) adds to")
    elif prim is P.swap_p:
        if _is_outside(trace, values[0]) and read_before(trace, values[0]):
            raise ambiguous_increment(values[0], _READ_THEN_WRITE)
    elif prim.has_ref_effects_of_body:
        written = _written_inputs(prim, values, params)
        if not written or not all(_is_outside(trace, values[k]) for k in written):
            return
        for k in written:
            if read_before(trace, values[k]):
                raise ambiguous_increment(values[k], _READ_THEN_WRITE)
        _check_body(trace, prim, values, params)


_READ_THEN_WRITE = ("the vmapped function reads and then writes (as `r[idx] += v` "
                    "does: an increment)")


def _effects(prim, values, params):
    return effects_of(prim, [aval_of(v) for v in values], params)


def _written_inputs(prim, values, params) -> list:
    return sorted({e.input_index for e in _effects(prim, values, params)
                   if isinstance(e, (WriteEffect, AccumEffect))})


def _check_body(trace, prim, values, params):
    """Batch the body with nothing mapped, staged and thrown away: every access
    inside meets the checks above, with every ref input counted as from outside."""
    dims = [not_mapped] * len(values)
    rule = vmap_rules[prim]
    with set_current_trace(fresh_root()):
        trace_to_jaxpr(lambda *xs: list(rule(trace.axis_size, list(xs), dims,
                                              **params).values),
                       [aval_of(v) for v in values])


# -- promotion -----------------------------------------------------------------------------

def promote(trace, ref):
    """A ref made inside the vmapped function, about to receive a batched value: a
    batched copy (batch axis 0) replaces it from now on."""
    contents = bind(P.get_p, ref)
    stacked = bind(P.broadcast_in_dim_p, contents,
                   shape=(trace.axis_size,) + aval_of(contents).shape,
                   broadcast_dimensions=tuple(range(1, 1 + aval_of(contents).ndim)))
    batched = bind(P.new_ref_p, stacked)
    trace.ref_redirects[id(ref)] = (ref, BatchTracer(trace, batched, 0))
    return batched


def promote_written_refs(trace, prim, values, dims, params):
    """Promote the unbatched refs made here that a call, branch or loop with a batched
    operand writes, so that its body sees them batched."""
    written = [k for k in _written_inputs(prim, values, params)
               if dims[k] is not_mapped and not _is_outside(trace, values[k])]
    if not written:
        return values, dims
    values, dims = list(values), list(dims)
    for k in written:
        redirect = trace.ref_redirects.get(id(values[k]))     # passed twice: once
        values[k] = redirect[1].value if redirect else promote(trace, values[k])
        dims[k] = 0
    return values, dims


# -- branches that differ per example ----------------------------------------------------
#
# A `cond` whose index is batched runs, as a whole, the branch each example picks. With
# ref effects in the branches, every branch runs on the whole batch, each on its own
# copy of the refs the branches write; each example then keeps the final contents its
# own branch left (a `select_n` on the index, as for the outputs), and those are
# written back. With prints in a branch, it must print only for the examples that
# take it, so the examples run one at a time instead (a `scan`), each on a fresh ref
# holding its row of each batched ref.

def written_operands(branches) -> list:
    return sorted({e.input_index for b in branches for e in b.effects
                   if isinstance(e, (WriteEffect, AccumEffect))})


def _check_written_refs_batched(written, operands, dims):
    """(`written`: positions in `operands`)"""
    for j in written:
        if dims[j] is not_mapped:
            raise BatchingError(
                f"vmap: a cond/switch whose predicate differs per example writes a "
                f"{aval_of(operands[j])} that is the same for every example (a ref from "
                f"outside the vmapped function, or mapped with in_axes=None): only the "
                f"examples that take the branch would write it. Map the ref too (a "
                f"batched ref argument), or create the ref inside the vmapped function.")


def _contents(ref, dim):
    return moveaxis(bind(P.get_p, ref), dim, 0)


def _write_back(ref, dim, final):
    bind(P.swap_p, ref, moveaxis(final, 0, dim))


def select_lanes(index, results):
    """Per example b, `results[index[b]][b]` (every result batched on axis 0)."""
    shape = aval_of(results[0]).shape
    which = index if len(shape) == 1 else bind(
        P.broadcast_in_dim_p, index, shape=shape, broadcast_dimensions=(0,))
    return bind(P.select_n_p, which, *results)


def _same_ref_groups(values, positions) -> dict:
    """{first position: every position holding the same ref} over `positions`: a
    ref closed over by two branches reaches the cond as two operands."""
    groups: dict = {}
    first_of: dict = {}
    for k in positions:
        first = first_of.setdefault(id(values[k]), k)
        groups.setdefault(first, []).append(k)
    return groups


def cond_selecting_ref_contents(axis_size, index, operands, dims, branches, run_branch):
    """The batched-index cond of branches with ref effects (see above).
    `run_branch(number, operands, dims) -> outputs of branch `number`, batched on
    axis 0`."""
    written = written_operands(branches)
    _check_written_refs_batched(written, operands, dims)
    written_ids = {id(operands[j]) for j in written}
    groups = _same_ref_groups(operands, [k for k, x in enumerate(operands)
                                         if id(x) in written_ids])
    contents = {j: _contents(operands[j], dims[j]) for j in groups}
    outs_per_branch, finals_per_branch = [], []
    for number, branch in enumerate(branches):
        ops, ds = list(operands), list(dims)
        copies = {}
        for j, positions in groups.items():
            copies[j] = bind(P.new_ref_p, contents[j])
            for k in positions:
                ops[k], ds[k] = copies[j], 0
        outs_per_branch.append(run_branch(number, ops, ds))
        finals_per_branch.append([bind(P.get_p, copies[j]) for j in groups])
    for j, finals in zip(groups, zip(*finals_per_branch)):
        _write_back(operands[j], dims[j], select_lanes(index, list(finals)))
    return [select_lanes(index, list(results)) for results in zip(*outs_per_branch)]


def cond_one_example_at_a_time(axis_size, values, dims, branches, apply_one, map_examples):
    """The batched-index cond of branches with prints (see above): `map_examples` (a
    scan over the examples) runs `apply_one(*inputs)` on each example's inputs, where
    each batched ref has become its row of contents, read into a fresh ref there."""
    values, dims = list(values), list(dims)
    _check_written_refs_batched([j + 1 for j in written_operands(branches)], values, dims)
    groups = _same_ref_groups(values, [k for k, (v, d) in enumerate(zip(values, dims))
                                       if d is not not_mapped
                                       and isinstance(aval_of(v), RefType)])
    if not groups:
        return map_examples(apply_one, axis_size, values, dims, not_mapped, moveaxis)
    refs = {j: (values[j], dims[j]) for j in groups}
    for j, positions in groups.items():
        rows = _contents(values[j], dims[j])
        for k in positions:
            values[k], dims[k] = rows, 0

    def one_example(*inputs):
        inputs = list(inputs)
        lanes = {j: bind(P.new_ref_p, inputs[j]) for j in groups}
        for j, positions in groups.items():
            for k in positions:
                inputs[k] = lanes[j]
        outs = list(apply_one(*inputs))
        return outs + [bind(P.get_p, lanes[j]) for j in groups]

    outs = map_examples(one_example, axis_size, values, dims, not_mapped, moveaxis)
    n = len(outs) - len(groups)
    for j, final in zip(groups, outs[n:]):
        _write_back(refs[j][0], refs[j][1], final)
    return outs[:n]
