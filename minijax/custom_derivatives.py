"""`minijax.custom_derivatives`: JAX's module of that name -- `custom_jvp`,
`custom_vjp`, `custom_gradient` and `closure_convert` (the same objects as
`minijax.custom_jvp`, ...), `linear_call`, and what rules defined with
`symbolic_zeros=True` see: `SymbolicZero` for a zero tangent or cotangent and
`CustomVJPPrimal` for a fwd rule's argument (`custom_vjp_primal_tree_values` strips
it); `zero_from_primal` makes zero tangents of either kind."""
import importlib as _importlib
from jax import tree_util as _tree_util

from .frontend.autodiff import custom_jvp, custom_vjp
from .frontend.autodiff_more import custom_gradient, closure_convert
from .frontend.linear_call import linear_call
from .ir.trace import aval_of as _aval_of
from .transforms.ad_util import SymbolicZero, tangent_aval as _tangent_aval, zeros as _zeros
from .transforms.custom_derivatives import CustomVJPPrimal, custom_vjp_primal_tree_values

__all__ = ["custom_jvp", "custom_vjp", "custom_gradient", "closure_convert", "linear_call",
           "SymbolicZero", "CustomVJPPrimal", "custom_vjp_primal_tree_values",
           "zero_from_primal"]


def zero_from_primal(val, symbolic_zeros=False):
    """A zero tangent for each leaf of `val`: a `SymbolicZero`, or an array of zeros
    (of dtype float0 for an integer or boolean leaf)."""
    def zero(x):
        aval = _tangent_aval(_aval_of(x))
        return SymbolicZero(aval) if symbolic_zeros else _zeros(aval)
    return _tree_util.tree_map(zero, val)


def __getattr__(name):  # JAX's primitive objects (`custom_jvp_call_p`): their table loads on first use
    if not name.endswith("_p"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _importlib.import_module("minijax.lax.primitives").lookup(__name__, name)


def __dir__():  # the module's names and JAX's primitive names it answers
    return _importlib.import_module("minijax.lax.primitives").module_dir(__name__, globals())
