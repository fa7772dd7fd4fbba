"""What a trace knows about refs while it runs: its `RefLedger`.

Read `ref_box.py` (the `Ref` box) and `frontend/refs.py` (the user-facing checks)
first. Some misuse of refs can only be caught by remembering what happened earlier
in the same trace:

* **who made a ref** -- only the code that created a ref may `freeze` or `free_ref`
  it, and messages name a ref by the line that made it ("the Ref{f32[3]} created at
  f.py:4");
* **which refs are used up** -- a ref used after `freeze`/`free_ref` is an error that
  names where it was consumed;
* **which refs refuse writes** -- grad/vjp with respect to a ref argument runs the
  function on a fresh ref holding its contents; a write to that ref is refused
  (`frontend/autodiff.py`);
* **what a vmap made and saw** -- the refs made below a `vmap` from values that are
  the same for every example (unbatched, so they live in the parent trace but belong
  to the vmapped code), the refs mapped as its arguments (to catch a closure of the
  same ref) and the refs from outside that it has read (a later write is an
  ambiguous increment): `transforms/vmap_refs.py`.

Every one of these facts belongs to exactly one trace, so every trace carries one
`RefLedger` (`trace.ref_ledger`, made the first time the trace meets a ref) and
drops it with itself: nothing
about refs outlives the transformation that learnt it, and there is no table
anywhere else. A ref *box* (an eager ref) is owned by the root `EvalTrace`, whose
ledger is replaced with it by `reset_trace_state` (trace.py) -- the one reset point.
Boxes keep their own consumed state on the box (`ref_box.py`); the root ledger only
ever holds the read-only marks.

Entries are keyed by `id(ref)` and keep the ref itself, so the id stays unique for
as long as the entry exists; a lookup also checks the stored ref is the one asked
about.
"""
from __future__ import annotations

__all__ = ["RefLedger"]


class RefLedger:
    """The facts about refs that one trace has learnt (see the module docstring).

    * `created`: id -> (ref, where): the trace's own ref tracers that `new_ref`/
      `empty_ref` made, with the user's line;
    * `consumed`: id -> (ref, how, where): those a `freeze`/`free_ref` ended;
    * `read_only`: id -> (ref, message): refs a write to which raises `message`;
    * `made_below`: id -> ref: (vmap) unbatched refs made while the trace was
      current, which live in the parent trace but belong to the vmapped code;
    * `mapped_arguments`: id -> (ref, name): (vmap) refs mapped as arguments;
    * `outside_read`: id -> ref: (vmap) refs from outside that it has read."""
    __slots__ = ("created", "consumed", "read_only", "made_below", "mapped_arguments",
                 "outside_read")

    def __init__(self):
        self.created: dict = {}
        self.consumed: dict = {}
        self.read_only: dict = {}
        self.made_below: dict = {}
        self.mapped_arguments: dict = {}
        self.outside_read: dict = {}

    @staticmethod
    def lookup(table: dict, ref):
        """The entry of `table` for `ref` (None if there is none): entries store the
        ref first, or are the ref itself, and must be this very ref."""
        entry = table.get(id(ref))
        if entry is None:
            return None
        stored = entry[0] if type(entry) is tuple else entry
        return entry if stored is ref else None

    def note_created(self, ref, where):
        self.created[id(ref)] = (ref, where)

    def where_created(self, ref):
        """The user's line that made `ref` in this trace, or None."""
        entry = self.lookup(self.created, ref)
        return None if entry is None else entry[1]

    def note_consumed(self, ref, how: str, where):
        self.consumed[id(ref)] = (ref, how, where)

    def consumption(self, ref):
        """`(how, where)` if `ref` was frozen or freed in this trace, else None."""
        entry = self.lookup(self.consumed, ref)
        return None if entry is None else entry[1:]

    def refuse_writes(self, ref, message: str):
        self.read_only[id(ref)] = (ref, message)

    def allow_writes(self, ref):
        if self.lookup(self.read_only, ref) is not None:
            del self.read_only[id(ref)]

    def write_refusal(self, ref):
        """The message a write to `ref` raises, or None if it may be written."""
        entry = self.lookup(self.read_only, ref)
        return None if entry is None else entry[1]

    def note_made_below(self, refs):
        self.made_below.update((id(r), r) for r in refs)

    def made_here(self, ref) -> bool:
        """(vmap) Whether `ref` is an unbatched ref made below this trace."""
        return self.lookup(self.made_below, ref) is not None

    def note_mapped_argument(self, ref, name: str):
        self.mapped_arguments[id(ref)] = (ref, name)

    def mapped_argument_name(self, ref):
        """(vmap) The name of the argument `ref` was mapped as, or None."""
        entry = self.lookup(self.mapped_arguments, ref)
        return None if entry is None else entry[1]

    def note_read_from_outside(self, ref):
        self.outside_read[id(ref)] = ref

    def was_read_from_outside(self, ref) -> bool:
        """(vmap) Whether this trace has read `ref`, a ref from outside."""
        return self.lookup(self.outside_read, ref) is not None

    def __repr__(self):
        counts = ", ".join(f"{name}={len(getattr(self, name))}" for name in self.__slots__
                           if getattr(self, name))
        return f"RefLedger({counts})"
