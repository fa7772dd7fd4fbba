"""Parse errors of the text form, one construct at a time, and the scanner's corners.

Each error is a `ParseError` (a `MinijaxError` and a `ValueError`) that names the line
and column, quotes the line with a caret under the column, and says what was found
and what was expected there. tests/test_text_form.py has the first cases; these
reach each rule of the grammar in parser.py's docstring.
"""
import re
import threading

import numpy as np
import pytest

from minijax.ir import MinijaxError, ParseError, dumps, loads, parse_jaxpr, pp_jaxpr
from minijax.ir import primitives as P
from minijax.ir.printer import OpaqueParam
from minijax.ir.text_scanner import scan

# One array input and one ref input, then the body under test.
HEAD = "{ lambda ; a:f32[] r:Ref{f32[4]}. let\n"


def body(*lines, outs="(b,)"):
    return HEAD + "".join(f"    {line}\n" for line in lines) + f"  in {outs} }}"


@pytest.mark.parametrize("text, line, column, message", [
    # jaxprs: the frame, unterminated text, stray text after the last `}`
    ("", 1, 1, "unexpected end of text; expected '{'"),
    ("lambda ; a:f32[]. let\n  in (a,) }", 1, 1, "unexpected 'lambda'; expected '{'"),
    ("{ lambda ; a:f32[]. let\n    b:f32[] = sin a\n", 2, 20,
     "unexpected end of text; expected 'in' or a name"),
    ("{ lambda ; a:f32[]. let\n  in (a,)", 2, 10, "unexpected end of text; expected '}'"),
    ("{ lambda ; a:f32[]. let\n  in (a,) } }", 2, 13,
     "unexpected '}'; expected the end of the text"),
    ("{ lambda ; a:f32[]. let\n  in (a,) } b", 2, 13,
     "unexpected 'b'; expected the end of the text"),
    ("{ lambda ; a:f32[] 'x'. let\n  in (a,) }", 1, 20,
     "unexpected \"'x'\"; expected '.' or a name"),
    ("{ lambda ; a:f32[]. in (a,) }", 1, 21, "unexpected 'in'; expected 'let'"),
    ("{ lambda a:f32[]. let\n  in (a,) }", 1, 17, "unexpected '.'; expected ';' or a name"),
    # types
    ("{ lambda ; a:f32. let\n  in (a,) }", 1, 14,
     "unexpected 'f32'; expected a type such as f32[3] or Ref{f32[3]}"),
    ("{ lambda ; a:f32[3,x]. let\n  in (a,) }", 1, 14, "expected a type such as f32[3]"),
    ("{ lambda ; a f32[]. let\n  in (a,) }", 1, 14, "unexpected 'f32'; expected ':'"),
    ("{ lambda ; a:Ref{q8[]}. let\n  in (a,) }", 1, 18, "unknown dtype name 'q8'"),
    # missing or broken `in (...)`
    (body("b:f32[] = sin a").replace("in (b,)", "(b,)"), 3, 3,
     "unexpected '('; expected 'in' or a name"),
    (body("b:f32[] = sin a", outs="b"), 3, 6, "unexpected 'b'; expected '('"),
    (body("b:f32[] = sin a", outs="(b"), 3, 9, "unexpected '}'; expected ')' or ','"),
    (body("b:f32[] = sin a").replace("in (b,)", "out (b,)"), 3, 3,
     "unknown primitive 'out'"),
    # equations
    (body("b:f32[] = sin a b:f32[]"), 2, 21, "expected a float"),
    (body("b:f32[] c = sin a"), 2, 13, "unexpected 'c'; expected "
     "',' or '<-' or '=' or a name"),
    (body("b:f32[] = sin a $"), 2, 21, "unexpected '$'; expected a line break"),
    (body("b:f32[] = sin a", "c:f32[] = cos b in (c,)"), 3, 21,
     "unexpected 'in'; expected a line break"),
    # params
    (body("b:f32[] = reduce_sum[axes=(0,] a"), 2, 34, "unexpected ']'; expected a value"),
    (body("b:f32[] = reduce_sum[axes=(0)] a"), 2, 33, "unexpected ')'; expected ','"),
    (body("b:f32[] = reduce_sum[axes=] a"), 2, 31, "unexpected ']'; expected a value"),
    (body("b:f32[] = reduce_sum[axes=(0,) axes=(0,)] a"), 2, 36,
     "param 'axes' is given twice"),
    (body("b:f32[] = reduce_sum[axes (0,)] a"), 2, 31, "unexpected '('; expected '='"),
    (body("b:f32[] = reduce_sum[axes=foo(1)] a"), 2, 31,
     "unknown param constructor 'foo'; known: ["),
    (body("b:f32[] = reduce_sum[axes=[1, 2 a"), 2, 37,    # line breaks do not count
     "unexpected 'a'; expected ']' or ','"),
    (body("b:f32[] = reduce_sum[axes=-x] a"), 2, 32, "unknown name '-x' in a param value"),
    # literals
    (body("b:f32[] = add a 1.0"), 2, 24, "unexpected line break; expected ':'"),
    (body("b:f32[] = add a 1.0:"), 2, 25, "unexpected line break; expected a type"),
    (body("b:f32[] = add a 1.0:f32[2]"), 2, 25,
     "a literal must have a scalar array type, not f32[2]"),
    (body("b:f32[] = add a 1.0:bool[]"), 2, 21, "expected True or False, got '1.0'"),
    (body("b:f32[] = add a 1:Ref{f32[]}"), 2, 23, "a literal must have a scalar array "
     "type, not Ref{f32[]}"),
    # ref places and index items
    (body("b:f32[] <- r[1"), 3, 3, "unexpected 'in'; expected ']' or ','"),
    (body("b:f32[] <- r[1.5]"), 2, 18, "expected an integer index, got '1.5'"),
    (body("b:f32[] <- r[=]"), 2, 18,
     "unexpected '='; expected '...' or ':' or a name or a number"),
    (body("b:f32[] <- r[0:x]"), 2, 20, "unexpected 'x'; expected ']' or ','"),
    (body("b:f32[] <- r[0:2.5]"), 2, 20, "expected an integer slice bound, got '2.5'"),
    (body("b:f32[] <- r[0:4:1:2]"), 2, 23, "unexpected ':'; expected ']' or ','"),
    (body("b:f32[] <- r.foo[0]"), 2, 17,
     "unexpected '.'; expected '.T' or '.at' or '.reshape' or '.transpose' or '['"),
    (body("b:f32[] <- r.reshape(2, 2.0)[0]"), 2, 29, "expected an integer, got '2.0'"),
    (body("b:f32[] <- r.reshape(2 2)[0]"), 2, 28, "unexpected '2'; expected ')' or ','"),
    (body("b:f32[] <- r[0:i32[2]]"), 2, 20, "a literal must have a scalar array type"),
    (body("b:f32[] <- r.at[5][0]"), 2, 16, "bad index of 'r': index 5 is out of bounds"),
    (body("r[0] <= a", outs="()"), 2, 10, "unexpected '<'; expected '+=' or '<-'"),
    (body("r[0] <- ", outs="()"), 2, 13, "unexpected line break; expected a name or a number"),
    (body("b:f32[], r[0] <- r[1], a"), 2, 22, "a swap reads and writes the same place"),
    (body("b:f32[], r[0] <- r[0] a"), 2, 27, "unexpected 'a'; expected ','"),
    (body("b:f32[], r[0] = r[0], a"), 2, 19, "unexpected '='; expected '<-'"),
])
def test_parse_error(text, line, column, message):
    with pytest.raises(ParseError) as info:
        parse_jaxpr(text)
    error = info.value
    assert isinstance(error, MinijaxError) and isinstance(error, ValueError)
    assert (error.line, error.column) == (line, column), str(error)
    assert str(error).startswith(f"line {line}, column {column}: "), str(error)
    assert message in error.message, str(error)
    quoted = (text.splitlines() or [""])[line - 1]
    if quoted:     # the line, then a caret under the column
        assert str(error).splitlines()[1:] == [f"    {quoted}",
                                               "    " + " " * (column - 1) + "^"]


@pytest.mark.parametrize("text, line, column, message", [
    ("{ lambda a:f32[2] = [1.0]; . let\n  in (a,) }", 1, 10,
     "the value does not have the shape of f32[2]: expected a list of 2 along an axis"),
    ("{ lambda a:f32[] = (1.0, 2.0); . let\n  in (a,) }", 1, 20,
     "expected an array element or a [..] list, got a tuple"),
    ("{ lambda a:i32[] = 1.5; . let\n  in (a,) }", 1, 20, "expected an integer, got '1.5'"),
    ("{ lambda a:f32[] = 'x'; . let\n  in (a,) }", 1, 20,
     "unexpected \"'x'\"; expected an array element"),
    ("{ lambda a:f32[] = bits(nan); . let\n  in (a,) }", 1, 20,
     "expected a float (a number, nan, inf or bits(0x...)), got bits(...)"),
    ("{ lambda a:u8[] = 300; . let\n  in (a,) }", 1, 19, "for uint8"),
    ("{ lambda a:f32[] = [1.0]; . let\n  in (a,) }", 1, 10,
     "expected a scalar element of f32[], got a list"),
    ("{ lambda a:f32[] = 1.0 b:f32[]; . let\n  in (a, b) }", 1, 24,
     "constvar 'b' has no value"),
])
def test_exact_form_value_errors(text, line, column, message):
    with pytest.raises(ParseError) as info:
        loads(text)
    assert (info.value.line, info.value.column) == (line, column), str(info.value)
    assert message in info.value.message, str(info.value)


def test_line_breaks_count_only_directly_inside_braces():
    # Windows line ends, comments, blank lines, params and outvars spread over lines,
    # and a nested jaxpr inside params (where line breaks count again).
    text = ("# leading comment\r\n{ lambda ; a:f32[3]. let   # after let\r\n\r\n"
            "    b:f32[] = reduce_sum[\r\n      axes=(\r\n 0,\r\n)\r\n    ] a\r\n"
            "    c:f32[] = jit[jaxpr={ lambda ; d:f32[]. let\n"
            "        e:f32[] = sin d\n      in (e,) }\n    name='f'] b\n"
            "  in (\n  b,\n  c,\n  )\n}\n\n# trailing comment")
    jaxpr = parse_jaxpr(text)
    assert [e.primitive.name for e in jaxpr.eqns] == ["reduce_sum", "jit"]
    assert jaxpr.eqns[0].params == {"axes": (0,)}
    assert pp_jaxpr(parse_jaxpr(pp_jaxpr(jaxpr))) == pp_jaxpr(jaxpr)
    with pytest.raises(ParseError, match="line 3, column 14: unexpected line break"):
        parse_jaxpr("{ lambda ; a:f32[]. let\n    b:f32[] = sin a\n    c:f32[] =\n"
                    "      cos b\n  in (c,) }")


def test_scanner_tells_arrows_from_opaque_params():
    # `<` after a place or a binder is `<-`; where a value starts it is `<repr>`,
    # even a repr that begins with `-`.
    kinds = [kind for kind, _, _ in scan("r[0] <-a\nb:f32[] <- r[0]\nf[x=<-1> y=<a<b>>]")]
    assert kinds == ["NAME", "[", "NUMBER", "]", "<-", "NAME", "NAME", "TYPE", "<-",
                     "NAME", "[", "NUMBER", "]", "NAME", "[", "NAME", "=", "OPAQUE",
                     "NAME", "=", "OPAQUE", "]", "EOF"]
    text = body("b:f32[] = sin[fn=<-lambda>] a")
    assert parse_jaxpr(text).eqns[0].params == {"fn": OpaqueParam("-lambda")}


def test_types_only_after_a_colon():
    # `c[0, 1]` reads like the type `c[0, 1]`; only after `:` is it one.
    tokens = scan("c[0, 1] <- x:f32[2, 3]~ y: Ref{i32[]}")
    assert [(kind, text) for kind, text, _ in tokens if kind in ("NAME", "TYPE")] == [
        ("NAME", "c"), ("NAME", "x"), ("TYPE", "f32[2, 3]~"), ("NAME", "y"),
        ("TYPE", "Ref{i32[]}")]


def test_keywords_and_empty_params():
    jaxpr = parse_jaxpr("{ lambda ; . let\n    a:f32[] = iota[dimension=0 dtype=float32 "
                        "shape=() sharding=None]\n  in (a,) }")
    assert jaxpr.eqns[0].primitive is P.iota_p
    # `name[` opens params, not a place, when `]` or `NAME =` follows
    jaxpr = parse_jaxpr(HEAD + "    free_ref[] r\n  in () }")
    assert jaxpr.eqns[0].primitive.name == "free_ref" and jaxpr.eqns[0].params == {}
    jaxpr = parse_jaxpr("{ lambda ; a:f32[]. let in (a,) }")    # one line: no breaks
    assert jaxpr.outvars == jaxpr.invars and not jaxpr.eqns


def test_parsing_from_threads():
    # Each parse keeps its own state: threads parsing different texts at once get
    # their own programs.
    texts = [dumps(_scaled_program(k)) for k in range(8)]
    results, errors = {}, []

    def work(k):
        try:
            for _ in range(20):
                results[k] = dumps(loads(texts[k]))
        except Exception as e:  # reported below, with the thread's index
            errors.append((k, e))
    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert [results[k] for k in range(8)] == texts


def _scaled_program(k):
    from minijax.ir import ShapedArray, bind, trace_to_jaxpr
    return trace_to_jaxpr(lambda x: [bind(P.mul_p, bind(P.sin_p, x), np.float32(k))],
                          [ShapedArray((k + 1,), np.dtype("float32"))])


def test_error_quotes_the_line_under_a_caret():
    with pytest.raises(ParseError) as info:
        parse_jaxpr("{ lambda ; a:f32[]. let\n    b:f32[] = sin q\n  in (b,) }")
    assert str(info.value) == ("line 2, column 19: undefined variable 'q'\n"
                               "        b:f32[] = sin q\n"
                               "                      ^")
    assert re.fullmatch(r"ParseError", type(info.value).__name__)
