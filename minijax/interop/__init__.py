"""The bridge between minijax and real JAX, for differential testing.

* `import_jaxpr(closed_jaxpr)` / `trace_with_jax(f)(*args)`: a JAX program as a
  minijax program (`importing.py`, table in `import_rules.py`);
* `to_jax(closed_jaxpr)`: a minijax program as a Python callable built from JAX's
  public API, so JAX's own transforms apply to it (`exporting.py`);
* `to_python_source(closed_jaxpr)`: the same program as standalone Python source that
  imports only `jax` and `numpy`, for reproducers (`source.py`).

This package and `minijax.testing` are the only places that may call JAX's
transformations, and only to compute JAX's side of a comparison.
"""
# `import_rules.py`, `import_rules_calls.py` and `import_rules_numeric.py` fill the
# import table when this package is imported, so any use of `importing.py` (which
# reaches it through this package) sees the whole table.
from . import import_rules as _import_rules  # noqa: F401
from . import import_rules_calls as _import_rules_calls  # noqa: F401
from . import import_rules_numeric as _import_rules_numeric  # noqa: F401
from .importing import (import_jaxpr, trace_with_jax, MissingPrimitivesError,
                        missing_primitives, import_rules)
from .import_rules import UnsupportedParamError
from .exporting import to_jax, export_rules, ExportError
from .source import to_python_source

__all__ = ["import_jaxpr", "trace_with_jax", "MissingPrimitivesError",
           "UnsupportedParamError", "missing_primitives", "import_rules", "to_jax", "export_rules", "ExportError", "to_python_source"]
