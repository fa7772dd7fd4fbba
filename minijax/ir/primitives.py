"""The op catalogue: every primitive minijax knows, by name, in one namespace.

`primitives.X_p` names each primitive whatever module declares it. A primitive is
declared, with its type rule (and effect rule, if it has effects), in the module of
its family; this module only gathers them:

    registry.py                 `Primitive`, the rule tables, the type-rule helpers
    elementwise.py              unary and n-ary elementwise ops, dynamic slices
    catalogue.py                reductions, contractions, indexing, sorting, refs, `jit`

Control flow (`control_flow_primitives.py`), `remat` (`remat_primitive.py`) and the
custom-derivative primitives (`custom_primitives.py`) are reached through their own
modules. `python -m minijax rules` prints which tables cover which primitives.
"""
from .registry import *  # noqa: F401,F403
from .registry import (_fail, _array, _check_axes, _signatures,  # noqa: F401
                       Primitive, primitives_by_name, type_rules, effect_rules, rule_tables,
                       generic_paths, GenericPath, register_rule_table, out_avals_of,
                       effects_of, Signature, signature_of, clear_signature_cache)
from .elementwise import *  # noqa: F401,F403
from .elementwise import _unary, _nary, _check_start_indices  # noqa: F401
from .catalogue import *  # noqa: F401,F403
