"""minijax's IR: types, jaxprs, primitives, tracing, the text form and the verifier.

Start with `types.py` (avals), then `core.py` (Var, Eqn, Jaxpr), `primitives.py`
(the op catalogue and rule tables), `trace.py` (stackless tracing) and `staging.py`
(Python function -> Jaxpr). `printer.py`/`parser.py` give the text form and
`verify.py` checks a jaxpr is well typed and well scoped.
"""
from .types import (ShapedArray, RefType, float0, bfloat16, dtype_short_name,
                    dtype_from_short_name, canonical_dtype, aval_of_value)
from .core import (Var, Literal, Eqn, Jaxpr, ClosedJaxpr, ReadEffect, WriteEffect,
                   AccumEffect, AllocEffect, DebugEffect)
from . import primitives
from .primitives import Primitive, type_rules, effect_rules, primitives_by_name
from .trace import (Trace, Tracer, EvalTrace, MinijaxError, TracerError, bind,
                    current_trace, set_current_trace, reset_trace_state)
from .staging import trace_to_jaxpr, convert_constvars_to_invars
from .printer import pp_jaxpr, dumps
from .parser import parse_jaxpr, loads, ParseError
from .verify import verify_jaxpr, VerifierError
from . import control_flow_primitives  # noqa: E402,F401  (cond, while, scan, debug_print)
from . import remat_primitive  # noqa: E402,F401  (remat, name: checkpoint)
from . import special_primitives  # noqa: E402,F401  (lgamma, digamma, igamma, betainc, ...)
from . import random_primitives  # noqa: E402,F401  (bit ops, erf_inv, keys, threefry2x32)
