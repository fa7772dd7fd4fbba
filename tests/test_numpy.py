"""`minijax.numpy` against `jax.numpy`: elementwise functions, reductions, contractions,
sorting, operators and methods on tracers, error messages, and program size.

Each case runs eagerly, traced (verified, with JAX's output types) and under
`minijax.jit` (see `numpy_helpers.check`). Integer, bool and Python-scalar inputs of
the elementwise functions are checked eagerly and by type, and float32 ones also
under jit, to keep the number of XLA compiles (the suite's main cost) down.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from tests.numpy_helpers import (check, check_types, count_eqns, jax_traced, rand, traced,
                                 assert_values_close)

X = rand((2, 3))
POS = rand((2, 3), low=0.1, high=3)
UNIT = rand((2, 3), low=-0.9, high=0.9)
I = rand((2, 3), np.int32, -4, 5)
B = rand((2, 3), bool)

# name -> (float32 input, whether ints/bools/scalars are also meaningful inputs)
UNARY = {
    "sin": (X, True), "cos": (X, True), "tan": (UNIT, True), "arcsin": (UNIT, False),
    "arccos": (UNIT, False), "arctan": (X, True), "sinh": (X, True), "cosh": (X, True),
    "tanh": (X, True), "arcsinh": (X, True), "arccosh": (POS + 1, False),
    "arctanh": (UNIT, False), "exp": (X, True), "exp2": (X, True), "expm1": (X, True),
    "log": (POS, False), "log2": (POS, False), "log10": (POS, False), "log1p": (POS, False),
    "sqrt": (POS, False), "cbrt": (X, True), "floor": (X, True), "ceil": (X, True),
    "rint": (X * 2, True), "trunc": (X, True), "round": (X * 2, True),
    "negative": (X, True), "positive": (X, True), "abs": (X, True), "absolute": (X, True),
    "sign": (X, True), "square": (X, True), "reciprocal": (POS, False),
    "isfinite": (X, True), "isnan": (X, True), "isinf": (X, True), "signbit": (X, True),
    "logical_not": (X, True), "deg2rad": (X, True), "rad2deg": (X, True),
    "fabs": (X, True),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    x, other_kinds = UNARY[name]
    fn = lambda m, x: getattr(m, name)(x)
    check(fn, x)
    if not other_kinds:
        return
    kinds = [I, 2.0, 3] + ([] if name in ("negative", "sign", "round") else [B])
    for value in kinds:
        check(fn, value, jit=False, rtol=2e-6)


def test_unary_special_values():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.5], np.float32)
    for name in ("isnan", "isinf", "isfinite", "signbit", "sign", "floor", "round", "abs",
                 "trunc", "exp", "tanh", "square"):
        check(lambda m, x: getattr(m, name)(x), x, jit=False)


BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide",
          "remainder", "mod", "fmod", "power", "maximum", "minimum", "fmax", "fmin",
          "arctan2", "hypot", "copysign", "equal", "not_equal", "less", "less_equal",
          "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
          "float_power"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_float(name):
    y = rand((3,), low=0.5, high=2.5)  # broadcasts against (2, 3)
    x = POS if name in ("power", "float_power") else X
    check(lambda m, x, y: getattr(m, name)(x, y), x, y, rtol=3e-6)
    check(lambda m, x: getattr(m, name)(x, 1.5), x, jit=False, rtol=3e-6)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "floor_divide",
                                  "remainder", "fmod", "maximum", "bitwise_and",
                                  "bitwise_or", "bitwise_xor", "less", "equal", "power"])
def test_binary_int(name):
    x = rand((2, 3), np.int32, -6, 7)
    y = rand((2, 3), np.int32, 1, 4) * np.where(rand((2, 3), bool), 1, -1).astype(np.int32)
    if name == "power":
        x, y = np.abs(x), np.abs(y)
    check(lambda m, x, y: getattr(m, name)(x, y), x, y)
    check(lambda m, x: getattr(m, name)(x, 3), x, jit=False)


@pytest.mark.parametrize("name", ["add", "multiply", "logical_and", "logical_xor",
                                  "bitwise_or", "equal", "maximum"])
def test_binary_bool(name):
    check(lambda m, x, y: getattr(m, name)(x, y), B, rand((2, 3), bool), jit=False)


def test_floor_divide_and_remainder_signs():
    x = np.array([-7, -6, -1, 0, 1, 6, 7], np.int32)
    for y in (3, -3):
        check(lambda m, x: (m.floor_divide(x, y), m.remainder(x, y), m.divmod(x, y)), x)
    xf = np.array([-7.5, -6.0, -0.5, 0.0, 0.5, 6.0, 7.5], np.float32)
    for y in (2.0, -2.0):
        check(lambda m, x: (m.floor_divide(x, y), m.remainder(x, y)), xf, jit=False)


def test_power_cases():
    base_i = np.array([0, 1, -1, 2, -3, 5], np.int32)
    exp_i = np.array([0, 5, 3, 10, 4, 0], np.int32)
    check(lambda m, x, y: m.power(x, y), base_i, exp_i)
    check(lambda m, x: x ** 3, X)
    check(lambda m, x: m.power(x, np.int32(2)), X, jit=False)
    check(lambda m, x, y: m.power(x, y), X.astype(np.float16), exp_i[:3], jit=False)
    check(lambda m, x: 2 ** x, exp_i, jit=False)
    check(lambda m, x: 2.0 ** x, exp_i, jit=False)


def test_where_and_clip():
    check(lambda m, c, x, y: m.where(c, x, y), B, X, rand((3,)))
    check(lambda m, c, x: m.where(c, x, 0), B, I)
    check(lambda m, x: m.where(x > 0, x, 0.5), X, jit=False)
    check(lambda m, c: m.where(c, 1.0, 2), B, jit=False)
    check(lambda m, x: m.clip(x, -0.5, 0.5), X)
    check(lambda m, x: m.clip(x, max=1), I, jit=False)
    check(lambda m, x: m.clip(x, min=np.zeros(3, np.float32)), X, jit=False)
    check(lambda m, x: m.clip(x, 0.5), I, jit=False)


# -- reductions ---------------------------------------------------------------------------

R = rand((2, 3, 4))
RI = rand((2, 3, 4), np.int32, -3, 4)
RB = rand((2, 3, 4), bool)
AXES = [None, 0, -1, (0, 2), ()]


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "var", "std",
                                  "all", "any", "ptp", "amax", "count_nonzero"])
def test_reductions(name):
    fn = getattr
    for axis in AXES:
        if name in ("ptp", "count_nonzero") and axis == ():
            continue
        check(lambda m, x: fn(m, name)(x, axis=axis), R, rtol=2e-5, jit=axis in (None, 1))
        check(lambda m, x: fn(m, name)(x, axis=axis, keepdims=True), R, rtol=2e-5, jit=False)
    for data in (RI, RB, 2.0):
        if name in ("var", "std", "ptp") and data is RB:
            continue
        check(lambda m, x: fn(m, name)(x, axis=0 if np.ndim(x) else None), data, rtol=2e-5,
              jit=False)


def test_reduction_dtypes():
    for dtype in (np.int8, np.uint8, np.float16, np.bool_, jnp.bfloat16):
        x = np.ones((2, 3), dtype)
        for name in ("sum", "prod", "mean", "max", "cumsum", "var"):
            check_types(lambda m, x: getattr(m, name)(x, axis=1), x)
    check(lambda m, x: m.sum(x, dtype=m.float32), RI, jit=False)
    check(lambda m, x: m.mean(x, dtype=m.float16), R, jit=False, rtol=1e-3)
    check(lambda m, x: m.sum(x, initial=10, axis=1), RI, jit=False)
    check(lambda m, x: m.max(x, initial=10.0), R, jit=False)
    check(lambda m, x: m.var(x, ddof=1, axis=(0, 1)), R, jit=False)
    check(lambda m, x: m.std(x, axis=2, keepdims=True, ddof=2), R, jit=False)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions(name):
    x = rand((3, 4))
    for axis in (None, 0, -1):
        check(lambda m, x: getattr(m, name)(x, axis=axis), x, jit=axis is None)
        check(lambda m, x: getattr(m, name)(x, axis=axis, keepdims=True), x, jit=False)
    check(lambda m, x: getattr(m, name)(x, axis=1), rand((3, 4), np.int32), jit=False)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cumulative(name):
    for data, axis in [(R, None), (R, 1), (RI, -1), (RB, 0)]:
        check(lambda m, x: getattr(m, name)(x, axis=axis), data, rtol=2e-5,
              jit=data is R and axis is None)
    check(lambda m, x: getattr(m, name)(x, axis=0, dtype=m.float32), RI, jit=False)


# -- contractions ------------------------------------------------------------------------

MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                 ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
                 ((1, 2, 3), (5, 3, 4)), ((4, 1, 2, 3), (5, 3, 2)), ((3,), (5, 3, 4)),
                 ((5, 2, 3), (3,))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul(shapes):
    a, b = rand(shapes[0]), rand(shapes[1])
    check(lambda m, a, b: m.matmul(a, b), a, b, jit=len(shapes[0]) == 3)
    check(lambda m, a, b: a @ b, a, b, jit=False)


def test_matmul_dtypes_and_methods():
    check(lambda m, a, b: m.matmul(a, b), rand((2, 3), np.int32), rand((3, 2), np.int32),
          jit=False)
    check(lambda m, a, b: m.matmul(a, b), rand((2, 3)), rand((3, 2), np.int32), jit=False)
    check(lambda m, a: a.T @ a, rand((3, 2)), jit=False)
    check(lambda m, a, b: m.dot(a, b), rand((2, 3, 4)), rand((5, 4, 2)), jit=False)
    check(lambda m, a, b: m.dot(a, b), rand((2, 3)), rand((3,)), jit=False)
    check(lambda m, a: m.dot(a, 2.0), rand((2, 3)), jit=False)
    check(lambda m, a, b: m.vdot(a, b), rand((2, 3)), rand((3, 2)), jit=False)
    check(lambda m, a, b: m.inner(a, b), rand((2, 3)), rand((4, 3)), jit=False)
    check(lambda m, a, b: m.outer(a, b), rand((3,)), rand((2, 2)), jit=False)
    check(lambda m, a, b: m.kron(a, b), rand((2, 3)), rand((2, 2)), jit=False)
    check(lambda m, a, b: a.dot(b), rand((2, 3)), rand((3,)), jit=False)


@pytest.mark.parametrize("axes", [2, 1, 0, ([1, 0], [0, 1]), ([2], [0]), (-1, 0)], ids=str)
def test_tensordot(axes):
    a, b = rand((3, 4, 2)), rand((4, 2, 5)) if axes in (2,) else rand((2, 4, 5))
    if axes == 1:
        b = rand((2, 5))
    if axes == ([1, 0], [0, 1]):
        a, b = rand((3, 4, 2)), rand((4, 3, 5))
    if axes == (-1, 0):
        b = rand((2, 5))
    check(lambda m, a, b: m.tensordot(a, b, axes), a, b, jit=False)


EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ij,kj->ki", [(2, 3), (4, 3)]),
    ("i,i->", [(3,), (3,)]), ("i,j->ij", [(3,), (2,)]), ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->ji", [(2, 3)]), ("ijk->", [(2, 3, 4)]),
    ("ijk->kj", [(2, 3, 4)]), ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    ("...ij,...jk", [(1, 2, 3), (5, 3, 4)]), ("i...->...", [(3, 2, 4)]),
    ("ij,ij->i", [(2, 3), (2, 3)]), ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 2)]),
    ("iij,jk->ik", [(3, 3, 2), (2, 4)]), ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUMS, ids=[e[0] for e in EINSUMS])
def test_einsum(spec, shapes):
    arrays = [rand(s) for s in shapes]
    check(lambda m, *xs: m.einsum(spec, *xs), *arrays, rtol=2e-5,
          jit=spec in ("bij,bjk->bik", "ii->i"))


# -- sorting ---------------------------------------------------------------------------------

def test_sort_and_argsort():
    x = np.array([[3, 1, 2, 1], [0, 5, 5, -1], [2, 2, 2, 2]], np.int32)
    xf = np.array([3.0, np.nan, -1.0, 2.0, -np.inf, 2.0], np.float32)
    for axis in (-1, 0, None):
        check(lambda m, x: m.sort(x, axis=axis), x, jit=axis is None)
        check(lambda m, x: m.argsort(x, axis=axis), x, jit=False)
    check(lambda m, x: (m.sort(x), m.argsort(x)), xf, jit=False)
    check(lambda m, x: m.argsort(x, descending=True), x, jit=False)
    check(lambda m, x: m.sort(x, axis=0, descending=True), x, jit=False)
    check(lambda m, x: m.argsort(x, stable=True, axis=0), x, jit=False)
    check(lambda m, a, v: m.searchsorted(a, v), np.arange(5.0, dtype=np.float32),
          np.array([[-1.0, 0.0, 2.5], [4.0, 4.5, 1.0]], np.float32), jit=False)
    check(lambda m, a, v: m.searchsorted(a, v, side="right"), np.arange(5, dtype=np.int32),
          np.array([0, 2, 9], np.int32), jit=False)


def test_concrete_only_functions():
    x = np.array([[0, 1, 0], [2, 0, 3]], np.int32)
    assert_values_close(mnp.nonzero(x), jnp.nonzero(x))
    assert_values_close(mnp.where(x), jnp.where(x))
    assert_values_close(mnp.argwhere(x), jnp.argwhere(x))
    assert_values_close(mnp.flatnonzero(x), jnp.flatnonzero(x))
    assert_values_close(mnp.unique(np.array([3, 1, 3, 2], np.int32)),
                        jnp.unique(np.array([3, 1, 3, 2], np.int32)))
    with pytest.raises(minijax.TracerError, match="nonzero"):
        minijax.make_jaxpr(lambda x: mnp.nonzero(x))(x)


# -- operators and methods on tracers -------------------------------------------------------

def test_operators():
    y = rand((3,), low=0.5, high=2)
    ops = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
           lambda a, b: a // b, lambda a, b: a % b, lambda a, b: a ** 2, lambda a, b: -a,
           lambda a, b: +a, lambda a, b: abs(a), lambda a, b: a < b, lambda a, b: a <= b,
           lambda a, b: a > b, lambda a, b: a >= b, lambda a, b: a == b, lambda a, b: a != b,
           lambda a, b: 2 - a, lambda a, b: 2.0 / a, lambda a, b: 3 // b, lambda a, b: 1 % b,
           lambda a, b: 2 ** b, lambda a, b: b ** a, lambda a, b: np.float32(2) * a]
    fn = lambda m, a, b: [op(a, b) for op in ops]
    closed = traced(fn, X, y)
    expected = fn(jnp, jnp.asarray(X), jnp.asarray(y))
    assert_values_close(minijax.jit(lambda a, b: fn(mnp, a, b))(X, y), expected, rtol=3e-6)
    assert [a.dtype for a in closed.out_avals] == [e.dtype for e in expected]
    int_ops = [lambda a, b: a & b, lambda a, b: a | b, lambda a, b: a ^ b, lambda a, b: ~a,
               lambda a, b: 3 & a, lambda a, b: 1 | b, lambda a, b: a // 2, lambda a, b: a % -3]
    fn = lambda m, a, b: [op(a, b) for op in int_ops]
    xi, yi = rand((2, 3), np.int32), rand((3,), np.int32, 1, 4)
    assert_values_close(minijax.jit(lambda a, b: fn(mnp, a, b))(xi, yi),
                        fn(jnp, jnp.asarray(xi), jnp.asarray(yi)))
    check(lambda m, a, b: a @ b, X, rand((3, 2)), jit=False)
    check(lambda m, a: np.ones((2, 2), np.float32) @ m.asarray(a), rand((2, 3)), jit=False)


def test_methods():
    x = rand((2, 3, 4))
    methods = [
        lambda a: a.sum(), lambda a: a.sum(axis=1, keepdims=True), lambda a: a.mean(0),
        lambda a: a.max(-1), lambda a: a.min(), lambda a: a.prod(1), lambda a: a.var(),
        lambda a: a.std(axis=0), lambda a: a.argmax(), lambda a: a.argmin(axis=2),
        lambda a: (a > 0).all(), lambda a: (a > 0).any(axis=1), lambda a: a.cumsum(1),
        lambda a: a.cumprod(), lambda a: a.reshape(4, 6), lambda a: a.reshape((-1, 2)),
        lambda a: a.transpose(), lambda a: a.transpose(2, 0, 1), lambda a: a.transpose((1, 0, 2)),
        lambda a: a.T, lambda a: a.mT, lambda a: a.ravel(), lambda a: a.flatten(),
        lambda a: a.squeeze(), lambda a: a[:, :1].squeeze(1), lambda a: a.swapaxes(0, 2),
        lambda a: a.clip(-1, 1), lambda a: a.round(), lambda a: a.astype(np.int32),
        lambda a: a.astype(jnp.float16), lambda a: a.sort(axis=1), lambda a: a.argsort(),
        lambda a: a.take(np.array([0, 2]), axis=1), lambda a: a.repeat(2, axis=0),
        lambda a: a[0].dot(a[1].T), lambda a: a.ptp(axis=1), lambda a: a[0].diagonal(),
        lambda a: a[0].trace(),
    ]
    fn = lambda m, a: [meth(a if m is mnp else jnp.asarray(a)) for meth in methods]
    closed = traced(fn, x)
    expected = fn(jnp, x)
    assert [(a.shape, a.dtype) for a in closed.out_avals] == [
        (e.shape, e.dtype) for e in expected]
    assert_values_close(minijax.jit(lambda a: fn(mnp, a))(x), expected, rtol=2e-5)


def test_tracer_protocols():
    seen = {}

    def f(x):
        seen["len"] = len(x)
        seen["iter"] = [row.shape for row in x]
        seen["shape"], seen["ndim"], seen["size"] = x.shape, x.ndim, x.size
        seen["nbytes"] = x.nbytes
        return sum(x)
    closed = minijax.make_jaxpr(f)(X)
    assert seen == {"len": 2, "iter": [(3,), (3,)], "shape": (2, 3), "ndim": 2, "size": 6,
                    "nbytes": 24}
    assert closed.out_avals[0].shape == (3,)
    with pytest.raises(TypeError, match="immutable"):
        minijax.make_jaxpr(lambda x: x.__setitem__(0, 1.0))(X)
    with pytest.raises(TypeError, match="0-d"):
        minijax.make_jaxpr(lambda x: list(x))(1.0)
    with pytest.raises(minijax.TracerError, match="item"):
        minijax.make_jaxpr(lambda x: x.item())(1.0)
    assert mnp.ndim(X) == 2 and mnp.shape(X) == (2, 3) and mnp.size(X) == 6
    assert mnp.size(X, 1) == 3


def test_numpy_arrays_defer_to_tracers():
    closed = traced(lambda m, a: np.ones((2, 3), np.float32) + a, X)
    assert closed.out_avals[0].shape == (2, 3)
    closed = traced(lambda m, a: np.float32(2) * a, rand((2, 3), np.float16))
    assert closed.out_avals[0].dtype == np.float32  # a NumPy scalar is strongly typed


# -- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("call,error,pattern", [
    (lambda: mnp.add(np.ones(3), np.ones(4)), ValueError, r"add: shapes \(3,\), \(4,\)"),
    (lambda: mnp.sum(np.ones((2, 3)), axis=2), ValueError, "axis 2 is out of bounds"),
    (lambda: mnp.sum(np.ones((2, 3)), axis=(0, 0)), ValueError, "repeated axis"),
    (lambda: mnp.reshape(np.ones(6), (4, -1)), ValueError, r"cannot reshape .*\(6,\)"),
    (lambda: mnp.matmul(np.ones((2, 3)), np.ones((4, 2))), ValueError, "matmul"),
    (lambda: mnp.concatenate([np.ones((2, 3)), np.ones((3, 2))]), ValueError, "axis 0"),
    (lambda: mnp.bitwise_and(np.ones(3), np.ones(3)), TypeError, "bitwise_and"),
    (lambda: mnp.broadcast_to(np.ones(3), (4,)), ValueError, r"broadcast_to.*\(3,\)"),
    (lambda: mnp.transpose(np.ones((2, 3)), (0, 0)), ValueError, "permutation"),
    (lambda: mnp.squeeze(np.ones((2, 3)), 0), ValueError, "squeeze"),
    (lambda: mnp.split(np.ones(5), 2), ValueError, "equal division"),
    (lambda: mnp.einsum("ij,jk->il", np.ones((2, 3)), np.ones((3, 2))), ValueError, "'l'"),
    (lambda: mnp.zeros((2, -1)), ValueError, "negative dimensions"),
    (lambda: mnp.asarray("abc"), TypeError, "array"),
    (lambda: mnp.add(np.ones(2), object()), TypeError, "add: expected an array"),
    (lambda: mnp.negative(np.ones(2, bool)), TypeError, "negative"),
    (lambda: mnp.argmax(np.ones((0, 2))), ValueError, "empty"),
    (lambda: mnp.max(np.ones((0, 2)), axis=0), ValueError, "zero-size"),
    (lambda: mnp.arange(minijax.make_jaxpr(lambda: None)), TypeError, ""),
])
def test_errors(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()


def test_arange_needs_static_bounds():
    with pytest.raises(minijax.TracerError, match="arange"):
        minijax.make_jaxpr(lambda n: mnp.arange(n))(3)


# -- program size ---------------------------------------------------------------------------

LEAN_PROGRAMS = {
    "dense": (lambda m, x, w, b: m.tanh(x @ w + b), [(4, 3), (3, 5), (5,)]),
    "mlp": (lambda m, x, w, b: m.maximum(m.dot(x, w) + b, 0.0).sum(), [(4, 3), (3, 5), (5,)]),
    "softmax": (lambda m, x: m.exp(x - x.max(-1, keepdims=True))
                / m.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True), [(4, 3)]),
    "mean_sq": (lambda m, x: m.mean((x - 1.0) ** 2), [(4, 3)]),
    "where": (lambda m, x: m.where(x > 0, x, 0.01 * x), [(4, 3)]),
    "zeros": (lambda m, x: x + m.zeros(3), [(4, 3)]),
    "index": (lambda m, x: x[1:, 0] * x[0, 1], [(4, 3)]),
    "reshape_transpose": (lambda m, x: x.reshape(2, 6).T.sum(0), [(4, 3)]),
    "einsum": (lambda m, x, w: m.einsum("ij,jk->ik", x, w), [(4, 3), (3, 5)]),
    "cast": (lambda m, x: x.astype(m.float16) * 2, [(4, 3)]),
}


@pytest.mark.parametrize("name", sorted(LEAN_PROGRAMS))
def test_no_more_equations_than_jax(name):
    fn, shapes = LEAN_PROGRAMS[name]
    args = [rand(s) for s in shapes]
    ours = traced(fn, *args)
    theirs = jax_traced(fn, *args)
    assert count_eqns(ours) <= count_eqns(theirs), f"minijax:\n{ours}\nJAX:\n{theirs}"
