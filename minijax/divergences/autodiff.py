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

register(
    "max_min_tangent_of_a_weak_argument_is_strong", "0.11.2, 0.12.0.1",
    "the jvp of lax.max / lax.min (JAX 0.11 rewrote it as gt/eq masks with 0.5 for a "
    "tie) builds its masks from strong constants: jax.grad(lambda x: lax.max(lax.atan(x), "
    "x))(1.5) is a strong float32 while jax.jacrev of it is weak, and jax.jacfwd and "
    "jax.hessian of it raise AttributeError(\"'float' object has no attribute 'dtype'\"); "
    "jnp.hypot's gradient on 0.11 (which went through max's jvp) is strong too",
    "the tangent share keeps the operands' weak type, as on JAX 0.10.2: grad, jacfwd "
    "and hessian of that function at 1.5 give weak float32 1.0, 1.0 and 0.0",
    "the derivative of a weakly typed input is weak everywhere else in JAX (jacrev casts "
    "its blocks to the input's weak type) and the values are the same; the strong masks "
    "and the crash on a Python scalar are side effects of the rewrite, not a decision",
    transforms=("grad", "jacfwd", "hessian", "max", "min"), intended_on="0.10.2")

register(
    "asinh_forward_derivative_of_a_python_scalar_crashes", "0.12.0.1",
    "jax.jacfwd and jax.hessian of a function of lax.asinh(x), x a Python float, raise "
    "AttributeError(\"'float' object has no attribute 'dtype'\") inside the scaled asinh "
    "jvp JAX 0.12 introduced; jacrev of jacrev, grad of grad, and a float32 argument work, "
    "and 0.10.2 and 0.11.2 (before that jvp) give jacfwd and hessian too",
    "the derivatives, weak as the argument: hessian of sum(asinh(x)) at -0.25 is a weak "
    "float32 0.22826882, as jax 0.11.2's hessian and jax 0.12's jacrev of jacrev give",
    "jacfwd and hessian are documented for any differentiable function of floating "
    "inputs, and a Python float is one; the crash is in batching the rule's clamp of a "
    "scalar, not a decision",
    transforms=("jacfwd", "hessian", "asinh"), intended_on="0.10.2, 0.11.2")
