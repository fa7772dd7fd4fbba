"""What a primitive is, and the tables that give it meaning.

A `Primitive` is a name plus a few facts every pass may ask about. What it *means*
lives in rule tables, one table per pass, each a dict keyed by primitive with one
signature for the whole table:

    type_rules[prim](*in_avals, **params) -> list of out avals      (declared in `ir`)
    effect_rules[prim](*in_avals, **params) -> frozenset of effects  (declared in `ir`)
    reference_rules, lowering_rules, eager_impls   (minijax/backends)
    jvp_rules, transpose_rules, vmap_rules, ...    (minijax/transforms)

Type rules always return a list, even for single-result primitives, so every pass
treats equations uniformly. A type rule raises `TypeError` naming the primitive and
the offending operand when its inputs do not fit (`fail`, `expect_array`); the
verifier and the tracers both call these rules, so a program that traces is a
program that verifies.

The op catalogue itself (which primitives exist) is `primitives.py`.
"""
from __future__ import annotations

from .core import no_effects
from .trace import bind as _bind
from .types import ShapedArray, RefType


class Primitive:
    """An operation of the IR: a name, and the facts about it that passes ask.

    The facts are declared with the primitive, so a pass reads them here rather
    than keeping its own list of primitives:

    * `multiple_results`: `bind` returns a list (else the one value).
    * `ref_op`: reads, writes, makes or ends a ref (`new_ref`, `get`, `swap`, ...).
      Discharge rewrites these away; nothing lowers them.
    * `allocates_ref`: makes a new ref (`new_ref`, `empty_ref`). Its jvp rule runs
      even without a tangent input (a differentiated value may be written into the
      ref later, so it needs a tangent ref); its transpose makes a linear ref; under
      vmap the trace remembers the ref it made.
    * `has_ref_effects_of_body`: its effects are its bodies' ref accesses, on its
      operands (`jit`, `remat`, `cond`, `while`, `scan`), so vmap checks the body's
      reads and writes of refs from outside as it does a `get` or `swap`.
    * `dce_keeps_effects`: its DCE rule keeps every effect of the equation (`jit`:
      its body is pruned by DCE itself), so DCE may prune it although it has
      effects. Other primitives' DCE rules only see effect-free equations.
    * `accepts_keys`: an elementwise primitive that also takes key arrays
      (`stop_gradient`, which passes its operand through). Keys are opaque, so the
      other elementwise type rules refuse them.
    """
    __slots__ = ("name", "multiple_results", "ref_op", "allocates_ref",
                 "has_ref_effects_of_body", "dce_keeps_effects", "accepts_keys")

    def __init__(self, name: str, multiple_results: bool = False, *, ref_op: bool = False,
                 allocates_ref: bool = False, has_ref_effects_of_body: bool = False,
                 dce_keeps_effects: bool = False, accepts_keys: bool = False):
        self.name = name
        self.multiple_results = multiple_results
        self.ref_op = ref_op or allocates_ref
        self.allocates_ref = allocates_ref
        self.has_ref_effects_of_body = has_ref_effects_of_body
        self.dce_keeps_effects = dce_keeps_effects
        self.accepts_keys = accepts_keys
        if name in primitives_by_name:
            raise ValueError(f"primitive {name!r} defined twice")
        primitives_by_name[name] = self

    def bind(self, *args, **params):
        if params:
            from .jax_params import adapt     # JAX's params, where a program passes them
            params = adapt(self, args, params)
        return _bind(self, *args, **params)

    def __repr__(self):
        return self.name

    def missing_rule_error(self, table: str, default: Exception) -> Exception:
        """The error a pass raises when its `table` has no rule for this primitive.
        Catalogue primitives give the pass's own `default`; a user's primitive
        (`minijax.extend.core.Primitive`) says it as JAX does for its primitives."""
        return default


primitives_by_name: dict[str, Primitive] = {}
type_rules: dict[Primitive, callable] = {}
effect_rules: dict[Primitive, callable] = {}

# Every pass's rule table, by the column name `python -m minijax rules` shows. Passes
# register their table once, at import: `register_rule_table("jvp", jvp_rules)`. A
# pass with a generic path for primitives without a rule of their own (partial eval
# stages or evaluates any primitive; DCE keeps or drops any equation) says which
# primitives that path serves, so the coverage table can tell a hole from a default.
rule_tables: dict[str, dict] = {"type": type_rules}
generic_paths: dict[str, "GenericPath"] = {}


class GenericPath:
    """What a pass does with a primitive that has no rule in its table."""
    __slots__ = ("serves", "description")

    def __init__(self, serves, description: str):
        self.serves = serves            # Primitive -> bool
        self.description = description


# The order of the tables (the columns of `python -m minijax rules`): the order a
# primitive meets the passes, fixed here so that it does not depend on which pass
# module happened to be imported first. A table not named here comes after, by name.
TABLE_ORDER = ("type", "jvp", "partial_eval", "dce", "transpose", "vmap", "xla",
               "reference", "discharge")


def _table_position(name: str):
    return (TABLE_ORDER.index(name), "") if name in TABLE_ORDER else (len(TABLE_ORDER), name)


def _sort_by_table_order(tables: dict):
    ordered = sorted(tables.items(), key=lambda item: _table_position(item[0]))
    tables.clear()
    tables.update(ordered)


def register_rule_table(name: str, table: dict, generic: GenericPath | None = None) -> dict:
    if name in rule_tables and rule_tables[name] is not table:
        raise ValueError(f"a rule table named {name!r} is already registered")
    rule_tables[name] = table
    _sort_by_table_order(rule_tables)
    if generic is not None:
        generic_paths[name] = generic
        _sort_by_table_order(generic_paths)
    return table


def out_avals_of(prim: Primitive, in_avals, params) -> list:
    return type_rules[prim](*in_avals, **params)


def effects_of(prim: Primitive, in_avals, params) -> frozenset:
    rule = effect_rules.get(prim)
    return rule(*in_avals, **params) if rule else no_effects


class Signature:
    """The outcome of a primitive's type and effect rules for one application."""
    __slots__ = ("out_avals", "effects")

    def __init__(self, out_avals, effects):
        self.out_avals = out_avals
        self.effects = effects


# Memo of `signature_of`, keyed by (primitive, input avals, params). Tracing a deep
# network applies the same few signatures thousands of times; the rules are pure
# functions of the key, so their answer is looked up rather than recomputed.
_signatures: dict = {}
_MAX_SIGNATURES = 65536


def signature_of(prim: Primitive, in_avals, params) -> Signature:
    """Out avals and effects of `prim` applied to `in_avals` with `params`."""
    try:
        key = (prim, tuple(in_avals), tuple(params.items()))
        found = _signatures.get(key)
    except TypeError:  # an unhashable param: no memo
        key, found = None, None
    if found is not None:
        return found
    found = Signature(out_avals_of(prim, in_avals, params),
                      effects_of(prim, in_avals, params))
    if key is not None:
        if len(_signatures) >= _MAX_SIGNATURES:
            _signatures.clear()
        _signatures[key] = found
    return found


def clear_signature_cache():
    _signatures.clear()


def _fail(prim_name, message):
    raise TypeError(f"{prim_name}: {message}")


def _array(prim_name, aval, what="operand"):
    if isinstance(aval, RefType):
        # The commonest way to get here is arithmetic or jnp on a ref: say how to fix it.
        _fail(prim_name, f"{what} must be an array, got the ref {aval}; a ref is not an "
              f"array: read its value with r[...] first")
    if not isinstance(aval, ShapedArray):
        _fail(prim_name, f"{what} must be an array, got {aval}")
    return aval


def _check_axes(prim_name, axes, ndim):
    if len(set(axes)) != len(axes) or any(not 0 <= a < ndim for a in axes):
        _fail(prim_name, f"axes {axes} are invalid for an operand of rank {ndim}")
