"""More of jax.lax (`frontend/lax_extras.py`): where jax.lax does otherwise than intended."""
from .registry import register

register(
    "clz_of_a_negative_constant_under_jit", "0.10.2",
    "under jax.jit, lax.clz of a negative int32 *constant* (an array the jitted function "
    "closes over) gives a negative count: clz(-1) is -32, where the same value passed "
    "as an argument, or clz run eagerly, gives 0 (XLA's constant folding of clz)"
    ". Fixed in 0.11.2: jit gives 0 for -1, as eagerly",
    "clz(-1) is 0 everywhere: a negative integer has its top bit set, so no leading "
    "zeros",
    "clz counts leading zero bits, a number between 0 and the bit width; JAX's eager "
    "and traced-argument results agree with that, only the folded constant does not",
    # "clz" keeps the record to programs that count leading zeros (the fuzzer files
    # any other jit row elsewhere)
    transforms=("jit", "clz"), intended_on="0.11.2, 0.12.0.1")

register(
    "associative_scan_reverse_with_negative_axis_raises", "0.10.2",
    "lax.associative_scan(fn, x, reverse=True, axis=-1) raises TypeError ('rev "
    "dimensions must have every element be nonnegative'): the reversal is applied "
    "before the axis is canonicalised",
    "a negative axis counts from the end, with or without reverse",
    "associative_scan canonicalises its axis (so axis=-1 works without reverse), and "
    "jax.lax's axis arguments accept negative numbers throughout",
    transforms=("associative_scan",))
