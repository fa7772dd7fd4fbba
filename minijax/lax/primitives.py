"""JAX's primitive objects (`lax.exp_p`, `lax.linalg.qr_p`, ...) as minijax's own.

A custom jaxpr interpreter compares `eqn.primitive is lax.mul_p` and calls
`eqn.primitive.bind(*invals, **eqn.params)`; a program may call `lax.sin_p.bind(x)`
directly. Each name below is the minijax primitive that does what JAX's primitive of
that name does, so both hold for minijax's jaxprs. The table is per public module
(`lax`, `lax.linalg`, `custom_derivatives`, `ad_checkpoint`); those modules reach it
through their `__getattr__`, so it loads on first use.

`bind` also takes the params JAX's equations carry where minijax's differ
(`ir/jax_params.py`).

JAX's primitives that minijax expresses by other primitives are not here (no stand-in
objects); `docs/primitives.md` lists them with the reason.
"""
from __future__ import annotations

from ..ir.registry import primitives_by_name

# JAX's attribute name -> minijax's primitive name, for each public module. Where the
# names differ only by JAX's spelling, `.name` is minijax's (`scatter_add`, printed
# in the text form) and the attribute is JAX's.
LAX = {name + "_p": name for name in """
    abs acos acosh add all_gather all_to_all and argmax argmin asin asinh atan atan2
    atanh axis_index bessel_i0e bessel_i1e bitcast_convert_type broadcast_in_dim cbrt
    ceil clamp complex concatenate cond conj conv_general_dilated convert_element_type
    cos cosh cummax cummin cumprod cumsum digamma div dot_general dynamic_slice
    dynamic_update_slice eq erf erf_inv erfc exp exp2 expm1 fft floor gather ge gt
    igamma igamma_grad_a igammac imag integer_pow iota is_finite le lgamma log log1p
    log2 logistic lt max min mul ne neg nextafter not one_minus_square
    optimization_barrier or pad pmax pmin polygamma population_count pow ppermute psum
    real reduce_and reduce_max reduce_min reduce_or reduce_precision reduce_prod
    reduce_sum reduce_window_max reduce_window_min reduce_window_sum
    regularized_incomplete_beta rem reshape rev rng_bit_generator rng_uniform round
    rsqrt scan scatter scatter_add scatter_max scatter_min scatter_mul select_n
    sharding_constraint shift_left shift_right_arithmetic shift_right_logical sign sin
    sinh slice sort sqrt square squeeze sub tan tanh top_k transpose while xor zeta
    """.split()}
LAX["linear_solve_p"] = "custom_linear_solve"
LINALG = {name + "_p": name for name in """
    cholesky eig eigh hessenberg householder_product lu ormqr qr schur svd
    triangular_solve tridiagonal tridiagonal_solve""".split()}
CUSTOM_DERIVATIVES = {"custom_jvp_call_p": "custom_jvp_call",
                      "custom_vjp_call_p": "custom_vjp_call"}
AD_CHECKPOINT = {"name_p": "name"}
TABLES = {"minijax.lax": LAX, "minijax.lax.linalg": LINALG,
          "minijax.custom_derivatives": CUSTOM_DERIVATIVES,
          "minijax.ad_checkpoint": AD_CHECKPOINT}


def lookup(module: str, attr: str):
    """The primitive `module.attr` names (`lookup("minijax.lax", "exp_p")`), else
    AttributeError as a module's own missing attribute."""
    name = TABLES[module].get(attr)
    if name is None:
        raise AttributeError(f"module {module!r} has no attribute {attr!r}")
    return primitives_by_name[name]


def names(module: str) -> list[str]:
    return sorted(TABLES[module])


def module_dir(module: str, module_globals: dict) -> list[str]:
    """`dir()` of a module that answers JAX's primitive names through `__getattr__`."""
    return sorted(set(module_globals) | set(TABLES[module]))
