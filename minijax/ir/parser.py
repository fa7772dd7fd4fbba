"""Text -> Jaxpr: `parse_jaxpr` reads the human view, `loads` the exact form.

Read `printer.py` first (it explains the text form). `text_scanner.py` cuts the text
into tokens; this module reads them by recursive descent, one method per rule of the
grammar below, and turns them into immutable core objects as it goes:

* No parse tree is built: equations are made as they are read. That is also how
  scoping works: reading `{ lambda` opens a fresh scope (nested jaxprs are closed,
  they see none of the outer names), binders are defined when read, and a variable
  must be defined before it is used. An equation's outputs are defined only after its
  inputs are resolved, so `a:f32[] = sin a` is an error.
* Primitives are looked up by name in `primitives_by_name`, and every equation's
  effects are recomputed with `effects_of`, exactly as tracing computes them. Types
  are taken from the text as written; checking them is the verifier's job.
* Registered param objects (`save_only_these_names('h')`) are rebuilt through
  `param_constructors` (see printer.py for the protocol); constants' elements and
  literals are read by `text_values.py`, once their type says what they must be.
* Every error is a `ParseError` naming line and column, quoting the line, and saying
  what was expected.
* A parse keeps its state in its own `_Parser`, so threads may parse at once.

The grammar (EBNF: `x?` optional, `x*` any number, `|` or, quoted text is literal).
Tokens are text_scanner.py's: NL is a line break that counts (directly inside
`{ ... }`), TYPE is a type after its `:` (`:f32[3]~`, `:Ref{f32[]}`), NAME, NUMBER
(`-1.5e3`, `0x7f`), STRING (`'it\\'s'`), OPAQUE (`<jvp=<lambda>>`).

    jaxpr      = "{" "lambda" constvar* ";" binder* "." "let" NL? (eqn NL)*
                 "in" outvars NL? "}"
    constvar   = binder ("=" value)?           value: exact form only (see below)
    binder     = NAME TYPE
    outvars    = "(" ")" | "(" atom ("," atom)* ","? ")"
    eqn        = binder+ "=" operation
               | operation                     no outputs: `free_ref c`
               | binder "<-" place             get
               | place "<-" atom               swap, result unused
               | binder "," place "<-" place "," atom     swap (the same place twice)
               | place "+=" atom               addupdate
    operation  = NAME ("[" (NAME "=" value)* "]")? atom*
    place      = NAME view* "[" index "]"
    view       = ".at" "[" index "]" | ".T"
               | ".reshape" "(" int_list ")" | ".transpose" "(" int_list ")"
    int_list   = (NUMBER ("," NUMBER)* ","?)?
    index      = item ("," item)*
    item       = "..." | NAME | NUMBER | NUMBER TYPE
               | NUMBER? ":" NUMBER? (":" NUMBER?)?
               | start ":" start "+" NUMBER (":" NUMBER)?     a `ds` slice, `i:i+3`
    start      = NAME | NUMBER TYPE                          the same atom twice
    atom       = NAME | scalar TYPE            a variable, or a literal `2.0:f32[]`
    scalar     = NUMBER | NAME | "-" NAME | call
    value      = scalar | STRING | OPAQUE | tuple | list | jaxpr
    tuple      = "(" ")" | "(" value "," ")" | "(" value ("," value)+ ","? ")"
    list       = "[" (value ("," value)* ","?)? "]"
    call       = NAME "(" (value ("," value)*)? ")"

An operation's `[` opens params when `]` or `NAME =` follows it, else it is a place's
index. A place's index items are NumPy's (ref_indexing.py): `...`, a static int, a
slice, `None` (a new axis), a dynamic index -- a variable or a literal `2:i32[]` --
which becomes an input of the equation, or a slice from a dynamic start, `i:i+3`
(`minijax.ds(i, 3)`: the start, then the start plus the slice's span, and a step).
`in`, `let` and `lambda` are keywords where the grammar has them (the printer never
names a variable so).

The exact form (`dumps`) differs from the human view in two places: weak types carry
a trailing `~` (`f32[]~`), and each constvar is followed by its value, a scalar or
nested [..] lists shaped like its type, whose elements are Python-style ints and
decimals, True/False, nan, -nan, inf, -inf, `complex(RE, IM)`, `bits(0x7fc00001)` (a
float by its bit pattern) and `fry(WORD, WORD)` (a key). The human view never writes
constant values; `parse_jaxpr` accepts and drops them.
"""
from __future__ import annotations

import ast
import functools

import numpy as np

from .core import Var, Literal, Eqn, Jaxpr, ClosedJaxpr
from .primitives import primitives_by_name, effects_of, get_p, swap_p, addupdate_p
from .printer import DTYPES_BY_NAME, OpaqueParam, param_constructors
from .ref_indexing import RefIndexer, Transpose, Reshape, step_shape, indexer_shape
from .ref_python_index import DSlice, build_index
from .text_scanner import ParseError, TokenReader
from .text_values import Call, number, read_elements, read_integer
from .types import ShapedArray, RefType, dtype_from_short_name

__all__ = ["parse_jaxpr", "loads", "ParseError", "param_constructors"]

_NAMED_PARAM_VALUES = {"True": True, "False": False, "None": None, "inf": float("inf"),
                       "-inf": float("-inf"), "nan": float("nan"), "-nan": float("-nan")}
_VIEWS = frozenset({".at", ".T", ".reshape", ".transpose"})
_TYPE_EXPECTED = "a type such as f32[3] or Ref{f32[3]}"


@functools.lru_cache(maxsize=4096)     # a program names few types, many times each
def _aval_of_type(text: str):
    """The aval a TYPE token spells: `f32[2,3]`, `f32[]~` (weak), `Ref{i32[4]}`."""
    is_ref = text.startswith("Ref{")
    if is_ref:
        text = text[4:-1]
    dtype_name, rest = text.split("[", 1)
    dtype = dtype_from_short_name(dtype_name)
    dims = rest[:rest.index("]")].replace(" ", "")
    shape = tuple(int(d) for d in dims.split(",")) if dims else ()
    inner = ShapedArray(shape, dtype, weak_type=text.endswith("~"))
    return RefType(inner) if is_ref else inner


class _Parser(TokenReader):
    """One parse: the tokens, the position in them (see TokenReader), the open scopes."""

    def __init__(self, text: str, require_values: bool):
        super().__init__(text)
        self.require_values = require_values
        self.scopes: list[dict[str, Var]] = []
        self.scope: dict[str, Var] = {}   # the innermost one

    # -- variables and types --------------------------------------------------------

    def define(self, name, aval) -> Var:
        if name[1] in self.scope:
            raise self.error(f"variable '{name[1]}' is defined twice", name[2])
        var = self.scope[name[1]] = Var(aval)
        return var

    def lookup(self, name) -> Var:
        var = self.scope.get(name[1])
        if var is None:
            raise self.error(f"undefined variable '{name[1]}'", name[2])
        return var

    def type_token(self):
        """The TYPE token next; if it is missing, say whether the `:` or the type is."""
        token = self.tokens[self.at]
        if token[0] == "TYPE":
            self.at += 1
            return token
        if token[0] == ":":
            self.at += 1
            raise self.unexpected(_TYPE_EXPECTED)
        raise self.unexpected("':'")

    def aval(self, type_token):
        try:
            return _aval_of_type(type_token[1])
        except ValueError as e:     # an unknown dtype name, which follows `Ref{` if any
            position = type_token[2] + 4 * type_token[1].startswith("Ref{")
            raise self.error(str(e), position) from None

    def binder(self):
        name = self.tokens[self.at]
        self.at += 1
        return name, self.aval(self.type_token())

    # -- jaxprs -----------------------------------------------------------------------

    def jaxpr(self):
        tokens = self.tokens
        self.expect("{", "'{'")
        self.keyword("lambda")
        self.scopes.append(self.scope)
        self.scope = {}
        consts = []
        while tokens[self.at][0] == "NAME":
            name, aval = self.binder()
            node = None
            if tokens[self.at][0] == "=":
                self.at += 1
                node = self.value(raw=True)
            consts.append((name, aval, node))
        if tokens[self.at][0] != ";":
            raise self.unexpected("';'", "a name")
        self.at += 1
        constvars, values = [], []
        for name, aval, node in consts:
            values.append(None if node is None else
                          read_elements(node, aval, name[2], self.error))
            constvars.append(self.define(name, aval))
        invars = []
        while tokens[self.at][0] == "NAME":
            name, aval = self.binder()
            invars.append(self.define(name, aval))
        if tokens[self.at][0] != ".":
            raise self.unexpected("'.'", "a name")
        self.at += 1
        self.keyword("let")
        if tokens[self.at][0] == "NL":
            self.at += 1
        eqns = []
        while True:
            kind, token_text, _ = tokens[self.at]
            if kind == "NAME" and token_text == "in":
                break
            eqns.append(self.eqn())
            self.expect("NL", "a line break")
        self.at += 1
        outvars = self.outvars()
        if tokens[self.at][0] == "NL":
            self.at += 1
        self.expect("}", "'}'")
        self.scope = self.scopes.pop()
        jaxpr = Jaxpr(constvars, invars, eqns, outvars)
        missing = [name for (name, _, _), value in zip(consts, values) if value is None]
        if missing and (len(missing) < len(consts) or self.require_values
                        and not self.scopes):
            raise self.error(f"constvar '{missing[0][1]}' has no value; the exact form "
                             f"writes `{missing[0][1]}:TYPE = VALUE`", missing[0][2])
        if consts and not missing:
            return ClosedJaxpr(jaxpr, values)
        return jaxpr

    def outvars(self):
        self.expect("(", "'('")
        atoms = []
        while self.tokens[self.at][0] != ")":
            atoms.append(self.atom())
            if self.tokens[self.at][0] != ",":
                break
            self.at += 1
        self.expect(")", "')'" if not atoms else "')' or ','")
        return atoms

    # -- equations --------------------------------------------------------------------

    def eqn(self) -> Eqn:
        tokens = self.tokens
        if tokens[self.at][0] != "NAME":
            raise self.unexpected("'in'", "a name")
        follow = tokens[self.at + 1][0]
        if follow == "TYPE":
            binders = [self.binder()]
            kind = tokens[self.at][0]
            if kind == "<-":
                return self.get(binders[0])
            if kind == ",":
                return self.swap(binders[0])
            while tokens[self.at][0] == "NAME" and tokens[self.at + 1][0] == "TYPE":
                binders.append(self.binder())
            if tokens[self.at][0] != "=":
                raise self.unexpected("'='", "a name", *(("'<-'", "','") if len(binders)
                                                         == 1 else ()))
            self.at += 1
            prim, params, inputs, where = self.operation()
            outvars = [self.define(name, aval) for name, aval in binders]
            return self.make_eqn(prim, inputs, params, outvars, where)
        if follow in _VIEWS or follow == "[" and not self.params_follow():
            ref, params, dynamic, where = self.place()
            kind = tokens[self.at][0]
            if kind not in ("<-", "+="):
                raise self.unexpected("'<-'", "'+='")
            self.at += 1
            value = self.atom()
            if kind == "+=":
                return self.make_eqn(addupdate_p, [ref, value, *dynamic], params, [], where)
            out = Var(_place_aval(ref, params, dynamic))
            return self.make_eqn(swap_p, [ref, value, *dynamic], params, [out], where)
        prim, params, inputs, where = self.operation()
        return self.make_eqn(prim, inputs, params, [], where)

    def params_follow(self) -> bool:
        """After `NAME [`: do params follow (`]` or `NAME =`), not a place's index?"""
        kind = self.tokens[self.at + 2][0]
        return kind == "]" or kind == "NAME" and self.tokens[self.at + 3][0] == "="

    def make_eqn(self, prim, inputs, params, outputs, where) -> Eqn:
        try:
            effects = effects_of(prim, [a.aval for a in inputs], params)
        except Exception as e:  # an effect rule meeting ill-typed input fails anyhow
            raise self.error(f"cannot work out the effects of {prim.name}: {e}",
                             where[2]) from None
        return Eqn(prim, inputs, params, outputs, effects, source_info=None)  # text has none

    def operation(self):
        tokens = self.tokens
        name = self.expect("NAME", "a name")
        prim = primitives_by_name.get(name[1])
        if prim is None:
            raise self.error(f"unknown primitive '{name[1]}'", name[2])
        params = self.params() if tokens[self.at][0] == "[" else {}
        inputs = []
        while True:
            kind, token_text, _ = tokens[self.at]
            if kind == "NAME" and token_text != "in" or kind == "NUMBER" or kind == "-":
                inputs.append(self.atom())
            else:      # `in` here: a line break is missing
                return prim, params, inputs, name

    def params(self) -> dict:
        tokens = self.tokens
        self.at += 1                                        # the `[`
        params = {}
        while tokens[self.at][0] == "NAME":
            name = tokens[self.at]
            self.at += 1
            self.expect("=", "'='")
            value = self.value(raw=False)
            if name[1] in params:
                raise self.error(f"param '{name[1]}' is given twice", name[2])
            params[name[1]] = value
        if tokens[self.at][0] != "]":
            raise self.unexpected("']'", "a name")
        self.at += 1
        return params

    # -- ref sugar --------------------------------------------------------------------
    #
    # `place` resolves `r.at[..].T[..]` step by step against the ref's shape, turning
    # each index into an `Index` with `ref_indexing.build_index` (the same function
    # `r[...]` uses in Python, so the text means what the Python would) and collecting
    # dynamic index atoms, which become the equation's trailing inputs.

    def get(self, binder) -> Eqn:
        self.at += 1                                        # the `<-`
        ref, params, dynamic, where = self.place()
        return self.make_eqn(get_p, [ref, *dynamic], params, [self.define(*binder)], where)

    def swap(self, binder) -> Eqn:
        self.at += 1                                        # the `,`
        ref, params, dynamic, where = self.place()
        self.expect("<-", "'<-'")
        ref2, params2, dynamic2, where2 = self.place()
        if ref2 is not ref or params2 != params or len(dynamic) != len(dynamic2) or not all(
                _same_atom(a, b) for a, b in zip(dynamic, dynamic2)):
            raise self.error("a swap reads and writes the same place; expected the "
                             "place written before '<-' here", where2[2])
        self.expect(",", "','")
        value = self.atom()
        return self.make_eqn(swap_p, [ref, value, *dynamic], params,
                             [self.define(*binder)], where)

    def place(self):
        tokens = self.tokens
        name = self.expect("NAME", "a name")
        views = []
        while True:
            kind = tokens[self.at][0]
            if kind == "[":
                break
            if kind not in _VIEWS:
                raise self.unexpected("'['", "'.at'", "'.T'", "'.reshape'", "'.transpose'")
            self.at += 1
            if kind == ".at":
                views.append(("index", self.bracketed_index()))
            elif kind == ".T":
                views.append(("T", None))
            else:
                views.append((kind[1:], self.int_list()))
        index = self.bracketed_index()
        ref = self.lookup(name)
        if not isinstance(ref.aval, RefType):
            raise self.error(f"'{name[1]}' is indexed like a ref but has type "
                             f"{ref.aval.type_text()}", name[2])
        shape, steps, dynamic = ref.aval.shape, [], []
        for kind, payload in [*views, ("index", index)]:
            values = []
            if kind == "index":
                step, values = self._index_step(shape, payload, name)
                dynamic += values
            elif kind == "reshape":
                step = Reshape(tuple(payload))
            else:
                step = Transpose(tuple(payload) if kind == "transpose"
                                 else tuple(reversed(range(len(shape)))))
            try:
                shape = step_shape(shape, step, [a.aval for a in values])
            except ValueError as e:
                raise self.error(f"bad index of '{name[1]}': {e}", name[2]) from None
            steps.append(step)
        if len(steps) == 1 and not steps[0].items:
            return ref, {}, [], name
        return ref, {"indexer": RefIndexer(tuple(steps))}, dynamic, name

    def _index_step(self, shape, raw_items, name):
        def error(cls, message):
            return self.error(f"bad index of '{name[1]}': {message}", name[2])
        return build_index(shape, tuple(raw_items),
                           lambda x: isinstance(x, (Var, Literal)), error)

    def int_list(self) -> list[int]:
        self.expect("(", "'('")
        ints = []
        while self.tokens[self.at][0] == "NUMBER":
            ints.append(read_integer(self.tokens[self.at], "an integer", self.error))
            self.at += 1
            if self.tokens[self.at][0] != ",":
                break
            self.at += 1
        self.expect(")", "')'" if not ints else "')' or ','")
        return ints

    def bracketed_index(self) -> list:
        self.expect("[", "'['")
        items = [self.index_item()]
        while self.tokens[self.at][0] == ",":
            self.at += 1
            items.append(self.index_item())
        self.expect("]", "']' or ','")
        return items

    def index_item(self):
        token = self.tokens[self.at]
        kind = token[0]
        if kind == "...":
            self.at += 1
            return Ellipsis
        if kind == "NAME":
            self.at += 1
            if token[1] == "None":
                return None
            return self.dynamic_slice(self.lookup(token), token)
        follow = self.tokens[self.at + 1][0]
        if kind == "NUMBER" and follow == "TYPE":
            self.at += 1
            return self.dynamic_slice(self.literal(token, self.type_token()), token)
        if kind == "NUMBER" and follow != ":":
            self.at += 1
            return read_integer(token, "an integer index", self.error)
        if kind != "NUMBER" and kind != ":":
            raise self.unexpected("'...'", "':'", "a name", "a number")
        parts = [self.slice_bound()]                       # start:stop(:step)?
        for _ in range(2):
            if self.tokens[self.at][0] != ":":
                break
            self.at += 1
            parts.append(self.slice_bound())
        return slice(*parts)

    def dynamic_slice(self, start, token):
        """After a dynamic index `start`: `start`, or with `:start+SPAN(:STRIDE)?`
        following, the `ds` slice it begins (size and stride from span and step, as
        the Python slice `i:i+SPAN:STRIDE` has them)."""
        if self.tokens[self.at][0] != ":":
            return start
        self.at += 1
        again = self.tokens[self.at]
        if again[0] == "NAME":
            self.at += 1
            repeated = self.lookup(again)
        elif again[0] == "NUMBER" and self.tokens[self.at + 1][0] == "TYPE":
            self.at += 1
            repeated = self.literal(again, self.type_token())
        else:
            raise self.unexpected(f"'{token[1]}' again (a slice from a dynamic start is "
                                  f"written {token[1]}:{token[1]}+SIZE)")
        if not _same_atom(start, repeated):
            raise self.error(f"a slice from a dynamic start repeats its start: expected "
                             f"'{token[1]}' here", again[2])
        self.expect("+", "'+'")
        span_token = self.expect("NUMBER", "the slice's span")
        span = read_integer(span_token, "the span of a slice", self.error)
        stride = 1
        if self.tokens[self.at][0] == ":":
            self.at += 1
            stride_token = self.expect("NUMBER", "the slice's step")
            stride = read_integer(stride_token, "the step of a slice", self.error)
        if span < 0 or stride < 1:
            raise self.error(f"a slice from a dynamic start needs a span >= 0 and a step "
                             f">= 1, got +{span}:{stride}", span_token[2])
        return DSlice(start, len(range(0, span, stride)), stride)

    def slice_bound(self):
        token = self.tokens[self.at]
        if token[0] != "NUMBER":
            return None
        self.at += 1
        return read_integer(token, "an integer slice bound", self.error)

    # -- atoms and values -------------------------------------------------------------

    def atom(self):
        tokens = self.tokens
        token = tokens[self.at]
        kind = token[0]
        if kind == "NAME":
            follow = tokens[self.at + 1][0]
            if follow != "TYPE" and follow != "(":
                self.at += 1
                return self.lookup(token)
        elif kind != "NUMBER" and kind != "-":
            raise self.unexpected("a name", "a number")
        node = self.value(raw=True)
        return self.literal(node, self.type_token())

    def literal(self, node, type_token) -> Literal:
        aval = self.aval(type_token)
        if not isinstance(aval, ShapedArray) or aval.shape != ():
            raise self.error(f"a literal must have a scalar array type, not "
                             f"{aval.type_text()}", type_token[2])
        return Literal(read_elements(node, aval, type_token[2], self.error), aval)

    def value(self, raw: bool):
        """A value; as a param value if not `raw`, else unconverted (a token, a `Call`
        or nested lists) for `text_values` to read as array elements."""
        tokens = self.tokens
        token = tokens[self.at]
        kind = token[0]
        self.at += 1
        if kind == "NAME":
            if tokens[self.at][0] == "(":
                args = self.call_args(raw)
                return Call(token, args) if raw else self.construct(token, args)
            return token if raw else self.named_value(token)
        if kind == "NUMBER":
            return token if raw else number(token[1])
        if kind == "[":
            items = []
            while tokens[self.at][0] != "]":
                items.append(self.value(raw))
                if tokens[self.at][0] != ",":
                    break
                self.at += 1
            self.expect("]", "']'" if not items else "']' or ','")
            return items
        if kind == "(":
            return self.tuple_rest(raw)
        if kind == "-":
            name = self.expect("NAME", "a name")
            token = ("NAME", "-" + name[1], name[2])
            return token if raw else self.named_value(token)
        if kind == "{":
            self.at -= 1
            return self.jaxpr()
        if kind == "STRING" and not raw:
            return ast.literal_eval(token[1]) if "\\" in token[1] else token[1][1:-1]
        if kind == "OPAQUE" and not raw:
            return OpaqueParam(token[1][1:-1])
        self.at -= 1
        raise self.unexpected("a value" if not raw else "an array element")

    def tuple_rest(self, raw: bool):
        tokens = self.tokens
        opening, items = tokens[self.at - 1], []
        while tokens[self.at][0] != ")":
            items.append(self.value(raw))
            if tokens[self.at][0] != ",":
                if len(items) == 1:     # `(x)` is not a tuple
                    raise self.unexpected("','")
                break
            self.at += 1
        self.expect(")", "')'" if not items else "')' or ','")
        if raw:
            raise self.error("expected an array element or a [..] list, got a tuple",
                             opening[2])
        return tuple(items)

    def call_args(self, raw: bool) -> list:
        self.at += 1                                        # the `(`
        args = []
        if self.tokens[self.at][0] != ")":
            args.append(self.value(raw))
            while self.tokens[self.at][0] == ",":
                self.at += 1
                args.append(self.value(raw))
        self.expect(")", "')'" if not args else "')' or ','")
        return args

    def named_value(self, token):
        name = token[1]
        if name in _NAMED_PARAM_VALUES:
            return _NAMED_PARAM_VALUES[name]
        dtype = DTYPES_BY_NAME.get(name)
        if dtype is None:
            raise self.error(f"unknown name '{name}' in a param value; expected True, "
                             f"False, None, inf, nan or a dtype name such as float32",
                             token[2])
        return dtype

    def construct(self, name, args):
        constructor = param_constructors.get(name[1])
        if constructor is None:
            raise self.error(f"unknown param constructor '{name[1]}'; known: "
                             f"{sorted(param_constructors) or 'none'}", name[2])
        try:
            return constructor(*args)
        except Exception as e:  # a user-registered constructor rejecting its args
            raise self.error(f"{name[1]}(...) failed: {e}", name[2]) from None


def _place_aval(ref, params, dynamic) -> ShapedArray:
    """The type of the unused result of `r[idx] <- v`: the indexed part of the ref."""
    inner = ref.aval.inner
    indexer = params.get("indexer")
    if indexer is None:
        return inner
    return inner.update(shape=indexer_shape(inner.shape, indexer,
                                            [a.aval for a in dynamic]))


def _same_atom(a, b) -> bool:
    """One index atom written twice: the same variable, or equal literals (each
    literal in the text parses to its own `Literal`)."""
    if isinstance(a, Literal) and isinstance(b, Literal):
        return a.aval == b.aval and np.array_equal(a.value, b.value)
    return a is b


# -- entry points -----------------------------------------------------------------------

def _parse(text: str, require_values: bool):
    parser = _Parser(text, require_values)
    result = parser.jaxpr()
    parser.expect("EOF", "the end of the text")
    return result


def parse_jaxpr(text: str) -> Jaxpr:
    """Read a jaxpr in the human view (`print(jaxpr)`). Constvars stay constvars;
    constant values, if the text has them, are dropped."""
    result = _parse(text, require_values=False)
    return result.jaxpr if isinstance(result, ClosedJaxpr) else result


def loads(text: str) -> ClosedJaxpr:
    """Read the exact form written by `dumps`: the same program, weak types and
    constant values included."""
    result = _parse(text, require_values=True)
    return result if isinstance(result, ClosedJaxpr) else ClosedJaxpr(result, [])
