"""The verifier: well-formed programs pass; ill-typed and ill-scoped ones are
rejected with a message that names the equation and shows it in context.

Programs are built by tracing `bind` calls (`trace_to_jaxpr`) and then broken by
hand, or built directly from `Var`/`Eqn`/`Jaxpr`.
"""
from __future__ import annotations

import numpy as np
import pytest

from minijax.ir import (ClosedJaxpr, Eqn, Jaxpr, Literal, MinijaxError, ReadEffect,
                        RefType, ShapedArray, Var, bind, primitives as P, trace_to_jaxpr)
from minijax.ir.verify import VerifierError, verify_jaxpr

f32, i32 = np.dtype(np.float32), np.dtype(np.int32)
F32_3 = ShapedArray((3,), f32)


def traced(fn, *in_avals) -> ClosedJaxpr:
    # Some tests trace an ill-formed program on purpose, to see the verifier reject it.
    from minijax.ir.checks import checks_disabled
    with checks_disabled():
        return trace_to_jaxpr(fn, list(in_avals))


def replace_eqn(jaxpr: Jaxpr, index: int, eqn: Eqn) -> Jaxpr:
    eqns = list(jaxpr.eqns)
    eqns[index] = eqn
    return Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, jaxpr.outvars)


def rejection(jaxpr) -> str:
    with pytest.raises(VerifierError) as info:
        verify_jaxpr(jaxpr)
    return str(info.value)


def marked(message: str) -> str:
    """The line of the window marked `>>>`."""
    (line,) = [line for line in message.splitlines() if line.startswith(">>>")]
    return line


def chain(x, n=8):
    """n equations: sin, then alternating cos / neg."""
    x = bind(P.sin_p, x)
    for i in range(n - 1):
        x = bind(P.cos_p if i % 2 else P.neg_p, x)
    return x


# -- well-formed programs pass ----------------------------------------------------------

def _refs_program(x):
    ref = bind(P.new_ref_p, x)
    bind(P.addupdate_p, ref, bind(P.sin_p, x))
    old = bind(P.swap_p, ref, x)
    return [bind(P.add_p, old, bind(P.freeze_p, ref))]


def _nested_program(x, y):
    inner = traced(lambda a: [bind(P.mul_p, a, 2.0)], F32_3).jaxpr
    z = bind(P.jit_p, x, jaxpr=inner, name="double")[0]
    w = bind(P.jit_p, z, jaxpr=inner, name="double")[0]     # a shared sub-jaxpr
    return [bind(P.add_p, w, y), 1.0]                        # a literal outvar


@pytest.mark.parametrize("fn, in_avals", [
    (lambda x, y: [bind(P.add_p, bind(P.sin_p, x), y)], [F32_3, F32_3]),
    (lambda x: [bind(P.reduce_sum_p, bind(P.mul_p, x, 3.0), axes=(0,))], [F32_3]),
    (lambda x: bind(P.sort_p, x, bind(P.neg_p, x), dimension=0), [F32_3]),
    (lambda x: [bind(P.mul_p, x, np.arange(3, dtype=np.float32))], [F32_3]),  # a const
    (_refs_program, [F32_3]),
    (_nested_program, [F32_3, F32_3]),
    (lambda x: [chain(x, 3000)], [F32_3]),
], ids=["arith", "reduce", "multiple-results", "consts", "refs", "nested", "long"])
def test_well_formed_programs_pass(fn, in_avals):
    closed = traced(fn, *in_avals)
    assert verify_jaxpr(closed) is None
    assert verify_jaxpr(closed.jaxpr) is None


def test_verifier_error_is_a_minijax_error():
    assert issubclass(VerifierError, MinijaxError)


# -- ill-typed ---------------------------------------------------------------------------

def test_wrong_output_shape_names_the_equation_and_shows_context():
    jaxpr = traced(lambda x: [chain(x)], F32_3).jaxpr
    eqn = jaxpr.eqns[4]
    message = rejection(replace_eqn(jaxpr, 4, eqn.replace(outputs=[Var(ShapedArray((4,), f32))])))
    assert message.startswith(f"equation 4 ({eqn.primitive.name}): output 0 is declared "
                              f"f32[4] but {eqn.primitive.name} produces f32[3]")
    assert f"= {eqn.primitive.name} " in marked(message)
    lines = message.splitlines()
    at = lines.index(marked(message))
    # three equations of context either side, then the elided rest and the footer
    assert [line.split("=")[1].split()[0] for line in lines[at - 3:at]] == ["neg", "cos", "neg"]
    assert len([line for line in lines[at + 1:] if " = " in line]) == 3
    assert lines[1].startswith("    { lambda") and lines[-1].strip().startswith("in (")


def test_wrong_dtype():
    jaxpr = traced(lambda x: [bind(P.sin_p, x)], F32_3).jaxpr
    bad = replace_eqn(jaxpr, 0, jaxpr.eqns[0].replace(outputs=[Var(ShapedArray((3,), i32))]))
    assert "output 0 is declared i32[3] but sin produces f32[3]" in rejection(bad)


def test_wrong_weak_type_is_shown_in_the_exact_form():
    jaxpr = traced(lambda x: [bind(P.sin_p, x)], F32_3).jaxpr
    weak = Var(ShapedArray((3,), f32, weak_type=True))
    message = rejection(replace_eqn(jaxpr, 0, jaxpr.eqns[0].replace(outputs=[weak])))
    assert "output 0 is declared f32[3]~ but sin produces f32[3]" in message


def test_mismatched_shapes_in_add():
    x, y, z = Var(F32_3), Var(ShapedArray((4,), f32)), Var(F32_3)
    jaxpr = Jaxpr([], [x, y], [Eqn(P.add_p, [x, y], {}, [z])], [z])
    message = rejection(jaxpr)
    assert message.startswith("equation 0 (add): ill-typed: add got incompatible shapes for "
                              "broadcasting: (3,), (4,).")
    assert marked(message) == ">>>     c:f32[3] = add a b"


def test_bad_params_are_a_type_error():
    x, y = Var(ShapedArray((2, 3), f32)), Var(ShapedArray((2,), f32))
    out_of_range = Eqn(P.reduce_sum_p, [x], {"axes": (5,)}, [y])
    assert "axes (5,) are invalid" in rejection(Jaxpr([], [x], [out_of_range], [y]))
    missing = Eqn(P.reduce_sum_p, [x], {}, [y])
    assert "equation 0 (reduce_sum): ill-typed" in rejection(Jaxpr([], [x], [missing], [y]))


def test_wrong_output_count():
    x, y = Var(F32_3), Var(F32_3)
    jaxpr = Jaxpr([], [x], [Eqn(P.sort_p, [x, x], {"dimension": 0}, [y])], [y])
    assert "binds 1 outputs but sort produces 2" in rejection(jaxpr)


def test_wrong_effects():
    ref, value = Var(RefType(F32_3)), Var(F32_3)
    jaxpr = Jaxpr([], [ref], [Eqn(P.get_p, [ref], {}, [value])], [value])
    assert "declares effects {} but get has effects {Read(0)}" in rejection(jaxpr)
    wrong_input = Eqn(P.get_p, [ref], {}, [value], effects={ReadEffect(1)})
    assert "declares effects {Read(1)}" in rejection(Jaxpr([], [ref], [wrong_input], [value]))


def test_not_a_primitive():
    x, y = Var(F32_3), Var(F32_3)
    jaxpr = Jaxpr([], [x], [Eqn("mystery", [x], {}, [y])], [y])
    message = rejection(jaxpr)
    assert "'mystery' is not a primitive with a type rule" in message
    assert "mystery" in marked(message)      # shown even though the printer cannot


# -- ill-scoped ---------------------------------------------------------------------------

def test_use_before_definition():
    jaxpr = traced(lambda x: [chain(x, 4)], F32_3).jaxpr
    eqns = list(jaxpr.eqns)
    eqns[1], eqns[2] = eqns[2], eqns[1]
    message = rejection(Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, jaxpr.outvars))
    assert message.startswith("equation 1 (cos): input 0 of cos is used before it is bound")


def test_variable_defined_twice():
    x, y = Var(F32_3), Var(F32_3)
    twice = Jaxpr([], [x], [Eqn(P.sin_p, [x], {}, [y]), Eqn(P.cos_p, [x], {}, [y])], [y])
    assert rejection(twice).startswith("equation 1 (cos): output 0 of cos rebinds a variable")
    rebinds_input = Jaxpr([], [x], [Eqn(P.sin_p, [x], {}, [x])], [x])
    assert "output 0 of sin rebinds" in rejection(rebinds_input)
    assert "invar 1 rebinds" in rejection(Jaxpr([], [x, x], [], [x]))
    assert "invar 0 rebinds" in rejection(Jaxpr([x], [x], [], [x]))


def test_undefined_outvar():
    jaxpr = traced(lambda x: [chain(x, 5)], F32_3).jaxpr
    message = rejection(Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.eqns, [Var(F32_3)]))
    assert message.startswith("outvars: outvar 0 is used before it is bound")
    assert marked(message).lstrip(">").strip().startswith("in (")
    assert "... (2 equations)" in message


def test_nested_jaxpr_using_an_outer_variable():
    outer_x = Var(F32_3)
    inner_in, inner_out = Var(F32_3), Var(F32_3)
    inner = Jaxpr([], [inner_in], [Eqn(P.mul_p, [inner_in, outer_x], {}, [inner_out])],
                  [inner_out])
    result = Var(F32_3)
    call = Eqn(P.jit_p, [outer_x], {"jaxpr": inner, "name": "leaky"}, [result])
    message = rejection(Jaxpr([], [outer_x], [call], [result]))
    assert message.startswith("equation 0 (mul): input 1 of mul is used before it is bound")
    assert "inside param 'jaxpr' of equation 0 of the enclosing jaxpr" in message
    assert ">>>     b:f32[3] = jit[" in message


def test_ref_used_after_freeze():
    def program(x):
        ref = bind(P.new_ref_p, x)
        bind(P.freeze_p, ref)
        return [bind(P.get_p, ref)]
    message = rejection(traced(program, F32_3))
    assert message.startswith("equation 2 (get): input 0 of get is a ref used after it "
                              "was frozen by equation 1")


# -- literals and consts ---------------------------------------------------------------------

def test_literal_must_be_rank_0():
    x, y = Var(F32_3), Var(F32_3)
    literal = Literal(np.ones(3, np.float32), F32_3)
    message = rejection(Jaxpr([], [x], [Eqn(P.add_p, [x, literal], {}, [y])], [y]))
    assert "input 1 of add is a literal of type f32[3]; literals must be rank-0" in message


def test_literal_value_must_have_its_dtype():
    x, y = Var(F32_3), Var(F32_3)
    literal = Literal(1.0, ShapedArray((), f32))
    literal.value = np.float64(1.0)
    message = rejection(Jaxpr([], [x], [Eqn(P.add_p, [x, literal], {}, [y])], [y]))
    assert ("input 1 of add is a literal np.float64(1.0) whose value is not a rank-0 "
            "float32") in message
    assert "whose value is not" in rejection(Jaxpr([], [], [], [literal]))


def test_consts_must_match_their_constvars():
    closed = traced(lambda x: [bind(P.mul_p, x, np.arange(3, dtype=np.float32))], F32_3)
    bad = ClosedJaxpr(closed.jaxpr, [np.arange(4, dtype=np.float32)])
    message = rejection(bad)
    assert message.startswith("binders: const 0 has shape (4,) and dtype float32, but its "
                              "constvar is f32[3]")
    assert marked(message).startswith(">>> { lambda a:f32[3]; b:f32[3]. let")
