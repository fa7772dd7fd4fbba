"""jnp functions and arguments that raised NotImplementedError (or the wrong error) in
minijax where JAX works, differential against jax.numpy: complex convolve/correlate,
complex sort/argsort/searchsorted, reshape/ravel order='F', every pad mode, complex
vdot, einsum's interleaved form, complex var/std and ddof >= n, traced
`.at[].get(mode='fill')` and `.at[].apply`, round's decimals and roll's broadcasting.

Each `check` batches its variants into one program per side (values, dtypes, weak
types; traced, under jit and eagerly where asked); errors are compared by type with
JAX's own. An eager jnp call is one program per (function, static arguments, shapes),
so the eager checks of the big groups (`_eager_matches`) take each function, mode and
operand kind once rather than every combination. Most of this file's time is XLA
compiling its few big programs (a `check` of 50-230 results takes 1-5 s per side; the
compile time grows with the instructions, about 1 ms each, and minijax's programs
have as many as JAX's), not their count.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
import minijax.scipy.signal as msignal
import jax.scipy.signal as jsignal
from tests.numpy_helpers import assert_values_close, check
from tests.program_counting import programs

C3 = np.array([1 + 2j, 3 - 1j, 0.5j], np.complex64)
C2 = np.array([2 - 1j, 1 + 1j], np.complex64)
R4 = np.array([1., -2., 3., 0.5], np.float32)
X23 = np.arange(1., 7.).reshape(2, 3).astype(np.float32)
I23 = np.array([[1, 5, 2], [7, 3, 4]], np.int32)
# NaNs in either part, ties and negative zero: JAX's sort order (real, then imaginary;
# NaN last in each) decides every position.
CN = np.array([1 + 2j, 1 - 1j, complex(np.nan, 0), complex(0, np.nan), -1 + 5j, 1 + 1j,
               1 + 1j, complex(np.nan, 2), complex(-0., 1)], np.complex64)


def _lib(m):
    """The transformations that go with a numpy module: jax's or minijax's."""
    return jax if m is jnp else minijax


def _eager_matches(fn, *args):
    """`fn(mnp, *args)` run eagerly gives `fn(jnp, *args)`'s values and dtypes (JAX's
    side as one jitted program). An eager jnp call is one compiled program of the body
    `check` runs traced and under jit, per (function, static arguments, shapes); the
    eager checks cover each function, static argument and operand kind once rather
    than every combination again (one program each)."""
    assert_values_close(fn(mnp, *args), jax.jit(lambda *a: fn(jnp, *a))(*args))


def _same_error(fn):
    """`fn(jnp)` and `fn(mnp)` raise the same exception type; returns it."""
    errors = []
    for m in (jnp, mnp):
        with pytest.raises(Exception) as info:
            fn(m)
        errors.append(info.type)
    assert errors[0] is errors[1], errors
    return errors[0]


# -- convolve / correlate ---------------------------------------------------------------

def test_complex_convolve_and_correlate_all_modes():
    pairs = lambda a, v, r: ((a, v), (v, a), (a, r), (r, a))
    modes = ("full", "same", "valid")

    def fn(m, a, v, r):
        return tuple(f(x, y, mode) for f in (m.convolve, m.correlate) for mode in modes
                     for x, y in pairs(a, v, r))
    check(fn, C3, C2, R4)

    def each_mode_and_pair_once(m, a, v, r):   # eagerly: 8 programs, not 24
        return tuple(f(x, y, modes[(i + k) % 3]) for k, f in enumerate((m.convolve, m.correlate))
                     for i, (x, y) in enumerate(pairs(a, v, r)))
    _eager_matches(each_mode_and_pair_once, C3, C2, R4)


def test_complex_scipy_signal_correlate_conjugates():
    for mode in ("full", "same", "valid"):
        assert_values_close(msignal.correlate(C3, C2, mode), jsignal.correlate(C3, C2, mode))


def test_complex_convolve_grad_and_vmap():
    def fn(m, a, v):
        t = _lib(m)
        loss = lambda a: m.abs(m.correlate(a, v, "full")).sum()
        return t.grad(loss)(a), t.vmap(lambda v: m.convolve(a, v))(m.stack([v, 2 * v]))
    check(fn, C3, C2)


# -- sorting ------------------------------------------------------------------------------

def test_complex_sort_argsort_searchsorted():
    ordered = np.asarray(jnp.sort(CN))

    def fn(m, c, s):
        return (m.sort(c), m.argsort(c), m.sort(c, descending=True),
                m.argsort(c, descending=True), m.sort(m.stack([c, c[::-1]]), axis=0),
                m.argsort(c, stable=False) * 0, m.searchsorted(s, c),
                m.searchsorted(s, c, side="right"), m.sort_complex(c))
    check(fn, CN, ordered, eager=True)


def test_searchsorted_orders_nan_and_zero_as_sort():
    a = np.array([-1., 0., 2., np.nan], np.float32)
    v = np.array([np.nan, -0., 0., 2., 5., -np.inf], np.float32)
    check(lambda m, a, v: (m.searchsorted(a, v), m.searchsorted(a, v, side="right")), a, v)


def test_complex_sort_grad_and_vmap():
    def fn(m, c):
        t = _lib(m)
        return (t.vmap(m.sort)(m.stack([c, c * 1j])),
                t.grad(lambda c: m.real(m.sort(c) * m.arange(3.)).sum())(c))
    check(fn, C3)


def test_sort_errors_as_jax():
    assert _same_error(lambda m: m.sort(X23, order="x")) is TypeError
    assert _same_error(lambda m: m.argsort(X23, order="x")) is TypeError
    assert _same_error(lambda m: m.partition(C3, 1)) is NotImplementedError
    assert _same_error(lambda m: m.argpartition(C3, 1)) is NotImplementedError


# -- reshape order='F' ------------------------------------------------------------------------

def test_reshape_and_ravel_in_fortran_order():
    def fn(m, x):
        t = _lib(m)
        return (m.reshape(x, (4, 6), order="F"), m.reshape(x, (-1, 2), order="F"),
                m.reshape(x[:1], (3, 4, 1), order="F"), m.ravel(x, order="F"),
                x.reshape(6, 4, order="F"), x.flatten(order="F"),
                t.grad(lambda x: (m.ravel(x, order="F") * m.arange(24.)).sum())(x),
                t.vmap(lambda r: m.reshape(r, (4, 3), order="F"))(x))
    check(fn, np.arange(24.).reshape(2, 3, 4).astype(np.float32), eager=True)


def test_reshape_orders_refused_as_jax():
    x = jnp.arange(6.)
    assert _same_error(lambda m: m.reshape(x, (2, 3), order="A")) is NotImplementedError
    assert _same_error(lambda m: m.ravel(x, order="A")) is NotImplementedError
    assert _same_error(lambda m: m.ravel(x, order="K")) is NotImplementedError
    assert _same_error(lambda m: m.reshape(x, (2, 3), order="Z")) is ValueError
    with pytest.raises(NotImplementedError):
        minijax.jit(lambda x: x.reshape(2, 3, order="A"))(x)


# -- pad ------------------------------------------------------------------------------------

def _specified(m, padded, a, widths, mode):
    """`padded` with what `mode` leaves unspecified set to zero: the padding of mode
    "empty" (on a GPU, whatever the memory held)."""
    if mode != "empty":
        return padded
    return m.where(m.pad(m.ones(a.shape, bool), widths), padded, 0)

_WIDTHS = (1, (2, 3), ((4, 0), (1, 7)), 7)


@pytest.mark.parametrize("mode", ["edge", "wrap", "reflect", "symmetric", "empty",
                                  "maximum", "minimum", "mean", "median", "linear_ramp"])
def test_pad_modes(mode):
    def fn(m, x, i, v):
        return tuple(_specified(m, m.pad(a, w, mode), a, w, mode) for a in (x, i, v)
                     for w in _WIDTHS if not (a.ndim == 1 and np.ndim(w) == 2))
    check(fn, X23, I23, R4)
    if mode in ("reflect", "mean"):   # eagerly: each width and array once (4 programs)
        _eager_matches(lambda m, x, i, v: tuple(
            m.pad(a, w, mode) for a, w in zip((x, i, i, v), _WIDTHS)), X23, I23, R4)


def test_pad_mode_arguments():
    def fn(m, x, i, v):
        out = []
        for a in (x, i, v):
            for mode in ("reflect", "symmetric"):
                out += [m.pad(a, w, mode, reflect_type="odd") for w in ((2, 3), 7, (0, 5))]
            for mode in ("maximum", "minimum", "mean", "median"):
                out += [m.pad(a, (2, 3), mode, stat_length=s) for s in (1, (1, 2), 5)]
            pairs = ((1, 2), (3, 4)) if a.ndim == 2 else (7, 8)
            out += [m.pad(a, (2, 3), "linear_ramp", end_values=e) for e in (5, (-1, 3), pairs)]
            out += [m.pad(a, (2, 1), constant_values=c)
                    for c in (5, (1, 2), pairs, ((1, 2),), (9,), 2.5)]
        out.append(m.pad(np.array([3.], np.float32), 3, "reflect", reflect_type="odd"))
        return tuple(out)
    check(fn, X23, I23, R4)


def _fill_ends(vector, widths, axis, kwargs):
    vector = vector.at[:widths[0]].set(kwargs.get("value", 10))
    return vector.at[vector.shape[0] - widths[1]:].set(-1)


def test_pad_callable_mode_and_transforms():
    def fn(m, x, c):
        t = _lib(m)
        return (m.pad(x, ((1, 2), (2, 1)), _fill_ends), m.pad(x, 1, _fill_ends, value=3),
                m.pad(x, 1, constant_values=c), m.pad(3., 2),
                t.grad(lambda x: (m.pad(x, 4, "reflect", reflect_type="odd") ** 2).sum())(x),
                t.grad(lambda x: (m.pad(x, 2, "median") ** 2).sum())(x),
                t.grad(lambda x: m.pad(x, (1, 2), "linear_ramp", end_values=3).sum())(x),
                t.vmap(lambda r: m.pad(r, 2, "linear_ramp", end_values=(1, 2)))(x),
                t.vmap(lambda r: m.pad(r, 2, _fill_ends))(x),
                t.vmap(lambda r: m.pad(r, 5, "wrap"))(x))
    check(fn, X23, np.float32(-4))


def test_pad_keeps_a_weak_type():
    def fn(m, s):
        weak = (jax.lax if m is jnp else minijax.lax).broadcast(s, (3,))
        return tuple(_specified(m, m.pad(weak, 2, mode), weak, 2, mode) for mode in (
            "constant", "edge", "wrap", "reflect", "linear_ramp", "mean", "median",
            "maximum", "empty", _fill_ends))
    check(fn, 2.0)


def test_pad_errors_as_jax():
    empty = np.zeros((0, 2), np.float32)
    cases = [(lambda m: m.pad(X23, 1, "foo"), NotImplementedError),
             (lambda m: m.pad(X23, 1, "edge", constant_values=3), ValueError),
             (lambda m: m.pad(X23, -1), ValueError),
             (lambda m: m.pad(X23, 1.5), TypeError),
             (lambda m: m.pad(X23, ((1, 2, 3),)), ValueError),
             (lambda m: m.pad(X23, 1, "mean", stat_length=0), ValueError),
             (lambda m: m.pad(empty, 1, "edge"), ValueError),
             (lambda m: m.pad(X23, 1, constant_values=(1, 2, 3)), ValueError)]
    for fn, error in cases:
        assert _same_error(fn) is error


# -- vdot, einsum ----------------------------------------------------------------------------

def test_complex_vdot_conjugates_the_first():
    def fn(m, a, b, r):
        t = _lib(m)
        return (m.vdot(a, b), m.vdot(r, b), m.vdot(b, r),
                t.grad(lambda a: m.real(m.vdot(a, b)))(a),
                t.vmap(m.vdot, in_axes=(0, None))(m.stack([a, b]), b))
    check(fn, C2, C2 * 1j, np.array([1., 2.], np.float32), eager=True)


def test_einsum_interleaved_form():
    y = np.arange(12.).reshape(3, 4).astype(np.float32)

    def fn(m, x, y):
        t = _lib(m)
        return (m.einsum(x, [0, 1], y, [1, 2], [0, 2]), m.einsum(x, [0, 1], y, [1, 2]),
                m.einsum(x, [Ellipsis, 1], [Ellipsis]), m.einsum(x, [30, 1], y, [1, 2]),
                m.einsum(x, ["i", "j"], y, ["j", "k"], ["k", "i"]),
                m.einsum(x, (0, 1), y, np.array([1, 2]), (0,)),
                m.einsum(m.eye(3), [0, 0]), m.einsum(x, [Ellipsis, 0], x, [Ellipsis, 0]),
                t.grad(lambda x: m.einsum(x, [0, 1], y, [1, 2], []))(x),
                t.vmap(lambda r: m.einsum(r, [0], y, [0, 1], [1]))(x))
    check(fn, X23, y, eager=True)


def test_eager_einsum_is_one_program_per_contraction_as_jax():
    # JAX jits einsum's contraction with its subscripts static; so does minijax (an
    # eager call used to run op by op: a program per dot_general, sum, transpose).
    y = np.arange(15.).reshape(3, 5).astype(np.float32)   # avals of no other test here
    for args in (("ij,jk->ki", X23, y), (X23, [0, 1], y, [1, 2], [0, 2])):
        counts = {}
        for m in (jnp, mnp):
            with programs("lowered") as first:
                got = m.einsum(*args)
            with programs("lowered") as again:
                m.einsum(*args)
            counts[m.__name__] = (len(first), len(again))
        # (JAX's first call also converts its NumPy operands: 3 programs on jax 0.10.)
        assert counts["minijax.numpy"] == (1, 0) and counts["jax.numpy"][1] == 0, counts
        assert_values_close(got, jnp.einsum(*args))


def test_einsum_interleaved_errors():
    assert _same_error(lambda m: m.einsum(X23, [0, "a"])) is TypeError
    assert _same_error(lambda m: m.einsum(X23, [Ellipsis, 1], X23, [1, Ellipsis])) is ValueError
    with pytest.raises(ValueError, match="output label 5"):
        mnp.einsum(X23, [0, 1], [0, 5])  # JAX: a bare KeyError(5)


# -- var / std ------------------------------------------------------------------------------

_C23 = np.array([[1 + 2j, 3 - 1j, 0.5j], [2, 1j, -1 - 1j]], np.complex64)


def test_complex_var_std_and_ddof_past_the_count():
    def variants(f, c, x, i):
        return [lambda: f(c), lambda: f(c, axis=1, keepdims=True), lambda: f(c, axis=0, ddof=1),
                lambda: f(c, dtype=np.complex64), lambda: f(x, dtype=np.complex64),
                lambda: f(x, axis=0, ddof=2), lambda: f(x, ddof=7), lambda: f(i, ddof=4),
                lambda: f(2.0j), lambda: f(x, ddof=2.5)]

    def fn(m, c, x, i):
        return tuple(v() for f in (m.var, m.std, m.nanvar, m.nanstd)
                     for v in variants(f, c, x, i))
    check(fn, _C23, X23, np.arange(4))

    def each_variant_once(m, c, x, i):   # eagerly: 10 programs, not 40
        fs = (m.var, m.std, m.nanvar, m.nanstd)
        return tuple(variants(fs[k % 4], c, x, i)[k]() for k in range(10))
    _eager_matches(each_variant_once, _C23, X23, np.arange(4))


def test_complex_var_grad_and_vmap():
    def fn(m, c):
        t = _lib(m)
        return (t.grad(lambda c: m.var(c))(c), t.grad(lambda c: m.std(c, ddof=1))(c),
                t.vmap(m.var)(c), t.vmap(lambda r: m.std(r, ddof=3))(c))
    check(fn, _C23)


def test_var_std_take_a_given_mean():
    # NumPy 2's and JAX's `mean=`: the mean with keepdims=True (or a scalar, or anything
    # of the array's rank that broadcasts) replaces the one computed; any other rank is a
    # TypeError, as in JAX
    x = np.where(X23 > 0.3, X23, np.nan).astype(np.float32)
    full = np.nan_to_num(x)

    def fn(m, x, full, mean):
        return tuple(f(a, **kw) for f, a in ((m.var, full), (m.std, full), (m.nanvar, x),
                                             (m.nanstd, x))
                     for kw in (dict(axis=1, mean=mean), dict(axis=1, mean=mean + 1, ddof=1),
                                dict(mean=0.5), dict(axis=1, mean=mean, keepdims=True)))
    check(fn, x, full, np.nanmean(x, axis=1, keepdims=True), eager=True)
    check(lambda m, full, mean: _lib(m).grad(
        lambda f, c: m.var(f, axis=1, mean=c).sum(), (0, 1))(full, mean),
        full, full.mean(1, keepdims=True))
    for name in ("var", "std", "nanvar", "nanstd"):
        assert _same_error(lambda m: getattr(m, name)(full, 1, mean=full.mean(1))) is TypeError


def test_var_of_complex_with_a_real_dtype_is_refused_as_jax():
    for name in ("var", "std", "nanvar", "nanstd"):
        assert _same_error(lambda m: getattr(m, name)(_C23, dtype=np.float32)) is ValueError


# -- .at[].get(mode='fill') and .at[].apply under minijax tracing ------------------------------

_GET_INDICES = (5, -4, -1, np.array([0, 5, -1, -4]), (1, 3), (slice(1, None), 3),
                (Ellipsis, 2), (slice(None), np.array([[0, 3], [-1, 2]])), slice(1, 5),
                (slice(None, None, -1),), np.int32(7))


def test_at_get_fill_and_clip_modes():
    def fn(m, x, i):
        out = []
        for a in (x, i):
            for idx in _GET_INDICES:
                out += [a.at[idx].get(mode="fill"), a.at[idx].get(mode="fill", fill_value=-1),
                        a.at[idx].get(mode="fill", fill_value=2.5),
                        a.at[idx].get(mode="drop", fill_value=3),
                        a.at[idx].get(mode="clip", fill_value=3)]
        return tuple(out)
    check(fn, X23, I23)


def test_at_get_fill_traced_indices_grad_and_vmap():
    def fn(m, v, k, ks, x, rows):
        t = _lib(m)
        return (v.at[k].get(mode="fill", fill_value=-1), v.at[ks].get(mode="fill"),
                t.grad(lambda v: v.at[np.array([0, 5, 1, 1])].get(
                    mode="fill", fill_value=0.).sum())(v),
                t.vmap(lambda r, i: r.at[i].get(mode="fill", fill_value=0))(x, rows))
    check(fn, X23[0], np.int32(7), np.array([7, -4, 1], np.int32), X23,
          np.array([[0, 5], [2, -1]], np.int32))


def test_at_apply_matches_jax():
    def fn(m, x, i, k):
        t = _lib(m)
        out = []
        for a in (x, i):
            for idx in _GET_INDICES:
                out += [a.at[idx].apply(lambda v: v * 2),
                        a.at[idx].apply(lambda v: v + 1, mode="clip")]
        return tuple(out) + (
            x[0].at[np.array([0, 0, 2, 0])].apply(m.sin),  # once per update: sin(sin(sin))
            x[0].at[k].apply(m.sin), x.at[1].apply(lambda v: v - v.mean()),
            t.vmap(lambda r: r.at[np.array([0, 0, 2])].apply(m.exp))(x),
            t.vmap(lambda r, j: r.at[j].apply(m.sin))(x, np.array([[0, 1], [2, 2]])),
            t.jit(lambda s: s.at[()].apply(lambda v: v * 3))(np.float32(2)))
    check(fn, X23, I23, np.array([0, 2, 2]))


def test_at_apply_forward_mode_and_bad_modes():
    # JAX has no JVP for scatter_apply; minijax's composition differentiates forward.
    x, t = X23[0], np.ones(3, np.float32)
    _, tangent = minijax.jvp(lambda x: x.at[np.array([0, 0, 1])].apply(mnp.sin), (x,), (t,))
    expected = np.array([np.cos(np.sin(x[0])) * np.cos(x[0]), np.cos(x[1]), 1.], np.float32)
    np.testing.assert_allclose(np.asarray(tangent), expected, rtol=1e-5)
    with pytest.raises(ValueError, match="Unknown gather mode"):
        minijax.jit(lambda x: x.at[1].get(mode="foo"))(X23)
    with pytest.raises(ValueError, match="Unknown gather mode"):
        jax.jit(lambda x: x.at[1].get(mode="foo"))(X23)


# -- round, roll ----------------------------------------------------------------------------

def test_round_decimals_must_be_an_integer():
    assert _same_error(lambda m: m.round(X23, 1.5)) is TypeError
    check(lambda m, x: (m.round(x, np.int32(1)), m.round(x, True)), X23 / 7)


def test_roll_broadcasts_shift_against_axis():
    def fn(m, x, s):
        t = _lib(m)
        return (m.roll(x, (1, 2), axis=0), m.roll(x, 1, axis=(1, 1)),
                m.roll(x, (1, 2), axis=(1, 0)), m.roll(x, np.array([1, 2]), axis=(1, 0)),
                m.roll(x, (1, 2)), m.roll(x, s, axis=(0, 1)), m.roll(x, s, axis=1),
                t.vmap(lambda r: m.roll(r, (1, 1), axis=0))(x))
    check(fn, X23, np.array([1, 5]), eager=True)


def test_roll_shape_errors_as_jax():
    assert _same_error(lambda m: m.roll(X23, (1, 2, 3), axis=(1, 0))) is ValueError
    assert _same_error(lambda m: m.roll(X23, [[1]], axis=0)) is ValueError


# -- where= in reductions (was NotImplementedError) ------------------------------------------

def test_reductions_with_where():
    mask = np.array([[True, False, True], [False, False, False]])
    row = np.array([True, False, True])

    def fn(m, x, i, n):
        out = []
        for a in (x, i, n):
            for w in (mask, row):
                for axis in (None, 0, 1):
                    out += [m.sum(a, axis, where=w), m.prod(a, axis, where=w),
                            m.max(a, axis, where=w, initial=0),
                            m.min(a, axis, where=w, initial=0), m.mean(a, axis, where=w),
                            m.var(a, axis, where=w), m.std(a, axis, where=w, ddof=1),
                            m.all(a, axis, where=w), m.any(a, axis, where=w, keepdims=True),
                            m.nanmean(a, axis, where=w), m.nanvar(a, axis, where=w),
                            m.nansum(a, axis, where=w), m.nanmax(a, axis, where=w, initial=-1)]
        return tuple(out)
    check(fn, X23, I23, np.array([[1., np.nan, 3.], [4., 5., -6.]], np.float32))


def test_reductions_with_where_grad_and_vmap():
    mask = np.array([[True, False, True], [False, False, False]])

    def fn(m, x):
        t = _lib(m)
        return (t.grad(lambda x: m.mean(x, where=mask))(x),
                t.grad(lambda x: m.var(x, axis=0, where=mask).sum())(x),  # NaN where empty
                t.vmap(lambda r: m.std(r, where=mask[0]))(x),
                t.vmap(lambda r, w: m.sum(r, where=w))(x, mask))
    check(fn, X23)


def test_reduction_where_errors_as_jax():
    assert _same_error(lambda m: m.max(X23, where=X23 > 2)) is ValueError
    assert _same_error(lambda m: m.sum(X23, where=np.array([1, 0, 1]))) is ValueError


def test_take_modes_refused_as_jax():
    assert _same_error(lambda m: m.take(X23, np.array([0]), mode="raise")) is NotImplementedError
    assert _same_error(lambda m: m.take(X23, np.array([0]), mode="foo")) is ValueError
