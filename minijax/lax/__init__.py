"""`minijax.lax`: `jax.lax`'s functions, with its names and signatures.

One thin function per primitive (`frontend/lax_ops.py`: operands must already agree
in dtype and shape, as in `jax.lax`) and the structured control flow
(`frontend/control_flow.py`: `cond`, `switch`, `while_loop`, `fori_loop`, `scan`,
`map`), and the rest of `jax.lax` from `frontend/` modules (convolution patches and
shape helpers, `ragged_dot`, `platform_dependent`, ...). This package only gathers
them; its submodule `linalg` is `jax.lax.linalg`'s counterpart.
"""
import importlib as _importlib
from ..frontend.lax_ops import *  # noqa: F401,F403
from ..frontend.lax_ops import RoundingMethod  # noqa: F401
from ..frontend.control_flow import cond, switch, while_loop, fori_loop, scan, map  # noqa: F401
from ..frontend.windows import (ConvDimensionNumbers, conv_dimension_numbers,  # noqa: F401
                                conv_general_dilated, conv, conv_with_general_padding,
                                conv_transpose, padtype_to_pads, reduce_window, Precision)
from . import linalg  # noqa: F401  (jax.lax.linalg)
from ..frontend.complex_ops import real, imag, conj, complex  # noqa: F401,A004
from ..frontend.collectives import (psum, pmean, pmax, pmin, all_gather,  # noqa: F401
                                    psum_scatter, ppermute, pshuffle, all_to_all,
                                    pswapaxes, pbroadcast, axis_index, axis_size)
from ..frontend.sharding import with_sharding_constraint  # noqa: F401
from ..frontend.fft_ops import fft, FftType  # noqa: F401
from ..frontend.lax_extras import (top_k, approx_max_k, approx_min_k,  # noqa: F401
                                   optimization_barrier, associative_scan, cumlogsumexp,
                                   split, tile, stack, unstack, collapse,
                                   broadcast_to_rank, broadcast_like, broadcast_shapes, stage,
                                   batch_matmul,
                                   index_take, scatter_sub, scatter_apply, empty, clz, mulhi,
                                   dynamic_index_in_dim, dynamic_update_index_in_dim,
                                   GatherScatterMode, DotDimensionNumbers)
from ..frontend.lax_reduce import reduce, reduce_xor  # noqa: F401
from ..frontend.implicit_solves import custom_root, custom_linear_solve  # noqa: F401
from ..frontend.lax_conv_extras import (ConvGeneralDilatedDimensionNumbers,  # noqa: F401
                                        conv_general_dilated_patches,
                                        conv_general_dilated_local, conv_shape_tuple,
                                        conv_general_shape_tuple,
                                        conv_transpose_shape_tuple,
                                        conv_general_permutations,
                                        reduce_window_shape_tuple)
from ..frontend.lax_ragged import (ragged_dot, ragged_dot_general,  # noqa: F401
                                   RaggedDotDimensionNumbers)
from ..frontend.lax_platform import platform_dependent, composite, dtype  # noqa: F401
from ..frontend.lax_dot import DotAlgorithmPreset, DotAlgorithm  # noqa: F401
from ..frontend.lax_rng import RandomAlgorithm, rng_bit_generator, rng_uniform  # noqa: F401



def _with_out_sharding():
    """The lax functions JAX's sharding in types gives `out_sharding=` take it too."""
    from ..frontend.sharding import takes_out_sharding
    for name in ("broadcast", "broadcast_in_dim", "broadcasted_iota", "conv_general_dilated",
                 "dot", "dot_general", "ragged_dot", "ragged_dot_general", "reduce",
                 "reduce_sum", "reshape"):
        globals()[name] = takes_out_sharding(globals()[name])


_with_out_sharding()


def __getattr__(name):  # JAX's primitive objects (`lax.exp_p`): their table loads on first use
    if not name.endswith("_p"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _importlib.import_module("minijax.lax.primitives").lookup(__name__, name)


def __dir__():  # the module's names and JAX's primitive names it answers
    return _importlib.import_module("minijax.lax.primitives").module_dir(__name__, globals())
