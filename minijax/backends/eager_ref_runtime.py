"""Eager refs: running ref programs on `Ref` boxes (the box itself is `ir/ref_box.py`).

Read `transforms/discharge.py` first: it is how any program with refs runs here.

A `Ref` outside any transformation is a Python object holding a `jax.Array` (its
current contents) and a state: live, frozen or freed. Nothing else in minijax
mutates it; every change goes through one function, `call_with_refs(jaxpr, args)`:

1. check the boxes: each is live, and no box is passed twice (two names for one
   box would make the discharged program wrong -- writes through one name would not
   be seen through the other);
2. discharge the jaxpr (refs -> values, final values of written refs as extra
   outputs) and run it as one XLA program on the boxes' contents;
3. only once the program has returned, store the final values in the boxes.

Step 3 coming last is what makes a failing call leave every ref as it was.

A transformation run eagerly (`grad`, `vjp`, `jvp`, `vmap`, ... of a function that
writes a ref from outside) performs many such calls, one per primitive, and may
fail after some have written. So the public transforms run the user's function
`all_or_nothing()`: each box's contents and state are noted before its first change
inside, and put back if the transformation raises.

Eager `get`/`swap`/`addupdate` are that same function on a one-equation jaxpr
(cached per primitive, indexer and input types), and the eager `jit` primitive uses
it for any body that mentions refs -- which is how refs passed to (or closed over
by) a jitted function are updated in place after the call. `new_ref`, `empty_ref`,
`freeze` and `free_ref` act on the box directly.

The user-facing methods (`r[idx]`, `r.at`, `r.T`, ...) are attached to `Ref` by
`minijax/frontend/refs.py`, the tracing front end, as `minijax.numpy` attaches operators to tracers.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import threading

import jax.numpy as jnp
import numpy as np

from ..ir import control_flow_primitives as CF
from ..ir import primitives as P
from ..ir.core import Eqn, Jaxpr, Var, jaxprs_in_params
from ..ir.primitives import effects_of, out_avals_of
from ..ir.source_info import user_location as _user_frame
from ..ir.ref_box import (Ref, RefError, check_live, describe_ref,  # noqa: F401
                          used_after_message)
from ..ir.shard_map_primitive import shard_map_p
from ..ir.trace import eager_impls
from ..ir.types import (RefType, ShapedArray, aval_of_value, canonical_dtype, is_key,
                        keys_as_jax)
from ..transforms.discharge import (discharge_jaxpr, discharge_with_finals, mentions_refs,
                                    written_inputs)
from . import eager_dispatch, xla

__all__ = ["Ref", "RefError", "call_with_refs", "check_live", "describe_ref",
           "used_after_message"]


# -- running a jaxpr on boxes ------------------------------------------------------------

def check_no_aliasing(args, what: str):
    """Each box passed at most once: writes through one name must be seen by all."""
    seen = {}
    for k, arg in enumerate(args):
        if isinstance(arg, Ref):
            if id(arg) in seen:
                raise RefError(f"{describe_ref(arg)} is passed to {what} twice (inputs "
                               f"{seen[id(arg)]} and {k}); a ref may be passed only once. "
                               f"Pass it once and use it under both names inside.")
            seen[id(arg)] = k


# -- all or nothing --------------------------------------------------------------------

class _OpenJournals(threading.local):
    """One journal per open `all_or_nothing()` in this thread, innermost last:
    id(box) -> (box, what it held). Per thread, as the current trace is: a
    transformation in another thread has journals of its own. The stack is emptied
    again by the context managers that fill it."""

    def __init__(self):
        self.stack: list[dict] = []

    def __bool__(self) -> bool:
        """Whether an `all_or_nothing()` is open in this thread."""
        return bool(self.stack)


_journals = _OpenJournals()


def _note_change(box: Ref):
    journals = _journals.stack
    if journals and id(box) not in journals[-1]:
        journals[-1][id(box)] = (box, (box._value, box._state, box._consumed_at))


@contextlib.contextmanager
def all_or_nothing():
    """Run a transformation so that, if it raises, every box it changed is put back."""
    journal: dict = {}
    journals = _journals.stack
    journals.append(journal)
    try:
        yield
    except BaseException:
        for box, (value, state, consumed_at) in journal.values():
            box._value, box._state, box._consumed_at = value, state, consumed_at
        raise
    finally:
        journals.pop()
        if journals:
            # Succeeded inside a larger transformation: a later failure there undoes
            # these changes too.
            for key, entry in journal.items():
                journals[-1].setdefault(key, entry)


def call_with_refs(jaxpr: Jaxpr, args, what: str = "a jitted function",
                   rebuilt_each_call: bool = False) -> list:
    """Run `jaxpr` (no constvars) on `args`, `Ref` boxes for its ref inputs; update
    the boxes it writes, only after the whole program has succeeded. A program that
    is `rebuilt_each_call` (an eager loop or branch) is compiled once per text."""
    result = discharge_jaxpr(jaxpr)
    compile_ = xla.compile_jaxpr_by_text if rebuilt_each_call else xla.compile_jaxpr
    return run_discharged(compile_(result.jaxpr), result.info, args, what)


def call_donating(jaxpr: Jaxpr, args, donated: tuple, what: str,
                  placement: tuple = ()) -> list:
    """`call_with_refs` for `jit(f, donate_argnums=...)`: the inputs at `donated`
    (positions in `args`) hand their buffers to XLA. For a donated `Ref` that is
    its current contents: the discharged program returns the ref's final value
    even where it only reads the ref, so XLA writes it into the donated buffer,
    and the box takes the new array while the old one is deleted -- the ref itself
    goes on working. Inside an open `all_or_nothing()` a ref is not donated, since
    undoing the call would have to put back a deleted array. `placement`
    (`xla.placement_key`) compiles the program with the user's `jit` options."""
    plan = DonatingProgram.plan(jaxpr, args, donated)
    return run_discharged(_donating_executable(plan, placement), plan.info, args, what)


def clear_caches():
    """Forget the compiled programs of donating calls (`minijax.clear_caches`)."""
    _donating_executable.cache_clear()
    DonatingProgram.arrange.cache_clear()


@functools.lru_cache(maxsize=1024)
def _donating_executable(plan: "DonatingProgram", placement: tuple = ()):
    return plan.wrap(xla.compile_jaxpr(plan.program, plan.donate_argnums, placement))


@dataclasses.dataclass(frozen=True, eq=False)     # one object per arrangement (`arrange`)
class DonatingProgram:
    """A discharged program arranged for donation. XLA pairs each output with the
    first donated input of its type that is still free, in order; so `program` takes
    the donated refs' contents first and returns their final values first, and each
    ref is updated in its own buffer. `wrap` turns a function of `program`'s inputs
    (a `jax.jit` function, or an ahead-of-time executable of one) into one taking
    and answering in the discharged program's order, as `run_discharged` expects."""
    program: Jaxpr
    info: object                 # the DischargeInfo of the discharged program
    in_order: tuple              # program input j is discharged input in_order[j]
    out_order: tuple             # program output j is discharged output out_order[j]
    donate_argnums: tuple        # positions among `program`'s inputs

    @classmethod
    def plan(cls, jaxpr: Jaxpr, args, donated: tuple) -> "DonatingProgram":
        donated_refs = () if _journals else tuple(
            k for k in donated if isinstance(args[k], Ref))
        finals = sorted(set(written_inputs(jaxpr)) | set(donated_refs))
        result = discharge_with_finals(jaxpr, tuple(finals))
        donate = tuple(k for k in donated
                       if k in donated_refs or not isinstance(args[k], Ref))
        return cls.arrange(result, donated_refs, donate)

    @classmethod
    @functools.lru_cache(maxsize=1024)
    def arrange(cls, result, donated_refs: tuple, donate: tuple) -> "DonatingProgram":
        program, info = result.jaxpr, result.info
        n_in, n_out = len(program.invars), info.num_outputs
        in_order = tuple(donated_refs) + tuple(k for k in range(n_in) if k not in donated_refs)
        final_at = {position: n_out + j for j, position in enumerate(info.written)}
        out_order = [final_at[k] for k in donated_refs]
        out_order += [k for k in range(len(program.outvars)) if k not in out_order]
        permuted = Jaxpr((), [program.invars[k] for k in in_order], program.eqns,
                         [program.outvars[k] for k in out_order])
        return cls(permuted, info, in_order, tuple(out_order),
                   tuple(in_order.index(k) for k in donate))

    def inputs(self, values) -> list:
        """The discharged program's inputs in `program`'s order."""
        return [values[k] for k in self.in_order]

    def wrap(self, fn):
        def run(*values):
            outs = fn(*self.inputs(values))
            restored = [None] * len(outs)
            for out, k in zip(outs, self.out_order):
                restored[k] = out
            return restored
        return run


def run_discharged(executable, info, args, what: str) -> list:
    """Run the `executable` of a discharged program (`info` its `DischargeInfo`) on
    `args` with `Ref` boxes among them: the boxes' contents go in, and the final
    contents of those it writes are stored back once it has succeeded."""
    for arg in args:
        if isinstance(arg, Ref):
            check_live(arg, what)
    check_no_aliasing(args, what)
    values = [arg._value if isinstance(arg, Ref) else arg for arg in args]
    outs = list(executable(*values))
    n = info.num_outputs
    for position, final in zip(info.written, outs[n:]):
        _note_change(args[position])
        args[position]._value = final
    return outs[:n]


@functools.lru_cache(maxsize=4096)
def _one_equation(prim, params_key, in_avals, slots) -> Jaxpr:
    """`{ lambda ; r ... . let <prim> in (...) }`: one equation as a program of its
    own. `slots[k]` is the invar that input k reads: a box passed twice to one
    equation (a `while` whose condition and body both close over it) is one invar."""
    params = dict(params_key)
    invars = [None] * (max(slots) + 1 if slots else 0)
    for aval, slot in zip(in_avals, slots):
        invars[slot] = invars[slot] or Var(aval)
    inputs = [invars[slot] for slot in slots]
    outvars = [Var(aval) for aval in out_avals_of(prim, in_avals, params)]
    # Cached and shared by every eager call of `prim`: no user line is its origin.
    eqn = Eqn(prim, inputs, params, outvars, effects_of(prim, in_avals, params),
              source_info=None)
    return Jaxpr((), invars, (eqn,), outvars)


def _ref_op_impl(prim, rebuilt_each_call: bool = False):
    def impl(*args, **params):
        in_avals = tuple(aval_of_value(a) for a in args)
        first_slot: dict[int, int] = {}
        slots, distinct = [], []
        for a in args:
            key = id(a) if isinstance(a, Ref) else None
            if key is not None and key in first_slot:
                slots.append(first_slot[key])
                continue
            if key is not None:
                first_slot[key] = len(distinct)
            slots.append(len(distinct))
            distinct.append(a)
        jaxpr = _one_equation(prim, tuple(sorted(params.items())), in_avals, tuple(slots))
        return call_with_refs(jaxpr, distinct, prim.name, rebuilt_each_call)
    impl.__name__ = f"eager_{prim.name}"
    return impl


def _new_ref(x):
    if isinstance(x, Ref):
        raise RefError("cannot make a ref of a ref: a ref holds an array")
    dtype = canonical_dtype(aval_of_value(x).dtype)
    if is_key(dtype):   # a jax.Array of keys: immutable, so holding it is a copy
        return [Ref(x)]
    # A copy: on CPU, jnp.asarray of a NumPy array may share its memory, and the
    # caller may go on mutating that array.
    return [Ref(jnp.array(x, dtype, copy=True))]


def _empty_ref(*, shape, dtype):
    if is_key(dtype):
        return [Ref(keys_as_jax(np.zeros(shape, dtype)))]
    return [Ref(jnp.zeros(shape, dtype))]


def _consume(ref, state):
    check_live(ref, "freeze" if state == "frozen" else "free_ref")
    value = ref._value
    _note_change(ref)
    ref._state, ref._consumed_at = state, _user_frame()
    if state == "freed":
        ref._value = None
    return value


def _jit_impl(*args, jaxpr, name, inline=False):
    # An inline call (`inline=True`) evaluated eagerly runs its body whole, as any call.
    if not mentions_refs(jaxpr):
        return eager_dispatch.apply_primitive(P.jit_p, *args, jaxpr=jaxpr, name=name,
                                              inline=inline)
    return call_with_refs(jaxpr, list(args), f"jit({name})")


def with_refs_discharged(prim, impl):
    """The eager impl of a primitive with bodies (cond, while, scan, ...): as `impl`,
    unless refs are involved -- a `Ref` box among the inputs, or a body that uses
    refs -- in which case the equation runs as a one-equation program through
    `call_with_refs` (discharged, then written back)."""
    ref_op = _ref_op_impl(prim, rebuilt_each_call=True)

    def eager(*args, **params):
        if any(isinstance(a, Ref) for a in args) or any(
                mentions_refs(getattr(j, "jaxpr", j)) for j in jaxprs_in_params(params)):
            return ref_op(*args, **params)
        return impl(*args, **params)
    eager.__name__ = f"eager_{prim.name}"
    return eager


for _prim in (P.get_p, P.swap_p, P.addupdate_p):
    eager_impls[_prim] = _ref_op_impl(_prim)
eager_impls[P.new_ref_p] = _new_ref
eager_impls[P.empty_ref_p] = _empty_ref
eager_impls[P.freeze_p] = lambda ref: [_consume(ref, "frozen")]
eager_impls[P.free_ref_p] = lambda ref: (_consume(ref, "freed"), [])[1]
eager_impls[P.jit_p] = _jit_impl


def route_ref_users_through_discharge():
    """Wrap the eager impls of the primitives with bodies (called once, by
    `backends/__init__.py`, after every backend module registered its impls). `remat`
    needs no wrapping: its eager impl is the `jit` impl above, which handles refs."""
    for prim in (CF.cond_p, CF.while_p, CF.scan_p, shard_map_p):
        eager_impls[prim] = with_refs_discharged(prim, eager_impls[prim])


def value_of(x):
    """A leaf as XLA may see it: a box's contents, anything else as it is."""
    return x._value if isinstance(x, Ref) else x

