"""`minijax.experimental.checkify` against `jax.experimental.checkify`: each program runs
on both libraries and the error messages (`Error.get()`), the exceptions and the
values must be the same -- user checks with runtime format arguments, the automatic
NaN / division / index checks and which one is reported first, under jit, vmap
(batched errors), grad, scan, cond and while_loop, `check_error` inside `checkify`, the
`Error` pytree, checks inside `custom_jvp` and `custom_vjp`
functions, and the mistakes JAX rejects (more in test_experimental_checkify_more.py)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify as jax_checkify

import minijax
import minijax.numpy as mnp
from minijax.experimental import checkify
from minijax.testing import JAX_VERSION, assert_trees_match

SIDES = {"minijax": (minijax, mnp, checkify), "jax": (jax, jnp, jax_checkify)}
X = np.array([0.5, 3., 1., 5.], np.float32)


def both(program):
    """`program(lib, np_lib, checkify_module)` on minijax and on JAX: each result, or
    the (type name, message) of what it raised."""
    results = []
    for side in ("minijax", "jax"):
        try:
            results.append(program(*SIDES[side]))
        except Exception as e:  # noqa: BLE001 -- the exception is what is compared
            results.append((type(e).__name__, str(e)))
    return results


def assert_same(program):
    """Messages (and other text) equal, arrays matching as `assert_trees_match` asks.
    Weak types are not compared: minijax's `scan` outputs are strong where JAX's are
    weak, with or without checkify."""
    actual, expected = both(program)
    is_leaf = lambda v: v is None or isinstance(v, str)
    actual_leaves, actual_tree = jax.tree_util.tree_flatten(actual, is_leaf=is_leaf)
    expected_leaves, expected_tree = jax.tree_util.tree_flatten(expected, is_leaf=is_leaf)
    assert actual_tree == expected_tree, (actual, expected)
    for a, e in zip(actual_leaves, expected_leaves):
        if is_leaf(e) or isinstance(e, int):
            assert a == e
        else:
            assert_trees_match(a, e, check_weak_types=False)
    return actual


def messages(error, out):
    return error.get(), out


def test_user_check_with_format_arguments_eager_and_under_jit():
    def program(lib, np_lib, ck):
        def f(x, y):
            ck.check(x > 0, "{x} needs to be positive, y={}", y, x=x)
            return np_lib.log(x) + y
        # checkify closes over its arguments, so they go in as arrays (a NumPy scalar
        # would make `x > 0` a NumPy bool, which `check` refuses, on both sides).
        bad = ck.checkify(f)(np_lib.asarray(-3., np.float32), np_lib.asarray(2))
        good = lib.jit(ck.checkify(f))(np.float32(2.), np.int32(1))
        return messages(*bad), messages(*lib.jit(ck.checkify(f))(np.float32(-1.), 4)), \
            messages(*good)
    (bad, bad_jit, good) = assert_same(program)
    assert bad[0] == "-3.0 needs to be positive, y=2 (`check` failed)"
    assert good[0] is None


@pytest.mark.parametrize("errors", ["all_checks", "float_checks", "nan_checks",
                                    "div_checks", "index_checks", "user_checks"])
def test_automatic_checks_report_the_first_enabled_failure(errors):
    # Three failures in program order: an out-of-bounds index, a NaN from sqrt, a
    # division by zero; each set of categories reports the first it covers.
    def program(lib, np_lib, ck):
        def f(x, i):
            y = x[i] + np_lib.sqrt(x - 1.)
            return y / (x - 1.)
        error, out = lib.jit(ck.checkify(f, errors=getattr(ck, errors)))(X, 6)
        return error.get(), out
    assert_same(program)


def test_index_checks_of_gather_scatter_and_dynamic_slice():
    def program(lib, np_lib, ck):
        def gather(x):
            return x[np_lib.array([1, 9, 2])]

        def scatter(x):
            return x.at[np_lib.array([1, -2, 7])].set(1.)

        def dyn(x, i):
            return lib.lax.dynamic_update_slice(x, np_lib.ones(2, x.dtype), (i,))
        run = lambda f, *a: messages(*lib.jit(ck.checkify(f, errors=ck.index_checks))(*a))
        return run(gather, X), run(scatter, X), run(dyn, X, 3), run(dyn, X, 2)
    gather, scatter, dyn_bad, dyn_good = assert_same(program)
    assert "index 9 is out of bounds for axis 0 with size 4" in gather[0]
    assert dyn_good[0] is None


def test_vmap_of_checkify_reports_each_mapped_index():
    def program(lib, np_lib, ck):
        def f(x):
            ck.check(x < 2, "big {}", x)
            return 1. / x
        error, out = lib.vmap(ck.checkify(f, errors=ck.all_checks))(X - 0.5)
        return error.get(), out
    message, _ = assert_same(program)
    assert message.splitlines() == ["at mapped index 0: division by zero",
                                    "at mapped index 1: big 2.5 (`check` failed)",
                                    "at mapped index 3: big 4.5 (`check` failed)"]


def test_checkify_of_vmap_and_of_grad():
    def program(lib, np_lib, ck):
        def f(x):
            ck.check(np_lib.all(x < 4), "some x is big")
            return np_lib.sum(np_lib.sin(x) * x)
        of_vmap = ck.checkify(lib.vmap(lambda x: np_lib.log(x - 1.)), errors=ck.nan_checks)
        return (messages(*ck.checkify(lib.grad(f))(X)), messages(*of_vmap(X)),
                lib.grad(lambda x: ck.checkify(f)(x)[1])(X))
    assert_same(program)


@pytest.mark.parametrize("kind", ["custom_jvp", "custom_vjp"])
def test_checks_inside_a_custom_function_keep_its_rule(kind):
    # The NaN is made inside the custom function; the gradient is the rule's (7 times
    # the incoming tangent or cotangent), not the body's derivative.
    def program(lib, np_lib, ck):
        def body(x, n):
            return np_lib.sqrt(x) * n
        f = getattr(lib, kind)(body)
        if kind == "custom_jvp":
            f.defjvp(lambda primals, tangents: (f(*primals), 7. * tangents[0]))
        else:
            f.defvjp(lambda x, n: (f(x, n), None), lambda _, g: (7. * g, None))
        checked = ck.checkify(lambda x: f(x, 3) + 1., errors=ck.nan_checks)
        return (messages(*lib.jit(checked)(np.float32(-1.))),
                lib.grad(lambda x: checked(x)[1])(np.float32(4.)))
    (message, _), grad = assert_same(program)
    assert message == "nan generated by primitive: sqrt." and grad == 7.


def test_grad_of_checkified_softplus():
    # Registry entry "checkify_grad_of_custom_jvp_with_nan_checks_crashes": JAX fails
    # inside; minijax differentiates through softplus's rule.
    def loss(lib, np_lib, ck):
        checked = ck.checkify(lambda x: np_lib.sum(lib.nn.softplus(x)),
                              errors=ck.nan_checks)
        return lib.grad(lambda x: checked(x)[1])(X)
    with pytest.raises(ValueError, match="foreach"):
        loss(*SIDES["jax"])
    assert_trees_match(loss(*SIDES["minijax"]), jax.nn.sigmoid(X))


def test_checks_inside_scan_cond_and_while_loop():
    def program(lib, np_lib, ck):
        def scanned(xs):
            def body(c, x):
                ck.check(x < 4, "x={} at carry {}", x, c)
                return c + np_lib.log(x), c
            return lib.lax.scan(body, np.float32(0.), xs)

        def branched(x):
            return lib.lax.cond(x > 0, lambda x: np_lib.sqrt(x - 2.), lambda x: x / 0., x)

        def looped(x):
            def body(x):
                ck.check(x < 10, "too big: {}", x)
                return x * 2
            return lib.lax.while_loop(lambda x: np_lib.log(x) < 3., body, x)
        run = lambda f, *a: messages(*lib.jit(ck.checkify(f, errors=ck.all_checks))(*a))
        return (run(scanned, X), run(scanned, X[:3]), run(branched, np.float32(1.)),
                run(branched, np.float32(-1.)), run(branched, np.float32(3.)),
                run(looped, np.float32(1.)), run(looped, np.float32(-1.)))
    results = assert_same(program)
    assert results[0][0] == "x=5.0 at carry 0.40546512603759766 (`check` failed)"
    assert results[6][0] == "nan generated by primitive: log."


def test_check_error_inside_checkify_and_the_error_pytree():
    def program(lib, np_lib, ck):
        def inner(x):
            ck.check(x[0] > 5, "inner {}", x[0])   # x is an array: see outer's call
            return x

        def outer(x):
            error, _ = ck.checkify(inner)(x)
            ck.check(x[1] > 5, "outer")
            ck.check_error(error)
            return x
        error, _ = lib.jit(ck.checkify(outer))(X)   # traced, so the predicates are too
        structure = lib.tree_util.tree_structure(error)
        with pytest.raises(ck.JaxRuntimeError) as raised:
            error.throw()
        fine, _ = ck.checkify(outer)(np_lib.asarray(X + 6.))
        fine.throw()
        return error.get(), str(raised.value), structure.num_leaves, str(fine)
    actual, expected = both(program)
    assert actual[0] == actual[1] == "outer (`check` failed)"
    assert actual[2:] == expected[2:] and actual[3] == "Error(None)"
    # Registry entry "checkify_check_error_codes_collide": JAX 0.10 numbers a
    # discharged error's codes from 0 again, so the inner check ties and wins.
    first = "outer" if JAX_VERSION >= (0, 11) else "inner 0.5"
    assert expected[:2] == (f"{first} (`check` failed)",) * 2


def test_check_outside_checkify():
    def program(lib, np_lib, ck):
        ck.check(np_lib.array(True), "fine")
        ck.debug_check(np_lib.array(False), "dropped outside checkify")
        lib.jit(lambda x: ck.debug_check(x > 0, "dropped"))(np.float32(-1.))
        error, _ = ck.checkify(lambda x: ck.debug_check(x > 0, "debug {}", x))(
            np_lib.asarray(-1., np.float32))
        out = [error.get()]
        for bad in (lambda: ck.check(np_lib.array(False), "eager {}", np_lib.array(3)),
                    lambda: lib.jit(lambda x: ck.check(x > 0, "in jit"))(np.float32(1.))):
            try:
                bad()
            except (ck.JaxRuntimeError, ValueError) as e:
                out.append((type(e).__name__, str(e)))
        return out
    debug, eager, in_jit = assert_same(program)
    assert debug == "debug -1.0 (`check` failed)"
    assert eager == ("JaxRuntimeError", "eager 3 (`check` failed)")
    assert in_jit[0] == "ValueError" and "not functionalized" in in_jit[1]


@pytest.mark.parametrize("bad", [
    pytest.param(lambda np_lib, ck: ck.check(np_lib.array([True]), "m"), id="array-pred"),
    pytest.param(lambda np_lib, ck: ck.check(np.bool_(True), "m"), id="numpy-pred"),
    pytest.param(lambda np_lib, ck: ck.debug_check(1, "m"), id="int-pred"),
    pytest.param(lambda np_lib, ck: ck.check(True, "m {}", 3), id="python-fmt-arg"),
    pytest.param(lambda np_lib, ck: ck.check_error("error"), id="not-an-error"),
])
def test_bad_input_raises_as_jax(bad):
    mine, theirs = both(lambda lib, np_lib, ck: bad(np_lib, ck))
    assert mine == theirs and mine[0] == "TypeError"
