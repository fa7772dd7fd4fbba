"""`to_python_source(closed_jaxpr)`: a minijax program as standalone Python source.

The source imports only `jax` and `numpy` and spells every equation as the public
JAX call that `exporting.py` makes for it (`lax.sin(a)`, `lax.scan(...)`,
`jax.checkpoint(...)`, `jax.ref.swap(...)`), one line per equation, so a reproducer
reads like the program it came from. Constants are written inline as NumPy arrays.
Because it only uses names that minijax provides too, the same file runs on minijax
with `python -m minijax run FILE.py` (the import hook resolves its `jax` to minijax).

Custom derivative rules are Python functions of the user's; they have no source here,
so a program with a `custom_jvp_call`/`custom_vjp_call` is refused by name -- unless
the caller knows every rule in it is the derivative of its own body (the fuzzer's
custom functions are made so) and says `custom_rules="derivatives_of_body"`: then the
call is written as `jax.custom_jvp`/`jax.custom_vjp` of its body with the body's own
`jax.jvp`/`jax.vjp` as the rule.
"""
from __future__ import annotations

import numpy as np

from ..ir.core import Literal, ClosedJaxpr
from ..ir.types import is_float, is_narrow
from ..ir.ref_indexing import Index, Slice, NewAxis, Dynamic, DynamicSlice, indexer_shapes
from ..ir.control_flow_primitives import rebuild_from_layout
from ..ir.linear_solve_primitive import split_operands
from ..ir.window_primitives import window_identity
from ..backends.jax_features import (LAX_HAS_LOG2, LAX_HAS_ONE_MINUS_SQUARE,
                                     TOP_K_TAKES_IS_STABLE)
from .exporting import ExportError, export_policy
from .sharding_source import mesh_source, sharding_source, spec_source

__all__ = ["to_python_source", "source_rules", "value_source"]

# prim name -> fn(input expressions, params) -> expression text (first-order ops).
source_rules: dict = {}

_UNARY = ["neg", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
          "asinh", "acosh", "atanh", "exp", "exp2", "log", "log1p", "expm1", "logistic",
          "sqrt", "rsqrt", "cbrt", "erf", "floor", "ceil", "abs", "sign", "square",
          "one_minus_square", "is_finite", "stop_gradient"]
_BINARY = ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "eq", "ne",
           "lt", "le", "gt", "ge"]
_RENAMED = {"not": "bitwise_not", "and": "bitwise_and", "or": "bitwise_or",
            "xor": "bitwise_xor"}


def _call(fn, ins, **kwargs):
    args = list(ins) + [f"{k}={v!r}" if not isinstance(v, _Raw) else f"{k}={v}"
                        for k, v in kwargs.items()]
    return f"{fn}({', '.join(args)})"


class _Raw(str):
    """Text written as is (not repr'd) for a keyword argument."""


def _dtype(dtype) -> _Raw:
    # bfloat16 and the narrow dtypes (ml_dtypes') are named by jnp, not by NumPy
    name = np.dtype(dtype).name
    return _Raw(f"jnp.{name}" if name == "bfloat16" or is_narrow(dtype) else f"np.{name}")


def _precision(precision) -> _Raw:
    """A contraction's precision as JAX's `lax.Precision` values; None stays None,
    which JAX fills in from its jax_default_matmul_precision when it runs the source."""
    if precision is None:
        return _Raw("None")
    if isinstance(precision, str):
        return _Raw(f"lax.DotAlgorithmPreset.{precision}")
    return _Raw("(" + ", ".join(f"lax.Precision.{name}" for name in precision) + ")")


for _name in _UNARY + _BINARY:
    source_rules[_name] = lambda ins, p, _n=_name: _call(f"lax.{_n}", ins)
# jax.lax has log2 from 0.11; on an older JAX the source spells out what it computes.
source_rules["log2"] = (lambda ins, p: _call("lax.log2", ins)) if LAX_HAS_LOG2 \
    else (lambda ins, p: f"lax.mul(lax.log({ins[0]}), np.asarray(1 / np.log(2), {ins[0]}.dtype))")
for _name, _lax_name in _RENAMED.items():
    source_rules[_name] = lambda ins, p, _n=_lax_name: _call(f"lax.{_n}", ins)
if not LAX_HAS_ONE_MINUS_SQUARE:
    # JAX before 0.11 has no lax.one_minus_square: the formula it stands for
    source_rules["one_minus_square"] = lambda ins, p: f"(1 + {ins[0]}) * (1 - {ins[0]})"
source_rules.update({
    "select_n": lambda ins, p: _call("lax.select_n", ins),
    "clamp": lambda ins, p: _call("lax.clamp", ins),
    "integer_pow": lambda ins, p: _call("lax.integer_pow", ins, y=p["y"]),
    "round": lambda ins, p: _call("lax.round", ins, rounding_method=p["rounding_method"]),
    "convert_element_type": lambda ins, p: _call("lax.convert_element_type", ins,
                                                 new_dtype=_dtype(p["new_dtype"])),
    "broadcast_in_dim": lambda ins, p: _call("lax.broadcast_in_dim", ins, shape=p["shape"],
                                             broadcast_dimensions=p["broadcast_dimensions"]),
    "reshape": lambda ins, p: _call("lax.reshape", ins, new_sizes=p["new_sizes"]),
    "transpose": lambda ins, p: _call("lax.transpose", ins, permutation=p["permutation"]),
    "squeeze": lambda ins, p: _call("lax.squeeze", ins, dimensions=p["dimensions"]),
    "expand_dims": lambda ins, p: _call("lax.expand_dims", ins, dimensions=p["dimensions"]),
    "rev": lambda ins, p: _call("lax.rev", ins, dimensions=p["dimensions"]),
    "concatenate": lambda ins, p: f"lax.concatenate([{', '.join(ins)}], {p['dimension']})",
    "pad": lambda ins, p: _call("lax.pad", ins, padding_config=p["padding_config"]),
    "slice": lambda ins, p: _call("lax.slice", ins, start_indices=p["start_indices"],
                                  limit_indices=p["limit_indices"], strides=p["strides"]),
    "dynamic_slice": lambda ins, p: f"lax.dynamic_slice({ins[0]}, ({', '.join(ins[1:])},), "
                                    f"{p['slice_sizes']!r})",
    "dynamic_update_slice": lambda ins, p: f"lax.dynamic_update_slice({ins[0]}, {ins[1]}, "
                                           f"({', '.join(ins[2:])},))",
    "iota": lambda ins, p: f"lax.broadcasted_iota({_dtype(p['dtype'])}, {p['shape']!r}, "
                           f"{p['dimension']!r})",
    "dot_general": lambda ins, p: _call(
        "lax.dot_general", ins, dimension_numbers=p["dimension_numbers"],
        precision=_precision(p.get("precision")), preferred_element_type=_Raw("None") if p.get("preferred_element_type") is None
        else _dtype(p["preferred_element_type"])),
    "argmax": lambda ins, p: f"lax.argmax({ins[0]}, {p['axes'][0]}, {_dtype(p['index_dtype'])})",
    "argmin": lambda ins, p: f"lax.argmin({ins[0]}, {p['axes'][0]}, {_dtype(p['index_dtype'])})",
    "sort": lambda ins, p: (f"lax.sort(({', '.join(ins)},), dimension={p['dimension']}, "
                            f"is_stable={p['is_stable']}, num_keys={p['num_keys']})"),
    "name": lambda ins, p: f"jax.ad_checkpoint.checkpoint_name({ins[0]}, {p['name']!r})",
})
for _name in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
              "reduce_or"):
    source_rules[_name] = lambda ins, p, _n=_name: f"lax.{_n}({ins[0]}, {p['axes']!r})"
for _name in ("cumsum", "cumprod", "cummax", "cummin"):
    source_rules[_name] = lambda ins, p, _n=_name: _call(f"lax.{_n}", ins, axis=p["axis"],
                                                         reverse=p["reverse"])


def _gather(ins, p):
    dnums = (f"lax.GatherDimensionNumbers(offset_dims={p['offset_dims']!r}, "
             f"collapsed_slice_dims={p['collapsed_slice_dims']!r}, "
             f"start_index_map={p['start_index_map']!r})")
    return (f"lax.gather({ins[0]}, {ins[1]}, {dnums}, {p['slice_sizes']!r}, "
            f"mode={_mode(p['mode'])})")


def _scatter(fn):
    def rule(ins, p):
        dnums = (f"lax.ScatterDimensionNumbers(update_window_dims={p['update_window_dims']!r}, "
                 f"inserted_window_dims={p['inserted_window_dims']!r}, "
                 f"scatter_dims_to_operand_dims={p['scatter_dims_to_operand_dims']!r})")
        return f"lax.{fn}({ins[0]}, {ins[1]}, {ins[2]}, {dnums}, mode={_mode(p['mode'])})"
    return rule


def _mode(mode) -> str:
    return repr(mode)       # 'clip' or 'fill': jax.lax and minijax.lax both take these


source_rules["gather"] = _gather

# Collectives: JAX's own functions, with the axis names of the params.
for _name in ("psum", "pmax", "pmin"):
    source_rules[_name] = lambda ins, p, _n=_name: _call(
        f"lax.{_n}", [ins[0], repr(p["axes"])], **_groups(p))


def _groups(p) -> dict:
    groups = p.get("axis_index_groups")
    return {} if groups is None else {"axis_index_groups": groups}


source_rules.update({
    "all_gather": lambda ins, p: _call("lax.all_gather", [ins[0], repr(p["axis_name"])],
                                       axis=p["axis"], tiled=p["tiled"], **_groups(p)),
    "psum_scatter": lambda ins, p: _call("lax.psum_scatter", [ins[0], repr(p["axis_name"])],
                                         scatter_dimension=p["scatter_dimension"],
                                         tiled=p["tiled"], **_groups(p)),
    "ppermute": lambda ins, p: _call("lax.ppermute", [ins[0], repr(p["axis_name"])],
                                     perm=p["perm"]),
    "all_to_all": lambda ins, p: _call("lax.all_to_all", [ins[0], repr(p["axis_name"]),
                                                          str(p["split_axis"]),
                                                          str(p["concat_axis"])],
                                       tiled=p["tiled"], **_groups(p)),
    "axis_index": lambda ins, p: f"lax.axis_index({p['axis_name']!r})",
    "sharding_constraint": lambda ins, p: (
        f"jax.sharding.reshard({ins[0]}, {sharding_source(p)})" if "explicit_axes" in p
        else f"lax.with_sharding_constraint({ins[0]}, {sharding_source(p)})"),
})


source_rules["scatter"] = _scatter("scatter")
source_rules["scatter_add"] = _scatter("scatter_add")
for _name in ("scatter_mul", "scatter_min", "scatter_max"):
    source_rules[_name] = _scatter(_name)


# -- the numeric families: bits, special functions, complex, linalg, windows, keys --------
#
# jax.lax's functions of two or more operands want equal shapes where minijax's IR
# lets a rank-0 operand stand for a splat, so those are written over
# `jnp.broadcast_arrays`.

def _splatted(fn):
    return lambda ins, p: f"{fn}(*jnp.broadcast_arrays({', '.join(ins)}))"


for _name in ("population_count", "erf_inv", "lgamma", "digamma", "erfc", "real", "imag",
              "conj", "bessel_i0e", "bessel_i1e"):
    source_rules[_name] = lambda ins, p, _n=_name: _call(f"lax.{_n}", ins)
for _name in ("shift_left", "shift_right_logical", "shift_right_arithmetic", "nextafter",
              "random_gamma_grad", "polygamma", "igamma", "igammac", "igamma_grad_a",
              "complex", "zeta"):
    source_rules[_name] = _splatted(f"lax.{_name}")
source_rules["regularized_incomplete_beta"] = _splatted("lax.betainc")
source_rules["fft"] = lambda ins, p: _call(
    "lax.fft", ins, fft_type=_Raw(f"lax.FftType.{p['fft_type']}"),
    fft_lengths=tuple(p["fft_lengths"]))
source_rules["top_k"] = lambda ins, p: _call(
    "lax.top_k", ins, k=p["k"], axis=p["axis"],
    **({"is_stable": p.get("is_stable", True)} if TOP_K_TAKES_IS_STABLE else {}))
source_rules["optimization_barrier"] = lambda ins, p: \
    f"lax.optimization_barrier(({''.join(i + ', ' for i in ins)}))"
source_rules["reduce_precision"] = lambda ins, p: _call("lax.reduce_precision", ins, **p)
source_rules["bitcast_convert_type"] = lambda ins, p: _call(
    "lax.bitcast_convert_type", ins, new_dtype=_dtype(p["new_dtype"]))
source_rules["rng_bit_generator"] = lambda ins, p: _call(
    "lax.rng_bit_generator", ins, shape=tuple(p["shape"]), dtype=_dtype(p["dtype"]),
    algorithm=_Raw(f"lax.RandomAlgorithm({p['algorithm']})"))
source_rules["rng_uniform"] = lambda ins, p: _call("lax.rng_uniform", ins, shape=p["shape"])

source_rules.update({
    "cholesky": lambda ins, p: f"lax.linalg.cholesky({ins[0]}, symmetrize_input=False)",
    "triangular_solve": lambda ins, p: _call("lax.linalg.triangular_solve", ins, **p),
    "lu": lambda ins, p: _call("lax.linalg.lu", ins),
    "eigh": lambda ins, p: _call("lax.linalg.eigh", ins, lower=p["lower"],
                                 symmetrize_input=False,
                                 sort_eigenvalues=p["sort_eigenvalues"]),
    "qr": lambda ins, p: _call("lax.linalg.qr", ins, full_matrices=p["full_matrices"]),
    # minijax's svd returns (s, u, vt) where jax.lax.linalg.svd returns (u, s, vt).
    "svd": lambda ins, p: (
        f"(lambda r: (r[1], r[0], r[2]))({_call('lax.linalg.svd', ins, **p)})"
        if p["compute_uv"] else f"({_call('lax.linalg.svd', ins, **p)},)"),
})


def _conv(ins, p):
    lhs_spec, rhs_spec, out_spec = p["dimension_numbers"]
    dnums = _Raw(f"lax.ConvDimensionNumbers({lhs_spec!r}, {rhs_spec!r}, {out_spec!r})")
    preferred = p.get("preferred_element_type")
    return _call("lax.conv_general_dilated", ins, window_strides=p["window_strides"],
                 padding=p["padding"], lhs_dilation=p["lhs_dilation"],
                 rhs_dilation=p["rhs_dilation"], dimension_numbers=dnums,
                 feature_group_count=p["feature_group_count"],
                 batch_group_count=p["batch_group_count"],
                 precision=_precision(p.get("precision")),
                 preferred_element_type=_Raw("None") if preferred is None
                 else _dtype(preferred))


source_rules["conv_general_dilated"] = _conv


# -- values ----------------------------------------------------------------------------------

_PY_SCALAR_DTYPES = {"float32": float, "int32": int, "bool": bool, "complex64": complex}


def value_source(value, weak: bool = False) -> str:
    """Source text that rebuilds `value` exactly (a Python scalar when weak)."""
    array = np.asarray(value)
    kind = _PY_SCALAR_DTYPES.get(array.dtype.name)
    if weak and kind is not None and array.shape == ():
        return _literal_text(kind(array.item()))
    if array.dtype.name == "bfloat16":
        return (f"jnp.asarray(np.array({_literal_text(array.astype(np.float32).tolist())}), "
                f"jnp.bfloat16)")
    if is_narrow(array.dtype):     # every value is exact as a Python float or int
        values = array.astype(np.float32 if is_float(array.dtype) else np.int32)
        return (f"np.array({_literal_text(values.tolist())}, "
                f"dtype=jnp.dtype({array.dtype.name!r}))")
    return f"np.array({_literal_text(array.tolist())}, dtype=np.{array.dtype.name})"


def _literal_text(python_value) -> str:
    """repr of nested lists of Python numbers, with infinities and NaNs spelled as
    expressions (their repr, `inf` and `nan`, is no Python name)."""
    text = repr(python_value)
    if "inf" in text or "nan" in text:
        text = text.replace("inf", "float('inf')").replace("nan", "float('nan')")
    return text


# -- the writer ----------------------------------------------------------------------------------

class _Writer:
    def __init__(self, custom_rules=None):
        self.lines: list[str] = []
        self.count = 0
        self.uses_extend = False
        self.custom_rules = custom_rules

    def fresh(self, prefix="v") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def function(self, name, jaxpr, consts_names=(), indent=0):
        """Write `def name(*invars): ...` for an open jaxpr; return `name`."""
        pad = "    " * indent
        env = dict(consts_names)
        params = []
        for var in jaxpr.invars:
            env[var] = self.fresh("a")
            params.append(env[var])
        self.lines.append(f"{pad}def {name}({', '.join(params)}):")
        for eqn in jaxpr.eqns:
            self.equation(eqn, env, indent + 1)
        outs = [self.atom(v, env) for v in jaxpr.outvars]
        self.lines.append(f"{pad}    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
        return name

    def atom(self, atom, env) -> str:
        if isinstance(atom, Literal):
            return value_source(atom.value, atom.aval.weak_type)
        return env[atom]

    def equation(self, eqn, env, indent):
        pad = "    " * indent
        ins = [self.atom(a, env) for a in eqn.inputs]
        outs = [self.fresh() for _ in eqn.outputs]
        for var, name in zip(eqn.outputs, outs):
            env[var] = name
        name = eqn.primitive.name
        target = ", ".join(outs) + ("," if len(outs) == 1 and eqn.primitive.multiple_results
                                    else "")
        rule = source_rules.get(name)
        if rule is not None:
            expr = rule(ins, eqn.params)
            self.lines.append(f"{pad}{target} = {expr}" if outs else f"{pad}{expr}")
            return
        higher = getattr(self, "_" + name, None)
        if higher is None:
            raise ExportError(f"to_python_source cannot write {name} equations")
        expr = higher(eqn, ins, indent)
        self.lines.append(f"{pad}{target} = {expr}" if outs else f"{pad}{expr}")

    # Higher-order equations: a nested def, then the JAX call that uses it.
    def _body(self, jaxpr, indent):
        return self.function(self.fresh("body"), jaxpr, indent=indent)

    def _shard_map(self, eqn, ins, indent):
        p = eqn.params
        body = self._body(p["jaxpr"], indent)
        specs = lambda specs: "(" + "".join(spec_source(s) + ", " for s in specs) + ")"
        auto = p.get("auto_axes", ())
        manual = "" if not auto else "axis_names={%s}, " % ", ".join(
            repr(name) for name, _ in p["mesh_axes"] if name not in auto)
        return (f"jax.shard_map({body}, mesh={mesh_source(p['mesh_axes'], p['device_ids'])}, "
                f"in_specs={specs(p['in_specs'])}, out_specs={specs(p['out_specs'])}, "
                f"{manual}check_vma=False)({', '.join(ins)})")

    def _jit(self, eqn, ins, indent):
        body = self._body(eqn.params["jaxpr"], indent)
        inline = ", inline=True" if eqn.params.get("inline") else ""
        return f"jax.jit({body}{inline})({', '.join(ins)})"

    def _remat(self, eqn, ins, indent):
        export_policy(eqn.params["policy"])
        body = self._body(eqn.params["jaxpr"], indent)
        policy = _policy_source(eqn.params["policy"])
        return (f"jax.checkpoint({body}, policy={policy}, "
                f"prevent_cse={eqn.params['prevent_cse']})({', '.join(ins)})")

    def _custom_function(self, eqn, indent, kind):
        if self.custom_rules != "derivatives_of_body":
            raise ExportError(f"to_python_source cannot write {eqn.primitive.name} "
                              f"equations: the rule {eqn.params['name']!r} is a Python "
                              f"function without source (pass custom_rules="
                              f"'derivatives_of_body' if it is its body's derivative)")
        pad = "    " * indent
        body = self._body(eqn.params["call_jaxpr"], indent)
        fn = self.fresh("custom")
        self.lines.append(f"{pad}{fn} = jax.{kind}({body})")
        if kind == "custom_jvp":
            self.lines.append(f"{pad}{fn}.defjvp(lambda xs, ts: jax.jvp({body}, xs, ts))")
        else:
            self.lines.append(f"{pad}{fn}.defvjp(lambda *xs: ({body}(*xs), xs), "
                              f"lambda xs, ct: jax.vjp({body}, *xs)[1](ct))")
        return fn

    def _custom_jvp_call(self, eqn, ins, indent):
        return f"{self._custom_function(eqn, indent, 'custom_jvp')}({', '.join(ins)})"

    def _custom_vjp_call(self, eqn, ins, indent):
        return f"{self._custom_function(eqn, indent, 'custom_vjp')}({', '.join(ins)})"

    def _cond(self, eqn, ins, indent):
        bodies = [self._body(b, indent) for b in eqn.params["branches"]]
        return f"lax.switch({ins[0]}, [{', '.join(bodies)}], {', '.join(ins[1:])})"

    def _custom_linear_solve(self, eqn, ins, indent):
        # JAX derives vecmat from matvec itself, so only three bodies are written.
        p = eqn.params
        groups, b = split_operands(ins, p["const_lengths"])
        n_x = len(b)
        has_aux = len(p["jaxprs"][2].outvars) > n_x
        matvec = self._body(p["jaxprs"][0], indent)

        def solver(k):
            if p["jaxprs"][k] is None:
                return "None"
            outs = f"{self._body(p['jaxprs'][k], indent)}({', '.join(groups[k] + ['*r'])})"
            if has_aux:
                return f"lambda _, r: (lambda o: (tuple(o[:{n_x}]), tuple(o[{n_x}:])))({outs})"
            return f"lambda _, r: tuple({outs})"
        call = (f"lax.custom_linear_solve(lambda x: tuple({matvec}"
                f"({', '.join(groups[0] + ['*x'])})), ({', '.join(b)},), {solver(2)}, "
                f"{solver(3)}, has_aux={has_aux})")
        return f"(lambda r: (*r[0], *r[1]))({call})" if has_aux else call

    def _while(self, eqn, ins, indent):
        p = eqn.params
        cond_consts, rest = ins[:p["cond_nconsts"]], ins[p["cond_nconsts"]:]
        body_consts, carry = rest[:p["body_nconsts"]], rest[p["body_nconsts"]:]
        cond = self._body(p["cond_jaxpr"], indent)
        body = self._body(p["body_jaxpr"], indent)
        pad = "    " * indent
        c1, c2 = self.fresh("cond"), self.fresh("step")
        self.lines.append(f"{pad}{c1} = lambda c: {cond}({', '.join(cond_consts + ['*c'])})[0]")
        self.lines.append(f"{pad}{c2} = lambda c: {body}({', '.join(body_consts + ['*c'])})")
        return f"lax.while_loop({c1}, {c2}, ({', '.join(carry)},))"

    def _scan(self, eqn, ins, indent):
        p = eqn.params
        consts = ins[:p["num_consts"]]
        init = ins[p["num_consts"]:p["num_consts"] + p["num_carry"]]
        xs = ins[p["num_consts"] + p["num_carry"]:]
        body = self._body(p["jaxpr"], indent)
        pad = "    " * indent
        step = self.fresh("step")
        n = p["num_carry"]
        self.lines.append(f"{pad}def {step}(carry, x):")
        self.lines.append(f"{pad}    outs = {body}({', '.join(consts + ['*carry', '*x'])})")
        self.lines.append(f"{pad}    return outs[:{n}], outs[{n}:]")
        scan = (f"lax.scan({step}, ({', '.join(init)}{',' if init else ''}), "
                f"({', '.join(xs)}{',' if xs else ''}), length={p['length']}, "
                f"reverse={p['reverse']}, unroll={p['unroll']})")
        return f"(lambda r: (*r[0], *r[1]))({scan})"

    # Refs.
    def _index(self, eqn, dynamic):
        indexer = eqn.params.get("indexer")
        if indexer is None:
            return "...", ""
        fixed = 1 if eqn.primitive.name == "get" else 2
        shapes = indexer_shapes(eqn.inputs[0].aval.shape, indexer,
                                [a.aval for a in eqn.inputs[fixed:]])
        dynamic = iter(dynamic)
        views = ""
        for step, shape in zip(indexer.views, shapes):
            if not isinstance(step, Index):
                raise ExportError("to_python_source cannot write ref views other than .at")
            views += f".at[{self._items(step, dynamic, shape)}]"
        return self._items(indexer.final, dynamic, shapes[-2]), views

    @staticmethod
    def _items(index, dynamic, shape) -> str:
        parts, axis = [], 0
        for item in index.items:
            if isinstance(item, NewAxis):
                parts.append("None")
                continue
            if isinstance(item, Slice):
                parts.append(f"slice({item.start}, {item.stop}, {item.stride})")
            elif isinstance(item, Dynamic):
                parts.append(next(dynamic))
            elif isinstance(item, DynamicSlice):
                start = next(dynamic)
                if item.stride != 1:    # clamped as minijax clamps (exporting.jax_dslice)
                    n = shape[axis]
                    start = (f"lax.clamp(np.int32(0), jnp.where({start} < 0, {start} + {n}, "
                             f"{start}).astype(np.int32), np.int32({max(n - item.span, 0)}))")
                parts.append(f"jax.ds({start}, {item.size}, {item.stride})")
            else:
                parts.append(str(int(item)))
            axis += 1
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"

    def _new_ref(self, eqn, ins, indent):
        return f"jax.new_ref({ins[0]})"

    def _empty_ref(self, eqn, ins, indent):
        p = eqn.params
        return f"jax.empty_ref(jax.ShapeDtypeStruct({p['shape']!r}, {_dtype(p['dtype'])}))"

    def _get(self, eqn, ins, indent):
        idx, views = self._index(eqn, ins[1:])
        return f"jax.ref.get({ins[0]}{views}, {idx})"

    def _swap(self, eqn, ins, indent):
        idx, views = self._index(eqn, ins[2:])
        return f"jax.ref.swap({ins[0]}{views}, {idx}, {ins[1]})"

    def _addupdate(self, eqn, ins, indent):
        idx, views = self._index(eqn, ins[2:])
        return f"jax.ref.addupdate({ins[0]}{views}, {idx}, {ins[1]})"

    def _freeze(self, eqn, ins, indent):
        return f"jax.ref.freeze({ins[0]})"

    def _free_ref(self, eqn, ins, indent):
        return f"jax.ref.free_ref({ins[0]})"

    # Windowed reductions: `lax.reduce_window` with the reduction's identity (which
    # depends on the operand's dtype) as the initial value.
    def _reduce_window(self, eqn, ins, combine):
        p = eqn.params
        init = value_source(window_identity(eqn.primitive, eqn.inputs[0].aval.dtype))
        return (f"lax.reduce_window({ins[0]}, {init}, {combine}, {p['window_dimensions']!r}, "
                f"{p['window_strides']!r}, {p['padding']!r}, {p['base_dilation']!r}, "
                f"{p['window_dilation']!r})")

    def _reduce_window_sum(self, eqn, ins, indent):
        return self._reduce_window(eqn, ins, "lax.add")

    def _reduce_window_max(self, eqn, ins, indent):
        return self._reduce_window(eqn, ins, "lax.max")

    def _reduce_window_min(self, eqn, ins, indent):
        return self._reduce_window(eqn, ins, "lax.min")

    # Keys.
    def _random_wrap(self, eqn, ins, indent):
        impl = eqn.params.get("impl", "threefry2x32")
        return f"jax.random.wrap_key_data({ins[0]}, impl={impl!r})"

    def _random_unwrap(self, eqn, ins, indent):
        return f"jax.random.key_data({ins[0]})"

    def _random_clone(self, eqn, ins, indent):
        return f"jax.random.clone({ins[0]})"

    def _random_consume(self, eqn, ins, indent):
        return ins[0]        # the key-reuse checker's mark computes nothing

    def _threefry2x32(self, eqn, ins, indent):
        # JAX's public spelling of the bare hash is its primitive, in jax.extend (so
        # such a reproducer runs on JAX only).
        self.uses_extend = True
        return (f"jax.extend.random.threefry2x32_p.bind(*jnp.broadcast_arrays("
                f"{', '.join(ins)}))")

    def _debug_print(self, eqn, ins, indent):
        _, args_layout, kwargs_layout = eqn.params["layout"]
        leaves = iter(ins)
        args = rebuild_from_layout(args_layout, leaves)
        kwargs = rebuild_from_layout(kwargs_layout, leaves)
        text = ", ".join([repr(eqn.params["fmt"])] + [_plain(a) for a in args]
                         + [f"{k}={_plain(v)}" for k, v in kwargs.items()])
        return f"jax.debug.print({text})"


def _policy_source(policy) -> str:
    args = policy.param_args()
    if not args:
        return f"jax.checkpoint_policies.{policy.text_name}"
    texts = [repr(a) if isinstance(a, str) else _policy_source(a) for a in args]
    return f"jax.checkpoint_policies.{policy.text_name}({', '.join(texts)})"


def _plain(tree) -> str:
    if isinstance(tree, str):
        return tree
    if isinstance(tree, tuple):
        return "(" + "".join(_plain(t) + ", " for t in tree) + ")"
    if isinstance(tree, list):
        return "[" + ", ".join(_plain(t) for t in tree) + "]"
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {_plain(v)}" for k, v in tree.items()) + "}"
    return repr(tree)


def to_python_source(closed_jaxpr: ClosedJaxpr, name: str = "program",
                     custom_rules: str | None = None) -> str:
    """Python source defining `name(*args)`, the program as calls of JAX's public
    API; it returns a tuple of the program's outputs. The source starts with its
    imports (`jax`, `jax.numpy`, `numpy`) and inlines the program's constants.
    `custom_rules="derivatives_of_body"` writes custom_jvp/custom_vjp calls whose rules
    are their body's own derivatives (the module docstring); otherwise such a call is
    an `ExportError`."""
    if custom_rules not in (None, "derivatives_of_body"):
        raise ValueError(f"to_python_source: custom_rules must be None or "
                         f"'derivatives_of_body', got {custom_rules!r}")
    if not isinstance(closed_jaxpr, ClosedJaxpr):
        raise TypeError(f"to_python_source expects a minijax ClosedJaxpr, got "
                        f"{type(closed_jaxpr).__name__}")
    writer = _Writer(custom_rules)
    consts = {}
    const_lines = []
    for var, value in zip(closed_jaxpr.jaxpr.constvars, closed_jaxpr.consts):
        consts[var] = writer.fresh("const")
        const_lines.append(f"{consts[var]} = {value_source(np.asarray(value))}")
    signature = ", ".join(f"{v.aval.type_text(exact=True)}" for v in closed_jaxpr.jaxpr.invars)
    writer.lines.append(f"# {name}({signature})")
    writer.function(name, closed_jaxpr.jaxpr, consts)
    header = ["import jax", "import jax.ad_checkpoint", "import jax.numpy as jnp",
              "import numpy as np", "from jax import lax", ""]
    if writer.uses_extend:
        header.insert(2, "import jax.extend.random")
    return "\n".join(header + const_lines + writer.lines) + "\n"

