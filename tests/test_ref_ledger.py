"""What a trace learns about refs lives in its `RefLedger` (ir/ref_ledger.py): made with
the trace, dropped with it, and reset (for eager boxes) with the tracing state.

The misuse these facts catch is differential-tested against JAX in test_refs*.py;
here: where the facts live and how long they last (and, last, that the journals
which roll back a failed call's writes are per thread too)."""
import gc
import weakref

import numpy as np
import pytest

import minijax
from minijax import RefError
from minijax.frontend import refs as refs_api
from minijax.ir import reset_trace_state
from minijax.ir.ref_ledger import RefLedger
from minijax.ir.trace import current_trace
from minijax.transforms.batching import BatchingError

X = np.arange(3.0, dtype=np.float32)


def _seen(box: list):
    """A function that makes, writes and freezes a ref, keeping its trace in `box`."""
    def f(x):
        r = minijax.new_ref(x)
        r[...] += 1.0
        box.append(weakref.ref(current_trace()))
        return minijax.freeze(r)
    return f


def _line_of(snippet: str) -> str:
    lines = open(__file__).read().splitlines()
    return f"{__file__}:{next(i for i, text in enumerate(lines) if snippet in text) + 1}"


def test_a_trace_records_the_refs_it_made_and_used_up():
    traces = []

    def f(x):
        r = minijax.new_ref(x)                            # made here
        out = minijax.freeze(r)                           # frozen here
        ledger = current_trace().ref_ledger
        traces.append((ledger.where_created(r), ledger.consumption(r)))
        return out
    minijax.make_jaxpr(f)(X)
    assert traces == [(_line_of("# made here"), ("freeze", _line_of("# frozen here")))]


_TRANSFORMS = {
    "make_jaxpr": lambda f: minijax.make_jaxpr(f)(X),
    "jit": lambda f: minijax.jit(f)(X),
    "grad": lambda f: minijax.grad(lambda x: f(x).sum())(X),
    "vmap": lambda f: minijax.vmap(f)(np.ones((2, 3), np.float32)),
}


@pytest.mark.parametrize("transform", sorted(_TRANSFORMS))
def test_the_facts_go_with_the_trace(transform):
    # Nothing outside the trace keeps it (or its ledger, which holds its ref tracers)
    # alive once the transformation is done -- the jit cache keeps the traced
    # program, not the trace.
    box = []
    _TRANSFORMS[transform](_seen(box))
    gc.collect()
    assert box and all(trace() is None for trace in box)


def test_each_trace_has_its_own_ledger():
    ledgers = []

    def inner(r):
        ledgers.append(current_trace().ref_ledger)
        return r[...] * 2.0

    def outer(x):
        r = minijax.new_ref(x)
        ledgers.append(current_trace().ref_ledger)
        return minijax.jit(inner)(r)
    minijax.make_jaxpr(outer)(X)
    assert len(ledgers) == 2 and ledgers[0] is not ledgers[1]
    # the ref passed into the inner jit is its argument there, not one it made
    with pytest.raises(RefError, match="passed in"):
        minijax.make_jaxpr(lambda x: minijax.jit(minijax.freeze)(minijax.new_ref(x)))(X)


def test_read_only_marks_last_only_while_the_differentiated_function_runs():
    seen = []

    def f(r):
        seen.append((r, r._trace.ref_ledger))
        assert r._trace.ref_ledger.write_refusal(r) is not None
        return (r[...] ** 2).sum()
    minijax.grad(f)(minijax.new_ref(X))
    (proxy, ledger), = seen
    assert ledger.write_refusal(proxy) is None and not ledger.read_only


def test_a_refused_write_leaves_no_mark_behind():
    seen = []

    def writes(r):
        seen.append((r, r._trace.ref_ledger))
        r[...] = r[...] * 2.0
        return r[...].sum()
    with pytest.raises(RefError, match="passed as a differentiated input"):
        minijax.grad(writes)(minijax.new_ref(X))
    (proxy, ledger), = seen
    assert not ledger.read_only


def test_vmap_notes_the_unbatched_refs_made_below_it():
    seen = []

    def f(x):
        r = minijax.new_ref(np.float32(0.0))      # the same for every example
        seen.append((r, current_trace().ref_ledger))
        r[...] = np.float32(1.0)
        return x + minijax.freeze(r)              # made here: it may freeze it
    out = minijax.vmap(f)(X)
    np.testing.assert_array_equal(out, X + 1.0)
    (r, ledger), = seen
    assert ledger.made_here(r)


def test_vmap_reads_of_an_outside_ref_are_per_call():
    # Reading an outside ref in one vmapped call, then writing it (unbatched) in
    # another, is no increment: each call keeps its own record of what it read.
    counter = minijax.new_ref(np.float32(0.0))
    minijax.vmap(lambda x: x + counter[...])(X)
    minijax.vmap(lambda x: (counter.set(np.float32(5.0)), x)[1])(X)
    assert float(counter[...]) == 5.0
    with pytest.raises(BatchingError, match="ambiguous"):
        minijax.vmap(lambda x: (counter.set(counter[...] + 1.0), x)[1])(X)


def test_the_root_ledger_is_reset_with_the_tracing_state():
    # Read-only marks on eager boxes belong to the root trace; resetting the tracing
    # state (the REPL after an interrupt) drops them with it.
    box = minijax.new_ref(X)
    refs_api.refuse_writes(box, "no writes by {doing}")
    with pytest.raises(RefError, match="no writes by set"):
        box[...] = X
    reset_trace_state()
    box[...] = X + 1.0
    np.testing.assert_array_equal(box[...], X + 1.0)


def test_ledger_entries_are_for_that_very_ref():
    ledger = RefLedger()
    a, b = object(), object()
    ledger.refuse_writes(a, "no")
    ledger.created[id(b)] = (a, "somewhere")      # a stale entry under b's id
    assert ledger.write_refusal(a) == "no" and ledger.write_refusal(b) is None
    assert ledger.where_created(b) is None
    ledger.allow_writes(b)                        # not b's mark: kept
    assert ledger.write_refusal(a) == "no"
    ledger.allow_writes(a)
    assert not ledger.read_only and "created=1" in repr(ledger)


def test_rolling_back_a_failed_call_is_per_thread():
    # A failed transformation puts back the boxes it wrote, even while another
    # thread is inside a transformation of its own (each thread has its journals).
    import threading
    box = minijax.new_ref(np.zeros(3, np.float32))
    other_inside, first_done = threading.Event(), threading.Event()
    errors = []

    def fails(x):
        other_inside.wait(10)
        box[...] = np.ones(3, np.float32)
        raise ValueError("fails after writing")

    def waits(x):
        other_inside.set()
        first_done.wait(10)
        return x

    def first():
        try:
            minijax.vmap(fails)(X)
        except ValueError as e:
            errors.append(e)
        finally:
            first_done.set()

    threads = [threading.Thread(target=first),
               threading.Thread(target=lambda: minijax.vmap(waits)(X))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert len(errors) == 1
    np.testing.assert_array_equal(box[...], np.zeros(3, np.float32))
