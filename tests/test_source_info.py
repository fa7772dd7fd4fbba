"""Source info: each equation remembers the user's line that made it, through every
pass, as JAX does -- and it stays out of the text form and out of equality."""
from __future__ import annotations

import functools
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.ir import parse_jaxpr, pp_jaxpr
from minijax.ir.core import Eqn
from minijax.transforms.dce import dce_jaxpr
from minijax.transforms.discharge import discharge_jaxpr

HERE = __file__
LINES = open(HERE).read().splitlines()


def _at(snippet, start):
    """`file:line:column (` for `start` in the line of this file holding `snippet`."""
    line = next(i for i, text in enumerate(LINES) if snippet in text)
    column = LINES[line].index(start)
    return f"{HERE}:{line + 1}:{column}"


def _program(np_):
    def f(x):
        y = np_.sin(x)                              # line A
        return np_.cos(y) * 2.0                     # line B
    return f


A = _at("y = np_.sin(x)                              # line A", "np_.sin")
B = _at("return np_.cos(y) * 2.0                     # line B", "np_.cos")


def _ours(closed):
    return [(e.primitive.name, str(e.source_info)) for e in closed.jaxpr.eqns]


def _jax(closed):
    # JAX's printer shows each equation's source as a trailing comment.
    text = closed.pretty_print(source_info=True, name_stack=False)
    return [m.groups() for m in re.finditer(r"= ([a-z_]+)\b[^\n#]*# (.*)", text)]


def test_traced_equations_name_the_users_line_as_jax_does():
    ours = _ours(minijax.make_jaxpr(_program(mnp))(1.0))
    theirs = _jax(jax.make_jaxpr(_program(jnp))(1.0))
    assert ours == theirs
    where = "(_program.<locals>.f)"
    assert ours == [("sin", f"{A} {where}"), ("cos", f"{B} {where}"), ("mul", f"{B} {where}")]
    info = minijax.make_jaxpr(_program(mnp))(1.0).jaxpr.eqns[0].source_info
    assert (info.file, info.function) == (HERE, "_program.<locals>.f")
    assert f"{HERE}:{info.line}:{info.column}" == A


@pytest.mark.parametrize("transform", ["grad", "vjp_pullback", "grad_of_jit"])
def test_autodiff_keeps_each_equations_line(transform):
    # linearize (jvp + partial eval) and transpose: every equation of the gradient is
    # attributed to the line whose operation it differentiates, as in JAX.
    if transform == "grad":
        ours = minijax.make_jaxpr(minijax.grad(_program(mnp)))(1.0)
        theirs = jax.make_jaxpr(jax.grad(_program(jnp)))(1.0)
        assert sorted(_ours(ours)) == sorted(_jax(theirs))
        return
    if transform == "vjp_pullback":
        _, pullback = minijax.vjp(_program(mnp), 1.0)
        closed = minijax.make_jaxpr(pullback)(1.0)
    else:
        closed = minijax.make_jaxpr(minijax.grad(minijax.jit(_program(mnp))))(1.0)
        closed = closed.jaxpr.eqns[-1].params["jaxpr"]            # the transposed body
    sources = {str(e.source_info).split(" ")[0] for e in _all_eqns(closed)}
    assert sources and sources <= {A, B}


def _all_eqns(closed):
    jaxpr = getattr(closed, "jaxpr", closed)
    for eqn in jaxpr.eqns:
        yield eqn
        for value in eqn.params.values():
            if hasattr(value, "eqns"):
                yield from _all_eqns(value)


def test_vmap_and_jit_bodies_keep_lines():
    f = _program(mnp)
    for closed in (minijax.make_jaxpr(minijax.vmap(f))(np.ones(3, np.float32)),
                   minijax.make_jaxpr(minijax.jit(f))(1.0).jaxpr.eqns[0].params["jaxpr"],
                   minijax.make_jaxpr(minijax.vmap(minijax.jit(f)))(np.ones(3, np.float32))):
        inner = [e for e in _all_eqns(closed) if e.primitive.name != "jit"]
        assert [str(e.source_info).split(" ")[0] for e in inner] == [A, B, B]


def test_remat_recomputation_keeps_lines():
    g = minijax.grad(minijax.checkpoint(_program(mnp)))
    closed = minijax.make_jaxpr(g)(1.0)
    remat = [e for e in closed.jaxpr.eqns if e.primitive.name == "remat"][0]
    body = [str(e.source_info).split(" ")[0] for e in remat.params["jaxpr"].eqns]
    assert body and set(body) <= {A, B}
    assert A in body and B in body


def test_discharge_and_dce_keep_lines():
    def f(r, x):
        r[1] = x                                    # line R
        both = minijax.jit(lambda x: (mnp.sin(x), mnp.cos(x)))(x)   # line S
        return both[0] * 2.0
    R = _at("r[1] = x                                    # line R", "r[1]")
    S = _at("both = minijax.jit(lambda x: (mnp.sin(x), mnp.cos(x)))(x)   # line S",
            "minijax.jit")
    closed = minijax.make_jaxpr(f)(minijax.new_ref(np.zeros(3, np.float32)), 1.0)
    discharged = discharge_jaxpr(closed).jaxpr.jaxpr
    made = [e for e in discharged.eqns if e.primitive.name not in ("jit", "mul")]
    assert made and {str(e.source_info).split(" ")[0] for e in made} == {R}
    # DCE prunes the jit's unused output: a new equation, from the same line.
    pruned = dce_jaxpr(discharged, [True, False]).jaxpr
    jit = [e for e in pruned.eqns if e.primitive.name == "jit"][0]
    assert len(jit.outputs) == 1 and str(jit.source_info).startswith(S)


def test_frames_of_minijax_jax_and_the_standard_library_are_skipped():
    def f(xs):
        ys = jax.tree_util.tree_map(lambda x: mnp.sin(x), xs)          # line T
        return functools.reduce(lambda a, b: a + b, ys)              # line U
    closed = minijax.make_jaxpr(f)([1.0, 2.0])
    where = [str(e.source_info) for e in closed.jaxpr.eqns]
    T = _at("ys = jax.tree_util.tree_map(lambda x: mnp.sin(x), xs)", "mnp.sin")
    U = _at("return functools.reduce(lambda a, b: a + b, ys)", "a + b")
    assert where == [f"{T} (test_frames_of_minijax_jax_and_the_standard_library_are_skipped"
                     f".<locals>.f.<locals>.<lambda>)"] * 2 + \
        [f"{U} (test_frames_of_minijax_jax_and_the_standard_library_are_skipped"
         f".<locals>.f.<locals>.<lambda>)"]


def test_custom_jvp_rule_equations_come_from_the_rule():
    def make(lib, np_):
        @lib.custom_jvp
        def f(x):
            return np_.sin(x)

        @f.defjvp
        def f_jvp(primals, tangents):
            x, = primals
            return f(x), np_.cos(x) * tangents[0]                   # line J
        return f
    ours = minijax.make_jaxpr(minijax.grad(make(minijax, mnp)))(1.0)
    theirs = jax.make_jaxpr(jax.grad(make(jax, jnp)))(1.0)
    J = _at("return f(x), np_.cos(x) * tangents[0]                   # line J", "np_.cos")
    assert ("cos", f"{J} (test_custom_jvp_rule_equations_come_from_the_rule.<locals>"
                   f".make.<locals>.f_jvp)") in _ours(ours)
    assert [s for p, s in _ours(ours) if p == "cos"] == [s for p, s in _jax(theirs) if p == "cos"]


def test_source_info_is_not_part_of_the_program():
    closed = minijax.make_jaxpr(_program(mnp))(1.0)
    text = pp_jaxpr(closed.jaxpr)
    assert HERE not in text and "line" not in text
    parsed = parse_jaxpr(text)
    assert all(e.source_info is None for e in parsed.eqns)
    assert pp_jaxpr(parsed) == text
    eqn = closed.jaxpr.eqns[0]
    copy = eqn.replace()
    assert str(copy.source_info) == str(eqn.source_info)
    # Equations are compared by identity, never by where they came from.
    assert copy != eqn and eqn == eqn and Eqn.__hash__ is object.__hash__


def test_jit_cache_ignores_the_calling_line():
    traces = []

    @minijax.jit
    def f(x):
        traces.append(1)
        return mnp.sin(x)
    f(1.0)
    f(2.0)              # another line, same signature: no retrace
    assert len(traces) == 1


def test_eager_ref_messages_name_the_users_line():
    r = minijax.new_ref(1.0)                                         # line N
    minijax.free_ref(r)                                              # line F
    N = _at("r = minijax.new_ref(1.0)                                         # line N", "r")
    F = _at("minijax.free_ref(r)                                              # line F", "m")
    with pytest.raises(minijax.RefError) as info:
        r[...]
    message = str(info.value)
    assert f"created at {N.rsplit(':', 1)[0]} " in message
    assert f"(at {F.rsplit(':', 1)[0]})" in message


def test_reset_trace_state_forgets_an_interrupted_pass():
    # A pass interrupted inside its per-equation `with` (Ctrl-C in the REPL) leaves
    # the source context on that equation; resetting the tracing state resets it too.
    from minijax.ir import reset_trace_state
    from minijax.ir.source_info import source_context, source_info_from
    traced = minijax.make_jaxpr(_program(mnp))
    stale = traced(1.0).jaxpr.eqns[1]                   # the cos, at line B
    interrupted = source_info_from(stale)
    interrupted.__enter__()
    try:    # (make_jaxpr shares jit's trace cache, as JAX's: emptied to trace again)
        minijax.clear_caches()
        assert [str(e.source_info).split(" ")[0] for e in traced(1.0).jaxpr.eqns] == [B] * 3
    finally:
        reset_trace_state()
    assert source_context.mode == source_context.WALK and source_context.info is None
    minijax.clear_caches()
    assert [str(e.source_info).split(" ")[0] for e in traced(1.0).jaxpr.eqns] == [A, B, B]


def test_an_equation_has_only_the_source_info_its_maker_passes():
    # Inside a pass's per-equation context, an `Eqn` built without source info has
    # none: it never reads the context itself.
    from minijax.ir.source_info import source_info_from
    traced = minijax.make_jaxpr(_program(mnp))(1.0).jaxpr
    sin = traced.eqns[0]
    with source_info_from(sin):
        bare = Eqn(sin.primitive, sin.inputs, {}, sin.outputs)
        copied = Eqn(sin.primitive, sin.inputs, {}, sin.outputs, source_info=sin.source_info)
    assert bare.source_info is None
    assert str(copied.source_info).startswith(A)
    assert str(sin.replace(params={}).source_info).startswith(A)


def test_equations_made_at_one_call_site_share_its_source_info():
    # A call site's SourceInfo is made once and shared (tracing allocates none per
    # equation); forgetting the sites leaves equations their own and makes new ones.
    from minijax.ir.source_info import forget_source_sites

    def f(x):
        for _ in range(3):
            x = minijax.lax.sin(x)                  # one call site, three equations
        return minijax.lax.cos(x)                   # another
    sin1, sin2, sin3, cos = minijax.make_jaxpr(f)(np.float32(1.0)).eqns
    assert sin1.source_info is sin2.source_info is sin3.source_info
    assert str(sin1.source_info).startswith(_at("x = minijax.lax.sin(x)", "minijax.lax.sin"))
    assert str(cos.source_info).startswith(_at("return minijax.lax.cos(x)", "minijax.lax.cos"))
    kept = str(sin1.source_info)
    forget_source_sites()
    assert str(sin1.source_info) == kept
    minijax.clear_caches()      # make_jaxpr reuses jit's trace of f otherwise
    again = minijax.make_jaxpr(f)(np.float32(1.0)).eqns[0].source_info
    assert again is not sin1.source_info and str(again) == kept


def test_ref_writes_under_grad_keep_the_lines_of_their_control_flow():
    # jvp of a `cond` that writes a ref goes through a one-equation discharged
    # program, built for the operation being differentiated: its line carries over.
    def f(x):
        r = minijax.new_ref(x)
        minijax.lax.cond(x > 0, lambda: r.set(mnp.sin(r[...])), lambda: None)  # line C
        return r[...]
    C = _at("minijax.lax.cond(x > 0, lambda: r.set(mnp.sin(r[...])), lambda: None)  # line C",
            "minijax.lax.cond")
    closed = minijax.make_jaxpr(minijax.grad(f))(1.0)
    conds = [e for e in _all_eqns(closed) if e.primitive.name == "cond"]
    assert conds and all(str(e.source_info).startswith(C) for e in conds)


def test_discharging_a_while_whose_condition_writes_keeps_its_line():
    def f(x):
        r = minijax.new_ref(0)

        def cond(c):
            r[...] += 1
            return c < 3.0

        return minijax.lax.while_loop(cond, lambda c: c + x, 0.0) + r[...]  # line W
    W = _at("return minijax.lax.while_loop(cond, lambda c: c + x, 0.0) + r[...]  # line W",
            "minijax.lax.while_loop")
    closed = minijax.make_jaxpr(f)(1.0)
    discharged = discharge_jaxpr(closed).jaxpr.jaxpr
    loop = [e for e in discharged.eqns if e.primitive.name == "while"][0]
    calls = [e for e in _all_eqns(loop.params["body_jaxpr"]) if e.primitive.name == "jit"]
    assert calls and all(str(e.source_info).startswith(W) for e in calls)
    assert str(loop.source_info).startswith(W)
