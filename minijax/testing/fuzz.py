"""`minijax.testing.fuzz`: a differential fuzzer of minijax against JAX.

Hand-written tests check what their authors thought of; a fuzzer generates the
programs instead. Each case is

1. a random well-typed minijax program (`generate(seed)`, built equation by equation
   from each primitive's type rule: fuzz_builder.py, fuzz_ops.py,
   fuzz_structured.py), with arguments that include edge values (0, -0, +-1, huge,
   tiny, inf, nan) and a second "safe" set of moderate values;
2. checked (`check_case`) by a battery of rows, each one `Row` as `cross_check`
   gives it:
   * every `cross_check` transform and checkpoint policy, plus vmap with random
     in_axes/out_axes: minijax's transform of the program against JAX's transform of
     the program exported with `to_jax`, comparing values, dtypes, weak types, ref
     contents, saved residuals and what `debug.print` printed, in order;
   * minijax's own invariants, on the safe arguments: the reference (NumPy)
     evaluator against the XLA backend (`invariant:reference`), jvp against central
     finite differences for programs of smooth operations (`invariant:fd`), and the
     dot-product test of vjp against jvp, <v, J u> = <J^T v, u> (`invariant:dot`).
     With checks on (the fuzzer turns them on), every pass's output is verified and
     round-tripped through the text form; a failure there is an `error` row.
3. a finding, for each unexplained row: shrunk (shrink.py) and written as a
   standalone reproducer, deduplicated by `signature` (transform family, primitives
   of the shrunk program, kind of difference), so one bug is one finding.

The campaign driver, tally and tables are in fuzz_run.py; `python -m minijax fuzz`.
"""
from __future__ import annotations

import contextlib
import io
import random
from dataclasses import dataclass, field

import numpy as np

import minijax
from ..ir.core import eqns_nested
from ..ir.types import bfloat16, is_float
from . import recipes as recipes_module
from .comparison import _tolerance
from .cross_check import compare, select_recipes, _program_words, _TRANSFORM_WORDS
from .fuzz_builder import DTYPES, Builder, Shared, make_arguments, random_value
from .fuzz_ops import OPS, feature_names
from .fuzz_structured import POLICIES
from .report import Row, difference_kind

__all__ = ["FuzzCase", "generate", "check_case", "all_transforms", "signature",
           "list_primitives", "FEATURES", "INVARIANTS", "RECIPE_POLICIES"]

FEATURES = tuple(feature_names()) + ("edge_values",)
INVARIANTS = ("invariant:reference", "invariant:fd", "invariant:dot")
# The checkpoint rows: every policy a recipe can name (save_from_both_policies takes
# policy objects, so it is exercised inside programs instead).
RECIPE_POLICIES = tuple(p if len(p) > 1 else p[0] for p in POLICIES
                        if p[0] != "save_from_both_policies")


@dataclass
class FuzzCase:
    seed: str
    program: object                 # minijax ClosedJaxpr
    leaves: list                    # the arguments: arrays, Python scalars, refs
    safe_leaves: list               # the same types, moderate values
    features: frozenset             # the features the program uses
    ops: frozenset                  # fuzz ops used
    smooth: bool                    # every op differentiable everywhere
    rng: random.Random = field(repr=False, default=None)

    @property
    def primitives(self) -> frozenset:
        return primitive_names(self.program)


def primitive_names(closed) -> frozenset:
    return frozenset(eqn.primitive.name for eqn in eqns_nested(closed))


def generate(seed, features=None, size=8, rng=None) -> FuzzCase:
    """The program named by `seed` (any str/int; the same seed, features and size give
    the same program), or drawn from `rng` when given (Hypothesis's `randoms()`)."""
    features = frozenset(FEATURES if features is None else features)
    unknown = features - set(FEATURES)
    if unknown:
        raise ValueError(f"unknown fuzz features {sorted(unknown)}; known: {list(FEATURES)}")
    rng = rng if rng is not None else random.Random(f"minijax-fuzz:{seed}")
    dtypes = DTYPES if "dtypes" in features else (np.dtype(np.float32),)
    shared = Shared(features, dtypes, size=size)
    leaves = make_arguments(rng, shared)
    body_seed, steps = rng.getrandbits(63), rng.randint(max(1, size // 2), size)

    def program(*args):
        refs = [(a, False) for a in args if isinstance(a, minijax.Ref)
                or type(minijax.typeof(a)).__name__ == "RefType"]
        values = [a for a in args if all(a is not r for r, _ in refs)]
        builder = Builder(random.Random(body_seed), shared, values, refs)
        return builder.run(steps).outputs()
    closed = minijax.make_jaxpr(program)(*leaves)
    safe_rng = random.Random(f"minijax-fuzz-safe:{seed}")
    safe = [_safe_like(safe_rng, x) for x in leaves]
    return FuzzCase(str(seed), closed, leaves, safe, frozenset(shared.used_features),
                    frozenset(shared.used_ops), shared.smooth, rng)


def _safe_like(rng, x):
    if isinstance(x, minijax.Ref):
        value = np.asarray(x[...])
        return minijax.new_ref(random_value(rng, value.shape, value.dtype, False))
    if isinstance(x, (bool, int, float)):
        return x
    return random_value(rng, np.shape(x), np.asarray(x).dtype, False)


# -- the battery ----------------------------------------------------------------------------------

def all_transforms() -> list:
    return list(select_recipes(None, RECIPE_POLICIES)) + ["vmap[axes]", *INVARIANTS]


def _vmap_axes_recipe(case: FuzzCase):
    rng = random.Random(f"minijax-fuzz-vmap:{case.seed}")
    in_axes = []
    for x in case.leaves:
        ndim = np.ndim(np.asarray(x[...] if isinstance(x, minijax.Ref) else x))
        in_axes.append(None if isinstance(x, minijax.Ref) or rng.random() < 0.25
                       else rng.randint(-ndim - 1, ndim))
    if all(a is None for a in in_axes) and not isinstance(case.leaves[0], minijax.Ref):
        in_axes[0] = 0
    out_axes = [rng.randint(-len(a.shape) - 1, len(a.shape))
                for a in case.program.out_avals]
    return recipes_module.vmap_axes_recipe(in_axes, out_axes)


def recipes_for(case: FuzzCase, transforms) -> dict:
    recipes = select_recipes([t for t in transforms if t in recipes_module.TRANSFORMS], ())
    for t in transforms:
        if t.startswith("checkpoint["):
            spec = next(p for p in RECIPE_POLICIES
                        if f"checkpoint[{recipes_module.policy_label(p)}]" == t)
            recipes.update(select_recipes([], (spec,)))
        elif t == "vmap[axes]":
            recipes[t] = _vmap_axes_recipe(case)
    return recipes


class ProgramSides:
    """Both sides of one program, made once and shared by every row of the battery.

    The minijax side is the program evaluated eagerly, as a user runs it: that is
    what is under test. The JAX side is the oracle, `to_jax(program)`. Eager JAX
    compiles every primitive of every transformed program separately, which was most
    of the fuzzer's time; so for the rows of transforms the oracle runs the whole
    recipe under one `jax.jit` (`compile_oracle`): the same JAX transforms of the same
    function, with the arguments as constants (a Python scalar stays a weakly typed
    Python scalar), compiled as one XLA program -- without XLA's constant folding,
    whose compile-time values can differ from what the program computes at run time
    (finding F53). The oracle stays eager for the `eager` and `vjp` rows, for
    programs with effects (refs, debug printing) or ref arguments, whose eager
    behaviour is part of what is compared, and for programs with float16/bfloat16
    values (below). `compile_oracle=False` keeps every row
    eager (the benchmark's baseline)."""

    def __init__(self, program, leaves=(), compile_oracle=True):
        import jax
        from ..interop import to_jax
        from ..transforms.ad_util import eval_jaxpr
        exported = to_jax(program)

        def mini_fn(*flat):
            return tuple(eval_jaxpr(program.jaxpr, program.consts, flat))

        def jax_fn(*flat):
            return tuple(exported(*flat))
        self.minijax = recipes_module.Side("minijax", minijax, mini_fn)
        self.jax = recipes_module.Side("jax", jax, jax_fn)
        self.compile_oracle = compile_oracle and _oracle_may_jit(program, leaves)
        self.has_custom_vjp = any(eqn.primitive.name == "custom_vjp_call"
                                  for eqn in eqns_nested(program))

    def oracle_recipe(self, name, recipe):
        """The recipe the JAX side runs for row `name`."""
        if not self.compile_oracle or name in _EAGER_ORACLE_ROWS:
            return recipe
        if self.has_custom_vjp and name in _FORWARD_MODE_ROWS:
            # JAX raises for forward mode through a custom_vjp call when it evaluates
            # the tangent map eagerly, not where it stages it and drops it as dead
            # code (under jit); minijax's side is eager, so the oracle is too
            # (finding F41).
            return recipe
        return _compiled_recipe(recipe)


def _compiled_recipe(recipe):
    """`recipe` run under one `jax.jit`. Its results that are not arrays (the printed
    saved residuals of checkpoint rows) are known when it is traced: they come back
    as traced, the arrays from the compiled program."""
    def compiled(side, leaves):
        tree_util = side.api.tree_util
        static = {}

        def run():
            flat, static["tree"] = tree_util.tree_flatten(recipe(side, leaves))
            static["flat"] = flat
            return [x for x in flat if _is_array(x)]
        lowered = side.api.jit(run).lower()
        arrays = iter(lowered.compile(compiler_options=_NO_CONSTANT_FOLDING)())
        flat = [next(arrays) if _is_array(x) else x for x in static["flat"]]
        return tree_util.tree_unflatten(static["tree"], flat)
    return compiled


# The arguments are constants of the oracle's program, so XLA's constant folding would
# compute the whole recipe at compile time, and its value can differ from what the
# compiled program computes at run time, which is what JAX gives a user, eagerly or
# under jit: where terms cancel (46 + 1.4e30 - 1.4e30) the folded gradient was 46 and
# both JAX's run time and minijax's 0 (F53).
_NO_CONSTANT_FOLDING = {"xla_disable_hlo_passes": "constant_folding"}


def _is_array(x):
    return hasattr(x, "shape") and hasattr(x, "dtype")


# The rows whose oracle stays eager: `eager` is the eager comparison, and `vjp`'s
# recipe reads the primal outputs' values to make its cotangents.
_EAGER_ORACLE_ROWS = ("eager", "vjp")
_FORWARD_MODE_ROWS = ("jvp", "linearize", "jacfwd", "hessian")
# Eagerly, every float16/bfloat16 operation rounds its result; XLA may keep a fused
# computation's intermediates in float32. Programs with them keep an eager oracle.
_ROUNDED_EVERY_OPERATION = (np.dtype(np.float16), bfloat16)


def _oracle_may_jit(program, leaves) -> bool:
    if any(type(x).__name__ == "Ref" for x in leaves):
        return False
    avals = list(program.in_avals) + [v.aval for eqn in eqns_nested(program)
                                      for v in eqn.outputs]
    if any(getattr(a, "dtype", None) in _ROUNDED_EVERY_OPERATION for a in avals):
        return False
    return not any(eqn.effects or eqn.primitive.ref_op for eqn in eqns_nested(program))


def _printing(run, sink):
    """`run`, with what it prints (debug.print included: effects are awaited) kept."""
    def go():
        import jax
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            result = run()
            jax.effects_barrier()
        sink.append(out.getvalue())
        return result
    return go


def compare_row(name, program, leaves, recipe, rtol=None, atol=None, sides=None) -> Row:
    """One battery row: minijax's `recipe` of `program` against JAX's of `to_jax(program)`,
    results and printed output. `sides`: the program's `ProgramSides`, when the caller
    checks several rows of one program."""
    sides = sides or ProgramSides(program, leaves)

    def against(oracle):
        printed_mini, printed_jax = [], []
        row = compare(name,
                      _printing(lambda: recipes_module.run_recipe(sides.minijax, recipe,
                                                                  leaves), printed_mini),
                      _printing(lambda: recipes_module.run_recipe(sides.jax, oracle, leaves),
                                printed_jax),
                      rtol, atol)
        return row, printed_mini, printed_jax
    oracle = sides.oracle_recipe(name, recipe)
    row, printed_mini, printed_jax = against(oracle)
    if oracle is not recipe and row.status == "differ":
        # The compiled oracle is JAX's transform under one jax.jit, and jit can change
        # what it returns: a gradient's weak type (J34: add_any and remat's transpose
        # take their staged types from the primal's tangent type), an input passed
        # straight through (eagerly handed back as given, an int64 NumPy array too;
        # under jit canonical), and values by XLA's fusions (seed s6fz6b-w:1: float32
        # gradients through tan, pow and cosh in a switch moved 5.7e-5). The row is
        # about the transform, so eager JAX decides a difference (finding F61); the
        # jit(grad) row still compares JAX's jit.
        row, printed_mini, printed_jax = against(recipe)
    if row.status == "agree" and printed_mini != printed_jax:
        first = next((i for i, (a, b) in enumerate(zip(printed_mini[0].splitlines(),
                                                        printed_jax[0].splitlines()))
                      if a != b), None)
        return Row(name, "differ", detail=f"printed output differs (line {first}): minijax "
                   f"{printed_mini[0]!r} jax {printed_jax[0]!r}")
    return row


def known_divergence(transform: str, program, row: Row | None = None) -> str:
    """The registered divergence explaining a row. Stricter than cross_check's matching
    on purpose, since a fuzzer must not file a new bug under an old record: one of the
    record's transforms is the row's, the program has all of its other words
    (features, the checkpoint policy its name mentions), the record names a transform
    at all (records about the surface of indexing name none, and the generator makes
    no such indexers), a record of a JAX crash ("..._fails", "..._crashes") explains
    only a row where JAX raised; a record with a matcher in
    minijax/divergences/fuzz.py (`FUZZ_ROW_MATCHERS`) explains exactly the rows its
    matcher accepts. A difference that is explained, not a divergence (a finding of
    `fuzz_explained.py`), is named `explained:ID`."""
    from minijax.divergences import DIVERGENCES
    from .fuzz_explained import explaining_finding
    explained = explaining_finding(transform, program, row)
    if explained:
        return explained
    from minijax.divergences.fuzz import FUZZ_ROW_MATCHERS
    row_words = {w for w in _TRANSFORM_WORDS if w in transform}
    if transform.startswith("checkpoint"):
        row_words |= {"checkpoint", "remat", "grad", "checkpoint_policies"}
    if "value_and_grad" in transform:
        row_words.add("grad")
    words = _program_words(program) | row_words | _policies_used(program)
    words |= {w for w in POLICY_NAMES if w in transform}
    for entry in DIVERGENCES:
        matcher = FUZZ_ROW_MATCHERS.get(entry.name)
        if matcher is not None:
            if row is not None and matcher(transform, row):
                return entry.name
            continue
        named = set(entry.transforms) & _TRANSFORM_WORDS
        needs = (set(entry.transforms) - _TRANSFORM_WORDS) | {
            w for w in POLICY_NAMES if w in entry.name}
        if not named & row_words or not needs <= words:
            continue
        crash = entry.name.endswith(("_fails", "_fail", "_crashes"))
        if crash and (row is None or row.status not in ("error", "both raise")
                      or not row.jax_error):
            continue
        return entry.name
    return ""


POLICY_NAMES = ("nothing_saveable", "everything_saveable", "dots_saveable",
                "dots_with_no_batch_dims_saveable", "save_only_these_names",
                "save_any_names_but_these", "save_anything_except_these_names",
                "save_from_both_policies", "checkpoint_dots")


def _policies_used(program) -> set:
    """The policy names the program's checkpoint equations print with."""
    texts = [str(eqn.params["policy"]) for eqn in eqns_nested(program)
             if "policy" in eqn.params]
    return {w for text in texts for w in POLICY_NAMES if w in text}


# Second derivatives: each rounding of the chain costs an ulp, and a factor like
# 1 - tanh(x)**2 near saturation loses bits to cancellation. In float16 both sides'
# hessians are up to 1.25% off the exact value (finding H1) and two correct
# formulations part by twice that (F48); in float32 both were 3.4e-5 off (relative)
# through a saturated tanh, where the first-order tolerance is 2e-5 (F49).
_FLOAT16_SECOND_ORDER = (2.5e-2, 2.5e-2)
_FLOAT32_SECOND_ORDER = (1e-4, 1e-5)
_SECOND_ORDER_ROWS = ("hessian", "grad(grad)")


def _program_tolerance(program, rtol, atol, transform=""):
    """The (rtol, atol) row `transform` of a program compares with: given ones, else
    -- for a program that computes in float16 or bfloat16 -- that type's, for every
    leaf. A float32 result computed through a 16-bit value (a float32 argument
    converted to float16, its derivative converted back) is only as precise as the
    16-bit type, and two correct rules part by a 16-bit ulp or two (finding F47);
    float16 second derivatives get `_FLOAT16_SECOND_ORDER`, float32 ones
    `_FLOAT32_SECOND_ORDER`. (None, None) otherwise: each leaf's own dtype decides."""
    if rtol is not None or atol is not None:
        return rtol, atol
    dtypes = {getattr(a, "dtype", None) for a in program.in_avals} | {
        getattr(v.aval, "dtype", None) for eqn in eqns_nested(program) for v in eqn.outputs}
    if bfloat16 in dtypes:
        return _tolerance(bfloat16, None, None)
    if np.dtype(np.float16) in dtypes:
        if transform in _SECOND_ORDER_ROWS:
            return _FLOAT16_SECOND_ORDER
        return _tolerance(np.float16, None, None)
    if transform in _SECOND_ORDER_ROWS:
        return _FLOAT32_SECOND_ORDER
    return None, None


def check_case(case: FuzzCase, transforms=None, rtol=None, atol=None) -> list:
    """The battery's rows for one program (all transforms when None)."""
    from .fuzz_invariants import INVARIANT_CHECKS
    transforms = all_transforms() if transforms is None else list(transforms)
    recipes = recipes_for(case, transforms)
    sides = ProgramSides(case.program, case.leaves)
    rows = []
    for name in transforms:
        if name in INVARIANT_CHECKS:
            row = INVARIANT_CHECKS[name](case)
        else:
            row = compare_row(name, case.program, case.leaves, recipes[name],
                              *_program_tolerance(case.program, rtol, atol, name), sides)
        if not row.ok:
            row.divergence = known_divergence(name, case.program, row)
            if row.divergence:
                row.status = "divergence"
        rows.append(row)
    return rows


def shrink_judge(transform, recipe, rtol=None, atol=None):
    """How the shrinker judges a smaller program for a battery row: as `check_case`
    judges the row -- `compare_row`, so on the same JAX side (the compiled oracle, or
    eager JAX where that decides a difference, F61) and with the program's tolerance --
    and a difference that a divergence record or an explained finding accepts counts
    as agreement (a reproducer must show the unexplained difference)."""
    def judge(program, leaves):
        row = compare_row(transform, program, leaves, recipe,
                          *_program_tolerance(program, rtol, atol, transform))
        if row.ok or known_divergence(transform, program, row):
            return None
        return row
    return judge


# -- findings ---------------------------------------------------------------------------------------

def transform_family(transform: str) -> str:
    return transform.split("[", 1)[0]


def signature(transform: str, program, row: Row) -> tuple:
    """(transform family, primitives of the program, kind of difference)."""
    return (transform_family(transform), tuple(sorted(primitive_names(program))),
            difference_kind(row))


def list_primitives() -> str:
    """Which fuzz ops make which primitives, and which primitives no op makes."""
    from ..ir.primitives import primitives_by_name
    feature_names()
    by_primitive = {}
    for o in OPS.values():
        for p in o.primitives:
            by_primitive.setdefault(p, []).append(o.name)
    lines = []
    for name in sorted(primitives_by_name):
        ops = by_primitive.get(name)
        lines.append(f"{name:24s} {', '.join(sorted(ops)) if ops else '-- not generated'}")
    missing = [n for n in primitives_by_name if n not in by_primitive]
    lines.append(f"{len(primitives_by_name) - len(missing)} of {len(primitives_by_name)} "
                 f"primitives generated; not generated: {', '.join(sorted(missing)) or 'none'}")
    return "\n".join(lines)


def _is_float_leaf(x):
    return not isinstance(x, minijax.Ref) and is_float(np.asarray(x).dtype)
