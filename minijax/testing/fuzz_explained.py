"""Differences the fuzzer meets that are explained, not bugs (docs/fuzzing_findings.md:
F7 and F88 on JAX 0.10, F12, F13, the linear-algebra rules' F20-F22, F36, F37, F64, F65, F71,
F73 and F76; F77, F78 and F64's float operands on JAX 0.10 in `fuzz_explained_more`).

A few checkpoint rows differ in *what* the backward pass saves, while the gradients
agree, because minijax cannot form the same residuals without copying an internal
algorithm of JAX or changing its IR. Each such finding has a matcher here: a
predicate on (transform, program, row) that accepts exactly the rows whose residual
difference that finding accounts for -- residual for residual, never "any
difference in a program that has the primitive". `explaining_finding` names the
finding; the fuzzer files the row as known (its `divergence` field says
`explained:F12`); a row no matcher accepts stays unexplained.

A saved-residuals row means the gradients agreed: `cross_check.compare` checks the
values before the residuals.

Two findings are not about residuals: F71, a weak type that a `vmap` row's jaxpr
evaluation keeps and JAX's retraced oracle does not, and F76, a batch returned as
given where the compiled oracle converts it (the harness's two sides run the program
differently there); their matchers name the output leaf.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from itertools import combinations

import numpy as np

from ..ir.core import Var, eqns_nested, jaxprs_in_params
from ..ir.types import dtype_short_name
from .fuzz_explained_more import (matching, _barrier_instantiated_zeros, _dead_branch_slots,
                                  _passed_through_branch_output)

# Each side's list is the repr of a list of strings (`['f32[2]', 'i32[]']`): matched
# string by string, since the types' own brackets end no list.
_LIST = r"(\[(?:'[^']*'(?:, )?)*\])"
_RESIDUALS = re.compile(rf"saved residuals differ: minijax saves {_LIST}, jax saves {_LIST}")
_TYPE = re.compile(r"([a-z]+\d*)\[([\d,]*)\]")


def _residual_types(text: str) -> list:
    """`['f32[2,3]', 'u32[2,1]']` -> [('f32', (2, 3)), ('u32', (2, 1))]."""
    out = []
    for dtype, dims in _TYPE.findall(text):
        out.append((dtype, tuple(int(d) for d in dims.split(",") if d)))
    return out


def _unmatched(row):
    """(minijax-only residuals, JAX-only residuals) of a saved-residuals row, or None."""
    if not row.detail:
        return None
    found = _RESIDUALS.search(row.detail)
    if found is None:
        return None
    mini, jax = Counter(_residual_types(found.group(1))), Counter(_residual_types(found.group(2)))
    return list((mini - jax).elements()), list((jax - mini).elements())


def _eqns(program, names):
    return [eqn for eqn in eqns_nested(program) if eqn.primitive.name in names]


def _aval_key(aval):
    return dtype_short_name(aval.dtype), tuple(aval.shape)


def _operands(program, names):
    """(short dtype, shape) of the first operand of every equation named in `names`."""
    return [_aval_key(eqn.inputs[0].aval) for eqn in _eqns(program, names)]


_CUMULATIVE = ("cummax", "cummin", "cumprod")


def _cumulative_residuals(transform, program, row) -> bool:
    """F12: JAX differentiates cummax/cummin/cumprod through its associative-scan
    implementation and saves slices of that scan's levels (the operand's dtype and
    rank, no dimension larger); minijax's rules save index arrays (cummax/cummin:
    the i32 flat gather index, the operand's shape plus a trailing 1) or masks and partial
    products (cumprod: bool/i32/float arrays of the operand's shape)."""
    unmatched = _unmatched(row) if transform.startswith("checkpoint") else None
    operands = _operands(program, _CUMULATIVE)
    if not unmatched or not operands:
        return False
    mini_only, jax_only = unmatched

    def minijax_made(residual):
        dtype, shape = residual
        return any((dtype in ("i32", "bool", op_dtype) and shape == op_shape)
                   or (dtype == "i32" and shape == op_shape + (1,))
                   for op_dtype, op_shape in operands)

    def jax_made(residual):
        dtype, shape = residual
        return any(dtype == op_dtype and len(shape) == len(op_shape)
                   and all(s <= o for s, o in zip(shape, op_shape))
                   for op_dtype, op_shape in operands)
    return all(map(minijax_made, mini_only)) and all(map(jax_made, jax_only))


def _size_one_broadcast_residuals(transform, program, row) -> bool:
    """F13: JAX's binary operations broadcast size-1 dimensions implicitly (jax 0.10:
    `mul f32[2,3] f32[1,1]`), so JAX saves a constant operand at its own shape;
    minijax's binary primitives take equal shapes (or a rank-0 operand), the
    broadcast is a separate known equation and its result is what is saved. Each
    minijax-only residual pairs with one JAX-only residual of the same dtype and
    rank whose every dimension is the same or 1."""
    unmatched = _unmatched(row) if transform.startswith("checkpoint") else None
    if not unmatched or len(unmatched[0]) != len(unmatched[1]):
        return False
    jax_only = list(unmatched[1])
    for dtype, shape in unmatched[0]:
        pair = next(((d, s) for d, s in jax_only if d == dtype and len(s) == len(shape)
                     and s != shape and all(a in (b, 1) for a, b in zip(s, shape))), None)
        if pair is None:
            return False
        jax_only.remove(pair)
    return True


_WINDOW_CHOOSERS = ("reduce_window_max", "reduce_window_min")


def _window_chooser_residuals(transform, program, row) -> bool:
    """F36: JAX's jvp of a window max/min is its internal `select_and_gather_add`
    primitive, linear in the tangent with the operand as a parameter, so what JAX saves
    is the operand. minijax has no such primitive: its rule selects, window position
    by window position, the tangent where the extremum first appears, so it saves
    boolean masks of the output's shape and the zero tangent it starts from (the
    operand's dtype, the output's shape)."""
    unmatched = _unmatched(row) if transform.startswith("checkpoint") else None
    if not unmatched or not any(unmatched):
        return False
    return _window_choosers_account_for(program, *unmatched)


def _window_choosers_account_for(program, mini_only, jax_only) -> bool:
    """F36's residuals: minijax's masks and zero tangents against JAX's operands."""
    windows = [(_aval_key(eqn.inputs[0].aval), _aval_key(eqn.outputs[0].aval))
               for eqn in _eqns(program, _WINDOW_CHOOSERS)]
    if not windows:
        return False

    def minijax_made(residual):
        dtype, shape = residual
        return any(shape == out_shape and dtype in ("bool", op_dtype)
                   for (op_dtype, _), (_, out_shape) in windows)
    return all(map(minijax_made, mini_only)) and all(
        any(residual == operand for operand, _ in windows) for residual in jax_only)


def _carries_read(scan):
    """The carry inputs of a `scan` equation's body that an equation of the body reads."""
    body = scan.params["jaxpr"]
    body = getattr(body, "jaxpr", body)
    start = scan.params["num_consts"]
    binders = body.invars[start:start + scan.params["num_carry"]]
    read = {id(a) for eqn in eqns_nested(body) for a in eqn.inputs if isinstance(a, Var)}
    return [v for v in binders if id(v) in read]


def _final_carry_read(program):
    """The `scan` equations whose final carry an equation after the loop (or the
    enclosing body's result) reads."""
    found, todo = [], [program.jaxpr if hasattr(program, "jaxpr") else program]
    while todo:
        jaxpr = todo.pop()
        jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
        read = {id(a) for eqn in jaxpr.eqns for a in eqn.inputs if isinstance(a, Var)}
        read.update(id(v) for v in jaxpr.outvars if isinstance(v, Var))
        for eqn in jaxpr.eqns:
            todo.extend(jaxprs_in_params(eqn.params))
            if eqn.primitive.name == "scan" and any(
                    id(v) in read for v in eqn.outputs[:eqn.params["num_carry"]]):
                found.append(eqn)
    return found


def _recomputed_final_carry(transform, program, row) -> bool:
    """F73: when the backward pass needs the final carry of a `scan` (a staged
    operation reads it: `c * c`, a window max of it), minijax saves that carry. JAX's
    rule for a scan under a checkpoint (`_scan_partial_eval_custom`) makes the
    backward scan take every input and produce every output again, so it saves the
    carry's *initial* value and, per iteration, the new carry the body computed
    (`[length, *carry]`), and recomputes the final carry from them: the same type as
    minijax's once, plus a stacked array only JAX has. The matcher accepts a row
    whose JAX-only residuals are stacked carries of the program's scans, and whose
    other residuals differ only as F36 allows (a window max/min of the carry).

    The same rule meets a body that reads its carry (`c * c` inside the body): the
    backward scan carries it again from its initial value, so JAX saves that initial
    carry and the stacked new carries, where minijax saves the stacked carry *inputs*.
    When the body's derivative needs the new carry anyway (a `custom_linear_solve`
    whose result is the carry), JAX's stacked new carries are that residual and only
    the initial carry is JAX's, one stacked carry minijax's; otherwise JAX saves the
    initial carry more. The matcher accepts a row whose JAX-only residuals are initial
    carries (a carry's type) and whose minijax-only ones are at most as many stacked
    carries. Where the final carry is read after the loop, JAX's backward scan takes
    the loop's consts too: a carry set to a const, or computed from consts alone (seed
    `fz14:754`), is that const or a hoisted residual on both sides, and JAX saves the
    initial carry (and a const minijax's backward pass does not read) more."""
    unmatched = _unmatched(row) if transform.startswith("checkpoint") else None
    scans = _eqns(program, ("scan",))
    # what JAX's backward scans may take again, each value once: a loop's read
    # carries, or, when its final carry is read after it, all its consts and carries
    final_read = {id(eqn) for eqn in _final_carry_read(program)}
    carries = Counter(
        _aval_key(v.aval) for eqn in scans
        for v in (eqn.inputs[:eqn.params["num_consts"] + eqn.params["num_carry"]]
                  if id(eqn) in final_read else _carries_read(eqn)))
    stacked = {(dtype, (eqn.params["length"],) + shape)
               for eqn in scans
               for dtype, shape in map(_aval_key, (v.aval for v in
                                                   eqn.outputs[:eqn.params["num_carry"]]))}
    if not unmatched or not stacked:
        return False
    mini_only, jax_only = unmatched
    if jax_only and not Counter(jax_only) - carries and \
            all(r in stacked for r in mini_only) and len(mini_only) <= len(jax_only):
        return True
    if not any(r in stacked for r in jax_only):
        return False
    jax_rest = [r for r in jax_only if r not in stacked]
    if not mini_only and not jax_rest:
        return True
    return _window_choosers_account_for(program, mini_only, jax_rest)


def _bytes(residual) -> int:
    dtype, shape = residual
    bits = int(re.sub(r"\D", "", dtype) or 8)      # bool: one byte
    return int(np.prod(shape)) * max(bits // 8, 1)


def _nested_checkpoint_residuals(transform, program, row) -> bool:
    """F37: a checkpoint inside the checkpointed function. JAX partially evaluates
    the inner checkpoint's body with the *outer* policy (its rule for a nested
    `remat` passes the outer policy down; the inner one's is not consulted), so under
    an outer `everything_saveable` JAX saves the inner body's intermediates even when
    the inner policy says to recompute them. minijax applies the inner policy to the
    inner body: it saves the inner checkpoint's inputs and recomputes from them. The
    matcher accepts a row whose JAX-only residuals have the types of values computed
    inside an inner checkpoint (or are boolean masks of such a value's shape, which
    its jvps select on), whose minijax-only residuals have the types of an
    inner checkpoint's inputs, and where minijax's side is not larger: in bytes, or,
    where JAX's side holds masks or narrower intermediates and minijax the wider
    inputs they come from (seed `rm16:180`: JAX a `bool[1,3]` mask, minijax the
    `f32[1,3]` it is computed from), in number of arrays."""
    unmatched = _unmatched(row) if transform.startswith("checkpoint") else None
    inner_eqns = _eqns(program, ("remat",))
    if not unmatched or not unmatched[1] or not inner_eqns:
        return False
    mini_only, jax_only = unmatched
    inputs = {_aval_key(atom.aval) for eqn in inner_eqns for atom in eqn.inputs}
    inner_body = [inner for eqn in inner_eqns for body in jaxprs_in_params(eqn.params)
                  for inner in eqns_nested(body)]
    computed = {_aval_key(out.aval) for inner in inner_body for out in inner.outputs}
    # exp2's jvp computes `log 2` as an equation (F30): JAX saves that scalar too, one
    # per exp2 of the inner body (seed rm17b:206)
    logs = Counter((_aval_key(inner.outputs[0].aval)[0], ()) for inner in inner_body
                   if inner.primitive.name == "exp2")
    jax_only = list((Counter(jax_only) - logs).elements())
    # what differentiating the inner body computes: its intermediates, and the
    # boolean masks (of an intermediate's shape) that the jvps of abs, clamp, max ... select on
    masks = {("bool", shape) for _, shape in computed}
    return (all(r in inputs for r in mini_only)
            and all(r in computed or r in masks for r in jax_only)
            and (sum(map(_bytes, mini_only)) <= sum(map(_bytes, jax_only))
                 or len(mini_only) <= len(jax_only)))


def _barrier_float0_residuals(transform, program, row) -> bool:
    """F64: JAX's jvp of `optimization_barrier` instantiates every symbolic-zero
    tangent -- the float0 tangent of an integer or boolean operand too -- and puts
    all tangents behind one barrier in the backward pass, so a checkpoint saves that
    float0 zero array as a residual. minijax's rule puts only the nonzero tangents
    behind its barrier. A float0 array holds no data (zero bytes). The matcher
    accepts a row where minijax saves nothing JAX does not, and every JAX-only
    residual is a float0 array of the shape of an integer or boolean barrier operand."""
    unmatched = _unmatched(row) if transform.startswith("checkpoint") else None
    if not unmatched or unmatched[0] or not unmatched[1]:
        return False
    shapes = {tuple(atom.aval.shape) for eqn in _eqns(program, ("optimization_barrier",))
              for atom in eqn.inputs if np.dtype(atom.aval.dtype).kind in "biu"}
    return all(dtype == "float0" and shape in shapes for dtype, shape in unmatched[1])


def _zeroth_power_residuals(transform, program, row) -> bool:
    """F65: JAX's jvp of `integer_pow(x, 0)` is `full_like(g, 0)`, a zero array, not
    a symbolic zero, so a checkpoint keeps what that zero's consumers read: the
    scalar it is broadcast from (rank 0, the operand's dtype) and the other operands
    of elementwise operations the zero tangent flows through (`x ** 0 * x` saves `x`).
    minijax's rule returns a symbolic zero, which those operations drop. The matcher
    accepts a row where minijax saves nothing JAX does not and every JAX-only residual
    is a rank-0 value of a zeroth power's dtype or has a zeroth power's type."""
    unmatched = _unmatched(row) if transform.startswith("checkpoint") else None
    if not unmatched or unmatched[0] or not unmatched[1]:
        return False
    powers = [_aval_key(eqn.inputs[0].aval) for eqn in _eqns(program, ("integer_pow",))
              if eqn.params["y"] == 0]
    return bool(powers) and all(any(residual in ((dtype, ()), (dtype, shape))
                                    for dtype, shape in powers)
                                for residual in unmatched[1])


def _matrix_operands(program, name):
    """(short dtype, rows, columns) of the operand of every `name` equation."""
    return [(dtype, shape[-2], shape[-1]) for dtype, shape in _operands(program, (name,))]


def _within(residuals, allowed) -> bool:
    """Every residual is one of `allowed` (a multiset: each used at most once)."""
    return not Counter(residuals) - Counter(allowed)


# The linear-algebra findings say which residuals each decomposition adds on either
# side: (minijax-only allowed, JAX-only allowed), multisets of (dtype, shape).

def _qr_identity(program):
    """F20: JAX's QR rule adds `I * (C - re C)` (the diagonal of C = Qᴴ Ȧ R⁻¹ must be
    real for complex inputs), computing the identity for real matrices too, where the
    term is zero; a checkpoint saves that [k, k] identity (k: R's square block).
    minijax's QR is for real matrices only and has no such term."""
    return [], [(d, (min(m, n),) * 2) for d, m, n in _matrix_operands(program, "qr")]


def _singular_value_broadcasts(program):
    """F21: in SVD's rule JAX multiplies and divides by `s[..., None, :]` (and its
    transpose) with implicit broadcasting, saving s as [1, k] and [k, 1]; minijax's
    binary primitives take equal shapes, so it saves s broadcast along the rows and
    down the columns ([k, k] each) and, for a non-square matrix, along the rows of the
    out-of-span term ([max(m, n), k]). F13's shape, except that JAX reuses one [1, k]
    array for the broadcasts minijax makes at two shapes."""
    mini_allowed, jax_allowed = [], []
    for d, m, n in _matrix_operands(program, "svd"):
        k = min(m, n)
        mini_allowed += [(d, (k, k)), (d, (k, k))] + ([(d, (max(m, n), k))] if m != n else [])
        jax_allowed += [(d, (1, k)), (d, (k, 1))]
    return mini_allowed, jax_allowed


def _cholesky_triangle_twice(program):
    """F22: JAX's `cholesky` is `tril(cholesky_p(x))` and its rule takes the triangle
    again, `L = tril(cholesky_p(x))`, for the tangent: when the factor also feeds an
    operation whose derivative reads it (a triangular solve), a checkpoint saves both
    copies, equal arrays of [n, n]. minijax's primitive gives the triangle once, and the
    rule and the consumer read the same value."""
    return [], [(d, (n, n)) for d, _, n in _matrix_operands(program, "cholesky")]


def _linalg_residuals(*allowances):
    """A matcher accepting a checkpoint row whose minijax-only and JAX-only residuals
    are all among what the given findings allow for the program's decompositions (a
    program with several decompositions may show several findings in one row)."""
    def matches(transform, program, row) -> bool:
        unmatched = _unmatched(row) if transform.startswith("checkpoint") else None
        if not unmatched or not any(unmatched):
            return False
        mini_allowed, jax_allowed = [], []
        for allowance in allowances:
            mini, jax = allowance(program)
            mini_allowed += mini
            jax_allowed += jax
        return _within(unmatched[0], mini_allowed) and _within(unmatched[1], jax_allowed)
    return matches


_WEAK_LEAF = re.compile(r"leaf (\d+): weak_type True != jax's False$")


def _weak_through_a_body(transform, program, row) -> bool:
    """F71: a `vmap` row maps a weakly typed scalar argument (a Python float) over a
    batch, a NumPy array, so the batched value is strongly typed. minijax's side
    evaluates the program's jaxpr: a loop or branch equation keeps its body as traced,
    with that argument's body input weak, so the body's result -- and the output made
    from it -- stays weak (JAX's own evaluation of the same jaxpr under `jax.vmap`,
    `jax.extend.core.jaxpr_as_fun`, does the same). JAX's side runs
    `to_jax(program)`, which traces each body anew from the values it is given, now
    strong. The matcher accepts a weak-versus-strong output leaf that is weak only
    through an equation with a body that takes a weak argument of the program: the
    output is that equation's result, or is computed from such results by equations
    without bodies."""
    found = _WEAK_LEAF.search(row.detail or "") if transform in ("vmap", "vmap[axes]") else None
    outvars = program.jaxpr.outvars
    if found is None or int(found.group(1)) >= len(outvars):
        return False
    weak_arguments = {v for v in program.jaxpr.invars
                      if getattr(v.aval, "weak_type", False)}
    producer = {out: eqn for eqn in program.jaxpr.eqns for out in eqn.outputs}

    def weak_through_a_body(atom, depth=0) -> bool:
        eqn = producer.get(atom) if isinstance(atom, Var) else None
        if eqn is None or not getattr(atom.aval, "weak_type", False) or depth > 50:
            return False
        if any(True for _ in jaxprs_in_params(eqn.params)):
            return any(isinstance(a, Var) and a in weak_arguments for a in eqn.inputs)
        return any(weak_through_a_body(a, depth + 1) for a in eqn.inputs)
    return weak_through_a_body(outvars[int(found.group(1))])


_WIDE_LEAF = re.compile(r"leaf (\d+): dtype (float64|int64|complex128) != "
                        r"jax's (float32|int32|complex64)$")


def _batch_passed_through(transform, program, row) -> bool:
    """F76: a `vmap` row's output that is one of the program's arguments, unchanged. The
    batch of a Python-scalar argument is a NumPy array of 64-bit type; `vmap` of a
    function returning its argument returns that array as it was given -- JAX's eager
    `vmap` too -- while the fuzzer's compiled oracle (the recipe under `jax.jit`)
    returns it converted to the 32-bit type. The matcher accepts a 64-bit-versus-32-bit
    leaf whose output is an argument of the program."""
    found = _WIDE_LEAF.search(row.detail or "") if transform in ("vmap", "vmap[axes]") else None
    outvars = program.jaxpr.outvars
    if found is None or int(found.group(1)) >= len(outvars):
        return False
    out = outvars[int(found.group(1))]
    return isinstance(out, Var) and any(out is v for v in program.jaxpr.invars)


# JAX 0.10's derivatives of these formed 1 - x**2 from two saved factors (tanh: tanh x
# and 1 - tanh x; atanh: 1/(1 + x) and 1 - x; one_minus_square, which JAX 0.10 lacks
# and the oracle runs as (1 + x)(1 - x): 1 + x and 1 - x), where minijax's, like JAX
# 0.11's, save one array.
_TWO_FACTOR_RULES = ("tanh", "atanh", "one_minus_square")


def _stackings(program, names):
    """Per equation named in `names` (in any body), the types one of its results can
    have as a residual: its own, or stacked by enclosing scans (outer length first;
    a value hoisted out of a loop is not stacked by it)."""
    found = []

    def walk(jaxpr, lengths):
        for eqn in getattr(jaxpr, "jaxpr", jaxpr).eqns:
            if eqn.primitive.name in names:
                dtype, shape = _aval_key(eqn.outputs[0].aval)
                found.append({(dtype, tuple(p) + shape) for r in range(len(lengths) + 1)
                              for p in combinations(lengths, r)})
            inner = lengths + (eqn.params["length"],) if eqn.primitive.name == "scan" \
                else lengths
            for sub in jaxprs_in_params(eqn.params):
                walk(sub, inner)
    walk(program, ())
    return found


def _without_older_jax_factors(transform, program, row):
    """F7, on JAX before 0.11: `row` without the JAX-only residuals that JAX's
    two-factor rules of tanh, atanh and one_minus_square account for (at most one per
    such equation, of its result's type, stacked as a loop stacks it), or None when
    none is left out."""
    from . import JAX_VERSION
    unmatched = _unmatched(row) if transform.startswith("checkpoint") else None
    if JAX_VERSION >= (0, 11) or not unmatched or not unmatched[1]:
        return None
    mini_only, jax_only = unmatched
    # equation index -> index of the residual it accounts for
    owner_of = matching(jax_only, _stackings(program, _TWO_FACTOR_RULES))
    if not owner_of:
        return None
    rest = [r for i, r in enumerate(jax_only) if i not in owner_of.values()]
    if not mini_only and not rest:
        return replace(row, status="agree", detail="")

    def text(residuals):
        return str([f"{d}[{','.join(map(str, shape))}]" for d, shape in sorted(residuals)])
    return replace(row, detail=f"saved residuals differ: minijax saves {text(mini_only)}, "
                               f"jax saves {text(rest)}")


def _older_jax_tanh_nans(transform, program, row) -> bool:
    """F88, on JAX before 0.11: values that differ only where JAX's are NaN and
    minijax's infinite, in a program with a derivative JAX 0.10 formed from two
    factors. Its tanh rule, (t + t tanh x)(1 - tanh x), is inf - inf = NaN for an
    infinite tangent t where tanh x < 0; minijax's and JAX 0.11's, t (1 - tanh² x),
    give the infinity."""
    from . import JAX_VERSION
    return (JAX_VERSION < (0, 11) and row.jax_nan_for_infinity
            and any(e.primitive.name in _TWO_FACTOR_RULES for e in eqns_nested(program.jaxpr)))


# finding id -> predicate on (transform, program, row)
EXPLAINED = {
    "F88": _older_jax_tanh_nans,
    "F12": _cumulative_residuals,
    "F13": _size_one_broadcast_residuals,
    "F36": _window_chooser_residuals,
    "F37": _nested_checkpoint_residuals,
    "F64": lambda *a: _barrier_float0_residuals(*a) or _barrier_instantiated_zeros(*a),
    "F65": _zeroth_power_residuals,
    "F71": _weak_through_a_body,
    "F77": _dead_branch_slots,
    # before F73, whose stacked carries can have a passed-through output's type
    "F78": _passed_through_branch_output,
    "F73": _recomputed_final_carry,
    "F76": _batch_passed_through,
    "F20": _linalg_residuals(_qr_identity),
    "F21": _linalg_residuals(_singular_value_broadcasts),
    "F22": _linalg_residuals(_cholesky_triangle_twice),
    # a row with several decompositions can show several of them at once
    "F20-F22": _linalg_residuals(_qr_identity, _singular_value_broadcasts,
                                 _cholesky_triangle_twice),
}


def explaining_finding(transform: str, program, row) -> str:
    """`explained:F12` for a row an explained finding accounts for, else ''."""
    if row is None or row.status != "differ":
        return ""
    for finding, matches in EXPLAINED.items():
        if matches(transform, program, row):
            return f"explained:{finding}"
    # on JAX 0.10, F7's residuals may come with another finding's in one row
    rest = _without_older_jax_factors(transform, program, row)
    if rest is None:
        return ""
    if rest.status == "agree":
        return "explained:F7"
    for finding, matches in EXPLAINED.items():
        if matches(transform, program, rest):
            return f"explained:F7+{finding}"
    return ""
