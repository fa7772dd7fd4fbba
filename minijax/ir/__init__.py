"""minijax's IR: types, jaxprs, primitives, tracing, the text form and the verifier.

Start with `types.py` (avals), then `core.py` (Var, Eqn, Jaxpr), `registry.py`
(`Primitive` and the rule tables), `primitives.py` (the op catalogue), `trace.py`
(stackless tracing) and `staging.py` (Python function -> Jaxpr). `printer.py`/
`parser.py` give the text form (the parser reads the tokens of `text_scanner.py` and
reads array elements with `text_values.py`) and `verify.py` checks a jaxpr is well
typed and well scoped. The parser loads on first use of `parse_jaxpr`, `loads` or
`ParseError` (`__getattr__` below): most programs never read IR text.
`ref_box.py` is the `Ref` box, the concrete value of a ref;
`ref_ledger.py` holds what a trace learns about refs while it runs;
`ref_indexing.py` says where in a ref an access lands (the `indexer` param), and
`ref_python_index.py` builds one from a Python index (it holds `minijax.ds`).

The modules that declare primitives are imported below, in one place: a new family
of primitives adds its module to that list (docs/design.md, "Adding a primitive").
"""
import importlib as _importlib

from .types import (ShapedArray, RefType, float0, bfloat16, dtype_short_name,
                    dtype_from_short_name, canonical_dtype, aval_of_value)
from .core import (Var, Literal, Eqn, Jaxpr, ClosedJaxpr, ReadEffect, WriteEffect,
                   AccumEffect, AllocEffect, DebugEffect)
from . import primitives
from .primitives import Primitive, type_rules, effect_rules, primitives_by_name
from .errors import MinijaxError
from .trace import (Trace, Tracer, EvalTrace, bind,
                    current_trace, set_current_trace, reset_trace_state)
from .staging import trace_to_jaxpr, convert_constvars_to_invars
from .printer import pp_jaxpr, dumps
from .verify import verify_jaxpr, VerifierError

# -- the modules that declare primitives (the catalogue is `primitives`, above) --------
from . import (control_flow_primitives,  # noqa: F401  cond, while, scan, debug_print
               remat_primitive,          # noqa: F401  remat, name
               custom_primitives,        # noqa: F401  custom_jvp_call, custom_vjp_call, custom_lin
               window_primitives,        # noqa: F401  conv, reduce_window_{sum,max,min}
               linalg_primitives,        # noqa: F401  cholesky, triangular_solve, lu, eigh, svd, qr
               complex_primitives,       # noqa: F401  real, imag, conj, complex
               special_primitives,       # noqa: F401  lgamma, digamma, igamma, betainc, ...
               fft_primitives,           # noqa: F401  fft
               selection_primitives,     # noqa: F401  top_k, optimization_barrier
               random_primitives,        # noqa: F401  bit ops, erf_inv, keys, threefry2x32
               collective_primitives,    # noqa: F401  psum, all_gather, ppermute, axis_index, ...
               shard_map_primitive,      # noqa: F401  shard_map
               linear_solve_primitive,   # noqa: F401  custom_linear_solve
               export_primitive)         # noqa: F401  call_exported


_PARSER_NAMES = frozenset({"parse_jaxpr", "loads", "ParseError"})


def __getattr__(name):
    # The text parser loads on first use (see the module docstring).
    if name in _PARSER_NAMES or name == "parser":
        # (`from . import parser` here would ask this very hook for `parser`.)
        parser = _importlib.import_module(".parser", __name__)
        return parser if name == "parser" else getattr(parser, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
