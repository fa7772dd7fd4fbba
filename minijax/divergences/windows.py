"""Convolutions and window reductions: where jax.lax does otherwise than intended."""
from .registry import register

register(
    "max_pool_vjp_with_negative_padding_crashes", "0.10.2",
    "jax.grad / jax.vjp of lax.reduce_window with lax.max or lax.min and a negative "
    "(cropping) padding raises an internal TypeError from lax.slice ('slice "
    "limit_indices must be less than or equal to operand shape'); the forward pass "
    "and jax.jvp work",
    "the cotangent of each window's extremum goes to the element that attains it; "
    "cropped elements get zero",
    "reduce_window accepts negative padding (its forward pass and the sum's gradient "
    "work), so its max/min gradient is meant to as well",
    transforms=("grad", "vjp", "reduce_window"))
