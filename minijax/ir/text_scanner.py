"""The text form's tokens: IR text -> a list of `(kind, text, position)` tuples.

`parser.py` reads the tokens this module makes. One compiled regular expression
(`_TOKEN`) finds them, left to right; a token is a plain tuple (cheap to make, and a
printed 1000-equation program has tens of thousands):

    kind      "NAME", "NUMBER", "TYPE", "STRING", "OPAQUE", "NL", "EOF", "BAD", or for
              punctuation the text itself: "{", "<-", "...", ".at", ...
    text      the characters; for a TYPE only the type (`f32[3]~`, `Ref{f32[]}`)
    position  the offset of its first character in the text (`line_and_column`
              turns it into what an error message shows)

Three places where a character alone does not say what the token is:

* A type is a token only right after a `:` (`a:f32[3]`, `1.0:f32[]`, `2:i32[]` in an
  index): elsewhere `c[0]` is a name and an index. The `:` is part of the match and
  a TYPE token stands for both; between them only spaces and tabs may come.
* `<` starts `<-` after a place or a binder, and an opaque param (`<jvp=<lambda>>`)
  where a value may start, after `=`, `(`, `[` or `,`.
* Line breaks end equations, so they count directly inside `{ ... }`; inside ( ) and
  [ ] they are dropped, as in Python, which lets long params spread over lines; a
  nested `{ lambda ... }` inside them counts them again. A break right after `{` or
  after another kept break is dropped too (blank lines cost nothing), as are
  comments (`# ...`) and the break at the end of the text.

A character no token can start is a BAD token, so the parser reports it with what it
expected there. Errors in the text are `ParseError`s, defined here with `TokenReader`,
which walks the tokens for the parser and makes its errors.
"""
from __future__ import annotations

import re

from .trace import MinijaxError

__all__ = ["scan", "line_and_column", "ParseError", "TokenReader"]

_ARRAY_TYPE = r"[a-z][a-z0-9_]*(?:<[a-z0-9]+>)?\[[0-9, ]*\]~?"
_OPAQUE_PARAM = r"<(?:[^<>\n]|<[^<>\n]*>)*>"       # a repr in <..>, nested once at most
# Blanks before a token are part of its match (fewer matches to loop over); the
# token itself is the named group that matched, `lastgroup`.
_TOKEN = re.compile(rf"""[ \t\f\r]*(?:
    (?P<NAME>[A-Za-z_][A-Za-z0-9_]*)
  | :[ \t]*(?P<TYPE>Ref\{{{_ARRAY_TYPE}\}}|{_ARRAY_TYPE})
  | (?P<NUMBER>-?(?:0x[0-9a-fA-F]+|[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?))
  | (?P<PUNCTUATION>\.\.\.|\.(?:at|T|reshape|transpose)(?![A-Za-z0-9_])|<-|\+=
                   |[{{}}()\[\]:;.=,+-])
  | (?P<NL>\n)
  | (?P<COMMENT>\#[^\n]*)
  | (?P<STRING>'(?:[^'\\\n]|\\.)*')
  | (?P<OPAQUE>{_OPAQUE_PARAM})
  | (?P<BAD>[^ \t\f\r]))""", re.X)
_OPAQUE = re.compile(_OPAQUE_PARAM)
_VALUE_STARTS = frozenset("=([,")        # where `<` opens an opaque param, not `<-`
_OPENERS = frozenset("{([")
_CLOSERS = frozenset("})]")


def scan(text: str) -> list[tuple[str, str, int]]:
    """The tokens of `text`, ending with an EOF token."""
    tokens = []
    append = tokens.append
    brackets = []            # the open ( [ { around the current token
    previous = "{"           # kind of the last token kept; no break counts after one
    resume_at = 0
    while resume_at is not None:
        matches, resume_at = _TOKEN.finditer(text, resume_at), None
        for match in matches:
            kind = match.lastgroup
            if kind == "PUNCTUATION":
                kind = match.group(kind)
                if kind in _OPENERS:
                    brackets.append(kind)
                elif kind in _CLOSERS:
                    if brackets:
                        brackets.pop()    # a mismatch is the parser's to report
                elif kind == "<-" and previous in _VALUE_STARTS:
                    opaque = _OPAQUE.match(text, match.start("PUNCTUATION"))
                    if opaque is not None:   # rare: an opaque param reading `<-...>`
                        append(("OPAQUE", opaque.group(), opaque.start()))
                        previous, resume_at = "OPAQUE", opaque.end()
                        break
                append((kind, kind, match.start("PUNCTUATION")))
            elif kind == "NL":
                if brackets and brackets[-1] == "{" and previous != "NL" \
                        and previous != "{":
                    append(("NL", "\n", match.start(kind)))
                    previous = "NL"
                continue
            elif kind == "COMMENT":
                continue
            else:
                append((kind, match.group(kind), match.start(kind)))
            previous = kind
    append(("EOF", "", len(text)))
    return tokens


def line_and_column(text: str, position: int) -> tuple[int, int]:
    """The 1-based line and column of the character at `position` in `text`."""
    line_start = text.rfind("\n", 0, position) + 1
    return text.count("\n", 0, position) + 1, position - line_start + 1


class ParseError(MinijaxError, ValueError):
    """Malformed IR text. `line` and `column` are 1-based."""

    def __init__(self, message: str, line: int, column: int, text: str | None = None):
        self.message, self.line, self.column = message, line, column
        where = f"line {line}, column {column}: {message}"
        lines = text.splitlines() if text is not None else []
        if 1 <= line <= len(lines):
            where += f"\n    {lines[line - 1]}\n    {' ' * (column - 1)}^"
        super().__init__(where)


class TokenReader:
    """The tokens of one text and the position in them, for a recursive-descent
    parser: look at `tokens[at]`, step past what fits, and make errors that point at
    a token or a position and say what was expected."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = scan(text)
        self.at = 0                      # index of the next token

    def error(self, message: str, position: int) -> ParseError:
        return ParseError(message, *line_and_column(self.text, position), self.text)

    def unexpected(self, *expected: str) -> ParseError:
        """The error for the next token, which is none of `expected`."""
        kind, token_text, position = self.tokens[self.at]
        if kind == "EOF":
            found = "end of text"
            lines = self.text.splitlines() or [""]
            line, column = len(lines), len(lines[-1]) + 1
        else:
            found = "line break" if kind == "NL" else repr(token_text)
            line, column = line_and_column(self.text, position)
        message = f"unexpected {found}"
        if expected:
            message += f"; expected {' or '.join(sorted(expected))}"
        return ParseError(message, line, column, self.text)

    def expect(self, kind: str, description: str):
        """The next token, which must be of `kind` (else an error: `description`)."""
        token = self.tokens[self.at]
        if token[0] != kind:
            raise self.unexpected(description)
        self.at += 1
        return token

    def keyword(self, word: str):
        kind, token_text, _ = self.tokens[self.at]
        if kind != "NAME" or token_text != word:
            raise self.unexpected(f"'{word}'")
        self.at += 1
