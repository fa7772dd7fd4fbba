"""The command line: `python -m minijax rules`, `repl [FILE]`, `run`, `diff`, `check`, `fuzz`.

`rules` prints the primitive x pass coverage table: one row per primitive in
`minijax.ir.primitives.primitives_by_name`, one column per rule table registered
with `register_rule_table` (type rules, XLA lowering, and every pass's table), so a
hole -- a primitive some pass cannot handle yet -- is one glance away. `repl` starts
the REPL of `minijax/repl/` (docs/repl.md). `run SCRIPT.py` runs a JAX script on
minijax, `diff SCRIPT.py` runs it on both and compares, and `check FILE.py` cross-checks
a file's functions (docs/cross_check.md). `fuzz` generates random programs and
checks each against JAX (docs/fuzzing.md).
"""
from __future__ import annotations

import argparse
import sys

from . import interop  # noqa: F401  (registers the import/export columns of the bridge)
from .ir.primitives import primitives_by_name, rule_tables, generic_paths


def coverage_table(primitives_by_name: dict, rule_tables: dict, generic_paths: dict, *,
                   covered: str = "✓", generic: str = "-", missing: str = "·") -> str:
    """The coverage table as text: rows are primitives sorted by name, columns are
    rule tables in registration order. A cell is `covered` when the table has a rule
    for the primitive, `generic` when the pass's generic path serves it (see
    `GenericPath` in ir/primitives.py) and `missing` otherwise. Then a legend and a
    line counting each column's holes."""
    columns = list(rule_tables)
    names = sorted(primitives_by_name)
    name_width = max([len("primitive"), *map(len, names)])
    widths = [max(len(column), 1) for column in columns]

    def row(first, cells):
        return "  ".join([first.ljust(name_width),
                          *(cell.ljust(w) for cell, w in zip(cells, widths))]).rstrip()

    def cell(prim, column):
        if prim in rule_tables[column]:
            return covered
        path = generic_paths.get(column)
        return generic if path is not None and path.serves(prim) else missing

    lines = [row("primitive", columns)]
    cells = {name: [cell(primitives_by_name[name], c) for c in columns] for name in names}
    lines += [row(name, cells[name]) for name in names]
    holes = [sum(cells[name][i] == missing for name in names) for i in range(len(columns))]
    lines.append("")
    lines.append(f"{covered} a rule of its own   {generic} the pass's generic path   "
                 f"{missing} a hole")
    lines += [f"  {generic} in {column}: {path.description}"
              for column, path in generic_paths.items() if column in rule_tables]
    lines.append(f"{len(names)} primitives; holes per column: "
                 + ", ".join(f"{column} {n}" for column, n in zip(columns, holes)))
    return "\n".join(lines)


def _rules(args) -> int:
    covered, missing = "✓", "·"
    try:
        (covered + missing).encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        covered, missing = "x", "."
    print(coverage_table(primitives_by_name, rule_tables, generic_paths, covered=covered,
                         missing=missing))
    return 0


def _repl(args) -> int:
    # Imported here: the REPL's session imports `minijax.ad_checkpoint` (its users
    # need no import line), which a script under `run` must import itself, as on JAX.
    from .repl import run_repl
    return run_repl(args.file, echo=args.echo)


def _run(args) -> int:
    from .interop.run_hook import run_script
    run_script(args.script, args.args)
    return 0


def _diff(args) -> int:
    from .testing.commands import diff_script
    status, text = diff_script(args.script, args.args)
    print(text)
    return status


def _check(args) -> int:
    from .testing.commands import check_file
    split = (lambda text: None if text is None else
             tuple(t.strip() for t in text.split(",") if t.strip()))
    status, text = check_file(args.target, args.args, split(args.transforms),
                              split(args.policies), args.out)
    print(text)
    return status


def _fuzz(args) -> int:
    from .testing import fuzz
    from .testing.fuzz_run import run_campaign
    if args.list_primitives:
        print(fuzz.list_primitives())
        return 0
    if args.n is None and args.time is None:
        print("fuzz: give --n PROGRAMS or --time SECONDS (or --list-primitives)",
              file=sys.stderr)
        return 2
    split = (lambda text: None if text is None else
             tuple(t.strip() for t in text.split(",") if t.strip()))
    try:
        campaign = run_campaign(args.seed, n=args.n, seconds=args.time,
                                features=split(args.features), transforms=split(args.transforms),
                                out=args.out, jobs=args.jobs,
                                stream=None if args.quiet else sys.stderr)
    except ValueError as error:
        print(f"fuzz: {error}", file=sys.stderr)
        return 2
    print(campaign)
    return 1 if campaign.unexplained else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m minijax",
        description="minijax: a small, readable re-implementation of JAX's core.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    rules = commands.add_parser(
        "rules", help="print the primitive x pass coverage table of the rule tables")
    rules.set_defaults(run=_rules)
    repl = commands.add_parser(
        "repl", help="interactive lab: Python with minijax preloaded plus :commands "
                     "for IR, passes, remat, refs (see docs/repl.md)")
    repl.add_argument("file", nargs="?", metavar="FILE",
                      help="run first: a Python script (.py) or a lesson of REPL lines "
                           "(:commands allowed); the REPL then reads stdin")
    repl.add_argument("--echo", action="store_true",
                      help="print each input line after a prompt, so the output is a "
                           "transcript (errors included, on stdout); never interactive")
    repl.set_defaults(run=_repl)
    run = commands.add_parser(
        "run", help="run a JAX script on minijax unchanged: its own `jax` imports "
                    "resolve to minijax (installed packages keep real JAX)")
    run.add_argument("script", metavar="SCRIPT.py")
    run.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    run.set_defaults(run=_run)
    diff = commands.add_parser(
        "diff", help="run a JAX script on JAX and on minijax and compare what it prints "
                     "and leaves in its globals, naming the first line that differs")
    diff.add_argument("script", metavar="SCRIPT.py")
    diff.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    diff.set_defaults(run=_diff)
    check = commands.add_parser(
        "check", help="cross_check a file's JAX functions: every transform, minijax's "
                      "against JAX's (docs/cross_check.md)")
    check.add_argument("target", metavar="FILE.py[::FUNCTION]")
    check.add_argument("--args", help="example arguments, a Python expression (np, jnp "
                                      "and jax are defined), e.g. 'np.ones(3, np.float32)'")
    check.add_argument("--transforms", help="comma-separated rows (default: all)")
    check.add_argument("--policies", help="comma-separated checkpoint policy names "
                                          "(default: nothing_saveable, dots_saveable, "
                                          "everything_saveable; '' for none)")
    check.add_argument("--out", help="folder for reproducers of disagreements")
    check.set_defaults(run=_check)
    fuzz = commands.add_parser(
        "fuzz", help="generate random programs and check minijax's transforms of each "
                     "against JAX's, with reproducers of what differs (docs/fuzzing.md)")
    fuzz.add_argument("--seed", default="0", help="names the programs (default 0)")
    fuzz.add_argument("--n", type=int, help="how many programs")
    fuzz.add_argument("--time", type=float, metavar="SECONDS", help="or: for how long")
    fuzz.add_argument("--features", help="comma-separated features (default: all; see "
                                         "--list-primitives)")
    fuzz.add_argument("--transforms", help="comma-separated rows (default: all)")
    fuzz.add_argument("--out", help="folder for the reproducers of findings")
    fuzz.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    fuzz.add_argument("--quiet", action="store_true", help="no progress line")
    fuzz.add_argument("--list-primitives", action="store_true",
                      help="print which primitives the generator makes, and stop")
    fuzz.set_defaults(run=_fuzz)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    return args.run(args)
