"""Jacobians (`frontend/autodiff.py`): where jax.jacrev / jax.jacfwd do otherwise than
intended."""
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
