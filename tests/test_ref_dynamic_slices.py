"""Slices of refs from a start known only at run time: `r[minijax.ds(i, 3)]`, JAX's
`r[jax.ds(i, 3)]` -- differential against JAX 0.10.2 under `jit`.

What JAX does, and where minijax follows it:
* a traced start is clamped as `lax.dynamic_slice` clamps one: a negative start counts
  from the end once, then the start is clamped so the whole slice fits -- for reads
  and writes alike under jit; minijax does the same, eagerly too (JAX raises eagerly
  on a jax.Array start: a registered divergence);
* a static start whose slice does not fit is an error (JAX: ValueError);
* grad, jvp, vjp, linearize, `fori_loop` and `scan` work;
* vmap with a start that differs per example raises NotImplementedError in JAX;
  minijax batches it, so those tests compare with a loop over JAX's results.

Where JAX is not self-consistent, the tests compare with what it intends: a strided
`jax.ds` out of range is clamped (reads) or dropped (writes) element by element in
JAX, while minijax clamps its start as for unit stride, so those cases are checked
against JAX given the start minijax computes; and JAX loses the clamp of a `ds` view
(`r.at[ds(i, 4)]`) when the index applied to it has a traced item on another axis.
All three are registered divergences, pinned in tests/test_divergences_refs.py.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.backends.reference import RefBox, eval_jaxpr
from minijax.interop import import_jaxpr, to_jax, to_python_source, trace_with_jax
from minijax.ir import ParseError, parse_jaxpr
from minijax.testing import assert_trees_match, check_jaxpr
from minijax.transforms.ad_util import eval_jaxpr as run_jaxpr
from minijax.transforms.discharge import discharge_jaxpr

X = np.arange(8, dtype=np.float32)
M = np.arange(30, dtype=np.float32).reshape(5, 6)
STARTS = [0, 3, 5, 6, 7, 20, -1, -3, -8, -10]


class _NS:
    def __init__(self, lib, np_mod):
        self.lib, self.np = lib, np_mod
        self.ds, self.new_ref, self.ref, self.lax = lib.ds, lib.new_ref, lib.ref, lib.lax


MJ, JX = _NS(minijax, mnp), _NS(jax, jnp)


def _match(a, b):
    assert_trees_match(a, b, check_weak_types=False, rtol=1e-5, atol=1e-5)


def _clamped(i, n, size, stride=1):
    """The start minijax uses: wrapped once, then clamped so that the slice fits."""
    span = (size - 1) * stride + 1
    i = i + n if i < 0 else i
    return min(max(i, 0), n - span)


# -- the public name ------------------------------------------------------------------------

def test_ds_is_built_as_jax_builds_it():
    for args in [(1, 3), (2, 3, 2), (4,)]:
        mine, theirs = minijax.ds(*args), jax.ds(*args)
        assert (mine.start, mine.size, mine.stride) == (theirs.start, theirs.size,
                                                       theirs.stride)
    assert minijax.ds(None) == jax.ds(None) == slice(None)
    for lib in (minijax, jax):
        with pytest.raises(ValueError, match="stride"):
            lib.ds(1, 2, jnp.int32(1))
        with pytest.raises(ValueError, match="stride"):
            lib.ds(1, 2, -1)
    # a pytree, as JAX's: a traced start passes through jit as a leaf
    r = minijax.new_ref(X)
    d = minijax.ds(mnp.int32(3), 2)
    assert len(jax.tree_util.tree_leaves(d)) == 1
    np.testing.assert_array_equal(minijax.jit(lambda r, d: r[d])(r, d), X[3:5])


# -- straight-line code ---------------------------------------------------------------------

def _accesses(ns):
    """Every access form with unit stride, in one program (one compile per library)."""
    def f(x, i):
        r = ns.new_ref(x)
        v = r[ns.ds(i, 3)]
        r[ns.ds(i, 2)] = ns.np.zeros(2, np.float32) - 1.0
        r[ns.ds(i, 2)] += 10.0
        old = ns.ref.swap(r, ns.ds(i, 4), v[0] * ns.np.ones(4, np.float32))
        ns.ref.addupdate(r, ns.ds(i, 1), v[1:2])
        ns.ref.addupdate(r, ns.ds(i, 8), 0.5 * ns.np.ones(8, np.float32))
        return v, old, r[ns.ds(i, 8)], r[...]
    return f


def test_unit_stride_accesses_match_jax_with_jax_clamping():
    mine, theirs = minijax.jit(_accesses(MJ)), jax.jit(_accesses(JX))
    for i in STARTS:
        _match(mine(X, i), theirs(X, i))


def test_eager_accesses_match_jit():
    """Eagerly the start is a jax array (dynamic, clamped) or a Python int (static),
    and the results are jit's. (JAX's eager ref ops fail on a jax.Array start: the
    registered divergence ref_eager_ds_array_start_fails.)"""
    jitted = minijax.jit(_accesses(MJ))
    for i in [2, 7, -1]:
        _match(_accesses(MJ)(X, mnp.int32(i)), jitted(X, i))
    _match(_accesses(MJ)(X, 0), jitted(X, 0))


def test_a_ds_that_jax_built_is_taken_as_minijaxs():
    """A program written with `jax.ds` (JAX's own object) runs on minijax refs: the
    accesses match JAX's program of the same text, and JAX's stride 0 is refused as
    minijax's is."""
    jax_built = _NS(minijax, mnp)
    jax_built.ds = jax.ds
    mine, theirs = minijax.jit(_accesses(jax_built)), jax.jit(_accesses(JX))
    for i in [0, 6, -1]:
        _match(mine(X, i), theirs(X, i))
    with pytest.raises(ValueError, match="stride must be at least 1"):
        minijax.jit(lambda i: minijax.new_ref(X)[jax.ds(i, 3, 0)])(1)


def test_a_static_start_is_the_static_slice():
    def f(r):
        return r[minijax.ds(2, 3)], r[minijax.ds(-3, 3)], r[minijax.ds(np.int32(1), 2, 3)]

    def g(r):
        return r[2:5], r[5:8], r[1:5:3]
    r = minijax.new_ref(X)
    assert str(minijax.make_jaxpr(f)(r)) == str(minijax.make_jaxpr(g)(r))
    _match(f(r), g(r))
    # a static slice that does not fit is an error at trace time, as in JAX
    for lib in (minijax, jax):
        for make in (lambda r: r[lib.ds(6, 3)], lambda r: r[lib.ds(8, 1)]):
            with pytest.raises(ValueError):
                lib.jit(make)(lib.new_ref(X))
    with pytest.raises(IndexError, match=r"minijax.ds\(-1, 3\) does not fit axis 0 of "
                                         r"size 8"):
        r[minijax.ds(-1, 3)]


def _strided(ns):
    def f(x, i):
        r = ns.new_ref(x)
        v = r[ns.ds(i, 3, 2)]
        r[ns.ds(i, 2, 3)] = ns.np.zeros(2, np.float32) - 1.0
        ns.ref.addupdate(r, ns.ds(i, 3, 2), v)
        return v, r[...]
    return f


def test_strided_slices_clamp_their_start_as_unit_stride_ones():
    mine, theirs = minijax.jit(_strided(MJ)), jax.jit(_strided(JX))
    in_range = [1, 2, 3]                            # both libraries agree here
    for i in in_range:
        _match(mine(X, i), theirs(X, i))
    for i in STARTS:            # JAX given the start minijax uses (span 5 and 4)
        v, r = mine(X, i)
        _match(v, theirs(X, _clamped(i, 8, 3, 2))[0])
        expected = X.copy()
        expected[_clamped(i, 8, 2, 3)::3][:2] = -1.0
        start = _clamped(i, 8, 3, 2)
        expected[start:start + 5:2] += np.asarray(v)
        _match(r, expected)


def _two_d(ns):
    def f(m, i, j):
        r = ns.new_ref(m)
        reads = (r[ns.ds(i, 2), :], r[:, ns.ds(j, 3)], r[ns.ds(i, 2), ns.ds(j, 3)],
                 r[ns.ds(i, 2), 1], r[1, ns.ds(j, 3)], r[ns.ds(i, 2), j],
                 r[ns.ds(i, 2), np.array([0, 2])], r.at[1:4][ns.ds(i, 2)])
        r.at[ns.ds(i, 3)][1:3] = ns.np.zeros((2, 6), np.float32)
        r[ns.ds(i, 2), ns.ds(j, 2)] += 1.0
        return reads, r.at[ns.ds(i, 4)][ns.ds(1, 2), ns.ds(j, 2)], r[...]
    return f


def test_two_d_refs_mix_ds_with_every_other_item():
    mine, theirs = minijax.jit(_two_d(MJ)), jax.jit(_two_d(JX))
    for i, j in [(1, 2), (0, 0), (3, 4), (-2, 9)]:
        ours, jaxs = mine(M, i, j), theirs(M, i, j)
        _match((ours[0], ours[2]), (jaxs[0], jaxs[2]))
        if i in (0, 1):                     # the view r.at[ds(i, 4)] needs no clamping
            _match(ours[1], jaxs[1])
    # A clamped view, indexed again: ds(3, 4) of 5 rows is rows 1-4, and its rows 1-2
    # are rows 2-3. (JAX 0.10.2 reads rows 3-4 when the inner index has a traced item
    # on another axis, as here, and rows 2-3 when it has not.)
    _, nested, _ = mine(M, 3, 0)
    after = M.copy()
    after[3:5] = 0.0
    after[3:5, 0:2] += 1.0
    _match(nested, after[1:5][1:3, 0:2])


# -- the IR: text, verifier, discharge, the reference evaluator -------------------------------

def test_text_form_shows_the_start_twice_and_round_trips():
    closed = minijax.make_jaxpr(_strided(MJ))(X, 1)
    text = str(closed.jaxpr)
    assert "<- c[b:b+5:2]" in text and "c[b:b+4:3] <- " in text and "c[b:b+5:2] +=" in text
    check_jaxpr(closed)
    closed = minijax.make_jaxpr(_two_d(MJ))(M, 1, 2)
    assert "<- e[c:c+2, d:d+3]" in str(closed.jaxpr)
    check_jaxpr(closed)
    jaxpr = parse_jaxpr("""\
{ lambda ; a:Ref{f32[8]} b:i32[]. let
    c:f32[3] <- a[2:i32[]:2:i32[]+3]
    d:f32[2] <- a[b:b+4:3]
    e:f32[1] <- a[b:b+2:5]
    f:f32[8] <- a[b:b+8]
  in (c, d, e, f) }""")
    assert str(jaxpr).splitlines()[1:5] == [
        "    c:f32[3] <- a[2:i32[]:2:i32[]+3]", "    d:f32[2] <- a[b:b+4:3]",
        "    e:f32[1] <- a[b:b+1]", "    f:f32[8] <- a[...]"]
    check_jaxpr(jaxpr)


@pytest.mark.parametrize("body, message", [
    ("c:f32[3] <- a[b:d+3]", "repeats its start: expected 'b'"),
    ("c:f32[3] <- a[b:b+3:0]", "a span >= 0 and a step >= 1"),
    ("c:f32[3] <- a[b:b-3]", "expected '\\+'"),
    ("c:f32[9] <- a[b:b+9]", r"does not fit axis 0 of size 8: the slice spans 9"),
    ("c:f32[3] <- a[e:e+3]", "the start of minijax.ds must be an integer scalar"),
])
def test_parse_errors_of_dynamic_slices(body, message):
    with pytest.raises(ParseError, match=message):
        parse_jaxpr("{ lambda ; a:Ref{f32[8]} b:i32[] d:i32[] e:f32[]. let\n    "
                    f"{body}\n  in (c,) }}")


def test_discharge_clamps_the_start_so_the_slice_fits():
    closed = minijax.make_jaxpr(lambda r, i: r[minijax.ds(i, 3)])(minijax.new_ref(X), 1)
    assert str(discharge_jaxpr(closed).jaxpr) == """\
{ lambda ; a:f32[8] b:i32[]. let
    c:bool[] = lt b 0:i32[]
    d:i32[] = add b 8:i32[]
    e:i32[] = select_n c b d
    f:i32[] = clamp 0:i32[] e 5:i32[]
    g:f32[3] = dynamic_slice[slice_sizes=(3,)] a f
  in (g,) }"""


def test_reference_evaluator_agrees_with_xla():
    def f(r, i, j):
        a = r[minijax.ds(i, 2, 3), minijax.ds(j, 3)]
        r.at[:, minijax.ds(j, 4)][minijax.ds(i, 2), ::2] = a[:, :2] * 2.0
        minijax.ref.addupdate(r.T, (minijax.ds(j, 2, 2), minijax.ds(i, 2)), a[:, 1:].T)
        return a
    closed = minijax.make_jaxpr(f)(minijax.new_ref(M), 0, 0)
    jitted = minijax.jit(f)
    for i, j in [(0, 0), (2, 1), (9, -1), (-7, 5)]:
        box, ref = RefBox(M), minijax.new_ref(M)
        expected = eval_jaxpr(closed.jaxpr, closed.consts, box, np.int32(i), np.int32(j))
        _match(jitted(ref, i, j), expected[0])
        _match(ref[...], box.value)


# -- autodiff and loops ---------------------------------------------------------------------

def _loss(ns, strided=True):
    def f(x, i):
        r = ns.new_ref(x)
        v = r[ns.ds(i, 3)]
        r[ns.ds(i, 2)] = v[:2] * v[1:]
        r[ns.ds(i + 1, 2)] += ns.np.sin(v[:2])
        ns.ref.addupdate(r, ns.ds(i, 3, 2 if strided else 1), v * v)
        return ns.np.sum(r[...] * ns.np.arange(8.0)), v
    return f


def _derivatives(ns, strided):
    lib, f = ns.lib, _loss(ns, strided)

    def all_of_them(x, i):
        t = ns.np.linspace(0.5, 1.0, 8).astype(np.float32)
        return (lib.grad(lambda x: f(x, i)[0])(x),
                lib.jvp(lambda x: f(x, i), (x,), (t,)),
                lib.vjp(lambda x: f(x, i), x)[1]((1.0, ns.np.ones(3, np.float32))),
                lib.linearize(lambda x: f(x, i)[0], x)[1](t))
    return all_of_them


def test_grad_jvp_vjp_and_linearize_match_jax():
    # every start with unit strides; with a strided slice, starts that need no clamping
    for strided, starts in [(False, [2, 6, -1, 20]), (True, [0, 3, -6])]:
        mine, theirs = minijax.jit(_derivatives(MJ, strided)), jax.jit(_derivatives(JX, strided))
        for i in starts:
            _match(mine(X, i), theirs(X, i))
    _match(minijax.grad(lambda x: _loss(MJ)(x, 2)[0])(X),
           jax.grad(lambda x: _loss(JX)(x, 2)[0])(X))


def _loops(ns):
    lib, lax = ns.lib, ns.lax

    def chunks(x):
        r = ns.new_ref(ns.np.zeros(8, np.float32))

        def body(i, c):
            r[ns.ds(i * 2, 2)] = x[:2] * i + c
            return c + 1.0
        return r[...], lax.fori_loop(0, 4, body, 0.0)

    def windows(x):
        r = ns.new_ref(x)

        def body(c, i):
            v = r[ns.ds(i, 3)]
            r[ns.ds(i, 2)] += c * v[:2]
            return c * 2.0, v.sum()
        return r[...], lax.scan(body, 1.0, ns.np.arange(4))

    def both(x):
        return (chunks(x), windows(x), lib.grad(lambda x: chunks(x)[0].sum())(x),
                lib.grad(lambda x: windows(x)[0].sum() + windows(x)[1][1].sum())(x))
    return both


def test_the_loop_index_as_the_start_in_fori_loop_and_scan():
    _match(minijax.jit(_loops(MJ))(X), jax.jit(_loops(JX))(X))


# -- vmap -------------------------------------------------------------------------------------

def _per_example(ns):
    def f(x, i):
        r = ns.new_ref(x)
        v = r[ns.ds(i, 3)]
        w = r[ns.ds(i, 2, 3)]
        r[ns.ds(i, 2)] = v[1:] * -1.0
        r[ns.ds(i, 2, 2)] += 10.0
        return v, w, r[...]
    return f


def _loop_oracle(fn, *columns):
    results = [fn(*args) for args in zip(*columns)]
    return jax.tree_util.tree_map(lambda *leaves: np.stack(leaves), *results)


def test_vmap_of_a_per_example_start():
    """JAX 0.10.2 raises NotImplementedError ("No support for vmapping over nontrivial
    slices just yet"); minijax batches it. The oracle is a loop over JAX's results,
    given each example's start as minijax clamps it (JAX clamps a strided slice
    element by element)."""
    jax_one = jax.jit(_per_example(JX))
    starts = np.array([0, 2, 7, -1, -9], np.int32)
    xs = np.stack([X + 100 * k for k in range(len(starts))])

    def oracle(x, i):
        v, w, _ = jax_one(x, _clamped(int(i), 8, 3))
        r = np.array(x)
        r[_clamped(int(i), 8, 2):][:2] = np.asarray(v[1:]) * -1.0
        s = _clamped(int(i), 8, 2, 2)
        r[s:s + 3:2] += 10.0
        return v, jax_one(x, _clamped(int(i), 8, 2, 3))[1], r
    mine = minijax.vmap(_per_example(MJ), (None, 0))(X, starts)
    _match(mine, _loop_oracle(oracle, [X] * len(starts), starts))
    mine = minijax.jit(minijax.vmap(_per_example(MJ), (0, 0)))(xs, starts)
    _match(mine, _loop_oracle(oracle, xs, starts))
    # a ref from outside, read at a start that differs per example
    outside = minijax.new_ref(X)
    _match(minijax.vmap(lambda i: outside[minijax.ds(i, 3)])(starts),
           _loop_oracle(lambda i: X[_clamped(int(i), 8, 3):][:3], starts))
    # a mapped ref with one start: JAX batches this too
    _match(minijax.vmap(_per_example(MJ), (0, None))(xs, 1),
           jax.vmap(_per_example(JX), (0, None))(xs, 1))


def test_vmap_of_two_d_accesses_on_any_axis():
    mine_f = _two_d(MJ)
    ms = np.stack([M, M + 100, M + 200])
    # starts where no view is clamped, so that JAX agrees; then any starts, against
    # minijax's own jit, one example at a time
    for one, i_s, j_s in [(jax.jit(_two_d(JX)), [0, 1, 1], [3, 0, 2]),
                          (minijax.jit(mine_f), [0, 3, -9], [4, 9, -1])]:
        i_s, j_s = np.array(i_s, np.int32), np.array(j_s, np.int32)
        for in_axes, args, columns in [
                ((None, 0, 0), (M, i_s, j_s), ([M] * 3, i_s, j_s)),
                ((1, 0, None), (np.moveaxis(ms, 0, 1), i_s, 3), (ms, i_s, [3] * 3)),
                ((0, None, 0), (ms, 1, j_s), (ms, [1] * 3, j_s))]:
            mine = minijax.vmap(mine_f, in_axes)(*args)
            _match(mine, _loop_oracle(lambda m, i, j: one(m, int(i), int(j)), *columns))


def test_vmap_of_grad_through_ds():
    def loss(ns):
        return lambda x, i: _loss(ns)(x, i)[0]
    xs = np.stack([X, X * 0.5, X + 1.0])
    starts = np.array([1, 3, -7], np.int32)
    mine = minijax.vmap(minijax.grad(loss(MJ)), (0, 0))(xs, starts)
    _match(mine, _loop_oracle(jax.jit(jax.grad(loss(JX))), xs, starts))


# -- errors -----------------------------------------------------------------------------------

def test_bad_sizes_and_starts_are_errors_of_jax_types():
    """JAX crashes on a traced size (AssertionError under jit) and accepts float and
    bool starts; minijax refuses them with TypeErrors that name the mistake."""
    r = minijax.new_ref(X)
    cases = [
        (lambda r, i: r[minijax.ds(i, i)], 2, TypeError, "the size of minijax.ds"),
        (lambda r, i: r[minijax.ds(i, 2)], 1.0, TypeError, "must be an integer scalar"),
        (lambda r, i: r[minijax.ds(i, 2)], np.array([1, 2]), TypeError, "must be a scalar"),
        (lambda r, i: r[minijax.ds(i, 9)], 0, TypeError, "spans 9 positions"),
        (lambda r, i: r[minijax.ds(i, 5, 2)], 0, IndexError, "spans 9 positions"),
        (lambda r, i: r[minijax.ds(True, 2)], 0, TypeError, "must be an integer scalar"),
        (lambda r, i: r[i:i + 2], 0, TypeError, r"write minijax.ds\(start, size\)"),
    ]
    for fn, i, cls, message in cases:
        with pytest.raises(cls, match=message):
            minijax.jit(fn)(r, i)
    with pytest.raises(TypeError):          # JAX: the oversized slice's dynamic_slice
        jax.jit(lambda r, i: r[jax.ds(i, 9)])(jax.new_ref(X), 0)


def test_errors_leave_the_ref_unchanged():
    r = minijax.new_ref(X)

    def writes_then_fails(r, i):
        r[minijax.ds(i, 2)] = mnp.zeros(2, np.float32)
        r[minijax.ds(i, 3)] = mnp.zeros(2, np.float32)     # wrong shape
    with pytest.raises(minijax.RefError, match="cannot write a value of shape"):
        minijax.jit(writes_then_fails)(r, 1)
    with pytest.raises(minijax.RefError, match="cannot write a value of shape"):
        r[minijax.ds(mnp.int32(1), 3)] = mnp.zeros(2, np.float32)
    with pytest.raises(TypeError):
        minijax.jit(lambda r, i: r.__setitem__(minijax.ds(i, i), 0.0))(r, 1)
    np.testing.assert_array_equal(r[...], X)


# -- the bridge to JAX ------------------------------------------------------------------------

def test_jax_programs_with_ds_import_and_export():
    def prog(x, i):
        r = jax.new_ref(x)
        v = r[jax.ds(i, 3)]
        r[jax.ds(i, 2)] = v[:2] * 2
        jax.ref.addupdate(r, jax.ds(i, 2, 2), v[1:])
        return v, r[...]
    closed = import_jaxpr(jax.make_jaxpr(prog)(X, 2))
    assert "<- c[b:b+3]" in str(closed.jaxpr)
    mini = minijax.jit(lambda x, i: run_jaxpr(closed.jaxpr, closed.consts, [x, i]))
    exported = jax.jit(to_jax(closed))
    namespace = {}
    exec(to_python_source(trace_with_jax(prog)(X, 2)), namespace)
    source = jax.jit(namespace["program"])
    for i in [1, 3]:                         # in range: every spelling agrees with JAX
        expected = jax.jit(prog)(X, i)
        for got in (mini(X, np.int32(i)), exported(X, np.int32(i)), source(X, np.int32(i))):
            _match(list(got), list(expected))
    # out of range, the exported program clamps the strided start as minijax does
    _match(list(exported(X, np.int32(7))), list(mini(X, np.int32(7))))
    _match(list(source(X, np.int32(7))), list(mini(X, np.int32(7))))
