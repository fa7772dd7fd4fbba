"""The key-reuse checker behind `jax_debug_key_reuse`: a key used twice is an error.

A PRNG key is meant to be used once: two samplers given one key return correlated
numbers. JAX checks this when `jax_debug_key_reuse` is on, and so does minijax, with
the same verdicts (`tests/test_key_reuse.py` runs a table of programs on both).

What each primitive does to the keys it takes is its *signature*, read from one table,
`key_reuse_rules` (a rule per primitive: `(in_avals, params) -> Signature`):

* a *sink* consumes an input key (or the elements of it that a mask marks): the
  samplers and `split` sink the key they hash (`random_consume`, bound by
  `random_core` while the check is on), and so does every primitive without a rule,
  as in JAX (what is not known to be safe is taken as a use);
* a *source* makes an output a fresh key: `random_wrap` (`key`, `wrap_key_data`),
  `random_clone` (`random.clone`, the way to reuse a key on purpose), `split`'s output;
* a *forward* passes a key through unchanged in use (reshape, broadcast, indexing a
  whole key): the output is the same key, so using either uses both;
* anything else leaves the input alone and gives outputs that are already used up
  (`random_unwrap`: `key_data` reads a key without using it, `eq`, `ne`).

A jaxpr's signature comes from one walk over its equations (`jaxpr_signature`),
which raises `KeyReuseError` at the first equation that sinks a key already sunk.
What its inputs lost, and which outputs are fresh or forwarded, is the signature of
the equation that calls it, so `jit`, `remat` and the control-flow primitives get
theirs from their bodies. A `cond` sinks what any branch sinks and forwards what
every branch forwards. A loop body runs many times, so it may not consume a key it
closes over, and may consume a carried key only if it gives back a fresh one in its
place; `while` also refuses a carried key that both the condition and the body use.

Two places run it, as in JAX: a `jit` trace checks the program it made
(`frontend/jit.py`), and the root trace checks each eager call against the keys it
has seen consumed (`eager_call`): every concrete key a checked call sinks is
remembered (by identity, while it lives), and passing it to another sink raises.
Raw `uint32` keys are not keys to the checker: a sampler wraps them afresh each time.
"""
from __future__ import annotations

import weakref

import numpy as np

from ..ir import primitives as P
from ..ir import random_primitives as R
from ..ir import trace as _trace
from ..ir.control_flow_primitives import (cond_p, while_p, scan_p, debug_print_p,
                                          debug_callback_p)
from ..ir.core import Var
from ..ir.errors import KeyReuseError
from ..ir.primitives import register_rule_table, GenericPath
from ..ir.remat_primitive import remat_p
from ..ir.shard_map_primitive import shard_map_p, sharding_constraint_p
from ..ir.trace import aval_of
from ..ir.types import is_key


class Signature:
    """What one call does to its keys. `sinks`: input position -> mask (True, or a
    bool array of the key's shape); `sources`: fresh output positions; `forwards`:
    output position -> the input position it passes through."""
    __slots__ = ("sinks", "sources", "forwards")

    def __init__(self, sinks=None, sources=(), forwards=None):
        self.sinks = dict(sinks or {})
        self.sources = frozenset(sources)
        self.forwards = dict(forwards or {})

    def __repr__(self):
        return f"Signature(sinks={self.sinks}, sources={set(self.sources)}, " \
               f"forwards={self.forwards})"


def _any(mask) -> bool:
    return bool(np.any(mask))


def _is_key_aval(aval) -> bool:
    return is_key(getattr(aval, "dtype", None))


def _key_avals(avals):
    return [i for i, a in enumerate(avals) if _is_key_aval(a)]


# -- the table ------------------------------------------------------------------------

CONSUME = lambda in_avals, params: Signature(sinks={i: True for i in _key_avals(in_avals)})
FORWARD = lambda in_avals, params: Signature(forwards={0: 0})
UNCHANGED = lambda in_avals, params: Signature()
SOURCE = lambda in_avals, params: Signature(sources={0})

key_reuse_rules: dict = register_rule_table(
    "key_reuse", {},
    GenericPath(lambda prim: True, "consumes every key operand (nothing known to be safe)"))

for _prim in (P.broadcast_in_dim_p, P.expand_dims_p, P.convert_element_type_p,
              P.reshape_p, P.squeeze_p, sharding_constraint_p, P.dynamic_slice_p,
              P.gather_p,
              P.stop_gradient_p):   # (JAX's stop_gradient returns a key as it is)
    key_reuse_rules[_prim] = FORWARD
for _prim in (P.eq_p, P.ne_p, R.random_unwrap_p, debug_print_p, debug_callback_p):
    key_reuse_rules[_prim] = UNCHANGED
key_reuse_rules[R.random_wrap_p] = SOURCE
key_reuse_rules[R.random_clone_p] = SOURCE
key_reuse_rules[R.random_consume_p] = lambda in_avals, params: Signature({0: True}, (), {0: 0})
key_reuse_rules[P.dynamic_update_slice_p] = lambda in_avals, params: Signature({1: True}, (),
                                                                               {0: 0})
key_reuse_rules[P.scatter_p] = lambda in_avals, params: Signature({2: True}, (), {0: 0})


def _slice(in_avals, params):
    aval = in_avals[0]
    if not _is_key_aval(aval):
        return Signature(forwards={0: 0})
    strides = params.get("strides") or (1,) * len(aval.shape)
    mask = np.zeros(aval.shape, bool)
    mask[tuple(map(slice, params["start_indices"], params["limit_indices"], strides))] = True
    return Signature(sinks={0: mask}, sources={0})


def _concatenate(in_avals, params):
    if len(in_avals) == 1:
        return Signature(forwards={0: 0})
    return Signature(sinks={i: True for i in range(len(in_avals))}, sources={0})


def _body(param):
    return lambda in_avals, params: jaxpr_signature(params[param])


def _remat(in_avals, params):
    # The differentiated copy recomputes what the first pass already used.
    return Signature() if params["differentiated"] else jaxpr_signature(params["jaxpr"])


def _cond(in_avals, params):
    branches = [jaxpr_signature(b) for b in params["branches"]]
    sinks = {}
    for sig in branches:
        for i, mask in sig.sinks.items():
            sinks[i + 1] = np.logical_or(sinks.get(i + 1, False), mask)
    sources = set().union(*(sig.sources for sig in branches))
    forwards = {o: i + 1 for o, i in branches[0].forwards.items()
                if all(sig.forwards.get(o) == i for sig in branches)}
    return Signature(sinks, sources, forwards)


def _carry_sinks(sig, n_consts, n_carry):
    return {i - n_consts for i, m in sig.sinks.items()
            if n_consts <= i < n_consts + n_carry and _any(m)}


def _consts_sunk(sig, n_consts) -> bool:
    return any(_any(m) for i, m in sig.sinks.items() if i < n_consts)


def _scan(in_avals, params):
    sig = jaxpr_signature(params["jaxpr"])
    n_consts, n_carry = params["num_consts"], params["num_carry"]
    if _consts_sunk(sig, n_consts):
        raise KeyReuseError("scan body function leads to key reuse when repeatedly "
                            "executed, because key constants are repeatedly consumed")
    if not _carry_sinks(sig, n_consts, n_carry) <= {i for i in sig.sources if i < n_carry}:
        raise KeyReuseError("scan body function leads to key reuse when repeatedly "
                            "executed, because consumed inputs don't match sourced outputs")
    return sig


def _while(in_avals, params):
    cond_n, body_n = params["cond_nconsts"], params["body_nconsts"]
    cond_sig = jaxpr_signature(params["cond_jaxpr"])
    body_sig = jaxpr_signature(params["body_jaxpr"])
    if _consts_sunk(cond_sig, cond_n):
        raise KeyReuseError("while_loop cond function leads to key reuse when repeatedly "
                            "executed: it consumes a key it closes over")
    if _consts_sunk(body_sig, body_n):
        raise KeyReuseError("while_loop body function leads to key reuse when repeatedly "
                            "executed: it consumes a key it closes over")
    cond_sinks = {i - cond_n for i in cond_sig.sinks if i >= cond_n}
    body_sinks = {i - body_n for i in body_sig.sinks if i >= body_n}
    if not cond_sinks <= body_sig.sources:
        raise KeyReuseError("while_loop cond function leads to key reuse when repeatedly "
                            "executed: it consumes a carried key the body does not renew")
    if not body_sinks <= body_sig.sources:
        raise KeyReuseError("while_loop body function leads to key reuse when repeatedly "
                            "executed: it consumes a carried key it does not renew")
    if body_sinks & cond_sinks:
        raise KeyReuseError("while_loop cond and body functions both use the same key")
    # The body's inputs follow the condition's constants among the equation's.
    return Signature({i + cond_n: m for i, m in body_sig.sinks.items()}, body_sig.sources,
                     {o: i + cond_n for o, i in body_sig.forwards.items()})


key_reuse_rules[P.slice_p] = _slice
key_reuse_rules[P.concatenate_p] = _concatenate
key_reuse_rules[P.jit_p] = _body("jaxpr")
key_reuse_rules[shard_map_p] = _body("jaxpr")
key_reuse_rules[remat_p] = _remat
key_reuse_rules[cond_p] = _cond
key_reuse_rules[scan_p] = _scan
key_reuse_rules[while_p] = _while


def signature_of(prim, in_avals, params) -> Signature:
    rule = key_reuse_rules.get(prim, CONSUME)
    return rule(in_avals, params)


# -- a jaxpr's signature ----------------------------------------------------------------

_signatures = weakref.WeakKeyDictionary()      # Jaxpr -> Signature


def jaxpr_signature(jaxpr) -> Signature:
    """The signature of `jaxpr` as a whole (raising KeyReuseError where it uses a key
    twice); its constvars count as inputs after its invars."""
    try:
        return _signatures[jaxpr]
    except (KeyError, TypeError):
        pass
    sig = _walk(jaxpr)
    try:
        _signatures[jaxpr] = sig
    except TypeError:
        pass
    return sig


def _walk(jaxpr) -> Signature:
    used = {}            # Var -> mask of what is used up
    same_as = {}         # a forwarded output -> the Var it passes through

    def root(atom):
        while atom in same_as:
            atom = same_as[atom]
        return atom

    for eqn in jaxpr.eqns:
        in_avals = [a.aval for a in eqn.inputs]
        sig = signature_of(eqn.primitive, in_avals, eqn.params)
        for out, i in sig.forwards.items():
            same_as[eqn.outputs[out]] = eqn.inputs[i]
        for i, mask in sig.sinks.items():
            atom = eqn.inputs[i]
            if not _is_key_aval(atom.aval):
                continue
            atom = root(atom)
            if not isinstance(atom, Var):
                continue
            before = used.get(atom, False)
            if _any(np.logical_and(before, mask)):
                raise KeyReuseError(f"In {eqn.primitive.name}, argument {i} is already "
                                    f"consumed.")
            used[atom] = np.logical_or(before, mask)
        for out in eqn.outputs:
            if _is_key_aval(out.aval) and out not in same_as:
                used[out] = True         # a key no rule calls fresh counts as used
        for out in sig.sources:
            used[root(eqn.outputs[out])] = False
    inputs = [*jaxpr.invars, *jaxpr.constvars]
    position = {v: i for i, v in enumerate(inputs)}
    sinks = {i: used[v] for i, v in enumerate(inputs)
             if _is_key_aval(v.aval) and _any(used.get(v, False))}
    sources, forwards = set(), {}
    for out, atom in enumerate(jaxpr.outvars):
        if not isinstance(atom, Var) or not _is_key_aval(atom.aval):
            continue
        if root(atom) in position:
            forwards[out] = position[root(atom)]
        elif not _any(used.get(atom, False)):
            sources.add(out)
    return Signature(sinks, sources, forwards)


def check_jaxpr(jaxpr) -> None:
    """Raise KeyReuseError if `jaxpr` uses a key twice."""
    jaxpr_signature(jaxpr)


# -- eager calls ------------------------------------------------------------------------

class _ConsumedKeys:
    """The concrete keys eager calls have used up (by identity; an entry goes with
    its key)."""

    def __init__(self):
        self._masks = {}        # id(key) -> (weakref to it, mask)

    def get(self, value):
        entry = self._masks.get(id(value))
        return entry[1] if entry is not None and entry[0]() is value else False

    def set(self, value, mask):
        key_id = id(value)
        try:
            ref = weakref.ref(value, lambda _, key_id=key_id: self._masks.pop(key_id, None))
        except TypeError:
            return                    # (a NumPy key array: nothing to remember it by)
        self._masks[key_id] = (ref, mask)


consumed_keys = _ConsumedKeys()


def _is_key_value(value) -> bool:
    try:
        return is_key(aval_of(value).dtype)
    except (TypeError, ValueError, AttributeError):
        return False


def eager_call(prim, args, params, impl):
    """Run `prim` on concrete `args`, refusing a key its signature sinks that an earlier
    call used up, and recording what this call uses up and makes."""
    sig = signature_of(prim, [aval_of(a) for a in args], params)
    where = "jit-compiled function" if prim is P.jit_p else prim.name
    for i, mask in sig.sinks.items():
        if _is_key_value(args[i]) and _any(np.logical_and(consumed_keys.get(args[i]), mask)):
            raise KeyReuseError(f"Previously-consumed key passed to {where} at index {i}")
    outs = impl(*args, **params)
    outs_list = list(outs)
    for i, mask in sig.sinks.items():
        if _is_key_value(args[i]):
            consumed_keys.set(args[i], np.logical_or(consumed_keys.get(args[i]), mask))
    for out in outs_list:
        if _is_key_value(out):
            consumed_keys.set(out, True)
    for i in sig.sources:
        if _is_key_value(outs_list[i]):
            consumed_keys.set(outs_list[i], False)
    for out, i in sig.forwards.items():
        if _is_key_value(outs_list[out]) and _is_key_value(args[i]):
            consumed_keys.set(outs_list[out], consumed_keys.get(args[i]))
    return outs


_trace.eager_key_reuse.append(eager_call)
