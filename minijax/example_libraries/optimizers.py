"""`minijax.example_libraries.optimizers`: JAX's minimal first-order optimizers.

An optimizer is a triple of functions, `Optimizer(init_fn, update_fn, params_fn)`:

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    state = opt_init(params)                       # any pytree of arrays
    state = opt_update(step, grads, state)         # grads: a pytree like params
    params = get_params(state)

Each optimizer is written for a single array (`init(x0) -> per-array state`,
`update(i, g, state)`, `get_params(state)`), and the `@optimizer` decorator lifts it
to pytrees: the state of a whole parameter tree is an `OptimizerState`, a pytree of
the flattened per-array states plus the tree structures needed to rebuild them, so
it can be passed through `jit`. Step sizes are a number or a schedule `i -> size`.
`unpack_optimizer_state` / `pack_optimizer_state` convert a state to and from a
pickleable nested structure of `JoinPoint`s.

Pytrees are JAX's own, so importing this module registers `OptimizerState` (a class
of this module) with `jax.tree_util`, as importing `jax.example_libraries.optimizers`
registers JAX's; `import minijax` alone does not import it.
"""
from __future__ import annotations

import functools
from collections import namedtuple
from typing import Callable

from jax import tree_util

from .. import numpy as jnp

__all__ = ["OptimizerState", "Optimizer", "optimizer", "make_schedule", "constant",
           "exponential_decay", "inverse_time_decay", "polynomial_decay",
           "piecewise_constant", "sgd", "momentum", "nesterov", "adagrad", "rmsprop",
           "rmsprop_momentum", "adam", "adamax", "sm3", "l2_norm", "clip_grads",
           "JoinPoint", "unpack_optimizer_state", "pack_optimizer_state"]

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
# Only the flat per-array states are leaves; the tree structures are static.
tree_util.register_pytree_node(
    OptimizerState,
    lambda state: ((state.packed_state,), (state.tree_def, state.subtree_defs)),
    lambda static, children: OptimizerState(children[0], static[0], static[1]))

Optimizer = namedtuple("Optimizer", ["init_fn", "update_fn", "params_fn"])


def _flatten_each(trees):
    flats = [tree_util.tree_flatten(tree) for tree in trees]
    return [leaves for leaves, _ in flats], [treedef for _, treedef in flats]


def optimizer(opt_maker: Callable) -> Callable[..., Optimizer]:
    """Lift an optimizer written for one array to one over pytrees of arrays."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = tree_util.tree_flatten(x0_tree)
            states_flat, subtrees = _flatten_each([init(x0) for x0 in x0_flat])
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, grad_treedef = tree_util.tree_flatten(grad_tree)
            if grad_treedef != tree:
                raise TypeError(f"optimizer update: the gradient tree {grad_treedef} does "
                                f"not match the parameter tree {tree}")
            states = map(tree_util.tree_unflatten, subtrees, states_flat)
            new_states = [update(i, g, state) for g, state in zip(grad_flat, states)]
            new_flat, new_subtrees = _flatten_each(new_states)
            for before, after in zip(subtrees, new_subtrees):
                if before != after:
                    raise TypeError(f"optimizer update: the per-array state changed "
                                    f"structure from {before} to {after}")
            return OptimizerState(new_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            states = map(tree_util.tree_unflatten, subtrees, states_flat)
            return tree_util.tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


# -- schedules: step number -> step size ---------------------------------------------------

def constant(step_size) -> Callable:
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate):
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    if staircase:
        return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    """values[k] for steps i with exactly k boundaries below i."""
    boundaries, values = jnp.array(boundaries), jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")
    return lambda i: values[jnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule):
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(f"a step size must be a scalar or a schedule (a function of the step "
                    f"number), got {type(scalar_or_schedule)}")


# -- optimizers -------------------------------------------------------------------------

@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x -= step_size(i) * g."""
    step_size = make_schedule(step_size)
    return (lambda x0: x0,
            lambda i, g, x: x - step_size(i) * g,
            lambda x: x)


@optimizer
def momentum(step_size, mass: float):
    """Heavy-ball momentum: v = mass * v + g; x -= step_size(i) * v."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity
    return (lambda x0: (x0, jnp.zeros_like(x0)), update, lambda state: state[0])


@optimizer
def nesterov(step_size, mass: float):
    """Nesterov momentum: the step looks ahead by one more `mass * v`."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity
    return (lambda x0: (x0, jnp.zeros_like(x0)), update, lambda state: state[0])


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad: steps scaled by 1/sqrt(sum of squared gradients), with momentum."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        g_sq_inv_sqrt = jnp.where(g_sq > 0, 1. / jnp.sqrt(g_sq), 0.0)
        m = (1. - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return init, update, lambda state: state[0]


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: steps scaled by 1/sqrt of a moving average of squared gradients."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad
    return (lambda x0: (x0, jnp.zeros_like(x0)), update, lambda state: state[0])


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp whose scaled steps accumulate with momentum."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom
    return init, update, lambda state: state[0]


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam: bias-corrected moving averages of the gradient and its square."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        m_hat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v
    return init, update, lambda state: state[0]


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adamax: Adam with the infinity norm in place of the squared-gradient average."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        corrected_step = step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        return x - corrected_step * m / (u + eps), m, u
    return init, update, lambda state: state[0]


def _splice(seq, index, replacement):
    items = list(seq)
    items[index:index + 1] = replacement
    return items


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3: one accumulator per axis (memory linear in the sizes, not their product);
    an element's accumulator is the minimum of those of its rows, columns, ..."""
    step_size = make_schedule(step_size)

    def init(x0):
        x_shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        accumulators = [jnp.zeros(size, dtype=x0.dtype) for size in x0.shape]
        return x0, jnp.zeros_like(x0), accumulators, x_shape

    def along(ndim, v, axis):
        index = _splice([None] * ndim, axis, [slice(None)])
        return v[tuple(index)]

    def update(i, g, state):
        x, m, accumulators, x_shape = state
        accumulators = [along(g.ndim, v, axis) for axis, v in enumerate(accumulators)]
        accum = functools.reduce(jnp.minimum, accumulators) + jnp.square(g)
        accum_inv_sqrt = jnp.where(accum > 0, 1. / jnp.sqrt(accum), 0)
        m = (1. - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        accumulators = [accum.max(tuple(_splice(range(x.ndim), axis, [])))
                        for axis in range(x.ndim)]
        return x, m, accumulators, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        return x.reshape(x_shape)
    return init, update, get_params


# -- utilities ------------------------------------------------------------------------

def l2_norm(tree):
    """The l2 norm of all the leaves of `tree` taken together."""
    leaves = tree_util.tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scale `grad_tree` down so that its l2 norm is at most `max_norm`."""
    norm = l2_norm(grad_tree)
    return tree_util.tree_map(
        lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """Marks where the parameter tree ends and one array's optimizer state begins in
    the nested structure of `unpack_optimizer_state` (iterating yields that state)."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An `OptimizerState` as the parameter tree with a `JoinPoint` of each array's
    state at its leaf: plain Python containers, so it pickles."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = map(tree_util.tree_unflatten, subtree_defs, states_flat)
    return tree_util.tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree):
    """The inverse of `unpack_optimizer_state`."""
    sentinels, tree_def = tree_util.tree_flatten(
        marked_pytree, is_leaf=lambda x: isinstance(x, JoinPoint))
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state: expected the output of "
                        "unpack_optimizer_state (every leaf a JoinPoint)")
    states_flat, subtree_defs = _flatten_each([s.subtree for s in sentinels])
    return OptimizerState(states_flat, tree_def, subtree_defs)
