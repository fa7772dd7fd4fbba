"""Running `remat` and `name`: XLA lowering (with `prevent_cse`), reference rule, eager impl.

Read `transforms/remat.py` first. A `remat` equation computes exactly what its
body computes, so every backend just evaluates the body. The one subtlety is XLA's
common-subexpression elimination: the backward pass's remat recomputes values the
forward pass also computed, from the same inputs. XLA would notice, reuse the
forward values -- keeping them alive until the backward pass, which is precisely
the memory the remat was meant to free -- and delete the recomputation. So when
`prevent_cse` is set, the recomputing remat (`differentiated=True`) passes its
inputs through `lax.optimization_barrier`, which XLA may not look through: the
values coming out are, as far as XLA knows, new, and the recomputation stays.

The user's remat (`differentiated=False`) recomputes nothing, so it gets no barrier
(a barrier there would only block fusion). `name` is the identity everywhere (eagerly,
after putting a NumPy operand in its canonical dtype, as any eager primitive does).
"""
from __future__ import annotations

from jax import lax

from ..ir.remat_primitive import remat_p, name_p
from ..ir.trace import eager_impls
from . import xla
from .eager_dispatch import eager_identity
from .reference import eval_jaxpr as reference_eval_jaxpr, reference_rules


def _remat_lowering(*args, jaxpr, policy, prevent_cse, differentiated):
    if prevent_cse and differentiated and args:
        args = lax.optimization_barrier(list(args))
    return xla.lower_jaxpr(jaxpr, (), args)


xla.lowering_rules[remat_p] = _remat_lowering
xla.lowering_rules[name_p] = lambda x, *, name: [x]


def _remat_eager(*args, jaxpr, policy, prevent_cse, differentiated):
    # Eagerly a remat is its body run as one program -- the `jit` impl does exactly that,
    # refs included (they are updated in place after the call).
    return eager_impls[xla.P.jit_p](*args, jaxpr=jaxpr, name="remat")


eager_impls[remat_p] = _remat_eager


def _name_eager(x, *, name):
    # `name` computes nothing, but an eager JAX primitive puts a NumPy operand in its
    # canonical dtype (64-bit mode off: float64 -> float32), so `checkpoint_name` of a
    # float64 array is a float32 array there (finding F70), and a Python scalar comes
    # back as a weakly typed scalar of the canonical dtype, not as a Python number
    # (read as float64; seed 0:34's eager row).
    return [eager_identity(x)]


eager_impls[name_p] = _name_eager


def _remat_reference(*args, jaxpr, policy, prevent_cse, differentiated):
    return reference_eval_jaxpr(jaxpr, (), *args)


reference_rules[remat_p] = _remat_reference
reference_rules[name_p] = lambda x, *, name: [x]
