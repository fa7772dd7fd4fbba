"""`minijax.debug.print` / `debug.callback`: an ordered effect that prints exactly once
per evaluation -- under jit, in loop bodies (once per iteration), in the branch taken,
per lane under vmap, and once per forward evaluation under jvp/grad."""
import jax
import numpy as np
import pytest

import minijax
from minijax import lax
from minijax.testing import check_jaxpr
from minijax.transforms import dce_jaxpr
from tests.control_flow_helpers import MJ, JX


def printed(capsys, run):
    """The lines `run()` prints (after every pending host callback has run)."""
    capsys.readouterr()
    run()
    jax.effects_barrier()
    return capsys.readouterr().out.splitlines()


def program(ns):
    def f(x):
        def body(c, xi):
            ns.jax.debug.print("scan c={c} x={}", xi, c=c)
            return c * xi, c
        c, _ = ns.lax.scan(body, x, np.arange(1.0, 4.0, dtype=np.float32))
        c = ns.lax.cond(c > 0, lambda v: (ns.jax.debug.print("pos {}", v), v * 2.0)[1],
                        lambda v: (ns.jax.debug.print("neg {}", v), v)[1], c)
        return ns.lax.while_loop(lambda v: (v < 50.0) & (v > -50.0),
                                 lambda v: (ns.jax.debug.print("while {}", v), v * 3.0)[1], c)
    return f


EXPECTED = ["scan c=1.0 x=1.0", "scan c=1.0 x=2.0", "scan c=2.0 x=3.0", "pos 6.0",
            "while 12.0", "while 36.0"]


def test_eager_and_jit_print_once_per_iteration_and_only_the_branch_taken(capsys):
    x = np.float32(1.0)
    assert printed(capsys, lambda: program(MJ)(x)) == EXPECTED
    assert printed(capsys, lambda: minijax.jit(program(MJ))(x)) == EXPECTED
    # JAX prints the same under jit
    assert printed(capsys, lambda: jax.jit(program(JX))(x)) == EXPECTED


def test_jvp_and_grad_print_once_per_forward_evaluation(capsys):
    x, t = np.float32(1.0), np.float32(1.0)
    assert printed(capsys, lambda: minijax.jvp(program(MJ), (x,), (t,))) == EXPECTED
    assert printed(capsys, lambda: minijax.jit(
        lambda x: minijax.jvp(program(MJ), (x,), (t,)))(x)) == EXPECTED
    # reverse mode: no while loop; the prints of the forward pass, once, none backward
    no_while = lambda ns: lambda x: ns.lax.scan(  # noqa: E731
        lambda c, xi: (ns.jax.debug.print("c={}", c), (c * xi, None))[1], x,
        np.arange(1.0, 4.0, dtype=np.float32))[0]
    expected = ["c=1.0", "c=1.0", "c=2.0"]
    assert printed(capsys, lambda: minijax.grad(no_while(MJ))(x)) == expected
    assert printed(capsys, lambda: minijax.jit(minijax.grad(no_while(MJ)))(x)) == expected
    assert printed(capsys, lambda: jax.grad(no_while(JX))(x)) == expected


def test_linearize_of_while_prints_once(capsys):
    f = lambda x: lax.while_loop(lambda v: v < 10.0,  # noqa: E731
                                 lambda v: (minijax.debug.print("w {}", v), v * 2.0)[1], x)
    assert printed(capsys, lambda: minijax.linearize(f, np.float32(1.0))) == [
        "w 1.0", "w 2.0", "w 4.0", "w 8.0"]


def test_vmap_prints_per_lane_and_only_the_branch_each_lane_takes(capsys):
    xs = np.array([1.0, -1.0], np.float32)
    lines = printed(capsys, lambda: minijax.vmap(program(MJ))(xs))
    assert lines[:6] == ["scan c=1.0 x=1.0", "scan c=-1.0 x=1.0", "scan c=1.0 x=2.0",
                         "scan c=-1.0 x=2.0", "scan c=2.0 x=3.0", "scan c=-2.0 x=3.0"]
    assert lines[6:8] == ["pos 6.0", "neg -6.0"]            # each lane its own branch
    assert lines[8:] == ["while 12.0", "while 36.0", "while -6.0", "while -18.0"]


def test_jax_prints_both_branches_for_every_lane_under_vmap(capsys):
    # The divergence: with a batched predicate JAX runs (and prints) both branches for
    # every example; minijax prints only the branch each example takes (test above).
    f = lambda ns: lambda x: ns.lax.cond(  # noqa: E731
        x > 0, lambda v: (ns.jax.debug.print("pos {}", v), v)[1],
        lambda v: (ns.jax.debug.print("neg {}", v), v)[1], x)
    xs = np.array([1.0, -2.0], np.float32)
    assert printed(capsys, lambda: jax.vmap(f(JX))(xs)) == [
        "neg 1.0", "neg -2.0", "pos 1.0", "pos -2.0"]
    assert printed(capsys, lambda: minijax.vmap(f(MJ))(xs)) == ["pos 1.0", "neg -2.0"]
    from minijax.divergences import DIVERGENCES_BY_NAME
    record = DIVERGENCES_BY_NAME["vmap_batched_cond_prints_both_branches"]
    assert record.jax_version == "0.10.2"  # the JAX behaviour above was seen on it


def test_pytree_values_and_callback(capsys):
    def f(x):
        minijax.debug.print("{a} {b[0]} {0}", x, a={"k": x}, b=[x * 2.0])
        return x
    expected = ["{'k': Array(1.5, dtype=float32)} 3.0 1.5"]    # what JAX prints too
    assert printed(capsys, lambda: minijax.jit(f)(np.float32(1.5))) == expected
    assert printed(capsys, lambda: f(np.float32(1.5))) == expected
    seen = []
    g = lambda x: (minijax.debug.callback(lambda v, w: seen.append((float(v), float(w))),  # noqa: E731
                                          x, w=x + 1.0), x)[1]
    minijax.jit(g)(np.float32(2.0))
    jax.effects_barrier()
    assert seen == [(2.0, 3.0)]


def test_debug_print_is_an_ordered_effect_that_dce_keeps_and_round_trips():
    def f(x):
        minijax.debug.print("x={}", x * 2.0)
        return x + 1.0
    closed = minijax.make_jaxpr(f)(np.float32(1))
    check_jaxpr(closed)
    text = str(closed)
    assert "debug_print[" in text and "fmt='x={}'" in text
    pruned = dce_jaxpr(closed).jaxpr
    assert [e.primitive.name for e in pruned.jaxpr.eqns] == ["mul", "debug_print", "add"]
    # inside a loop body the effect makes the whole loop effectful
    loop = minijax.make_jaxpr(lambda x: lax.fori_loop(0, 2, lambda i, v: f(v), x))(np.float32(1))
    check_jaxpr(loop)
    assert any(e.effects for e in loop.jaxpr.eqns if e.primitive.name == "scan")
    assert [e.primitive.name for e in dce_jaxpr(loop, [False]).jaxpr.jaxpr.eqns] == ["scan"]


def test_print_format_errors_are_clear():
    with pytest.raises(TypeError, match="format"):
        minijax.debug.print(3)


def test_eager_print_and_callback_keep_weak_types_as_jax(capsys):
    # JAX's eager debug.print / debug.callback get a Python number as a weakly typed
    # array (a compiled program would drop the weak type); under jit they are strong.
    def run(ns):
        ns.jax.debug.print("{} {z}", 1.5, z={"a": 3})
        ns.jax.debug.callback(lambda *a: print([repr(v) for v in a]), 2.0,
                              np.ones(2, np.float32), np.float32(3), True)
        ns.jax.jit(lambda x: ns.jax.debug.print("{z} {x}", z={"a": 3}, x=x))(2)
    mine = printed(capsys, lambda: run(MJ))
    theirs = printed(capsys, lambda: run(JX))
    assert mine == theirs
    assert mine[0] == "1.5 {'a': Array(3, dtype=int32, weak_type=True)}"
    assert "Array(2., dtype=float32, weak_type=True)" in mine[1]


def test_an_eager_print_comes_after_the_prints_of_a_dispatched_program(capsys):
    f = minijax.jit(lambda x: lax.fori_loop(
        0, 3, lambda i, c: (minijax.debug.print("in {}", i), c + x)[1], x))
    lines = printed(capsys, lambda: (f(1.0), minijax.debug.print("after")))
    assert lines == ["in 0", "in 1", "in 2", "after"]


def _callback_program(lib):
    """debug.callback in JAX's recommended two-call form, and with leaves that are no
    array values (a string, a function), which reach the callback as they are."""
    got = []

    @lib.jit
    def f(x):
        lib.debug.callback(ordered=True)(lambda v, *, k: got.append(("two", float(v), k)),
                                         x, k=2)
        lib.debug.callback(lambda tag, v, fn: got.append((tag, float(v), fn(2))),
                           "tag", x, lambda a: a + 1, ordered=True)
        return x * 2
    f(1.0)
    f(3.0)
    lib.grad(f)(5.0)
    lib.debug.callback(lambda tag, v: got.append((tag, float(v))), "eager", np.float32(7))
    lib.effects_barrier()
    return [tuple(int(v) if hasattr(v, "dtype") else v for v in entry) for entry in got]


def test_callback_two_call_form_and_static_leaves_as_jax():
    assert _callback_program(minijax) == _callback_program(jax)
    with pytest.raises(TypeError):
        jax.debug.callback(None, 1)
    with pytest.raises(TypeError, match="two-call form"):
        minijax.debug.callback(None, 1)


def test_print_formats_leaves_that_are_no_values_as_jax(capsys):
    # jax.debug.print("{name}: {x}", name="layer1", x=x) was minijax's TypeError
    # ("value 0 of type str is not a valid minijax value").
    def run(lib):
        def f(x):
            lib.debug.print("{} {name}: {x} {n}", "tag", name="layer1", x=x, n=None)
            return x * 2
        lib.jit(f)(1.5)
        lib.vmap(f)(np.arange(2, dtype=np.float32))
        lib.grad(f)(3.0)
        lib.effects_barrier()
        return capsys.readouterr().out
    assert run(minijax) == run(jax) == "".join(
        f"tag layer1: {v} None\n" for v in ("1.5", "0.0", "1.0", "3.0"))
