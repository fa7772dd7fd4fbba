"""Random numbers and the bit operations under them."""
from .registry import register

register(
    "vmap_bitcast_to_wider_with_the_batch_axis_last", "0.10.2",
    "jax.vmap(lambda v: lax.bitcast_convert_type(v, uint32), in_axes=-1) of uint16 "
    "examples of shape (..., 2) raises ValueError: the batching rule bitcasts the stacked "
    "array as it is, so the batch axis is taken for the pair of halves",
    "each example is converted on its own (the batch axis is moved off the last axis "
    "first), as the per-example loop gives",
    "vmap is meant to equal mapping over examples; where the example is put in the "
    "stacked array is not part of the function",
    transforms=("vmap", "lax.bitcast_convert_type"))
