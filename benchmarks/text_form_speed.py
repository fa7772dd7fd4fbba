"""Text-form speed: reading jaxprs back (`parse_jaxpr`, `loads`) against printing them.

    PYTHONPATH=. .venv/bin/python benchmarks/text_form_speed.py [--layers 100] [--rounds 7]

Two programs: `make_jaxpr(grad(mlp))` of a deep MLP (long, flat, mostly
`dot_general`/`add`/`tanh` with params), and a smaller program with refs, a
`fori_loop`, a `scan`, a `cond` and a nested `jit` (ref places with views and
dynamic indices, nested `{ lambda ... }` params, literals). For each, the human view
(`pp_jaxpr` / `parse_jaxpr`) and the exact form (`dumps` / `loads`, weak types and
constant values) are timed in interleaved rounds (print, parse, print, parse, ...),
each keeping its best CPU time. Printed: microseconds per equation (nested ones
counted) and per token (counted by `_TOKEN` below, the same way for any parser), and
parse time over print time.

Every traced jaxpr goes through print -> parse -> print when checks are on (the
test suite: `MINIJAX_ENABLE_CHECKS=1`; a text already read back is not read again).

Measured on the shared 2-core development machine (CPU, jax 0.10.2, load 3-6 from
other jobs), `PYTHONPATH=. .venv/bin/python benchmarks/text_form_speed.py`, two runs
each (one shown, the range of both in the text below).

Before: lark's LALR parser (contextual lexer, a postlexer for line breaks, the
builder called as each rule reduced):

    program           form    eqns  tokens  print ms  parse ms  us/eqn  us/token  parse/print
    mlp grad 100      human   1105   22542       6.4      76.4    69.2      3.39         11.9
    mlp grad 100      exact   1105   22542       6.6      74.3    67.2      3.29         11.2
    refs and loops    human     54     860       0.4       3.3    61.0      3.83          8.3
    refs and loops    exact     54     860       0.4       3.7    68.8      4.32          9.0

After: the hand-written scanner (ir/text_scanner.py) and recursive-descent parser
(ir/parser.py):

    program           form    eqns  tokens  print ms  parse ms  us/eqn  us/token  parse/print
    mlp grad 100      human   1105   22542       6.9      14.8    13.4      0.66          2.1
    mlp grad 100      exact   1105   22542       6.7      15.3    13.9      0.68          2.3
    refs and loops    human     54     860       0.4       0.7    13.1      0.82          1.7
    refs and loops    exact     54     860       0.4       0.7    13.5      0.85          1.7

Across the runs: parsing the MLP took 74-77 ms before and 14.8-16.6 ms after (4.5-5.2x
less; 3.3-3.4 against 0.66-0.74 us per token), and 11-12x the time of printing it
before, 2.1-2.3x after; the smaller program with refs, loops and nested jaxprs 3.3-3.7
ms before and 0.7 ms after. About half of what is left is the scanner (the regular
expression itself about 3 ms of the MLP's 15, the loop over its matches about 4.5).

In the test suite, the text-form check was a small share of the CPU time by then
(each distinct text is parsed once per process): over tests/test_vmap_rules.py and
tests/test_refs_jit.py, 813 checks, 1,113 parses, parsing took 1.19-1.32 s before and
0.27-0.28 s after, the whole check (verifier, printing, digests, parsing) 1.70-1.86 s
and 0.72-0.75 s, of 62-68 s of CPU for the two files.

On the GPU machine's host (twelfth round; an H100 machine's 16-core CPU, jax 0.11.2,
Python 3.12; printing and parsing never touch the device), one run:

    program           form    eqns  tokens  print ms  parse ms  us/eqn  us/token  parse/print
    mlp grad 100      human    905   20642      13.7      21.1    23.3      1.02          1.5
    mlp grad 100      exact    905   20642       7.9      27.6    30.5      1.34          3.5
    refs and loops    human     54     860       1.1       1.6    30.4      1.91          1.5
    refs and loops    exact     54     860       1.0       1.6    30.3      1.90          1.6

(That host's single core is slower than this machine's at this Python work.)
"""
from __future__ import annotations

import argparse
import re
import time

import numpy as np

import minijax
from minijax import lax
from minijax.ir import dumps, loads, parse_jaxpr, pp_jaxpr

WIDTH, BATCH = 16, 8

# A token of the text form, close enough to any parser's idea of one to normalise by:
# whole types, ref types, strings, numbers, names, the multi-character operators,
# `.at`/`.T`-style view names, then any other single character.
_TOKEN = re.compile(r"""Ref\{[^}]*\}|[a-z][a-z0-9]*(?:<[a-z0-9]+>)?\[[0-9, ]*\]~?
    |'(?:[^'\\\n]|\\.)*'|-?(?:0x[0-9a-fA-F]+|[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)
    |[A-Za-z_][A-Za-z0-9_]*|\.\.\.|<-|\+=|\.[A-Za-z]+|\n|\S""", re.X)


def mlp_grad_jaxpr(layers: int):
    def mlp(params, x):
        for W, b in params:
            h = lax.dot_general(x, W, (((1,), (0,)), ((), ())))
            x = lax.tanh(lax.add(h, lax.broadcast_in_dim(b, (BATCH, WIDTH), (1,))))
        return lax.reduce_sum(lax.mul(x, x), (0, 1))
    params = [(np.ones((WIDTH, WIDTH), np.float32), np.ones(WIDTH, np.float32))
              for _ in range(layers)]
    return minijax.make_jaxpr(minijax.grad(mlp))(params, np.ones((BATCH, WIDTH),
                                                                  np.float32))


def refs_and_loops_jaxpr():
    import minijax.numpy as jnp

    @minijax.jit
    def inner(v):
        return jnp.sin(v) * 2.0 + 1

    def program(x, table):
        acc = minijax.new_ref(jnp.zeros((4, 3), np.float32))

        def body(i, carry):
            acc[i % 4] = acc[i % 4] + carry
            acc.at[1:3].T[0, :] += x[0, :2]
            return inner(carry)
        out = lax.fori_loop(0, 5, body, x[0])

        def step(c, row):
            c = lax.cond(row[0] > 0, lambda v: v * 2.0, lambda v: v - 1.0, c)
            return c, c * table[0, 0]
        c, ys = lax.scan(step, out, x)
        return minijax.freeze(acc).sum() + c.sum() + ys.sum() + table[..., 1:].sum()
    return minijax.make_jaxpr(program)(np.ones((4, 3), np.float32),
                                      np.arange(6.0, dtype=np.float32).reshape(2, 3))


def count_eqns(jaxpr) -> int:
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    total = 0
    for eqn in jaxpr.eqns:
        total += 1
        for value in eqn.params.values():
            for item in value if isinstance(value, (tuple, list)) else (value,):
                if hasattr(item, "eqns") or hasattr(getattr(item, "jaxpr", None), "eqns"):
                    total += count_eqns(item)
    return total


def _cpu_seconds(fn, repeat: int) -> float:
    # CPU time, not wall time: the machine is shared, and pauses while other jobs run
    # are not this code's cost.
    start = time.process_time()
    for _ in range(repeat):
        fn()
    return (time.process_time() - start) / repeat


def measure(name, closed, rounds: int):
    rows = []
    for form, write, read in [("human", lambda: pp_jaxpr(closed.jaxpr), parse_jaxpr),
                              ("exact", lambda: dumps(closed), loads)]:
        text = write()
        assert write() == text and (pp_jaxpr(read(text)) if form == "human"
                                    else dumps(read(text))) == text, "no round trip"
        tokens = len(_TOKEN.findall(text))
        repeat = max(1, 2000 // max(1, count_eqns(closed)))
        best_print = best_parse = float("inf")
        for _ in range(rounds):
            best_print = min(best_print, _cpu_seconds(write, repeat))
            best_parse = min(best_parse, _cpu_seconds(lambda: read(text), repeat))
        eqns = count_eqns(closed)
        rows.append((name, form, eqns, tokens, best_print * 1e3, best_parse * 1e3,
                     best_parse * 1e6 / eqns, best_parse * 1e6 / tokens,
                     best_parse / best_print))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    rows = measure(f"mlp grad {args.layers}", mlp_grad_jaxpr(args.layers), args.rounds)
    rows += measure("refs and loops", refs_and_loops_jaxpr(), args.rounds)
    print(f"{'program':<17} {'form':<6} {'eqns':>5} {'tokens':>7} {'print ms':>9} "
          f"{'parse ms':>9} {'us/eqn':>7} {'us/token':>9} {'parse/print':>12}")
    for name, form, eqns, tokens, print_ms, parse_ms, per_eqn, per_token, ratio in rows:
        print(f"{name:<17} {form:<6} {eqns:>5} {tokens:>7} {print_ms:>9.1f} "
              f"{parse_ms:>9.1f} {per_eqn:>7.1f} {per_token:>9.2f} {ratio:>12.1f}")


if __name__ == "__main__":
    main()
