"""Refs under vmap, continued (tests/test_refs_vmap.py first): aliasing, increments of
refs from outside, cond/switch with a batched predicate and ref effects, positions
that differ per example in view steps and integer-array indices. Differential against
JAX where JAX does as intended, else against a loop over the examples (JAX without
vmap, or NumPy), with the divergence pinned (`minijax/divergences/refs_vmap.py`)."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mjnp
from minijax.testing import assert_trees_match
from minijax.transforms.vmap import BatchingError
from tests.test_divergences import pins

X = np.arange(6.0, dtype=np.float32).reshape(3, 2)


def _match(a, b):
    assert_trees_match(a, b, check_weak_types=False, rtol=1e-6, atol=1e-6)


class _NS:
    def __init__(self, lib, np_mod):
        self.lib, self.np, self.new_ref, self.ref = lib, np_mod, lib.new_ref, lib.ref
        self.lax = lib.lax


MJ, JX = _NS(minijax, mjnp), _NS(jax, jjnp)
WRAPS = ["eager", "jit_of_vmap", "vmap_of_jit"]


def _vmapped(f, wrap, **kw):
    if wrap == "jit_of_vmap":
        return minijax.jit(minijax.vmap(f, **kw))
    if wrap == "vmap_of_jit":
        return minijax.vmap(minijax.jit(f), **kw)
    return minijax.vmap(f, **kw)


def _per_example(f, *args):
    """`f` example by example (no vmap), results stacked: the oracle where vmap fails."""
    outs = [f(*(a[b] for a in args)) for b in range(len(args[0]))]
    return jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *outs)


# -- aliasing -------------------------------------------------------------------------------

def _alias_twice(a, b):
    a[...] += 1.0
    return b[...]


@pytest.mark.parametrize("use_jit", [False, True], ids=["eager", "jit"])
def test_one_ref_passed_twice_is_rejected(use_jit):
    ref = minijax.new_ref(np.zeros(3, np.float32))
    wrap = minijax.jit if use_jit else (lambda f: f)
    with pytest.raises(minijax.RefError, match=r"(jit|vmap)\(_alias_twice\): the Ref\{float32\[3\]\} "
                       r"created at .* is passed twice, as args\[0\] and as args\[1\].*"
                       r"\(aliasing\)"):
        wrap(minijax.vmap(_alias_twice))(ref, ref)
    with pytest.raises(minijax.RefError, match=r"passed twice, as args\[0\]\['a'\] and as "
                       r"args\[0\]\['b'\]"):
        minijax.vmap(lambda d: d["a"][...] + d["b"][...])({"a": ref, "b": ref})
    _match(ref[...], np.zeros(3, np.float32))
    # JAX rejects these too
    jref = jax.new_ref(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="only one reference to a mutable array"):
        jax.vmap(_alias_twice)(jref, jref)


@pytest.mark.parametrize("use_jit", [False, True], ids=["eager", "jit"])
def test_ref_both_closed_over_and_mapped_is_rejected(use_jit):
    ref = minijax.new_ref(np.zeros(3, np.float32))

    def f(a):
        a[...] += 1.0              # runs before the closure is met: undone on failure
        return ref[...]
    wrap = minijax.jit if use_jit else (lambda g: g)
    with pytest.raises(minijax.RefError, match=r"Ref\{float32\[3\]\} created at .* is both "
                       r"closed over by the (vmapped )?function and passed to it as "
                       r"(argument a|an argument) \(aliasing\)"):
        wrap(minijax.vmap(f))(ref)
    _match(ref[...], np.zeros(3, np.float32))


@pins("jax_vmap_accepts_aliased_refs")
def test_jax_vmap_accepts_aliased_refs():
    ref = jax.new_ref(np.zeros(3, np.float32))
    out = jax.vmap(lambda a: (a.__setitem__(..., a[...] + 1.0), ref[...])[1])(ref)
    _match(out, np.ones((3, 3), np.float32))           # no error
    with pytest.raises(ValueError, match="both closed over and passed"):
        jax.jit(lambda a: (a.__setitem__(..., a[...] + 1.0), ref[...])[1])(ref)
    jax.vmap(lambda a, b: a[...] + b[...], in_axes=None, axis_size=2)(ref, ref)
    mref = minijax.new_ref(np.zeros(3, np.float32))
    with pytest.raises(minijax.RefError, match="aliasing"):
        minijax.vmap(lambda a, b: a[...] + b[...], in_axes=None, axis_size=2)(mref, mref)


def test_failed_vmap_leaves_every_ref_unchanged():
    counter = minijax.new_ref(np.zeros(3, np.float32))
    outside = minijax.new_ref(np.float32(0))

    def f(c, x):
        c[...] += x                  # a mapped ref, written before the error
        outside[...] = x             # a value that differs per example: an error
    with pytest.raises(BatchingError):
        minijax.vmap(f)(counter, X[:, 0])
    _match(counter[...], np.zeros(3, np.float32))


# -- increments of a ref from outside ------------------------------------------------------

_AMBIGUOUS = (r"Ref\{float32\[\]\} that is the same for every example \(a ref from outside "
              r"the vmapped function, or mapped with in_axes=None\)\. An increment of it "
              r"is ambiguous: should it happen once, or once per example.*To update it "
              r"once, do it outside the vmapped function\. To update it once per "
              r"example, map the ref")


def _increments(ref):
    def plus_equals(x):
        ref[...] += 1.0
        return x

    def addupdate(x):
        minijax.ref.addupdate(ref, (), 1.0)
        return x

    def in_a_jit(x):
        minijax.jit(lambda: ref.__setitem__(..., ref[...] * 2.0))()
        return x

    def in_a_loop(x):
        minijax.lax.fori_loop(0, 2, lambda i, c: (ref.__setitem__(..., ref[...] + 1.0),
                                                   c)[1], x)
        return x
    return [plus_equals, addupdate, in_a_jit, in_a_loop]


@pytest.mark.parametrize("k", range(4), ids=["plus_equals", "addupdate", "in_a_jit",
                                             "in_a_loop"])
@pytest.mark.parametrize("wrap", WRAPS)
def test_unbatched_increment_of_outside_ref_is_ambiguous(k, wrap):
    ref = minijax.new_ref(np.float32(5))
    with pytest.raises(BatchingError, match=_AMBIGUOUS):
        _vmapped(_increments(ref)[k], wrap)(X[:, 0])
    _match(ref[...], np.float32(5))


def test_increment_of_unmapped_ref_argument_is_ambiguous():
    ref = minijax.new_ref(np.float32(5))
    with pytest.raises(BatchingError, match=r"reads and then writes .*" + _AMBIGUOUS):
        minijax.vmap(lambda r, x: r.__setitem__(..., r[...] + 1.0), in_axes=(None, 0))(
            ref, X[:, 0])
    # JAX rejects it too (with a message about a "vmapped value")
    jref = jax.new_ref(np.float32(5))
    with pytest.raises(Exception, match="unbatched array reference"):
        jax.vmap(lambda r, x: r.__setitem__(..., r[...] + 1.0), in_axes=(None, 0))(
            jref, X[:, 0])
    with pytest.raises(Exception, match="addupdate operation with vmapped value"):
        jax.vmap(lambda x: jax.ref.addupdate(jref, (), 1.0))(X[:, 0])


def test_read_then_unrelated_write_of_outside_ref_is_rejected_too():
    """Once, every example reads 5; once per example, the second would read 0."""
    ref = minijax.new_ref(np.float32(5))

    def f(x):
        old = ref[...]
        ref[...] = 0.0
        return x + old
    with pytest.raises(BatchingError, match=r"reads and then writes"):
        minijax.vmap(f)(X[:, 0])
    _match(ref[...], np.float32(5))


def test_batched_increment_of_outside_ref_says_so():
    ref = minijax.new_ref(np.float32(0))
    with pytest.raises(BatchingError, match=r"an increment \(`r\[idx\] \+= v`: a "
                       r"read, then a write\) adds an amount that differs per example to "
                       r"a Ref\{float32\[\]\}.*every example would update the one ref\. Map "
                       r"the ref too .* return the amounts from the vmapped function and "
                       r"add their sum to the ref outside it"):
        minijax.vmap(lambda x: ref.__setitem__(..., ref[...] + x))(X[:, 0])
    _match(ref[...], np.float32(0))


@pytest.mark.parametrize("wrap", WRAPS)
def test_plain_writes_and_reads_of_outside_refs_still_work(wrap):
    ref = minijax.new_ref(np.float32(0))
    scale = minijax.new_ref(np.float32(3))

    def f(x):
        ref[...] = 2.0                   # the same for every example: happens once
        y = x * scale[...] + ref[...]    # reads after the write are fine
        inner = minijax.new_ref(np.float32(0))
        inner[...] += 1.0                # a ref made inside: one per example
        minijax.ref.addupdate(inner, (), 1.0)
        return y, inner[...]
    out = _vmapped(f, wrap, out_axes=(0, None))(X[:, 0])
    _match(out, (X[:, 0] * 3 + 2, np.float32(2)))
    _match(ref[...], np.float32(2))


@pins("jax_vmap_unbatched_write_to_closed_over_ref_fails")
def test_jax_rejects_unbatched_write_to_closed_over_ref():
    jref = jax.new_ref(np.float32(0))
    with pytest.raises(Exception, match="set/swap operation with vmapped value"):
        jax.vmap(lambda x: (jref.__setitem__(..., 1.0), x)[1])(X[:, 0])
    ref = minijax.new_ref(np.float32(0))
    _match(minijax.vmap(lambda x: (ref.__setitem__(..., 1.0), x)[1])(X[:, 0]), X[:, 0])
    _match(ref[...], np.float32(1))


def test_ref_made_inside_is_written_in_a_loop_with_a_batched_carry():
    """A ref made inside (unbatched) that a loop with a batched carry writes: it is
    made batched before the loop body is batched."""
    def f(m, x):
        r = m.new_ref(m.np.zeros((), np.float32))

        def body(i, c):
            r[...] += c
            return c * 2.0
        m.lax.fori_loop(0, 3, body, x)
        return r[...]
    _match(minijax.vmap(lambda x: f(MJ, x))(X[:, 1]), jax.vmap(lambda x: f(JX, x))(X[:, 1]))
    _match(minijax.jit(minijax.vmap(lambda x: f(MJ, x)))(X[:, 1]), X[:, 1] * 7)


# -- cond / switch with a batched predicate and ref effects --------------------------------

P = np.array([True, False, True])


def cond_internal(m, p, x):
    r = m.new_ref(m.np.zeros((2,), np.float32))
    m.lax.cond(p, lambda: r.__setitem__(0, x[0]),
               lambda: r.__setitem__(..., r[...] - x))
    return r[...] * 2.0


def cond_reads_and_returns(m, p, x):
    r = m.new_ref(x)
    y = m.lax.cond(p, lambda: (r.__setitem__(1, 7.0), r[0] + 1.0)[1],
                   lambda: r[1] * 3.0)
    return y, r[...]


def switch_internal(m, i, x):
    r = m.new_ref(m.np.zeros((2,), np.float32))
    m.lax.switch(i, [lambda: r.__setitem__(0, x[0]),
                     lambda: m.ref.addupdate(r, 1, x[1] * 2.0),
                     lambda: None])
    return r[...]


I3 = np.array([2, 0, 1], np.int32)
COND_CASES = [(cond_internal, (P, X)), (cond_reads_and_returns, (P, X)),
              (switch_internal, (I3, X))]


@pytest.mark.parametrize("fn,args", COND_CASES, ids=lambda a: getattr(a, "__name__", ""))
@pytest.mark.parametrize("wrap", WRAPS)
def test_batched_predicate_with_refs_made_inside(fn, args, wrap):
    got = _vmapped(lambda *a: fn(MJ, *a), wrap)(*args)
    _match(got, _per_example(lambda *a: fn(JX, *a), *args))     # JAX, example by example


def _cond_on_ref_argument(m, p, r, x):
    m.lax.cond(p, lambda: r.__setitem__(..., r[...] * x),
               lambda: m.ref.addupdate(r, 0, x[0]))
    return r[...].sum()


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("wrap", WRAPS)
def test_batched_predicate_with_a_mapped_ref_argument(axis, wrap):
    init = np.arange(1.0, 7.0, dtype=np.float32).reshape(3, 2)
    ref = minijax.new_ref(np.moveaxis(init, 0, axis))
    out = _vmapped(lambda p, r, x: _cond_on_ref_argument(MJ, p, r, x), wrap,
                   in_axes=(0, axis, 0))(P, ref, X)
    lanes = [jax.new_ref(init[b]) for b in range(3)]
    expected = [_cond_on_ref_argument(JX, P[b], lanes[b], X[b]) for b in range(3)]
    _match(out, np.stack(expected))
    _match(np.moveaxis(np.asarray(ref[...]), axis, 0),
           np.stack([np.asarray(lane[...]) for lane in lanes]))


@pytest.mark.parametrize("wrap", WRAPS)
def test_batched_predicate_reading_a_closed_over_ref(wrap):
    scale = minijax.new_ref(np.float32(3))

    def f(p, x):
        r = minijax.new_ref(x)
        minijax.lax.cond(p, lambda: r.__setitem__(..., r[...] * scale[...]), lambda: None)
        return r[...]
    _match(_vmapped(f, wrap)(P, X), np.where(P[:, None], X * 3, X))


@pytest.mark.parametrize("wrap", WRAPS)
def test_batched_predicate_writing_a_closed_over_ref_is_an_error(wrap):
    ref = minijax.new_ref(np.float32(0))
    for branch in (lambda x: ref.__setitem__(..., 1.0), lambda x: ref.__setitem__(..., x)):
        with pytest.raises(BatchingError, match=r"a cond/switch whose predicate differs "
                           r"per example writes a Ref\{float32\[\]\} that is the same for every "
                           r"example .*only the examples that take the branch would write "
                           r"it\. Map the ref too"):
            _vmapped(lambda p, x: minijax.lax.cond(p, lambda: branch(x[0]), lambda: None),
                     wrap)(P, X)
    _match(ref[...], np.float32(0))


def test_batched_predicate_with_prints_and_refs(capsys):
    """Prints must happen only for the examples taking the branch, so these branches
    run one example at a time (with each batched ref's row in a fresh ref)."""
    from tests.test_debug_print import printed
    ref = minijax.new_ref(X.copy())

    def f(p, r, x):
        minijax.lax.cond(p, lambda: (minijax.debug.print("yes {}", x[0]),
                                     r.__setitem__(0, x[1]))[1],
                         lambda: r.__setitem__(1, r[0] * 2.0))
        return r[...].sum()
    out = []
    lines = printed(capsys, lambda: out.append(minijax.vmap(f)(P, ref, X)))
    assert lines == ["yes 0.0", "yes 4.0"]
    expected = np.array([[1.0, 1.0], [2.0, 4.0], [5.0, 5.0]], np.float32)
    _match(ref[...], expected)
    _match(out[0], expected.sum(1))


@pins("jax_vmap_of_cond_with_ref_effects_fails")
def test_jax_vmap_of_cond_with_ref_effects_fails():
    for fn, args in COND_CASES:
        with pytest.raises(NotImplementedError, match="State effect not supported in "
                           "vmap-of-cond"):
            jax.vmap(lambda *a: fn(JX, *a))(*args)
    # minijax: see the tests above (the oracle there is JAX example by example)
    _match(minijax.vmap(lambda *a: cond_internal(MJ, *a))(P, X),
           np.array([[0, 0], [-4, -6], [8, 0]], np.float32))


# -- positions that differ per example: view steps, integer arrays --------------------------

XV = np.arange(24.0, dtype=np.float32).reshape(3, 8)
IV = np.array([0, 1, 0], np.int32)
JV = np.array([[0, 2], [1, 3], [3, 3]], np.int32)


def _views_at_positions(m, x, i, j):
    r = m.new_ref(x.reshape(2, 4))
    r.at[i][1] = -1.0
    r.at[:, 1:].at[i][2] = -2.0
    r[:, j] = r[:, j] * 10.0
    return r.at[i][0], r.at[:, 1:].at[1 - i][j[0] % 3], r[1, j], r.at[:, j][0], r[...]


def _numpy_views(x, i, j):
    """The same on one example in NumPy, whose views alias the array as ref views do
    (JAX cannot take views of refs under vmap: `jax_vmap_of_ref_views_fails`)."""
    r = np.array(x).reshape(2, 4)
    r[i][1] = -1.0
    r[:, 1:][i][2] = -2.0
    r[:, j] = r[:, j] * 10.0
    return r[i][0], r[:, 1:][1 - i][j[0] % 3], r[1, j], r[:, j][0], r


@pytest.mark.parametrize("wrap", WRAPS)
def test_per_example_positions_in_view_steps_and_integer_arrays(wrap):
    got = _vmapped(lambda x, i, j: _views_at_positions(MJ, x, i, j), wrap)(XV, IV, JV)
    _match(got, _per_example(_numpy_views, XV, IV, JV))


def test_per_example_view_positions_into_a_ref_that_is_the_same_for_every_example():
    table = np.arange(8.0, dtype=np.float32).reshape(2, 4)

    def f(x, i, j):
        r = minijax.new_ref(table)
        return r.at[i][1:3] * x[0], r.at[:, 1:].at[i][1], r.at[1 - i][j], r[:, j]
    got = minijax.vmap(f)(XV, IV, JV)
    expected = _per_example(lambda x, i, j: (table[i][1:3] * x[0], table[:, 1:][i][1],
                                             table[1 - i][j], table[:, j]), XV, IV, JV)
    _match(got, expected)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_per_example_integer_array_index_into_a_mapped_ref(axis):
    init = np.arange(24.0, dtype=np.float32).reshape(3, 2, 4)
    ref = minijax.new_ref(np.moveaxis(init, 0, axis))

    def f(r, j):
        r[:, j] = -5.0
        minijax.ref.addupdate(r, (0, j), 1.0)     # accumulates at repeated positions
        return r.at[1][j]
    out = minijax.vmap(f, in_axes=(axis, 0))(ref, JV)
    lanes = init.copy()
    for b in range(3):
        lanes[b][:, JV[b]] = -5.0
        np.add.at(lanes[b][0], JV[b], 1.0)
    _match(out, np.stack([lanes[b][1][JV[b]] for b in range(3)]))
    _match(np.moveaxis(np.asarray(ref[...]), axis, 0), lanes)


@pins("jax_vmap_per_example_integer_array_ref_index_fails")
def test_jax_vmap_per_example_integer_array_index_fails():

    def f(m, x, j):
        r = m.new_ref(x.reshape(2, 4))
        r[:, j] = -5.0
        return r[...]
    with pytest.raises(ValueError, match="Invalid shape for `swap`"):
        jax.vmap(lambda x, j: f(JX, x, j))(XV, JV)
    expected = np.stack([XV[b].reshape(2, 4) for b in range(3)])
    for b in range(3):
        expected[b][:, JV[b]] = -5.0
    _match(minijax.vmap(lambda x, j: f(MJ, x, j))(XV, JV), expected)
