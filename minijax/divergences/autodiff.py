"""Derivatives (`frontend/autodiff.py`, the jvp rules): where jax.grad, jax.jacrev,
jax.jacfwd and the rules behind them do otherwise than intended."""
from .registry import register

register(
    "jacobian_block_of_a_bool_leaf_crashes", "0.10.2",
    "jax.jacrev(f, allow_int=True) with a bool input, and jax.jacfwd(f) with a bool "
    "output, raise TypeError('a bytes-like object is required, not int') while casting "
    "the Jacobian block to the bool leaf's dtype",
    "the block is zeros of the leaf's dtype (False), as JAX gives for an integer leaf",
    "allow_int=True is documented to accept Boolean- or integer-valued inputs, and JAX "
    "gives an integer leaf's block as zeros of its dtype; the crash comes from the "
    "float0 cotangent meeting the bool cast, not from a decision",
    # "bool": the record is about bool leaves, not every jacrev/jacfwd row
    transforms=("jacrev", "jacfwd", "bool"))

register(
    "jax_asinh_derivative_at_a_python_scalar_fails", "0.12.0.1",
    "jax.jacfwd and jax.hessian of a function applying lax.asinh to a Python float "
    "argument raise AttributeError: 'float' object has no attribute 'dtype': JAX "
    "0.12's new asinh jvp (scaled against overflow) reads the primal's dtype, and under "
    "forward mode the primal is the Python scalar itself (jax.grad is not affected)",
    "the derivative of the weakly typed f32 value, as JAX 0.11 gave it and as JAX 0.12 "
    "gives it for jnp.asarray of the same scalar (minijax's asinh rule is JAX 0.12's)",
    "jax.grad documents Python scalars as valid arguments, and every other rule accepts "
    "them; the crash comes from the rule's use of x.dtype, not from a decision",
    transforms=("jvp", "jacfwd", "hessian", "asinh"))
