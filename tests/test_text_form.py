"""The IR's text form: golden printed text, print -> parse -> print round trips for
the human view and the exact form, constants to the bit, and parse errors."""
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

from minijax.ir import (ClosedJaxpr, Eqn, Jaxpr, MinijaxError, ParseError,
                        RefType, ShapedArray, Var, bfloat16, bind, dumps, float0, loads,
                        parse_jaxpr, pp_jaxpr, trace_to_jaxpr)
from minijax.ir import primitives as P
from minijax.ir import printer
from tests.text_form_helpers import assert_same_program, same_bits

F32, I32, BOOL = np.dtype("float32"), np.dtype("int32"), np.dtype("bool")


def f32(*shape):
    return ShapedArray(shape, F32)


def i32(*shape):
    return ShapedArray(shape, I32)


def trace(fn, *in_avals) -> ClosedJaxpr:
    return trace_to_jaxpr(lambda *args: list(fn(*args)), in_avals)


def jaxpr_of(fn, *in_avals) -> Jaxpr:
    return trace(fn, *in_avals).jaxpr


# -- structural comparison ------------------------------------------------------------

def assert_round_trips(closed: ClosedJaxpr):
    text = pp_jaxpr(closed.jaxpr)
    parsed = parse_jaxpr(text)
    assert pp_jaxpr(parsed) == text
    assert_same_program(closed.jaxpr, parsed, exact=False)

    exact = dumps(closed)
    loaded = loads(exact)
    assert dumps(loaded) == exact
    assert_same_program(closed.jaxpr, loaded.jaxpr, exact=True)
    for c, d in zip(closed.consts, loaded.consts, strict=True):
        assert same_bits(np.asarray(c), d)
    return text


# -- golden text --------------------------------------------------------------------

def test_golden_elementwise_literal_tuple_param():
    def f(x, y):
        z = bind(P.mul_p, bind(P.sin_p, x), 2.0)
        return [bind(P.reduce_sum_p, bind(P.add_p, z, y), axes=(0,))]
    closed = trace(f, f32(3), f32(3))
    assert str(closed.jaxpr) == """\
{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = sin a
    d:f32[3] = mul c 2.0:f32[]
    e:f32[3] = add d b
    f:f32[] = reduce_sum[axes=(0,)] e
  in (f,) }"""
    assert dumps(closed).splitlines()[2] == "    d:f32[3] = mul c 2.0:f32[]~"
    assert_round_trips(closed)


def test_golden_dtype_params_no_input_op_and_bool_literal():
    def f(x):
        n = bind(P.iota_p, dtype=I32, shape=(3,), dimension=0)
        y = bind(P.convert_element_type_p, x, new_dtype=I32, weak_type=False)
        return [bind(P.add_p, n, y), True]
    closed = trace(f, f32(3))
    assert str(closed.jaxpr) == """\
{ lambda ; a:f32[3]. let
    b:i32[3] = iota[dimension=0 dtype=int32 shape=(3,)]
    c:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:i32[3] = add b c
  in (d, True:bool[]) }"""
    assert_round_trips(closed)


def test_golden_nested_jit_and_long_params():
    inner = jaxpr_of(lambda a: [bind(P.mul_p, bind(P.sin_p, a), 2.0)], f32(2, 2))

    def f(x):
        y, = bind(P.jit_p, x, jaxpr=inner, name="inner")
        return [bind(P.dot_general_p, y, x, dimension_numbers=(((1,), (0,)), ((), ())),
                     precision=None, preferred_element_type=F32)]
    closed = trace(f, f32(2, 2))
    assert str(closed) == """\
{ lambda ; a:f32[2,2]. let
    b:f32[2,2] = jit[
      jaxpr={ lambda ; c:f32[2,2]. let
          d:f32[2,2] = sin c
          e:f32[2,2] = mul d 2.0:f32[]
        in (e,) }
      name='inner'
    ] a
    f:f32[2,2] = dot_general[
      dimension_numbers=(((1,), (0,)), ((), ()))
      precision=None
      preferred_element_type=float32
    ] b a
  in (f,) }"""
    assert_round_trips(closed)


def test_golden_ref_sugar():
    def f(x, r):
        s = bind(P.new_ref_p, x)
        v = bind(P.get_p, r)
        bind(P.addupdate_p, r, bind(P.mul_p, v, v))
        bind(P.swap_p, r, x)                       # result unused: `r[...] <- x`
        old = bind(P.swap_p, s, v)                 # result used
        bind(P.addupdate_p, s, 1.0)
        return [bind(P.add_p, old, bind(P.freeze_p, s))]
    closed = trace(f, f32(), RefType(f32()))
    assert str(closed) == """\
{ lambda ; a:f32[] b:Ref{f32[]}. let
    c:Ref{f32[]} = new_ref a
    d:f32[] <- b[...]
    e:f32[] = mul d d
    b[...] += e
    b[...] <- a
    f:f32[], c[...] <- c[...], d
    c[...] += 1.0:f32[]
    g:f32[] = freeze c
    h:f32[] = add f g
  in (h,) }"""
    assert_round_trips(closed)
    parsed = parse_jaxpr(str(closed))
    assert [str(sorted(map(str, e.effects))) for e in parsed.eqns[:3]] == [
        "['Alloc']", "['Read(0)']", "[]"]


def test_golden_constvars_human_and_exact():
    table = np.array([0.5, -0.0, np.nan], np.float32)
    closed = trace(lambda x: [bind(P.add_p, x, table)], f32(3))
    assert str(closed) == """\
{ lambda a:f32[3]; b:f32[3]. let
    c:f32[3] = add b a
  in (c,) }"""
    assert dumps(closed).splitlines()[0] == "{ lambda a:f32[3] = [0.5, -0.0, nan]; b:f32[3]. let"
    assert_round_trips(closed)


# -- round trips over the catalogue ---------------------------------------------------

def test_round_trip_many_primitives():
    def f(x, m, idx, r):
        y = bind(P.exp_p, bind(P.neg_p, x))
        y = bind(P.integer_pow_p, y, y=3)
        y = bind(P.select_n_p, bind(P.lt_p, y, x), x, y)
        y = bind(P.clamp_p, 0.0, y, 1.0)
        b = bind(P.broadcast_in_dim_p, y, shape=(2, 3), broadcast_dimensions=(1,))
        t = bind(P.transpose_p, bind(P.reshape_p, b, new_sizes=(3, 2), dimensions=None),
                 permutation=(1, 0))
        d = bind(P.dot_general_p, t, b, dimension_numbers=(((1,), (1,)), ((), ())),
                 precision=None, preferred_element_type=None)
        g = bind(P.gather_p, m, idx, offset_dims=(1,), collapsed_slice_dims=(0,),
                 start_index_map=(0,), slice_sizes=(1, 4), mode="clip")
        s = bind(P.scatter_add_p, m, idx, g, update_window_dims=(1,),
                 inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), mode="fill")
        keys, vals = bind(P.sort_p, x, y, dimension=0, is_stable=True, num_keys=1)
        n = bind(P.iota_p, dtype=I32, shape=(3,), dimension=0)
        am = bind(P.argmax_p, s, axes=(0,), index_dtype=I32)
        c = bind(P.cumsum_p, keys, axis=0, reverse=True)
        p = bind(P.pad_p, c, 0.0, padding_config=((1, 2, 1),))
        sl = bind(P.slice_p, p, start_indices=(1,), limit_indices=(7,), strides=(2,))
        cat = bind(P.concatenate_p, sl, vals, dimension=0)
        e = bind(P.expand_dims_p, bind(P.squeeze_p, bind(P.reshape_p, cat, new_sizes=(1, 6),
                                                         dimensions=None), dimensions=(0,)),
                 dimensions=(0,))
        ref = bind(P.new_ref_p, x)
        bind(P.addupdate_p, ref, bind(P.get_p, ref))
        old = bind(P.swap_p, ref, vals)
        body = jaxpr_of(lambda q, v: [bind(P.swap_p, q, v)], RefType(f32()), f32())
        out, = bind(P.jit_p, r, bind(P.reduce_max_p, x, axes=(0,)), jaxpr=body, name="body")
        empty = bind(P.empty_ref_p, shape=(2,), dtype=F32)
        bind(P.free_ref_p, empty)
        return [d, am, n, e, bind(P.freeze_p, ref), old, out, 3]
    closed = trace(f, f32(3), f32(2, 4), i32(5, 1), RefType(f32()))
    text = assert_round_trips(closed)
    assert "free_ref " in text and "\n    free_ref" in text    # no `=` for no outputs
    jit_eqn = parse_jaxpr(text).eqns[-4]
    assert jit_eqn.primitive is P.jit_p and {str(e) for e in jit_eqn.effects} == {"Write(0)"}


def test_long_program_names_skip_keywords():
    def f(x):
        for _ in range(800):
            x = bind(P.sin_p, x)
        return [x]
    closed = trace(f, f32())
    text = assert_round_trips(closed)
    names = re.findall(r"\b([a-z]+):f32", text)
    assert len(names) == len(set(names)) == 801
    assert not {"in", "let", "nan", "inf"} & set(names)
    assert "ba:f32[]" in text and "zz:f32[]" in text and "baa:f32[]" in text


def test_names_unique_across_nested_jaxprs():
    inner = jaxpr_of(lambda a: [bind(P.cos_p, a)], f32())
    closed = trace(lambda x: bind(P.jit_p, x, jaxpr=inner, name="g")
                   + bind(P.jit_p, x, jaxpr=inner, name="g"), f32())
    text = assert_round_trips(closed)
    names = re.findall(r"\b([a-z]+):f32", text)
    assert len(names) == len(set(names))


# -- random programs ------------------------------------------------------------------

_UNARY_FLOAT = [P.sin_p, P.cos_p, P.exp_p, P.tanh_p, P.log1p_p, P.sqrt_p, P.neg_p, P.abs_p]
_UNARY_INT = [P.neg_p, P.abs_p, P.sign_p]
_BINARY = [P.add_p, P.sub_p, P.mul_p, P.max_p, P.min_p]
_COMPARE = [P.lt_p, P.eq_p, P.ge_p]
_DTYPES = [F32, I32, np.dtype("float16"), bfloat16]
_SHAPES = [(), (3,), (2, 3), (1, 2, 2)]


@st.composite
def random_programs(draw):
    in_avals = [ShapedArray(draw(st.sampled_from(_SHAPES)), draw(st.sampled_from(_DTYPES)),
                            weak_type=draw(st.booleans()))
                for _ in range(draw(st.integers(1, 3)))]
    steps = draw(st.lists(st.integers(0, 10 ** 6), min_size=1, max_size=12))
    specials = draw(st.lists(st.floats(width=32), min_size=len(steps), max_size=len(steps)))
    n_outs = draw(st.integers(1, 3))

    def program(*args):
        pool = list(args)
        for step, special in zip(steps, specials):
            x = pool[step % len(pool)]
            kind, floating = step // 7 % 9, np.issubdtype(x.dtype, np.inexact) or x.dtype == bfloat16
            if x.dtype == BOOL:
                pool.append(bind(P.not_p, x))
            elif kind == 0:
                ops = _UNARY_FLOAT if floating else _UNARY_INT
                pool.append(bind(ops[step % len(ops)], x))
            elif kind == 1:
                same = [y for y in pool if y.dtype == x.dtype and y.shape in (x.shape, ())]
                pool.append(bind(_BINARY[step % 5], x, same[step % len(same)]))
            elif kind == 2:     # a literal: weak Python scalar, or a strong NumPy one
                if x.dtype == F32:
                    literal = special if step % 2 else np.float32(special)
                else:
                    with np.errstate(over="ignore"):      # f32 specials overflow f16
                        literal = np.asarray(special if floating else step % 100,
                                             x.dtype)[()]
                pool.append(bind(P.mul_p, x, literal))
            elif kind == 3:
                pool.append(bind(P.reshape_p, x, new_sizes=(x.size,), dimensions=None))
            elif kind == 4 and x.ndim:
                pool.append(bind(P.reduce_sum_p, x, axes=(x.ndim - 1,)))
            elif kind == 5:
                pool.append(bind(P.broadcast_in_dim_p, x, shape=(2,) + x.shape,
                                 broadcast_dimensions=tuple(range(1, x.ndim + 1))))
            elif kind == 6:
                to = _DTYPES[step % len(_DTYPES)]
                pool.append(bind(P.convert_element_type_p, x, new_dtype=to,
                                 weak_type=bool(step % 2)))
            elif kind == 7:
                pred = bind(_COMPARE[step % 3], x, x)
                pool.append(bind(P.select_n_p, pred, x, bind(P.neg_p, x)))
            elif kind == 8 and x.ndim == 2:
                pool.append(bind(P.transpose_p, x, permutation=(1, 0)))
        return [pool[-1 - i % len(pool)] for i in range(n_outs)]
    return trace(program, *in_avals)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_programs())
def test_random_programs_round_trip(closed):
    assert_round_trips(closed)


# -- constants and literals, to the bit -----------------------------------------------

def _const_program(*values):
    constvars = [Var(ShapedArray(np.shape(v), np.asarray(v).dtype)) for v in values]
    return ClosedJaxpr(Jaxpr(constvars, [], [], constvars), list(values))


def test_exact_constants_special_floats():
    payload_nan = np.array([0x7FC00001, 0xFFC00000, 0x7F800001], np.uint32).view(np.float32)
    values = [
        np.array([[np.nan, -np.nan, np.inf], [-np.inf, -0.0, 0.1]], np.float32),
        payload_nan,
        np.array([0.1, -0.0, np.nan, 65504.0, 6e-08], np.float16),
        np.array([0.1, 1 / 3, -np.nan, 1e30, 7.0], bfloat16),
        np.array([1 / 3, 1e-300], np.float64),
        np.array([[1, -2], [2 ** 31 - 1, -2 ** 31]], np.int32),
        np.array([0, 255], np.uint8),
        np.array([True, False]),
        np.array(np.float32(-0.0)),
        np.array([1 + 2j, complex(np.nan, -0.0)], np.complex64),
        np.zeros((0, 3), np.float32),
    ]
    closed = _const_program(*values)
    text = dumps(closed)
    assert "bits(0x7fc00001)" in text and "-nan" in text and "complex(1.0, 2.0)" in text
    assert_round_trips(closed)


def test_exact_constants_from_jax_arrays():
    import jax.numpy as jnp
    values = [jnp.array([1.5, -0.0], jnp.bfloat16), jnp.arange(4, dtype=jnp.int32)]
    closed = _const_program(*values)
    loaded = loads(dumps(closed))
    for value, back in zip(values, loaded.consts):
        assert same_bits(np.asarray(value), back)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 2 ** 32 - 1), min_size=1, max_size=20),
       st.lists(st.integers(0, 2 ** 16 - 1), min_size=1, max_size=20))
def test_exact_constants_any_bits(bits32, bits16):
    values = [np.array(bits32, np.uint32).view(np.float32),
              np.array(bits16, np.uint16).view(np.float16),
              np.array(bits16, np.uint16).view(bfloat16)]
    for value, back in zip(values, loads(dumps(_const_program(*values))).consts):
        assert same_bits(value, back)


def test_weak_types_only_in_exact_form():
    closed = trace(lambda x: [bind(P.add_p, x, 1.0)], ShapedArray((), F32, weak_type=True))
    assert str(closed).startswith("{ lambda ; a:f32[]. let")
    assert dumps(closed).startswith("{ lambda ; a:f32[]~. let")
    assert loads(dumps(closed)).jaxpr.outvars[0].aval.weak_type
    assert not parse_jaxpr(str(closed)).outvars[0].aval.weak_type


def test_parse_jaxpr_drops_values_and_loads_requires_them():
    closed = _const_program(np.arange(2.0, dtype=np.float32))
    assert parse_jaxpr(dumps(closed)).constvars[0].aval == f32(2)
    with pytest.raises(ParseError, match=r"line 1, column 10: constvar 'a' has no value"):
        loads(str(closed))


# -- params ---------------------------------------------------------------------------

def _single_eqn(params, prim=P.sin_p):
    x, y = Var(f32()), Var(f32())
    return Jaxpr([], [x], [Eqn(prim, [x], params, [y])], [y])


def test_param_values_round_trip():
    params = {"a": (), "b": (1,), "c": ((1, 2), (None, True)), "d": [1, (2.5, False)],
              "e": float("inf"), "f": -float("inf"), "g": 1e-05, "h": "it's a\n'test'\\",
              "i": np.dtype(bfloat16), "j": np.int64(7), "k": -3, "l": float0}
    jaxpr = _single_eqn(params)
    text = pp_jaxpr(jaxpr)
    parsed = parse_jaxpr(text)
    assert pp_jaxpr(parsed) == text
    assert parsed.eqns[0].params == params
    assert isinstance(parsed.eqns[0].params["d"], list)


def test_registered_param_objects():
    class SaveOnly:
        def __init__(self, *names):
            self.names = names

        def param_args(self):
            return self.names

        def __eq__(self, other):
            return isinstance(other, SaveOnly) and other.names == self.names

    # The name is the real policy's: put its constructor back afterwards, or the
    # tests that run later in this process could not parse policies.
    real_constructor = printer.param_constructors["save_only_these_names"]
    printer.register_param_type(SaveOnly, "save_only_these_names")
    try:
        jaxpr = _single_eqn({"policy": SaveOnly("h", "k")})
        text = pp_jaxpr(jaxpr)
        assert "sin[policy=save_only_these_names('h', 'k')] a" in text
        assert parse_jaxpr(text).eqns[0].params["policy"] == SaveOnly("h", "k")
    finally:
        printer.param_types.pop(SaveOnly)
        printer.param_constructors["save_only_these_names"] = real_constructor


def test_unregistered_param_object():
    jaxpr = _single_eqn({"fn": object()})
    assert "fn=<<object object at" in pp_jaxpr(jaxpr)
    with pytest.raises(ValueError, match="register_param_type"):
        dumps(ClosedJaxpr(jaxpr, []))


def test_closed_jaxpr_params_keep_their_constants_in_the_exact_form():
    body = _const_program(np.array([1.5, np.nan], np.float32))
    jaxpr = _single_eqn({"body": body})
    assert "body={ lambda c:f32[2]; . let" in pp_jaxpr(jaxpr)
    assert "body={ lambda c:f32[2] = [1.5, nan]; . let" in dumps(ClosedJaxpr(jaxpr, []))
    loaded = loads(dumps(ClosedJaxpr(jaxpr, []))).jaxpr.eqns[0].params["body"]
    assert isinstance(loaded, ClosedJaxpr) and same_bits(loaded.consts[0], body.consts[0])
    assert isinstance(parse_jaxpr(pp_jaxpr(jaxpr)).eqns[0].params["body"], Jaxpr)


# -- hand-written text ----------------------------------------------------------------

def test_docstring_example_is_printer_output():
    example = re.search(r"\n(    \{ lambda.*?\}\n)\n", printer.__doc__, re.S).group(1)
    text = "\n".join(line[4:] for line in example.splitlines())
    assert pp_jaxpr(parse_jaxpr(text)) == text


def test_parse_is_forgiving_about_layout():
    text = """
    # a comment
    { lambda ; a:f32[3] b:Ref{f32[3]}.   let

        c:f32[] = reduce_sum[
            axes=(0,)]   a    # trailing comment
        b[...] <- a
        d:f32[3], b[...] <- b[...], a
      in (c, d,)
    }
    """
    jaxpr = parse_jaxpr(text)
    assert [e.primitive.name for e in jaxpr.eqns] == ["reduce_sum", "swap", "swap"]
    assert pp_jaxpr(parse_jaxpr(pp_jaxpr(jaxpr))) == pp_jaxpr(jaxpr)
    assert str(parse_jaxpr("{ lambda ; . let in () }")) == "{ lambda ; . let\n  in () }"


# -- errors ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, where, what", [
    ("{ lambda ; a:f32[]. let\n    b:f32[] = sin $ a\n  in (b,) }",
     "line 2, column 19", "unexpected '$'"),
    ("{ lambda ; a:f32[]. let\n    b:f32[] = sin a\n  (b,) }",
     "line 3, column 3", "expected 'in' or a name"),
    ("{ lambda ; a:f32[]. let\n    b:f32[] = sine a\n  in (b,) }",
     "line 2, column 15", "unknown primitive 'sine'"),
    ("{ lambda ; a:f32[]. let\n    b:f32[] = sin q\n  in (b,) }",
     "line 2, column 19", "undefined variable 'q'"),
    ("{ lambda ; a:f32[]. let\n    b:f32[] = sin a\n  in (b, z) }",
     "line 3, column 10", "undefined variable 'z'"),
    ("{ lambda ; a:f33[]. let\n  in (a,) }",
     "line 1, column 14", "unknown dtype name 'f33'"),
    ("{ lambda ; a:f32[]. let\n    a:f32[] = sin a\n  in (a,) }",
     "line 2, column 5", "variable 'a' is defined twice"),
    ("{ lambda ; a:f32[]. let\n    b:f32[] = reduce_sum[axes=f32] a\n  in (b,) }",
     "line 2, column 31", "unknown name 'f32' in a param value"),
    ("{ lambda ; a:f32[]. let\n  in (a,)", "line 2, column 10", "unexpected end of text"),
    ("{ lambda ; a:f32[]. let\n    b:f32[] <- a[...]\n  in (b,) }",
     "line 2, column 16", "'a' is indexed like a ref"),
    ("{ lambda ; a:f32[]. let\n    b:f32[] = jit[jaxpr={ lambda ; c:f32[]. let\n"
     "      d:f32[] = sin a\n    in (d,) } name='f'] a\n  in (b,) }",
     "line 3, column 21", "undefined variable 'a'"),        # nested jaxprs are closed
])
def test_parse_errors(text, where, what):
    with pytest.raises(ParseError) as info:
        parse_jaxpr(text)
    message = str(info.value)
    assert message.startswith(where + ": "), message
    assert what in message
    assert isinstance(info.value, MinijaxError)
    line, column = map(int, re.findall(r"\d+", where))
    assert (info.value.line, info.value.column) == (line, column)
