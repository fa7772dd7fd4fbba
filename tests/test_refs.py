"""Refs against JAX's own (`jax.new_ref`, `jax.ref.*`): values and final ref contents,
eagerly and under `jit`, for every index form and view; and the misuse checks.

Where JAX does otherwise than intended (see `minijax/divergences/`), the expected
values come from NumPy instead, and `test_divergences.py` pins JAX's behaviour.
Every program traced here also goes through `check_jaxpr` (verifier + print/parse
round trips) and the reference evaluator.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
from minijax.backends.reference import RefBox, eval_closed_jaxpr
from minijax.testing import assert_trees_match, check_jaxpr

X = np.arange(20, dtype=np.float32).reshape(4, 5)


def _check_program(fn, init, args):
    """Trace `fn(ref, *args)`; verify and round-trip it; the reference evaluator must
    agree with the XLA backend on outputs and final contents."""
    closed = minijax.make_jaxpr(fn)(minijax.new_ref(init), *args)
    check_jaxpr(closed)
    box = RefBox(np.asarray(init))
    ref_outs = eval_closed_jaxpr(closed, box, *[np.asarray(a) for a in args])
    ref = minijax.new_ref(init)
    outs = jax.tree_util.tree_leaves(minijax.jit(fn)(ref, *args))
    assert_trees_match([np.asarray(o) for o in outs], [np.asarray(o) for o in ref_outs],
                       check_weak_types=False)
    np.testing.assert_array_equal(np.asarray(ref[...]), box.value)


def run_both(fn, init=X, *args, use_jit=True, check=True):
    """`fn(ref, *args)` with minijax and with JAX; returns ((out, contents) x 2)."""
    mine, theirs = minijax.new_ref(init), jax.new_ref(init)
    f_mine = minijax.jit(fn) if use_jit else fn
    f_jax = jax.jit(fn) if use_jit else fn
    out_mine, out_jax = f_mine(mine, *args), f_jax(theirs, *args)
    assert_trees_match(out_mine, out_jax, check_weak_types=False)
    np.testing.assert_array_equal(np.asarray(mine[...]), np.asarray(theirs[...]))
    if check:
        _check_program(fn, init, args)


# Static index forms on a (4, 5) ref, in Python syntax.
STATIC = {
    "ellipsis": ..., "int": 1, "negative": -1, "two_ints": (2, 3), "slice": slice(1, 3),
    "slice_axis1": (slice(None), 2), "int_slice": (3, slice(1, 4)),
    "strided": slice(0, 4, 2), "strided_2d": (slice(1, None, 2), slice(None, None, 3)),
    "ellipsis_int": (..., 2), "open_slices": (slice(2, None), slice(None, -1)),
    "empty": slice(3, 1),
}


@pytest.mark.parametrize("name", STATIC)
@pytest.mark.parametrize("use_jit", [False, True], ids=["eager", "jit"])
def test_static_read_write_add(name, use_jit):
    idx = STATIC[name]
    shape = X[idx].shape

    def f(r):
        before = r[idx]
        r[idx] = before * 2 + 1
        r[idx] += np.ones(shape, np.float32)
        return before
    run_both(f, use_jit=use_jit, check=use_jit)


DYNAMIC = {"int": (lambda i: i, 2), "negative": (lambda i: i, -1),
           "clamped": (lambda i: i, 7), "clamped_negative": (lambda i: i, -9),
           "axis1": (lambda i: (slice(None), i), 3), "with_slice": (lambda i: (i, slice(1, 3)), 2),
           "array": (lambda i: i, np.array([0, 2, 2], np.int32)),
           "array_axis1": (lambda i: (slice(1, 3), i), np.array([4, -1, 9], np.int32)),
           "array_2d": (lambda i: i, np.array([[0, 1], [3, 3]], np.int32)),
           "array_and_int": (lambda i: (i, 1), np.array([1, 0], np.int32))}


@pytest.mark.parametrize("name", DYNAMIC)
def test_dynamic_read_write(name):
    make, i = DYNAMIC[name]
    i = jnp.asarray(i)

    def f(r, i):
        before = r[make(i)]
        r[make(i)] = before * 3
        return before
    run_both(f, X, i)


def test_separated_integer_arrays_go_first():
    init = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    i = jnp.array([0, 1])
    run_both(lambda r, i: r[i, :, i], init, i)
    assert minijax.new_ref(init)[i, :, i].shape == init[np.array([0, 1]), :, np.array([0, 1])].shape


def test_addupdate_accumulates_at_repeated_indices_setitem_does_not():
    idx = jnp.array([0, 0, 2])
    ones = np.ones((3, 5), np.float32)
    mine, theirs = minijax.new_ref(X), jax.new_ref(X)
    minijax.ref.addupdate(mine, idx, ones)
    jax.ref.addupdate(theirs, idx, ones)
    np.testing.assert_array_equal(np.asarray(mine[...]), np.asarray(theirs[...]))
    assert float(mine[0, 0]) == 2.0        # added twice
    mine, theirs = minijax.new_ref(X), jax.new_ref(X)
    mine[idx] += ones
    theirs[idx] += ones
    np.testing.assert_array_equal(np.asarray(mine[...]), np.asarray(theirs[...]))
    assert float(mine[0, 0]) == 1.0        # read, add, write: last write wins
    _check_program(lambda r, i: minijax.ref.addupdate(r, i, np.ones((3, 5), np.float32)),
                   X, (np.array([0, 0, 2], np.int32),))


def test_module_functions_and_methods():
    for lib in (minijax, jax):
        r = lib.new_ref(X)
        assert np.array_equal(lib.ref.get(r, 1), X[1])
        assert np.array_equal(lib.ref.get(r), X)
        lib.ref.set(r, (0, 1), 7.0)
        old = lib.ref.swap(r, 2, np.zeros(5, np.float32))
        assert np.array_equal(old, X[2]) and float(r[0, 1]) == 7.0
    r = minijax.new_ref(X)
    assert np.array_equal(r.get(), X) and np.array_equal(r.get(1), X[1])
    r.set(np.zeros_like(X))
    assert np.array_equal(r.swap(np.ones_like(X)), np.zeros_like(X))
    r.set(5.0, idx=(0, 0))
    assert float(r[0, 0]) == 5.0


def test_views_against_jax_at():
    def f(r):
        v = r.at[1:3]
        before = v[0]
        v[1] = before + 10
        r.at[2].at[1:4][0] += 100.0
        return before
    run_both(f)


def test_transpose_and_reshape_views_against_numpy():
    def f(r):
        r.T[0] = r.T[1] * 2        # column 0 := 2 * column 1
        r.reshape(2, 10)[1, :3] += 1.0
        r.reshape(-1)[19] = -1.0
        r.at[1:].T[2:4, 0] = 0.0
        return r.T[4], r.reshape(5, 4)[1]
    expected = X.copy()
    expected[:, 0] = expected[:, 1] * 2
    expected.reshape(2, 10)[1, :3] += 1
    expected.reshape(-1)[19] = -1
    expected[1:].T[2:4, 0] = 0
    for fn in (f, minijax.jit(f)):
        r = minijax.new_ref(X)
        col, row = fn(r)
        np.testing.assert_array_equal(np.asarray(r[...]), expected)
    _check_program(f, X, ())


def test_new_axis_follows_numpy():
    r = minijax.new_ref(X)
    assert r[None].shape == (1, 4, 5) and r[None, 0].shape == (1, 5)
    assert r[:, None, 1].shape == X[:, None, 1].shape
    assert minijax.jit(lambda r: r[1, None])(r).shape == (1, 5)
    r[None, 0] = np.full((1, 5), 3.0, np.float32)
    assert np.all(np.asarray(r[0]) == 3.0)


def test_write_broadcasts_like_numpy_and_checks_dtype():
    r = minijax.new_ref(X)
    r[...] = 2.0
    r[1] = np.arange(5, dtype=np.float32)
    r[:, 0] = 7          # a Python int into a float ref: a weak scalar
    expected = np.full_like(X, 2.0)
    expected[1] = np.arange(5)
    expected[:, 0] = 7
    np.testing.assert_array_equal(np.asarray(r[...]), expected)
    with pytest.raises(minijax.RefError, match="has dtype int32 but the ref holds float32"):
        r[0] = np.arange(5, dtype=np.int32)
    with pytest.raises(minijax.RefError, match=r"shape \(3,\) to a place of shape \(5,\)"):
        r[0] = np.ones(3, np.float32)
    i = minijax.new_ref(np.zeros(3, np.int32))
    with pytest.raises(minijax.RefError, match="Python float 1.5 in a ref of dtype int32"):
        i[0] = 1.5


def test_surface():
    r = minijax.new_ref(X)
    assert isinstance(r, minijax.Ref) and not isinstance(r, jax.Array)
    assert (r.shape, r.dtype, r.ndim, r.size, len(r)) == ((4, 5), np.float32, 2, 20, 4)
    assert str(minijax.typeof(r)) == "Ref{float32[4,5]}"
    assert repr(minijax.new_ref(np.float32(1.5))) == "Ref(1.5, dtype=float32)"
    e = minijax.empty_ref(jax.ShapeDtypeStruct((2, 3), jnp.int32))
    assert minijax.typeof(e) == minijax.typeof(minijax.new_ref(np.zeros((2, 3), np.int32)))
    x = np.ones(3, np.float32)
    copy = minijax.new_ref(x)
    x[0] = 5.0              # new_ref copied its initial value
    assert float(copy[0]) == 1.0


def test_internal_refs_are_pure():
    def f(x):
        acc = minijax.new_ref(np.zeros((), np.float32))
        for k in range(3):
            acc[...] += x[k]
        buf = minijax.empty_ref(jax.ShapeDtypeStruct((3,), np.float32))
        buf[...] = x * 2
        buf[1] = acc[...]
        return minijax.freeze(buf)

    def fj(x):
        acc = jax.new_ref(jnp.zeros((), np.float32))
        for k in range(3):
            acc[...] += x[k]
        buf = jax.new_ref(jnp.zeros(3, np.float32))
        buf[...] = x * 2
        buf[1] = acc[...]
        return jax.freeze(buf)
    x = np.array([1.0, 2.0, 3.0], np.float32)
    assert_trees_match(minijax.jit(f)(x), jax.jit(fj)(x))
    assert_trees_match(f(x), jax.jit(fj)(x))
    closed = minijax.make_jaxpr(f)(x)
    check_jaxpr(closed)
    assert not closed.effects        # pure from outside


def test_closed_over_refs_are_updated_in_place():
    counter, counter_j = minijax.new_ref(np.float32(0)), jax.new_ref(np.float32(0))
    log, log_j = minijax.new_ref(np.zeros(4, np.float32)), jax.new_ref(np.zeros(4, np.float32))

    @minijax.jit
    def step(x, i):
        counter[...] += 1.0
        log[i] = x
        return counter[...]

    @jax.jit
    def step_j(x, i):
        counter_j[...] += 1.0
        log_j[i] = x
        return counter_j[...]
    for k in range(3):
        assert_trees_match(step(np.float32(k * 10), k), step_j(np.float32(k * 10), k),
                           check_weak_types=False)
    np.testing.assert_array_equal(np.asarray(log[...]), np.asarray(log_j[...]))
    assert float(counter[...]) == 3.0


def test_nested_jit_with_refs():
    @minijax.jit
    def inner(r, x):
        r[0] += x
        return r[1, :4]

    @minijax.jit
    def outer(r, x):
        y = inner(r, x)
        r.T[1] = y
        return inner(r, y[0])

    @jax.jit
    def inner_j(r, x):
        r[0] += x
        return r[1, :4]

    def outer_j(r, x):
        y = inner_j(r, x)
        r[:, 1] = y
        return inner_j(r, y[0])
    mine, theirs = minijax.new_ref(X), jax.new_ref(X)
    assert_trees_match(outer(mine, np.float32(2)), jax.jit(outer_j)(theirs, np.float32(2)))
    np.testing.assert_array_equal(np.asarray(mine[...]), np.asarray(theirs[...]))
    check_jaxpr(outer.trace(mine, np.float32(2)).jaxpr)


def test_trace_cache_is_keyed_by_ref_type():
    traces = []

    @minijax.jit
    def f(r):
        traces.append(minijax.typeof(r))
        return r[...] * 2
    f(minijax.new_ref(np.float32(1)))
    f(minijax.new_ref(np.float32(2)))
    f(minijax.new_ref(np.ones(2, np.float32)))
    f(minijax.new_ref(np.ones(2, np.int32)))
    assert np.array_equal(f(np.ones(2, np.float32)), np.full(2, 2.0))
    assert [str(t) for t in traces] == ["Ref{float32[]}", "Ref{float32[2]}", "Ref{int32[2]}", "float32[2]"]


# -- misuse --------------------------------------------------------------------------------

def _raises(fn, error, pattern):
    with pytest.raises(error, match=pattern):
        fn()


@pytest.mark.parametrize("use_jit", [False, True], ids=["eager", "jit"])
def test_static_index_out_of_range_is_an_index_error(use_jit):
    r = minijax.new_ref(X)
    f = (minijax.jit if use_jit else (lambda g: g))(lambda r: r[5])
    _raises(lambda: f(r), IndexError, "index 5 is out of bounds for axis 0 with size 4")
    g = (minijax.jit if use_jit else (lambda g: g))(lambda r: r[0, -6])
    _raises(lambda: g(r), IndexError, "index -6 is out of bounds for axis 1 with size 5")
    _raises(lambda: r[1, 2, 3], IndexError, "too many indices")


def test_bad_index_kinds():
    r = minijax.new_ref(X)
    _raises(lambda: r[1.5], TypeError, "cannot index a ref with 1.5")
    _raises(lambda: minijax.jit(lambda r, b: r[b])(r, jnp.array([True, False, True, True])),
            TypeError, "a boolean mask index must be concrete")
    _raises(lambda: r[[0, 1]], TypeError, "non-tuple sequence")
    _raises(lambda: r[::-1], IndexError, "slice steps on refs must be positive")
    _raises(lambda: minijax.jit(lambda r, i: r[i:])(r, 1), TypeError,
            "slice bounds on refs must be static")


def test_arithmetic_and_numpy_on_a_ref_are_rejected():
    r = minijax.new_ref(X)
    _raises(lambda: r + 1, minijax.RefError, "does not support __add__: a ref is not an array")
    _raises(lambda: 2 * r, minijax.RefError, r"Read its value with r\[...\]")
    _raises(lambda: np.asarray(r), minijax.RefError, r"np.asarray\(r\[...\]\)")
    _raises(lambda: minijax.numpy.sin(r), TypeError, r"a ref is not an array: read its value")
    _raises(lambda: minijax.jit(lambda r: r * 2)(r), TypeError, r"got the ref Ref\{float32\[4,5\]\}")
    _raises(lambda: minijax.new_ref(r), minijax.RefError, "cannot make a ref of a ref")
    _raises(lambda: minijax.new_ref({"a": 1.0}), minijax.RefError,
            r"tree_map\(minijax.new_ref, tree\)")


def test_returning_a_ref_from_jit():
    r = minijax.new_ref(X)
    _raises(lambda: minijax.jit(lambda r: r)(r), minijax.RefError,
            r"returns the Ref\{float32\[4,5\]\} created at .*test_refs.py:\d+; a ref cannot be "
            r"returned")
    _raises(lambda: minijax.jit(lambda x: {"r": minijax.new_ref(x)})(1.0), minijax.RefError,
            r"Return its value r\[...\]")


@pytest.mark.parametrize("how", ["two_args", "pytree", "arg_and_closure"])
def test_aliasing_is_rejected_and_nothing_changes(how):
    r = minijax.new_ref(X)

    def two(a, b):
        a[0] = b[1]
    if how == "two_args":
        call, pattern = (lambda: minijax.jit(two)(r, r)), r"passed twice, as args\[0\] and as args\[1\]"
    elif how == "pytree":
        call = lambda: minijax.jit(lambda t: two(t["a"], t["b"]))({"a": r, "b": r})  # noqa
        pattern = r"as args\[0\]\['a'\] and as args\[0\]\['b'\]"
    else:
        call = lambda: minijax.jit(lambda a: two(a, r))(r)  # noqa: E731
        pattern = "both closed over by the function and passed to it"
    _raises(call, minijax.RefError, pattern)
    np.testing.assert_array_equal(np.asarray(r[...]), X)


@pytest.mark.parametrize("use_jit", [False, True], ids=["eager", "jit"])
def test_use_after_freeze_and_free(use_jit):
    wrap = minijax.jit if use_jit else (lambda g: g)

    def read_after_freeze(x):
        r = minijax.new_ref(x)
        y = minijax.freeze(r)
        return y + r[...]

    def freeze_twice(x):
        r = minijax.new_ref(x)
        minijax.freeze(r)
        return minijax.freeze(r)

    def read_after_free(x):
        r = minijax.new_ref(x)
        minijax.free_ref(r)
        return r[...]
    x = np.float32(1)
    _raises(lambda: wrap(read_after_freeze)(x), minijax.RefError,
            r"Ref\{float32\[\]\} created at .*test_refs.py:\d+ is used after freeze \(at "
            r".*test_refs.py:\d+\) by get")
    _raises(lambda: wrap(freeze_twice)(x), minijax.RefError, "is used after freeze .* by freeze")
    _raises(lambda: wrap(read_after_free)(x), minijax.RefError, "is used after free_ref")


def test_eager_ref_invalidated_by_freeze_everywhere():
    r = minijax.new_ref(X)
    assert np.array_equal(minijax.freeze(r), X)
    _raises(lambda: r[0], minijax.RefError, "used after freeze")
    _raises(lambda: minijax.jit(lambda a: a[0])(r), minijax.RefError,
            r"used after freeze .* by jit\(<lambda>\) \(as args\[0\]\)")
    _raises(lambda: minijax.jit(lambda: r[0])(), minijax.RefError, "used after freeze")
    assert repr(r) == "Ref(<frozen>)"


def test_only_the_creating_scope_may_freeze():
    r = minijax.new_ref(X)
    _raises(lambda: minijax.jit(minijax.freeze)(r), minijax.RefError,
            "only the code that created a ref may freeze it")
    _raises(lambda: minijax.jit(lambda: minijax.freeze(r))(), minijax.RefError,
            "passed in .* rather than created here")
    _raises(lambda: minijax.jit(lambda a: minijax.free_ref(a))(r), minijax.RefError,
            "only the code that created a ref may free_ref it")
    assert np.array_equal(np.asarray(r[...]), X)      # still live


def test_failing_call_leaves_refs_unchanged():
    r = minijax.new_ref(X)

    def bad(a):
        a[...] = np.zeros_like(X)
        a[0] = np.ones(3, np.float32)      # wrong shape, after a write
    _raises(lambda: minijax.jit(bad)(r), minijax.RefError, "cannot write a value of shape")
    _raises(lambda: bad(r), minijax.RefError, "cannot write a value of shape")
    # Eagerly the first write has happened (it was its own complete operation), so
    # compare against a fresh run of it; under jit nothing happened.
    np.testing.assert_array_equal(np.asarray(r[...]), np.zeros_like(X))
    s = minijax.new_ref(X)
    _raises(lambda: minijax.jit(bad)(s), minijax.RefError, "cannot write")
    np.testing.assert_array_equal(np.asarray(s[...]), X)


def test_views_are_not_arrays_or_arguments():
    r = minijax.new_ref(X)
    v = r.at[1]
    assert v.shape == (5,) and len(v) == 5 and r.T.shape == (5, 4)
    _raises(lambda: v + 1, minijax.RefError, r"read its value with v\[...\]")
    _raises(lambda: minijax.jit(lambda a: a[...])(v), minijax.RefError, "is a view of a ref")
    _raises(lambda: minijax.freeze(v), minijax.RefError, "not a view")
    _raises(lambda: r.reshape(3, 3), minijax.RefError, r"cannot reshape .* to \(3, 3\)")
