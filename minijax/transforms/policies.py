"""Checkpoint policies: which values of a remat-ed function are saved for the backward pass.

Read `transforms/remat.py` for where a policy is consulted. In one sentence: when the
partial evaluator splits a remat body into a forward (known) part and a backward
(staged) part, every equation that runs on the forward side asks the policy

    policy(prim, *in_avals, **params) -> bool

"may the outputs of this equation be saved as residuals?". Yes: a backward
equation that needs the value reads the saved copy (memory, no recomputation).
No: the backward side stages the equation again and recomputes the value from
things that *are* saved -- ultimately the remat's own inputs, which are always
saveable (the caller holds them anyway). The policy never changes what is
computed, only where: so every policy gives the same gradients, and
`everything_saveable` gives exactly the gradients *and* residuals of no remat.

A policy is a small frozen value, not a function, so that it is hashable (the
transformed bodies are cached by it), comparable, and written in the text form as
a call that the parser reads back:

    policy=nothing_saveable()        policy=save_only_these_names('h', 'attn')
    policy=save_from_both_policies(dots_saveable(), save_only_these_names('h'))

The names are JAX's (`jax.checkpoint_policies.*`); `checkpoint_policies` at the
bottom is the namespace users see. `save_only_these_names` and friends look for
`name` equations, which `minijax.ad_checkpoint.checkpoint_name(x, 'h')` makes.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import SimpleNamespace

from ..ir import primitives as P
from ..ir.printer import register_param_type
from ..ir.remat_primitive import name_p
from ..ir.window_primitives import conv_general_dilated_p

__all__ = ["Policy", "checkpoint_policies", "everything_saveable", "nothing_saveable",
           "dots_saveable", "dots_with_no_batch_dims_saveable", "as_policy"]


class Policy:
    """Base of all policies. Subclasses define `saveable(prim, in_avals, params)`."""
    text_name = "policy"

    def __call__(self, prim, *in_avals, **params) -> bool:
        return bool(self.saveable(prim, in_avals, params))

    def param_args(self) -> tuple:
        return ()

    def __str__(self):
        args = ", ".join(repr(a) if isinstance(a, str) else str(a) for a in self.param_args())
        return f"{self.text_name}({args})"

    __repr__ = __str__


def _register(cls):
    # The text form writes `text_name(args...)`; the parser calls the class back.
    register_param_type(cls, cls.text_name)
    return cls


@_register
@dataclass(frozen=True, repr=False)
class EverythingSaveable(Policy):
    """Save every value the backward pass needs: remat changes nothing."""
    text_name = "everything_saveable"

    def saveable(self, prim, in_avals, params):
        return True


@_register
@dataclass(frozen=True, repr=False)
class NothingSaveable(Policy):
    """Save only the remat's inputs; recompute everything else."""
    text_name = "nothing_saveable"

    def saveable(self, prim, in_avals, params):
        return False


@_register
@dataclass(frozen=True, repr=False)
class DotsSaveable(Policy):
    """Save the results of matrix products and convolutions (the expensive part);
    recompute the rest. Convolutions count as dots here, as in JAX's policy."""
    text_name = "dots_saveable"

    def saveable(self, prim, in_avals, params):
        return prim is P.dot_general_p or prim is conv_general_dilated_p


@_register
@dataclass(frozen=True, repr=False)
class DotsWithNoBatchDimsSaveable(Policy):
    """Save matrix products without batch dimensions (weights times activations in a
    transformer), recompute batched ones (attention scores) and everything else."""
    text_name = "dots_with_no_batch_dims_saveable"

    def saveable(self, prim, in_avals, params):
        if prim is not P.dot_general_p:
            return False
        _, (lhs_batch, rhs_batch) = params["dimension_numbers"]
        return not lhs_batch and not rhs_batch


def _names(names) -> tuple:
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"checkpoint policy names must be strings, got {n!r}")
    return tuple(names)


@dataclass(frozen=True, repr=False, init=False)
class _NamePolicy(Policy):
    """A policy about values tagged `checkpoint_name(x, n)`, given the names it is
    about; each subclass says which values it saves."""
    names: tuple

    def __init__(self, *names):
        object.__setattr__(self, "names", _names(names))

    def param_args(self):
        return self.names


@_register
@dataclass(frozen=True, repr=False, init=False)
class SaveOnlyTheseNames(_NamePolicy):
    """Save only values tagged `checkpoint_name(x, n)` with `n` among `names`."""
    text_name = "save_only_these_names"

    def saveable(self, prim, in_avals, params):
        return prim is name_p and params["name"] in self.names


@_register
@dataclass(frozen=True, repr=False, init=False)
class SaveAnyNamesButThese(_NamePolicy):
    """Save every *named* value except those named in `names`; nothing unnamed."""
    text_name = "save_any_names_but_these"

    def saveable(self, prim, in_avals, params):
        return prim is name_p and params["name"] not in self.names


@_register
@dataclass(frozen=True, repr=False, init=False)
class SaveAnythingExceptTheseNames(_NamePolicy):
    """Save everything, named or not, except the values named in `names`."""
    text_name = "save_anything_except_these_names"

    def saveable(self, prim, in_avals, params):
        return prim is not name_p or params["name"] not in self.names


@_register
@dataclass(frozen=True, repr=False)
class SaveFromBothPolicies(Policy):
    """Save a value if either policy would."""
    first: Policy
    second: Policy
    text_name = "save_from_both_policies"

    def __post_init__(self):
        # JAX accepts any two policy callables here; wrap plain functions.
        object.__setattr__(self, "first", as_policy(self.first))
        object.__setattr__(self, "second", as_policy(self.second))

    def param_args(self):
        return (self.first, self.second)

    def saveable(self, prim, in_avals, params):
        return (self.first(prim, *in_avals, **params)
                or self.second(prim, *in_avals, **params))


# The offloading policies. In JAX an offloaded residual is saved in another memory
# (`offload_dst`, e.g. host memory) and brought back for the backward pass; minijax has
# no memory kinds, so it saves the value where the other residuals are. Which values
# are kept rather than recomputed -- what the gradients and the residual count depend
# on -- is JAX's.

@_register
@dataclass(frozen=True, repr=False)
class OffloadDotWithNoBatchDims(Policy):
    """`dots_with_no_batch_dims_saveable`, with the saved dots offloaded in JAX."""
    offload_src: str
    offload_dst: str
    text_name = "offload_dot_with_no_batch_dims"

    def param_args(self):
        return (self.offload_src, self.offload_dst)

    def saveable(self, prim, in_avals, params):
        return dots_with_no_batch_dims_saveable.saveable(prim, in_avals, params)


@dataclass(frozen=True, repr=False)
class SaveAndOffloadOnlyTheseNames(Policy):
    """`save_only_these_names` over two disjoint lists of names: those saved and those
    JAX offloads (from `offload_src` to `offload_dst`). Everything else is recomputed."""
    names_which_can_be_saved: tuple
    names_which_can_be_offloaded: tuple
    offload_src: str
    offload_dst: str
    text_name = "save_and_offload_only_these_names"

    def __post_init__(self):
        saved = _names(self.names_which_can_be_saved)
        offloaded = _names(self.names_which_can_be_offloaded)
        both = sorted(set(saved) & set(offloaded))
        if both:
            raise ValueError(
                f"save_and_offload_only_these_names: a name is either saved or offloaded, "
                f"but {both} are in both names_which_can_be_saved and "
                f"names_which_can_be_offloaded")
        object.__setattr__(self, "names_which_can_be_saved", saved)
        object.__setattr__(self, "names_which_can_be_offloaded", offloaded)

    def param_args(self):
        return (self.names_which_can_be_saved, self.names_which_can_be_offloaded,
                self.offload_src, self.offload_dst)

    def saveable(self, prim, in_avals, params):
        return prim is name_p and (params["name"] in self.names_which_can_be_saved
                                   or params["name"] in self.names_which_can_be_offloaded)


def save_and_offload_only_these_names(*, names_which_can_be_saved,
                                      names_which_can_be_offloaded, offload_src,
                                      offload_dst):
    """JAX's constructor: every argument by keyword, each list any iterable of names."""
    return SaveAndOffloadOnlyTheseNames(tuple(names_which_can_be_saved),
                                        tuple(names_which_can_be_offloaded),
                                        offload_src, offload_dst)


# The text form writes the four fields in order; the parser rebuilds them positionally.
register_param_type(SaveAndOffloadOnlyTheseNames, SaveAndOffloadOnlyTheseNames.text_name)


@_register
@dataclass(frozen=True, repr=False)
class CustomPolicy(Policy):
    """A user's own `fn(prim, *avals, **params) -> bool`, wrapped so it can be a param.

    It prints as `custom_policy('module.qualname')`; the parser can rebuild it only
    when that name is importable, so prefer the built-in policies in saved IR."""
    fn: object
    text_name = "custom_policy"

    def param_args(self):
        fn = self.fn
        return (f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}",)

    def saveable(self, prim, in_avals, params):
        answer = self.fn(prim, *in_avals, **params)
        if isinstance(answer, bool):
            return answer
        # What a policy may answer besides a bool: JAX's own marker objects, so that a
        # policy written for JAX works unchanged. Looked up only here: importing
        # `jax.ad_checkpoint` with minijax would make `jax.ad_checkpoint` an attribute
        # of `jax`, which JAX leaves to a program's own import.
        markers = importlib.import_module("jax.ad_checkpoint")
        if answer is markers.Recompute:  # an object, and a truthy one
            return False
        if answer is markers.Saveable or isinstance(answer, markers.Offloadable):
            # Offloading saves the residual in another memory (host memory); minijax
            # does not model memory kinds, so it is saved where the others are.
            return True
        return answer


def _custom_from_text(qualified: str):
    import importlib
    # Find the longest importable module prefix, then walk attributes.
    parts = qualified.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return CustomPolicy(obj)
    raise ValueError(f"cannot find the custom policy function {qualified!r}")


register_param_type(CustomPolicy, "custom_policy", _custom_from_text)

everything_saveable = EverythingSaveable()
nothing_saveable = NothingSaveable()
dots_saveable = DotsSaveable()
dots_with_no_batch_dims_saveable = DotsWithNoBatchDimsSaveable()


def as_policy(policy) -> Policy:
    """What `checkpoint(policy=...)` accepts: a Policy, None (nothing_saveable, JAX's
    default), or any callable with the policy signature."""
    if policy is None:
        return nothing_saveable
    if isinstance(policy, Policy):
        return policy
    if callable(policy):
        return CustomPolicy(policy)
    raise TypeError(f"checkpoint: policy must be a checkpoint policy or a callable "
                    f"(prim, *avals, **params) -> bool, got {policy!r}")


# JAX's namespace, JAX's names (the checkpoint_* spellings are JAX's aliases).
checkpoint_policies = SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    save_only_these_names=SaveOnlyTheseNames,
    save_any_names_but_these=SaveAnyNamesButThese,
    save_anything_except_these_names=SaveAnythingExceptTheseNames,
    save_from_both_policies=SaveFromBothPolicies,
    save_and_offload_only_these_names=save_and_offload_only_these_names,
    offload_dot_with_no_batch_dims=OffloadDotWithNoBatchDims,
)
