"""The `remat` primitive (checkpoint) and the `name` primitive (checkpoint_name).

Read `catalogue.py`'s `jit` first: `remat` is a call primitive just like it, a
sub-jaxpr applied to the equation's inputs. What makes it different is not what
it computes -- evaluating a `remat` equation is evaluating its body -- but how the
autodiff passes treat it (`transforms/remat.py`): partial evaluation splits its
body with the equation's `policy`, saving only what the policy allows and staging
the rest again on the backward side, where it is *re*-materialised.

    c:f32[] = remat[
      differentiated=False
      jaxpr={ lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[] = reduce_sum[...] b in (c,) }
      policy=nothing_saveable
      prevent_cse=True
    ] x

Params:

* `jaxpr`     -- the body, a `Jaxpr` without constvars (constants are inputs);
* `policy`    -- a value from `transforms/policies.py`: which known values of the body
                 may be saved for the backward pass (printed `dots_saveable`,
                 `save_only_these_names('h')`, ...);
* `prevent_cse` -- lower the recomputation behind `lax.optimization_barrier`, so XLA
                 cannot notice it equals the forward computation and merge the two
                 (which would silently undo the remat and keep everything alive);
* `differentiated` -- False for the remat the user wrote, True for the one partial
                 evaluation stages on the backward side. Only the latter recomputes
                 anything, so only it needs the barrier.

`name` (what `checkpoint_name(x, 'h')` binds) is the identity with a `name` param: a
label that policies like `save_only_these_names('h')` look for. It has no effect on
values, and every pass treats it as the identity.
"""
from __future__ import annotations

from .core import Jaxpr
from .registry import Primitive, type_rules, effect_rules, _fail, _array
from .catalogue import _jit_rule, _call_effects

__all__ = ["remat_p", "name_p"]

remat_p = Primitive("remat", multiple_results=True, has_ref_effects_of_body=True)


def _remat_type_rule(*in_avals, jaxpr: Jaxpr, policy, prevent_cse: bool,
                     differentiated: bool):
    if not isinstance(prevent_cse, bool) or not isinstance(differentiated, bool):
        _fail("remat", "prevent_cse and differentiated must be bools")
    if not callable(policy):
        _fail("remat", f"policy must be a checkpoint policy, got {policy!r}")
    # The body is checked exactly as a jitted body is: same calling convention.
    return _jit_rule(*in_avals, jaxpr=jaxpr, name="remat")


type_rules[remat_p] = _remat_type_rule
effect_rules[remat_p] = _call_effects   # a call has its body's effects, on its inputs

name_p = Primitive("name")


def _name_type_rule(x, *, name: str):
    _array("name", x)
    if not isinstance(name, str):
        _fail("name", f"the name param must be a str, got {name!r}")
    return [x]


type_rules[name_p] = _name_type_rule
