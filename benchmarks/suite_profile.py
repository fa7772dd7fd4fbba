"""Where the test suite's time goes: JAX's compiles, lowerings and traces, per test.

Both a pytest plugin and the script that reads what it wrote. Loaded into a run (in
each pytest-xdist worker too), it listens to JAX's monitoring events and appends one
line per test to the file `MINIJAX_SUITE_PROFILE` names: the test's wall and CPU
time, and how many programs it handed to XLA, lowered to MLIR and traced to jaxprs,
with the seconds each took, and how many compiles the run's persistent cache served.
Both sides of a comparison count (minijax's emitted programs and the oracle's): the
question is what the suite asks of JAX, which is most of its time.

    MINIJAX_SUITE_PROFILE=/tmp/profile.tsv PYTHONPATH=benchmarks \\
        .venv/bin/python -m pytest -q -p no:cacheprovider -n 2 -p suite_profile tests
    .venv/bin/python benchmarks/suite_profile.py /tmp/profile.tsv [--top 30]

The report prints the totals, the share of the tests' time inside JAX, the files that
take longest and the tests that ask for the most compiles. The tests' subprocesses
(the CLI, the 8-device scripts) are outside it: their time counts in their tests'
wall time only.

Measured on the shared 2-core development machine (CPU, jax 0.10.2), the whole suite
at `961676c` (`-n 2`, 7,392 tests, 2,712 s of the tests' wall time summed over both
workers):

    compile requests to XLA   31,540 (4.3 per test), 1,506 s (56%); 10,792 of them
                              served by the run's persistent cache
    lowerings to MLIR         31,627, 591 s (22%)
    traces to jaxprs          36,254, 172 s (6%)
    everything else           442 s (16%): minijax's own Python, numpy, the tests

So 84% of the suite's time is JAX compiling, lowering and tracing the programs the
tests ask for (about 2.8 real compiles per test and 1.5 cache hits), and an XLA CPU
compile of even `x + 1` costs 16 ms at the suite's optimization level (10 ms
with the older emitters, which the suite cannot use: see tests/conftest.py). What
shortens the suite is fewer programs per test; minijax's own speed moves it little.
"""
from __future__ import annotations

import argparse
import collections
import os
import time

FIELDS = ("test", "wall_s", "cpu_s", "compiles", "compile_s", "lowerings", "lowering_s",
          "traces", "trace_s", "cache_hits")
_EVENTS = {  # JAX's monitoring event -> (count field, seconds field)
    "/jax/core/compile/backend_compile_duration": ("compiles", "compile_s"),
    "/jax/core/compile/jaxpr_to_mlir_module_duration": ("lowerings", "lowering_s"),
    "/jax/core/compile/jaxpr_trace_duration": ("traces", "trace_s"),
}
_CACHE_HIT_EVENT = "/jax/compilation_cache/cache_hits"


class _TestCounters:
    """What JAX reported since the current test started."""

    def __init__(self):
        self.counts = collections.Counter()

    def on_duration(self, event, seconds, **_):
        fields = _EVENTS.get(event)
        if fields is not None:
            self.counts[fields[0]] += 1
            self.counts[fields[1]] += seconds

    def on_event(self, event, **_):
        if event == _CACHE_HIT_EVENT:
            self.counts["cache_hits"] += 1


# ----------------------------------------------------------------- pytest plugin

def pytest_configure(config):
    path = os.environ.get("MINIJAX_SUITE_PROFILE")
    if not path:
        raise RuntimeError("suite_profile: set MINIJAX_SUITE_PROFILE to the file to write")
    config.pluginmanager.register(_Recorder(path), "suite_profile_recorder")


class _Recorder:
    """Listens to JAX for the length of the pytest session that loaded it (a session
    run inside another process, as the plugin's own test does, leaves nothing behind)."""

    def __init__(self, path):
        import jax.monitoring
        self.path, self.counters = path, _TestCounters()
        jax.monitoring.register_event_duration_secs_listener(self.counters.on_duration)
        jax.monitoring.register_event_listener(self.counters.on_event)

    def pytest_unconfigure(self, config):
        import jax.monitoring
        jax.monitoring.unregister_event_duration_listener(self.counters.on_duration)
        jax.monitoring.unregister_event_listener(self.counters.on_event)

    def pytest_runtest_protocol(self, item, nextitem):
        self.counters.counts.clear()
        self.started = (time.perf_counter(), time.process_time())

    def pytest_runtest_logfinish(self, nodeid, location):
        wall = time.perf_counter() - self.started[0]
        cpu = time.process_time() - self.started[1]
        c = self.counters.counts
        row = [nodeid, f"{wall:.3f}", f"{cpu:.3f}", c["compiles"], f"{c['compile_s']:.3f}",
               c["lowerings"], f"{c['lowering_s']:.3f}", c["traces"], f"{c['trace_s']:.3f}",
               c["cache_hits"]]
        with open(self.path, "a") as f:      # one short append per test: workers interleave lines
            f.write("\t".join(map(str, row)) + "\n")


# ----------------------------------------------------------------------- report

def read_profile(path):
    rows = []
    for line in open(path):
        parts = line.rstrip("\n").split("\t")
        if len(parts) != len(FIELDS):
            continue                          # a line cut short by an interrupted run
        row = dict(zip(FIELDS, parts))
        for name in FIELDS[1:]:
            row[name] = float(row[name])
        rows.append(row)
    return rows


def report(rows, top):
    wall = sum(r["wall_s"] for r in rows)
    total = collections.Counter()
    for r in rows:
        total.update({k: r[k] for k in FIELDS[1:]})
    print(f"{len(rows)} tests, {wall:.0f} s of wall time summed over workers\n")
    inside = 0.0
    for label, n, s in (("compile requests to XLA", "compiles", "compile_s"),
                        ("lowerings to MLIR", "lowerings", "lowering_s"),
                        ("traces to jaxprs", "traces", "trace_s")):
        inside += total[s]
        print(f"  {label:25s} {int(total[n]):7,d}  {total[s]:7.0f} s  "
              f"({total[s] / wall:4.0%})")
    print(f"  {'served by the cache':25s} {int(total['cache_hits']):7,d}")
    print(f"  {'everything else':25s} {'':7s}  {wall - inside:7.0f} s  "
          f"({(wall - inside) / wall:4.0%})\n")

    files = collections.defaultdict(collections.Counter)
    for r in rows:
        f = files[r["test"].split("::")[0]]
        f.update({"tests": 1, **{k: r[k] for k in FIELDS[1:]}})
    print(f"{'wall s':>8} {'tests':>6} {'compiles':>9} {'compile s':>10} {'hits':>6}  file")
    for name, f in sorted(files.items(), key=lambda kv: -kv[1]["wall_s"])[:top]:
        print(f"{f['wall_s']:8.1f} {int(f['tests']):6d} {int(f['compiles']):9d} "
              f"{f['compile_s']:10.1f} {int(f['cache_hits']):6d}  {name}")
    print(f"\n{'compiles':>9} {'hits':>6} {'wall s':>8}  test (most compile requests)")
    for r in sorted(rows, key=lambda r: -r["compiles"])[:top]:
        print(f"{int(r['compiles']):9d} {int(r['cache_hits']):6d} {r['wall_s']:8.1f}  "
              f"{r['test']}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("profile", help="the file MINIJAX_SUITE_PROFILE named")
    parser.add_argument("--top", type=int, default=25, help="rows per table")
    args = parser.parse_args()
    report(read_profile(args.profile), args.top)


if __name__ == "__main__":
    main()
