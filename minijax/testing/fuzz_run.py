"""The fuzzing campaign: `python -m minijax fuzz`.

`run_campaign` generates programs `SEED:0, SEED:1, ...` (fuzz.py), checks each with
the battery, and keeps a live tally of the rows: agree, differ, error (one side
raised), both raise, known divergence, skipped. Every unexplained row becomes a
finding, deduplicated by its signature (transform family, primitives, kind of
difference) after shrinking, so one bug is one finding; each new finding is written
as a standalone reproducer into `--out`. At the end it prints a table per transform
and per feature, and the findings.

With `jobs > 1` the programs are checked by worker processes, which share the set of
unshrunk signatures already shrunk (a difference met again is not shrunk again); the
tally and the deduplication happen here, in seed order, so a run's tables do not
depend on `jobs`. Workers start with XLA's backend optimisations off unless the user
set XLA_FLAGS.
"""
from __future__ import annotations

import collections
import contextlib
import os
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

STATUSES = ("agree", "differ", "error", "both raise", "divergence", "skipped")


@dataclass
class Finding:
    signature: tuple
    transform: str
    seed: str
    summary: str
    reproducer: str = ""
    count: int = 1


@dataclass
class CaseResult:
    seed: str
    features: tuple
    rows: list                   # (transform, status, summary)
    findings: list               # (rough, signature, transform, summary, source, name)
    error: str = ""              # the generator itself failed


@dataclass
class Campaign:
    programs: int = 0
    pairs: int = 0
    seconds: float = 0.0
    tally: Counter = field(default_factory=Counter)
    by_transform: dict = field(default_factory=lambda: defaultdict(Counter))
    by_feature: dict = field(default_factory=lambda: defaultdict(Counter))
    findings: dict = field(default_factory=dict)     # signature -> Finding
    # the signature of an unshrunk program -> the signature it shrank to
    shrunk_signatures: dict = field(default_factory=dict)

    @property
    def unexplained(self) -> int:
        return len(self.findings)

    def add(self, result: CaseResult, out=None):
        self.programs += 1
        if result.error:
            self.tally["error"] += 1
            self.by_transform["generate"]["error"] += 1
        for transform, status, _ in result.rows:
            self.pairs += 1
            self.tally[status] += 1
            self.by_transform[transform][status] += 1
            for feature in result.features:
                self.by_feature[feature][status] += 1
        for rough, signature, transform, summary, source, name in result.findings:
            if signature is None:      # not shrunk: already seen unshrunk
                signature = self.shrunk_signatures.get(rough, rough)
                self.shrunk_signatures.setdefault(rough, signature)
            elif signature != rough and self.shrunk_signatures.get(rough) == rough:
                # a worker skipped shrinking this because another one was shrinking
                # it, and that one's result comes later: count them as one finding
                earlier = self.findings.pop(rough)
                if signature in self.findings:
                    self.findings[signature].count += earlier.count
                else:
                    earlier.signature = signature
                    self.findings[signature] = earlier
                self.shrunk_signatures[rough] = signature
            else:
                self.shrunk_signatures.setdefault(rough, signature)
            if signature in self.findings:
                self.findings[signature].count += 1
                continue
            finding = Finding(signature, transform, result.seed, summary)
            if out is not None:
                finding.reproducer = _write(out, len(self.findings), name, source)
            self.findings[signature] = finding

    def live(self) -> str:
        rate = self.pairs / self.seconds if self.seconds else 0.0
        return (f"{self.programs} programs, {self.pairs} pairs | agree {self.tally['agree']} "
                f"differ {self.tally['differ']} error {self.tally['error']} both-raise "
                f"{self.tally['both raise']} known-divergence {self.tally['divergence']} "
                f"skipped {self.tally['skipped']} | {len(self.findings)} findings | "
                f"{rate:.2f} pairs/s")

    def table(self, counts: dict, title: str) -> str:
        width = max([len(title), *map(len, counts)])
        lines = [title.ljust(width) + "".join(s.rjust(12) for s in STATUSES)]
        for key in sorted(counts):
            lines.append(key.ljust(width) + "".join(str(counts[key][s]).rjust(12)
                                                   for s in STATUSES))
        return "\n".join(lines)

    def __str__(self) -> str:
        lines = [self.table(self.by_transform, "transform"), "",
                 self.table(self.by_feature, "feature"), "",
                 f"{self.programs} programs, {self.pairs} program x transform pairs in "
                 f"{self.seconds:.0f} s ({self.pairs / max(self.seconds, 1e-9):.2f} pairs/s)"]
        if self.findings:
            lines.append(f"{len(self.findings)} unexplained findings:")
            for f in self.findings.values():
                where = f" -> {f.reproducer}" if f.reproducer else ""
                lines.append(f"  [{f.count}x] {f.transform} (first at seed {f.seed}): "
                             f"{_short(f.summary)} {{{', '.join(f.signature[1])}}}{where}")
        else:
            lines.append("no unexplained differences")
        return "\n".join(lines)


def _short(text, limit=200):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _write(out, number, name, source) -> str:
    os.makedirs(out, exist_ok=True)
    safe = "".join(c if c.isalnum() else "_" for c in name).strip("_")
    path = os.path.join(out, f"finding_{number:03d}_{safe}.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(source.replace("{file}", os.path.basename(path)))
    return path


# -- one case ---------------------------------------------------------------------------------------

def _seed_reproducer(seed, features, transform, summary) -> str:
    """A reproducer that regenerates the program from its seed (for the invariants and
    generator failures, which involve minijax only)."""
    return "\n".join([
        f'"""Fuzz finding: {transform} at seed {seed!r}.\n\n{_short(summary, 2000)}\n\n'
        f'    python {{file}}\n"""',
        "from minijax.ir.checks import enable_checks",
        "from minijax.testing.fuzz import generate, check_case",
        "enable_checks(True)",
        f"case = generate({seed!r}, features={sorted(features)!r})",
        "print(case.program)",
        f"for row in check_case(case, [{transform!r}]):",
        "    print(row.transform, row.status, row.summary())", ""])


def check_one(seed, features=None, transforms=None, shrink=True, shrink_seconds=20.0,
              skip_signatures=frozenset()) -> CaseResult:
    """Generate and check the program of `seed`; shrink each unexplained row whose
    unshrunk signature is not in `skip_signatures`."""
    from minijax.ir.checks import enable_checks
    from . import fuzz
    from .shrink import shrink as shrink_program, reproducer_source
    enable_checks(True)
    all_features = sorted(fuzz.FEATURES if features is None else features)
    try:
        case = fuzz.generate(seed, features=features)
    except Exception as error:  # noqa: BLE001 -- a generator crash is a finding too
        summary = f"{type(error).__name__}: {error}"
        sig = ("generate", (), summary.split(":", 1)[0])
        return CaseResult(str(seed), (), [], [(sig, sig, "generate", summary, _seed_reproducer(
            seed, all_features, "generate", summary), "generate")], error=summary)
    rows = fuzz.check_case(case, transforms)
    findings = []
    recipes = None
    for row in rows:
        if row.ok:
            continue
        summary = row.summary()
        program, leaves = case.program, case.leaves
        rough = fuzz.signature(row.transform, program, row)
        final = rough
        if row.transform.startswith("invariant") or not shrink:
            source = _seed_reproducer(seed, all_features, row.transform, summary)
        else:
            if rough not in skip_signatures:
                recipes = recipes or fuzz.recipes_for(case, [r.transform for r in rows])
                recipe = recipes[row.transform]
                try:
                    program, leaves = shrink_program(
                        program, leaves, row.transform, recipe, max_checks=60,
                        time_limit=shrink_seconds, row=row,
                        judge=fuzz.shrink_judge(row.transform, recipe))
                    # the generator's custom rules are their bodies' derivatives
                    source = reproducer_source(program, leaves, row.transform, recipe,
                                               custom_rules="derivatives_of_body")
                except Exception as error:  # noqa: BLE001 -- e.g. a primitive without source
                    source = _seed_reproducer(seed, all_features, row.transform, summary) \
                        + f"# no standalone JAX source: {type(error).__name__}: {error}\n"
                final = fuzz.signature(row.transform, program, row)
            else:
                source, final = _seed_reproducer(seed, all_features, row.transform,
                                                 summary), None
        findings.append((rough, final, row.transform, summary, source, row.transform))
    return CaseResult(str(seed), tuple(sorted(case.features)),
                      [(r.transform, r.status, r.summary()) for r in rows], findings)


def _worker(args):
    """One program in a worker process. `shrunk` is shared by the workers (a manager's
    dict): the unshrunk signatures some worker has shrunk, which the others skip."""
    seed, features, transforms, shrink, shrunk = args
    result = check_one(seed, features, transforms, shrink, 20.0, frozenset(shrunk.keys()))
    for rough, final, *_ in result.findings:
        if final is not None:
            shrunk[rough] = True
    return result


# The workers' XLA setting when the user sets none: the fuzzer's programs are tiny, so
# XLA's backend optimisations cost compile time and buy nothing (tests do the same).
WORKER_XLA_FLAGS = "--xla_backend_optimization_level=0"


# -- the campaign -----------------------------------------------------------------------------------

def run_campaign(seed=0, n=None, seconds=None, features=None, transforms=None, out=None,
                 jobs=1, stream=sys.stderr, shrink=True) -> Campaign:
    """Check programs `seed:0, seed:1, ...` until `n` are done or `seconds` pass."""
    from . import fuzz
    if n is None and seconds is None:
        raise ValueError("give a number of programs (n) or a time budget (seconds)")
    if transforms is not None:
        unknown = [t for t in transforms if t not in fuzz.all_transforms()]
        if unknown:
            raise ValueError(f"unknown transforms {unknown}; known: {fuzz.all_transforms()}")
    campaign = Campaign()
    start = time.monotonic()
    deadline = None if seconds is None else start + seconds

    def seeds():
        i = 0
        while (n is None or i < n) and (deadline is None or time.monotonic() < deadline):
            yield f"{seed}:{i}"
            i += 1

    def record(result):
        campaign.add(result, out)
        campaign.seconds = time.monotonic() - start
        if stream is not None:
            stream.write("\r" + _bar(campaign.programs, n, campaign.seconds, seconds) + " "
                         + campaign.live())
            stream.flush()

    if jobs <= 1:
        for s in seeds():
            record(check_one(s, features, transforms, shrink, 20.0,
                             frozenset(campaign.shrunk_signatures)))
    else:
        import multiprocessing
        context = multiprocessing.get_context("spawn")
        environment = {"XLA_FLAGS": os.environ.get("XLA_FLAGS", WORKER_XLA_FLAGS)}
        with _environment(environment), context.Manager() as manager, \
                context.Pool(jobs) as pool:
            shrunk = manager.dict()
            # At most `jobs` programs in flight, and the next seed drawn only when a
            # worker is free, so a time budget stops new programs at its deadline
            # (`pool.imap` would drain `seeds()` into its queue at once).
            running = collections.deque()
            for s in seeds():
                running.append(pool.apply_async(
                    _worker, ((s, features, transforms, shrink, shrunk),)))
                if len(running) >= jobs:
                    record(running.popleft().get())
            while running:
                record(running.popleft().get())
    campaign.seconds = time.monotonic() - start
    if stream is not None:
        stream.write("\n")
    return campaign


@contextlib.contextmanager
def _environment(values):
    """`values` set in os.environ while the workers start (they inherit it)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _bar(done, total, elapsed, seconds, width=20):
    fraction = (done / total) if total else (elapsed / seconds if seconds else 0.0)
    fraction = min(max(fraction, 0.0), 1.0)
    filled = int(round(fraction * width))
    return "[" + "#" * filled + "." * (width - filled) + f"] {fraction:4.0%}"


__all__ = ["run_campaign", "check_one", "Campaign", "Finding", "STATUSES"]
