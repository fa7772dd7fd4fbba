"""Refs in the IR: the indexing sugar of the text form (golden text, print -> parse
round trips, parse errors), the type rules' checks, and the discharge pass (golden
discharged program, reference evaluator vs XLA, verifier after the pass)."""
import numpy as np
import pytest

import minijax
from minijax.backends.reference import RefBox, eval_jaxpr
from minijax.ir import ParseError, parse_jaxpr, primitives as P
from minijax.ir.ref_indexing import DYNAMIC, Index, RefIndexer, Slice, Transpose
from minijax.ir.types import RefType, ShapedArray
from minijax.ir.verify import verify_jaxpr
from minijax.testing import check_jaxpr
from minijax.transforms.discharge import discharge_jaxpr

X = np.arange(20, dtype=np.float32).reshape(4, 5)


def _every_form(r, x, i, idx):
    a = r[1:3, i, None]
    r.T[0] = x
    r.at[1:3][0, :2] += a[:, 0]
    old = minijax.ref.swap(r, (slice(None, None, 2), idx), np.zeros((2, 2), np.float32))
    minijax.ref.addupdate(r.reshape(5, 4), -1, x)
    return a, old


ARGS = (np.ones(4, np.float32), 2, np.array([0, 4], np.int32))


def test_golden_ref_sugar():
    closed = minijax.make_jaxpr(_every_form)(minijax.new_ref(X), *ARGS)
    assert str(closed) == """\
{ lambda a:f32[2,2]; b:Ref{f32[4,5]} c:f32[4] d:i32[] e:i32[2]. let
    f:f32[2,1] <- b[1:3, d, None]
    b.T[0] <- c
    g:f32[2] <- b.at[1:3][0, 0:2]
    h:f32[2] = squeeze[dimensions=(1,)] f
    i:f32[2] = add g h
    b.at[1:3][0, 0:2] <- i
    j:f32[2,2], b[0:3:2, e] <- b[0:3:2, e], a
    b.reshape(5, 4)[4] += c
  in (f, j) }"""
    check_jaxpr(closed)


def test_every_form_reference_vs_xla():
    closed = minijax.make_jaxpr(_every_form)(minijax.new_ref(X), *ARGS)
    box = RefBox(X)
    expected = eval_jaxpr(closed.jaxpr, closed.consts, box, *ARGS)
    ref = minijax.new_ref(X)
    got = minijax.jit(_every_form)(ref, *ARGS)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(np.asarray(g), e)
    np.testing.assert_array_equal(np.asarray(ref[...]), box.value)


def _program(fn, init=X):
    return minijax.make_jaxpr(fn)(minijax.new_ref(init))


def test_golden_discharge():
    def f(r, x):
        r[0] += x
        t = minijax.new_ref(x)
        t[...] = t[...] * r[1]
        return minijax.freeze(t)
    closed = minijax.make_jaxpr(f)(minijax.new_ref(X), np.ones(5, np.float32))
    result = discharge_jaxpr(closed)
    assert str(result.jaxpr) == """\
{ lambda ; a:f32[4,5] b:f32[5]. let
    c:f32[1,5] = slice[limit_indices=(1, 5) start_indices=(0, 0) strides=None] a
    d:f32[5] = reshape[dimensions=None new_sizes=(5,)] c
    e:f32[5] = add d b
    f:f32[1,5] = reshape[dimensions=None new_sizes=(1, 5)] e
    g:f32[4,5] = dynamic_update_slice a f 0:i32[] 0:i32[]
    h:f32[1,5] = slice[limit_indices=(2, 5) start_indices=(1, 0) strides=None] g
    i:f32[5] = reshape[dimensions=None new_sizes=(5,)] h
    j:f32[5] = mul b i
  in (j, g) }"""
    assert result.info == (((0,), (0,), 1))
    check_jaxpr(result.jaxpr)
    assert not result.jaxpr.effects


def test_discharge_of_dynamic_index_clamps_like_jax():
    closed = minijax.make_jaxpr(lambda r, i: r[i])(minijax.new_ref(X), 1)
    assert str(discharge_jaxpr(closed).jaxpr) == """\
{ lambda ; a:f32[4,5] b:i32[]. let
    c:bool[] = lt b 0:i32[]
    d:i32[] = add b 4:i32[]
    e:i32[] = select_n c b d
    f:i32[] = clamp 0:i32[] e 3:i32[]
    g:f32[1,5] = dynamic_slice[slice_sizes=(1, 5)] a f 0:i32[]
    h:f32[5] = reshape[dimensions=None new_sizes=(5,)] g
  in (h,) }"""


def test_discharge_recurses_into_jit_and_only_returns_written_refs():
    @minijax.jit
    def inner(r, s):
        r[...] += s[...]

    def outer(r, s):
        inner(r, s)
        return s[0]
    closed = minijax.make_jaxpr(outer)(minijax.new_ref(X), minijax.new_ref(X))
    result = discharge_jaxpr(closed)
    assert result.info.ref_inputs == (0, 1) and result.info.written == (0,)
    check_jaxpr(result.jaxpr)
    (call,) = [e for e in result.jaxpr.jaxpr.eqns if e.primitive is P.jit_p]
    assert all(not isinstance(v.aval, RefType) for v in call.params["jaxpr"].invars)


def test_ref_free_jaxprs_are_returned_unchanged():
    closed = minijax.make_jaxpr(lambda x: x * 2)(1.0)
    assert discharge_jaxpr(closed.jaxpr).jaxpr is closed.jaxpr


ROUND_TRIP_TEXTS = [
    """\
{ lambda ; a:Ref{f32[4,5]} b:i32[] c:i32[3]. let
    d:f32[5] <- a[b]
    e:f32[3,2] <- a[c, 1:5:2]
    f:f32[1,4,1] <- a[None, :, 0, None]
    h:f32[3,1] <- a.at[b].reshape(5, 1)[c]
    a.at[b].reshape(5, 1)[c] <- h
    g:f32[5], a.transpose(1, 0)[:, 2] <- a.transpose(1, 0)[:, 2], d
    a[2:i32[], 4] += 1.0:f32[]
  in (d, e, f, g) }""",
]


@pytest.mark.parametrize("text", ROUND_TRIP_TEXTS)
def test_parse_print_round_trip(text):
    jaxpr = parse_jaxpr(text)
    verify_jaxpr(jaxpr)
    check_jaxpr(jaxpr)


def test_parse_canonicalises_like_python_indexing():
    jaxpr = parse_jaxpr("""\
{ lambda ; a:Ref{f32[4,5]}. let
    b:f32[5] <- a[-1, :]
    c:f32[4,5] <- a[..., :]
    d:f32[4] <- a[..., 0, 1:]
    e:f32[2] <- a.transpose(1, 0)[1:5:2, 0]
  in (b, c, d, e) }""")
    verify_jaxpr(jaxpr)
    assert str(jaxpr).splitlines()[1:5] == [
        "    b:f32[5] <- a[3]", "    c:f32[4,5] <- a[...]", "    d:f32[4] <- a[0, 1:5]",
        "    e:f32[2] <- a.T[1:4:2, 0]"]


@pytest.mark.parametrize("body, message", [
    ("b:f32[] <- a[7]", "index 7 is out of bounds for axis 0 with size 4"),
    ("b:f32[] <- a[0, 0, 0]", "too many indices"),
    ("b:f32[] <- a[c]", "undefined variable 'c'"),
    ("b:f32[] <- a.reshape(3, 3)[0]", r"cannot reshape a ref of shape \(4, 5\) to \(3, 3\)"),
    ("b:f32[] <- a[::-1]", "slice steps on refs must be positive"),
])
def test_parse_errors_name_the_index(body, message):
    with pytest.raises(ParseError, match=message):
        parse_jaxpr(f"{{ lambda ; a:Ref{{f32[4,5]}}. let\n    {body}\n  in () }}")


def test_type_rules_check_indexers():
    ref = RefType(ShapedArray((4, 5), np.float32))
    i32 = ShapedArray((), np.int32)
    idx = RefIndexer((Index((DYNAMIC, Slice(1, 2, 2))),))
    assert P.type_rules[P.get_p](ref, i32, indexer=idx) == [ShapedArray((2,), np.float32)]
    with pytest.raises(TypeError, match="get: the indexer takes 1 dynamic index inputs, got 0"):
        P.type_rules[P.get_p](ref, indexer=idx)
    with pytest.raises(TypeError, match="dynamic indices must be integer arrays"):
        P.type_rules[P.get_p](ref, ShapedArray((), np.float32), indexer=idx)
    with pytest.raises(TypeError, match=r"transpose\(1, 0, 2\) is not a permutation"):
        P.type_rules[P.get_p](ref, indexer=RefIndexer((Transpose((1, 0, 2)), Index())))
    with pytest.raises(TypeError, match=r"swap: value float32\[3\] does not match"):
        P.type_rules[P.swap_p](ref, ShapedArray((3,), np.float32), indexer=RefIndexer(
            (Index((0,)),)))


def test_generic_param_form_round_trips():
    """An indexer the sugar cannot show (here: a get whose ref is a literal-free but
    oddly-shaped equation) still prints and parses as `indexer(...)`."""
    from minijax.ir.printer import pp_jaxpr
    idx = RefIndexer((Transpose((1, 0)), Index((DYNAMIC, Slice(0, 2, 1)))))
    assert pp_jaxpr.__module__ and idx.param_args() == (
        ("transpose", (1, 0)), ("index", ("dyn", ("slice", 0, 2, 1))))
    from minijax.ir.ref_indexing import decode_indexer
    assert decode_indexer(*idx.param_args()) == idx
