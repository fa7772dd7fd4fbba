"""The verdict of `cross_check`: one row per transform, printable as a table.

A row's `status` is one of

* `agree`      -- both sides computed the same values, dtypes and weak types;
* `differ`     -- both computed, and the values (or types, or saved residuals) differ;
                  `max_error` is the largest absolute difference where shapes match;
* `error`      -- one side raised; both messages are kept (`minijax_error`, `jax_error`);
* `both raise` -- both sides refused the program (an agreement about an error);
* `divergence` -- a difference that a known-divergence record explains (`divergence`
                  names it; `minijax/divergences/`);
* `skipped`    -- the transform does not apply (no float input for `grad`, say).

`Report.ok` is whether nothing is unexplained; `assert_cross_check` raises with the
table when it is not.
"""
from __future__ import annotations

from dataclasses import dataclass, field

OK_STATUSES = frozenset({"agree", "both raise", "divergence", "skipped"})


@dataclass
class Row:
    transform: str
    status: str
    max_error: float | None = None
    detail: str = ""
    minijax_error: str = ""
    jax_error: str = ""
    divergence: str = ""
    # every value that differs is NaN in JAX's result and infinite in minijax's (F88)
    jax_nan_for_infinity: bool = False

    @property
    def ok(self) -> bool:
        return self.status in OK_STATUSES

    def summary(self) -> str:
        if self.status == "differ":
            err = "" if self.max_error is None else f"max error {self.max_error:.3g}; "
            return err + self.detail
        if self.status == "error":
            return (f"minijax: {self.minijax_error or 'ok'} | jax: {self.jax_error or 'ok'}")
        if self.status == "both raise":
            return f"minijax: {self.minijax_error} | jax: {self.jax_error}"
        if self.status == "divergence":
            return f"known divergence {self.divergence}"
        return self.detail


def difference_kind(row: Row) -> str:
    """What kind of difference a row is: which side raised what, or which part of the
    results differs (dtype, weak_type, shape, saved residuals, tree structures, printed
    output, else values). The fuzzer deduplicates findings by it, and the shrinker
    keeps a smaller program only when it shows the same kind."""
    if row.status == "error":
        side = "minijax" if row.minijax_error else "jax"
        message = row.minijax_error or row.jax_error
        return f"{side} raises {message.split(':', 1)[0]}"
    detail = row.detail
    for kind in ("dtype", "weak_type", "shape", "saved residuals", "tree structures",
                 "printed output"):
        if kind in detail:
            return kind
    return "values"


@dataclass
class Report:
    function: str
    rows: list = field(default_factory=list)
    reproducers: dict = field(default_factory=dict)   # transform -> path of the file

    @property
    def ok(self) -> bool:
        return all(row.ok for row in self.rows)

    @property
    def failures(self) -> list:
        return [row for row in self.rows if not row.ok]

    def row(self, transform: str) -> Row:
        for row in self.rows:
            if row.transform == transform:
                return row
        raise KeyError(f"no row for the transform {transform!r}; rows: "
                       f"{[r.transform for r in self.rows]}")

    def __str__(self) -> str:
        width = max([len("transform"), *(len(r.transform) for r in self.rows)])
        status_width = max([len("verdict"), *(len(r.status) for r in self.rows)])
        lines = [f"cross_check of {self.function}",
                 f"{'transform'.ljust(width)}  {'verdict'.ljust(status_width)}  detail"]
        for row in self.rows:
            detail = _one_line(row.summary())
            lines.append(f"{row.transform.ljust(width)}  {row.status.ljust(status_width)}  "
                         f"{detail}".rstrip())
        for transform, path in self.reproducers.items():
            lines.append(f"reproducer for {transform}: {path}")
        verdict = "all agree" if self.ok else f"{len(self.failures)} unexplained"
        lines.append(verdict)
        return "\n".join(lines)

    __repr__ = __str__


def _one_line(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."
