"""`jnp.ufunc` and its instances (`jnp.add.reduce`, `jnp.multiply.outer`,
`jnp.add.at`, ...), `jnp.frompyfunc` and `jnp.from_dlpack`, each
against jax.numpy: values traced, under jit and eagerly, dtypes and weak types, and
gradients and vmap. One program per method and instance: each test puts its cases
together."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from tests.numpy_helpers import assert_values_close, check, together
from tests.test_divergences import pins

NAMES = ["add", "bitwise_and", "bitwise_or", "bitwise_xor", "logaddexp", "logaddexp2",
         "logical_and", "logical_or", "logical_xor", "maximum", "minimum", "multiply",
         "negative", "subtract"]
BINARY = [n for n in NAMES if n != "negative"]
BITS = {"bitwise_and", "bitwise_or", "bitwise_xor"}
LOGICAL = {"logical_and", "logical_or", "logical_xor"}
# Fast paths: JAX reduces these with a reduction (sum, max, reduce_and, logsumexp, ...),
# which takes a tuple of axes; the generic loop (subtract, user ufuncs) does not.
TUPLE_AXES = set(BINARY) - {"subtract"}

I32 = np.array([[3, 5, 6], [12, 9, 10]], np.int32)
F32 = np.array([[0.5, -1.5, 2.], [1.25, 0., -0.75]], np.float32)
MASK = np.array([True, False, True])


def _operand(name):
    return I32 if name in BITS else F32


def _user(np_):
    # A user ufunc with no identity: every method takes JAX's generic path.
    return np_.frompyfunc(lambda a, b: a * b + 1, 2, 1)


def test_instances_are_jaxs():
    assert [n for n in dir(jnp) if isinstance(getattr(jnp, n), jnp.ufunc)] == NAMES
    assert [n for n in dir(mnp) if isinstance(getattr(mnp, n), mnp.ufunc)] == NAMES
    for name in NAMES:
        ours, theirs = getattr(mnp, name), getattr(jnp, name)
        got = (ours.nin, ours.nout, ours.nargs, ours.identity, ours.__name__, repr(ours))
        assert got == (theirs.nin, theirs.nout, theirs.nargs, theirs.identity,
                       theirs.__name__, repr(theirs)), name
    user = mnp.ufunc(np.add, 2, 1, name="plus", identity=0)
    assert (user.nargs, user.__name__, repr(user)) == (2, "plus", "<jnp.ufunc 'plus'>")
    assert user == mnp.ufunc(np.add, 2, 1, name="plus", identity=0) != mnp.add
    assert hash(user) == hash(mnp.ufunc(np.add, 2, 1, name="plus", identity=0))


def test_call():
    cases = [(lambda np_, x, n=n: getattr(np_, n)(x), (F32,)) if n == "negative" else
             (lambda np_, x, y, n=n: getattr(np_, n)(x, y),
              (_operand(n), 2 if n in BITS else 1.5)) for n in NAMES]
    cases.append((lambda np_, x, y: _user(np_)(x, y), (F32, F32)))
    cases.append((lambda np_, x: np_.frompyfunc(lambda a: (a + 1, a * 2), 1, 2)(x), (F32,)))
    fn, args = together(cases)
    check(fn, *args)


def _ufunc(np_, name):
    return _user(np_) if name == "user" else getattr(np_, name)


def _per_instance(names, case, scalar=False):
    """Check `case(np_, name, x[, s])` for every instance in one program per library
    (each instance's results are still compared on their own)."""
    cases = [(lambda np_, *a, n=n: case(np_, n, *a),
              (_operand(n), *((2 if n in BITS else 0.5,) if scalar else ())))
             for n in names]
    fn, args = together(cases)
    check(fn, *args)


def _reduce_case(np_, name, x):
    r = _ufunc(np_, name).reduce
    out = [r(x), r(x, axis=None, keepdims=True),
           r(x, axis=-1, initial=2 if name in BITS else 2.)]
    if name in TUPLE_AXES:
        out.append(r(x, axis=(0, 1)))
    # (JAX ignores logaddexp's dtype; max/min's: extremum_ufunc_reduce_refuses_dtype)
    if name not in LOGICAL | {"logaddexp", "logaddexp2", "maximum", "minimum"}:
        out.append(r(x, dtype=np.float32 if name not in BITS else np.int8))
    if _ufunc(np_, name).identity is not None:
        out.append(r(x, axis=1, where=MASK, keepdims=True))
    else:
        out.append(r(x, axis=1, where=MASK, initial=0, keepdims=True))
    return out


def _accumulate_case(np_, name, x):
    u = _ufunc(np_, name)
    return u.accumulate(x), u.accumulate(x, axis=-1, dtype=(
        np.int8 if name in BITS else np.float32))


def _outer_case(np_, name, x, s):
    u = _ufunc(np_, name)
    return u.outer(x, x[0]), u.outer(x[1], s)   # a weak scalar stays weak


IDX = np.array([0, 2, 0])


def _at_case(np_, name, x, v):
    u = _ufunc(np_, name)
    if name == "negative":
        return u.at(x, (1, IDX), inplace=False), u.at(x, 0, inplace=False)
    return (u.at(x, (np.array([[1], [0]]), IDX), v, inplace=False),
            u.at(x, (IDX,), x[1], inplace=False))


def _reduceat_case(np_, name, x):
    u = _ufunc(np_, name)
    return u.reduceat(x, np.array([0, 2, 1]), axis=1), u.reduceat(x, np.array([1, 0]))


# One test per method, each over every instance (and a user ufunc, which takes the
# generic paths), traced and under jit; `test_eager` runs one call of each path.
def test_reduce():
    _per_instance(BINARY + ["user"], _reduce_case)


def test_accumulate():
    _per_instance(BINARY + ["user"], _accumulate_case)


def test_outer():
    _per_instance(BINARY + ["user"], _outer_case, scalar=True)


def test_at():
    _per_instance(NAMES + ["user"], _at_case, scalar=True)


def test_reduceat():
    _per_instance(BINARY + ["user"], _reduceat_case)


def test_at_of_bools():
    # add.at / multiply.at count bools as 0/1 int32 and cast back.
    b = np.array([True, False, False])
    check(lambda np_, b: (np_.add.at(b, np.array([1, 1]), True, inplace=False),
                          np_.multiply.at(b, 0, False, inplace=False),
                          np_.logical_xor.at(b, np.array([2, 2]), True, inplace=False)),
          b)


EAGER = {   # each a compiled program of its own, eagerly: one per kind of path
    "fast reduce": lambda np_: np_.add.reduce(F32, axis=1),
    "logsumexp reduce": lambda np_: np_.logaddexp.reduce(F32, where=MASK),
    "bits reduce": lambda np_: np_.bitwise_xor.reduce(I32, axis=None),
    "generic reduce": lambda np_: np_.subtract.reduce(F32, axis=1, keepdims=True),
    "user call": lambda np_: _user(np_)(F32, 2.),
    "generic accumulate": lambda np_: np_.maximum.accumulate(F32, axis=1),
    "scatter at": lambda np_: np_.add.at(F32, (0, IDX), 1., inplace=False),
    "generic at": lambda np_: np_.logaddexp.at(F32, (0, IDX), 1., inplace=False),
    "reduceat": lambda np_: np_.multiply.reduceat(F32, np.array([0, 2]), axis=1),
    "outer": lambda np_: np_.minimum.outer(F32[0], F32[1]),
}


def test_eager():
    for name, case in EAGER.items():
        ours, theirs = case(mnp), case(jnp)
        assert isinstance(ours, jax.Array), name
        assert ours.weak_type == theirs.weak_type, name
        assert_values_close(ours, theirs)


def test_grad_and_vmap():
    def loss(np_, x):
        return (np_.add.reduce(x, axis=None) + np_.logaddexp.reduce(x, axis=1).sum()
                + np_.multiply.outer(x[0], x[1]).sum() + np_.maximum.reduce(x).sum()
                + np_.add.at(x, (0, np.array([1, 1])), x[1, :2], inplace=False).sum()
                + np_.multiply.accumulate(x, axis=1).sum()
                + _user(np_).reduce(x).sum() + np_.subtract.reduceat(x, np.array([0, 2]),
                                                                     axis=1).sum())
    assert_values_close(minijax.jit(minijax.grad(lambda x: loss(mnp, x)))(F32),
                        jax.jit(jax.grad(lambda x: loss(jnp, x)))(F32))

    def per_row(np_, r):
        return (np_.add.reduce(r), np_.add.accumulate(r), np_.maximum.outer(r, r),
                np_.add.at(r, np.array([0, 0]), 1., inplace=False), _user(np_).reduce(r),
                np_.minimum.reduceat(r, np.array([0, 1])))
    assert_values_close(minijax.jit(minijax.vmap(lambda r: per_row(mnp, r)))(F32),
                        jax.jit(jax.vmap(lambda r: per_row(jnp, r)))(F32))


def _raises(fn, *args, **kwargs):
    with pytest.raises(Exception) as theirs:
        fn(jnp, *args, **kwargs)
    with pytest.raises(type(theirs.value)) as ours:
        fn(mnp, *args, **kwargs)
    return str(ours.value), str(theirs.value)


ERRORS = {
    "at inplace": lambda np_: np_.add.at(F32, 0, 1.),
    "call out": lambda np_: np_.add(F32, F32, out=F32),
    "call where": lambda np_: np_.add(F32, F32, where=MASK),
    # (an array `out` is refused by JAX's jit first: ufunc_reduce_out_array_...)
    "reduce out": lambda np_: np_.add.reduce(F32, out=1),
    "accumulate out": lambda np_: np_.add.accumulate(F32, out=F32),
    "reduce of unary": lambda np_: np_.negative.reduce(F32),
    "accumulate of unary": lambda np_: np_.negative.accumulate(F32),
    "outer of unary": lambda np_: np_.negative.outer(F32, F32),
    "reduceat of unary": lambda np_: np_.negative.reduceat(F32, np.array([0])),
    "where without identity": lambda np_: np_.maximum.reduce(F32, where=MASK),
    "where not bool": lambda np_: np_.add.reduce(F32, where=np.ones(3)),
    "list operand": lambda np_: np_.add.reduce([1., 2.]),
    "bitwise of floats": lambda np_: np_.bitwise_or.reduce(F32),
    "empty, no identity": lambda np_: np_.subtract.reduce(np.zeros((0, 2), np.float32)),
    "generic tuple of axes": lambda np_: np_.subtract.reduce(F32, axis=(0, 1)),
    "accumulate axis None": lambda np_: np_.subtract.accumulate(F32, axis=None),
    "reduceat of a scalar": lambda np_: np_.subtract.reduceat(np.float32(1), np.array([0])),
    "reduceat 2-d indices": lambda np_: np_.add.reduceat(F32, np.zeros((1, 1), np.int32)),
    "at list index": lambda np_: np_.subtract.at(F32, [0, 1], 1., inplace=False),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors(case):
    _raises(ERRORS[case])


def test_from_dlpack():
    x = np.arange(6, dtype=np.int16).reshape(2, 3)
    ours, theirs = mnp.from_dlpack(x), jnp.from_dlpack(x)
    assert_values_close(ours, theirs)
    assert_values_close(mnp.from_dlpack(x, copy=True), theirs)
    assert_values_close(minijax.jit(lambda a: mnp.add.reduce(a))(mnp.from_dlpack(x)),
                        jnp.add.reduce(theirs))


@pins("ufunc_at_refuses_slice_indices")
def test_at_with_a_slice():
    with pytest.raises(TypeError):
        jnp.add.at(F32, (slice(None), 1), 1., inplace=False)
    for name in ("add", "subtract", "maximum"):   # a fast path and the generic one
        got = getattr(mnp, name).at(F32, (slice(None), 1), 1., inplace=False)
        assert_values_close(got, getattr(jnp, name).at(F32, (np.array([0, 1]), 1), 1.,
                                                       inplace=False))


@pins("extremum_ufunc_reduce_refuses_dtype")
def test_extremum_reduce_dtype():
    with pytest.raises(TypeError):
        jnp.maximum.reduce(F32, dtype=np.int32)
    for name in ("maximum", "minimum"):
        assert_values_close(getattr(mnp, name).reduce(F32, dtype=np.int32),
                            getattr(jnp, name).reduce(F32.astype(np.int32)))


@pins("logaddexp_reduce_with_an_int_initial_fails")
def test_logaddexp_reduce_int_initial():
    with pytest.raises(AssertionError):
        jnp.logaddexp.reduce(F32, initial=2)
    assert_values_close(mnp.logaddexp.reduce(F32, initial=2),
                        jnp.logaddexp.reduce(F32, initial=2.))


@pins("ufunc_reduce_out_array_is_an_unhashable_static")
def test_reduce_out_array():
    with pytest.raises(ValueError):
        jnp.add.reduce(F32, out=F32)
    with pytest.raises(NotImplementedError, match="out argument of add.reduce"):
        mnp.add.reduce(F32, out=F32)
