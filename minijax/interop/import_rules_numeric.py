"""The import table, continued: bit operations, special functions, complex numbers, the Fourier
transform, linear algebra, convolution and windowed reductions, the scatter variants, and keys.

Read `import_rules.py` first: same table, same conventions (a hint JAX carries and
minijax does not model is accepted only at its "no hint" value, else the import is
refused by name with `UnsupportedParamError`).

Most of these JAX primitives have minijax twins with the same operands and params.
The exceptions:

* `conj` of a real operand: JAX's `conj` accepts it (its `input_dtype` param says
  so) and returns the complex number; minijax's `conj` is complex-only, so the
  import converts the operand to complex first -- the conjugate of `x + 0j` is itself.
* Keys. JAX stages key operations as high-level primitives (`random_seed`,
  `random_split`, `random_fold_in`, `random_bits`) whose meaning depends on the key
  implementation and on the `jax_threefry_partitionable` flag. minijax has only the
  `threefry2x32` hash and `random_wrap`/`random_unwrap`, so each is imported by
  expanding it into the hashing that `minijax.random` itself does
  (`frontend/random_core.py`), in the counter layout JAX's flag picks at the time of
  the import (minijax's own flag aside: the program is JAX's). The threefry2x32, rbg
  and unsafe_rbg implementations are importable (rbg's bits come from
  `rng_bit_generator`, imported as itself). A batched key operation (JAX's key
  primitives take key arrays of any shape) is imported as minijax's `vmap` of the
  single-key expansion, as JAX's own batching rule means it. `random_gamma` (JAX's sampler primitive) is expanded into
  `minijax.random`'s gamma sampler the same way.
"""
from __future__ import annotations

import jax
import numpy as np

from ..frontend import random_core, random_distributions, lax_extras, lax_reduce
from ..frontend.config_flags import threefry_partitionable
from ..frontend.vmap import vmap
from ..ir import primitives as P
from ..ir import special_primitives as S
from ..ir import random_primitives as R
from ..ir import linalg_primitives as L
from ..ir import linalg_kernels as K
from ..ir import complex_primitives as C
from ..ir import window_primitives as W
from ..ir import fft_primitives as F
from ..ir import selection_primitives as SEL
from ..ir.trace import bind, aval_of
from ..ir.types import is_complex
from .importing import register_import, as_one_call
from .import_rules import (UnsupportedParamError, _refuse_hint, _single, _ints, _scatter,
                           import_precision)


# -- bit operations and special functions --------------------------------------------------

def _hinted(prim):
    # JAX 0.12 gave erfc the transcendental functions' `accuracy` hint, taken as there.
    def rule(*args, accuracy=None, **params):
        _refuse_hint(prim.name, {"accuracy": accuracy}, "accuracy")
        return [bind(prim, *args, **params)]
    return rule


for _prim in (R.shift_left_p, R.shift_right_logical_p, R.shift_right_arithmetic_p,
              R.population_count_p, R.nextafter_p, R.erf_inv_p, R.random_gamma_grad_p,
              S.lgamma_p, S.digamma_p, S.erfc_p, S.polygamma_p, S.igamma_p, S.igammac_p,
              S.igamma_grad_a_p, S.regularized_incomplete_beta_p, S.zeta_p, S.bessel_i0e_p,
              S.bessel_i1e_p):
    register_import(_prim.name, _prim, _hinted(_prim))

register_import("reduce_precision", R.reduce_precision_p, lambda x, *, exponent_bits,
                mantissa_bits: [bind(R.reduce_precision_p, x, exponent_bits=int(exponent_bits),
                                     mantissa_bits=int(mantissa_bits))])
register_import("bitcast_convert_type", R.bitcast_convert_type_p, lambda x, *, new_dtype:
                [bind(R.bitcast_convert_type_p, x, new_dtype=np.dtype(new_dtype))])


# -- complex numbers -------------------------------------------------------------------------

for _prim in (C.real_p, C.imag_p, C.complex_p):
    register_import(_prim.name, _prim, _single(_prim))


def _conj(x, *, input_dtype=None):
    if not is_complex(aval_of(x).dtype):
        complex_dtype = np.result_type(aval_of(x).dtype, np.complex64)
        return [bind(P.convert_element_type_p, x, new_dtype=complex_dtype, weak_type=False)]
    return [bind(C.conj_p, x)]


register_import("conj", [C.conj_p, P.convert_element_type_p], _conj)


# -- the Fourier transform: JAX's param is its FftType enum, minijax stores the name ------------

register_import("fft", F.fft_p, lambda x, *, fft_type, fft_lengths: [
    bind(F.fft_p, x, fft_type=jax.lax.FftType(fft_type).name,
         fft_lengths=tuple(int(n) for n in fft_lengths))])


# -- top_k and optimization_barrier: the same params (top_k's axis is -1 on older JAX, which
# has no is_stable either: its top_k is stable) -------------------------------------------

def _top_k(x, *, k, axis=-1, is_stable=True):
    return list(bind(SEL.top_k_p, x, k=int(k), axis=int(axis) % aval_of(x).ndim,
                     is_stable=bool(is_stable)))


register_import("top_k", SEL.top_k_p, _top_k)
register_import("optimization_barrier", SEL.optimization_barrier_p,
                lambda *xs: list(bind(SEL.optimization_barrier_p, *xs)))


# -- JAX primitives that minijax writes as compositions (frontend/lax_extras.py, lax_reduce.py)
#
# Each is imported as the `minijax.lax` function of the same meaning, which binds the
# primitives listed as its targets, wrapped in one `jit` call named after the JAX
# primitive (`as_one_call`): evaluated eagerly, the imported program runs one compiled
# program for the equation, as JAX does for its primitive.

def _one_call(jax_name, rule):
    """The import rule running `rule` as one call (`as_one_call`)."""
    return lambda *args, **params: as_one_call(jax_name, rule, *args, **params)


def _approx_top_k(x, *, k, reduction_dimension, recall_target, is_max_k,
                  reduction_input_size_override, aggregate_to_topk):
    find = lax_extras.approx_max_k if is_max_k else lax_extras.approx_min_k
    return list(find(x, int(k), int(reduction_dimension)))


def _scatter_sub(operand, indices, updates, *, update_jaxpr=None, update_consts=(),
                 **params):
    # (The update function is JAX's spelling of "subtract"; a new one comes with every
    # JAX trace, so it stays out of the cached call's params.)
    return as_one_call("scatter-sub", _scatter_add_of_negated, operand, indices, updates,
                       **params)


def _scatter_add_of_negated(operand, indices, updates, **params):
    return _scatter(P.scatter_add_p)(operand, indices, bind(P.neg_p, updates), **params)


_COMPOSITIONS = {
    "approx_top_k": ([SEL.top_k_p, P.neg_p], _approx_top_k),
    "cumlogsumexp": ([P.slice_p, P.pad_p, P.concatenate_p, P.add_p, P.max_p, P.log1p_p,
                      P.exp_p, P.select_n_p],
                     lambda x, *, axis, reverse: [lax_extras.cumlogsumexp(x, int(axis),
                                                                          bool(reverse))]),
    "split": (P.slice_p, lambda x, *, sizes, axis: lax_extras.split(
        x, [int(n) for n in sizes], int(axis))),
    "tile": ([P.broadcast_in_dim_p, P.reshape_p], lambda x, *, reps: [
        lax_extras.tile(x, [int(n) for n in reps])]),
    "stack": ([P.expand_dims_p, P.concatenate_p], lambda *xs, axis: [
        lax_extras.stack(xs, int(axis))]),
    "unstack": (P.slice_p, lambda x, *, axis: list(lax_extras.unstack(x, int(axis)))),
    "reduce_xor": (P.xor_p, lambda x, *, axes, **_: [
        lax_reduce.reduce_xor(x, tuple(int(a) for a in axes))]),
    "clz": ([R.shift_right_logical_p, R.population_count_p], lambda x: [lax_extras.clz(x)]),
    "mulhi": ([P.mul_p, R.shift_right_logical_p, R.bitcast_convert_type_p],
              lambda x, y: [lax_extras.mulhi(x, y)]),
}
for _name, (_targets, _rule) in _COMPOSITIONS.items():
    _targets = list(_targets) if isinstance(_targets, (list, tuple)) else [_targets]
    register_import(_name, _targets + [P.jit_p], _one_call(_name, _rule))
register_import("scatter-sub", [P.scatter_add_p, P.neg_p, P.jit_p], _scatter_sub)


def _empty(*, shape, dtype, out_sharding=None):
    if out_sharding is not None:
        raise UnsupportedParamError("cannot import empty with an out_sharding")
    return [lax_extras.empty(tuple(int(n) for n in shape), np.dtype(dtype))]


register_import("empty", P.broadcast_in_dim_p, _empty)


# -- linear algebra ---------------------------------------------------------------------------

def _linalg(prim, minijax_params, hints=()):
    """The rule of a decomposition: `minijax_params` are passed on (as bools), the
    `hints` (JAX's algorithm choices minijax does not model) must be unset."""
    def rule(a, *operands, **params):
        _refuse_hint(prim.name, params, *hints)
        unknown = set(params) - set(minijax_params) - set(hints)
        if unknown:
            raise UnsupportedParamError(f"cannot import {prim.name} with the params "
                                        f"{sorted(unknown)}")
        kept = {name: bool(params[name]) for name in minijax_params if name in params}
        outs = bind(prim, a, *operands, **kept)
        return list(outs) if prim.multiple_results else [outs]
    return rule


register_import("cholesky", L.cholesky_p, _linalg(L.cholesky_p, ()))
register_import("triangular_solve", L.triangular_solve_p, _linalg(
    L.triangular_solve_p, ("left_side", "lower", "transpose_a", "conjugate_a",
                           "unit_diagonal")))
register_import("lu", L.lu_p, _linalg(L.lu_p, ()))
register_import("eigh", L.eigh_p, _linalg(L.eigh_p, ("lower", "sort_eigenvalues"),
                                          ("subset_by_index", "algorithm")))
register_import("svd", L.svd_p, _linalg(L.svd_p, ("full_matrices", "compute_uv"),
                                        ("subset_by_index", "algorithm")))
register_import("qr", L.qr_p, _linalg(L.qr_p, ("full_matrices",), ("pivoting", "use_magma")))
register_import("eig", L.eig_p, _linalg(L.eig_p, ("compute_left_eigenvectors",
                                                  "compute_right_eigenvectors",
                                                  "enable_eigvec_derivs"),
                                        ("implementation", "use_magma")))
register_import("tridiagonal", K.tridiagonal_p, _linalg(K.tridiagonal_p, ("lower",)))
register_import("tridiagonal_solve", K.tridiagonal_solve_p,
                _linalg(K.tridiagonal_solve_p, ("perturb_singular",)))
register_import("householder_product", K.householder_product_p,
                _linalg(K.householder_product_p, ()))
register_import("hessenberg", K.hessenberg_p, _linalg(K.hessenberg_p, ()))
register_import("schur", K.schur_p, _linalg(K.schur_p, ("compute_schur_vectors",),
                                            ("sort_eig_vals", "select_callable")))
register_import("ormqr", K.ormqr_p, _linalg(K.ormqr_p, ("left", "transpose")))


# -- convolution and windowed reductions ------------------------------------------------------

def _conv(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
          dimension_numbers, feature_group_count, batch_group_count, precision=None,
          preferred_element_type=None, out_sharding=None):
    _refuse_hint("conv_general_dilated", {"out_sharding": out_sharding}, "out_sharding")
    preferred = None if preferred_element_type is None else np.dtype(preferred_element_type)
    return [bind(W.conv_general_dilated_p, lhs, rhs, window_strides=_ints(window_strides),
                 padding=tuple(_ints(p) for p in padding), lhs_dilation=_ints(lhs_dilation),
                 rhs_dilation=_ints(rhs_dilation),
                 dimension_numbers=tuple(_ints(spec) for spec in dimension_numbers),
                 feature_group_count=int(feature_group_count),
                 batch_group_count=int(batch_group_count),
                 precision=import_precision("conv_general_dilated", precision),
                 preferred_element_type=preferred)]


def _reduce_window(prim):
    def rule(x, *, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
        return [bind(prim, x, window_dimensions=_ints(window_dimensions),
                     window_strides=_ints(window_strides),
                     padding=tuple(_ints(p) for p in padding),
                     base_dilation=_ints(base_dilation),
                     window_dilation=_ints(window_dilation))]
    return rule


register_import("conv_general_dilated", W.conv_general_dilated_p, _conv)
for _prim in W.reduce_window_primitives:
    register_import(_prim.name, _prim, _reduce_window(_prim))


# -- scatter variants ------------------------------------------------------------------------

register_import("scatter-mul", P.scatter_mul_p, _scatter(P.scatter_mul_p))
register_import("scatter-min", P.scatter_min_p, _scatter(P.scatter_min_p))
register_import("scatter-max", P.scatter_max_p, _scatter(P.scatter_max_p))


# -- keys ------------------------------------------------------------------------------------

def _check_impl(prim_name, impl):
    name = getattr(impl, "name", None)
    if name not in ("threefry2x32", "rbg", "unsafe_rbg"):
        raise UnsupportedParamError(f"cannot import {prim_name} with impl={impl!r}: minijax "
                                    f"implements the threefry2x32, rbg and unsafe_rbg PRNGs")
    return name


def _jax_layout() -> bool:
    # JAX reads the flag when it lowers, not when it traces: the jaxpr does not say,
    # so the flag as it stands now is what JAX would run the program with.
    return bool(jax.config.jax_threefry_partitionable)


def _in_layout(fn):
    """`fn` (an `as_one_call` body) traced with minijax's flag at the layout its
    `partitionable` param names. Only a flag that differs from minijax's is set: that
    empties the trace caches, as every change of the flag does."""
    def laid_out(*args, partitionable, **params):
        with threefry_partitionable(partitionable):
            return fn(*args, **params)
    return laid_out


def _per_key(fn, keys, *others):
    """`fn` of one key, mapped over every axis of `keys` (and of `others`, which have
    the keys' shape)."""
    for _ in range(aval_of(keys).ndim):
        fn = vmap(fn)
    return fn(keys, *others)


def _random_seed(seed, *, impl):
    return as_one_call("random_seed", _seed_keys, seed, impl=_check_impl("random_seed", impl))


def _seed_keys(seed, *, impl):
    return [_per_key(lambda s: random_core.key(s, impl=impl), seed)]


def _random_wrap(words, *, impl):
    return [random_core._wrap(words, _check_impl("random_wrap", impl))]


# JAX's flag is read on every import (it may change between two) and is a param of
# the key arithmetic's one call (`as_one_call`), traced once per params and types.

def _random_split(keys, *, shape):
    return as_one_call("random_split", _split_keys, keys, shape=_ints(shape),
                       partitionable=_jax_layout())


@_in_layout
def _split_keys(keys, *, shape):
    return [_per_key(lambda k: random_core._split(k, shape), keys)]


def _random_fold_in(keys, msgs):
    return as_one_call("random_fold_in", _fold_in_keys, keys, msgs)


def _fold_in_keys(keys, msgs):
    msgs = bind(P.convert_element_type_p, msgs, new_dtype=np.dtype(np.uint32),
                weak_type=False)
    shape = aval_of(keys).shape
    if aval_of(msgs).shape != shape:
        msgs = bind(P.broadcast_in_dim_p, msgs, shape=shape,
                    broadcast_dimensions=tuple(range(len(shape) - aval_of(msgs).ndim,
                                                     len(shape))))
    return [_per_key(random_core._fold_in, keys, msgs)]


def _random_bits(keys, *, bit_width, shape):
    if int(bit_width) not in (8, 16, 32):
        raise UnsupportedParamError(f"cannot import random_bits with bit_width={bit_width}: "
                                    f"minijax draws 8, 16 and 32 bits")
    return as_one_call("random_bits", _draw_bits, keys, bit_width=int(bit_width),
                       shape=_ints(shape), partitionable=_jax_layout())


@_in_layout
def _draw_bits(keys, *, bit_width, shape):
    return [_per_key(lambda k: random_core._random_bits(k, bit_width, shape), keys)]


def _random_gamma(keys, a, *, log_space):
    return as_one_call("random_gamma", _draw_gamma, keys, a, log_space=bool(log_space),
                       partitionable=_jax_layout())


@_in_layout
def _draw_gamma(keys, a, *, log_space):
    def one_key(key, a):
        a_aval = aval_of(a)
        return random_distributions._gamma(key, a, a_aval.shape, a_aval.dtype, log_space)
    return [_per_key(one_key, keys, a)]


register_import("random_seed", [R.random_wrap_p, P.jit_p], _random_seed)
register_import("random_wrap", R.random_wrap_p, _random_wrap)
register_import("random_unwrap", R.random_unwrap_p, _single(R.random_unwrap_p))
register_import("random_clone", R.random_clone_p, _single(R.random_clone_p))
register_import("random_split", [R.threefry2x32_p, R.random_wrap_p, P.jit_p], _random_split)
register_import("random_fold_in", [R.threefry2x32_p, R.random_wrap_p, P.jit_p],
                _random_fold_in)
register_import("random_bits", [R.threefry2x32_p, P.jit_p], _random_bits)
register_import("random_gamma", [R.threefry2x32_p, R.random_gamma_grad_p, P.jit_p],
                _random_gamma)
register_import("threefry2x32", R.threefry2x32_p,
                lambda *words: list(bind(R.threefry2x32_p, *words)))


def _rng_bit_generator(key, *, shape, dtype, algorithm, out_sharding=None):
    _refuse_hint("rng_bit_generator", {"out_sharding": out_sharding}, "out_sharding")
    return list(bind(R.rng_bit_generator_p, key, shape=_ints(shape), dtype=np.dtype(dtype),
                     algorithm=int(algorithm)))


register_import("rng_bit_generator", R.rng_bit_generator_p, _rng_bit_generator)
register_import("rng_uniform", R.rng_uniform_p, lambda a, b, *, shape: [
    bind(R.rng_uniform_p, a, b, shape=_ints(shape))])
