"""`minijax.example_libraries.stax`: JAX's small neural-network layer library.

A layer is a pair of functions `(init_fun, apply_fun)`:

    init_fun(rng, input_shape) -> (output_shape, params)
    apply_fun(params, inputs, **kwargs) -> outputs     (kwargs: e.g. rng for Dropout)

and combinators build layers from layers: `serial` chains them, `parallel` runs them
side by side on a list of inputs, `FanOut`/`FanInSum`/`FanInConcat` split and join.
Shapes are tuples; -1 marks a size unknown at init (a batch size). Parameters are
drawn with `minijax.random` and `minijax.nn.initializers`, so the same key gives the
same parameters as `jax.example_libraries.stax`.

`Conv`/`GeneralConv` (and the transposed `ConvTranspose`/`Conv1DTranspose`/
`GeneralConvTranspose`) need `minijax.lax.conv_general_dilated` and the pooling layers
`minijax.lax.reduce_window`; both are looked up when a layer is applied.
"""
from __future__ import annotations

import functools
import operator

from .. import lax
from .. import numpy as jnp
from .. import random
from ..nn import (relu, log_softmax, softmax, softplus, sigmoid, elu, leaky_relu, selu,
                  gelu, standardize)
from ..nn.initializers import glorot_normal, normal, ones, zeros

__all__ = ["Dense", "GeneralConv", "Conv", "GeneralConvTranspose", "ConvTranspose",
           "Conv1DTranspose", "glorot", "randn", "logsoftmax", "BatchNorm", "elementwise",
           "Tanh", "Relu",
           "Exp", "LogSoftmax", "Softmax", "Softplus", "Sigmoid", "Elu", "LeakyRelu",
           "Selu", "Gelu", "MaxPool", "SumPool", "AvgPool", "Flatten", "Identity",
           "FanOut", "FanInSum", "FanInConcat", "Dropout", "serial", "parallel",
           "shape_dependent"]

# JAX's module keeps these older short names.
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


# -- layers ------------------------------------------------------------------------

def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A fully connected layer: inputs @ W + b."""
    def init_fun(rng, input_shape):
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _conv_output_shape(input_shape, kernel_shape, strides, padding, dimension_numbers):
    """The output shape of conv_general_dilated (no dilation) for string or explicit
    padding, in the layout of `dimension_numbers` (lhs, rhs, out spec strings)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    spatial = [c for c in lhs_spec if c not in "NC"]
    kernel_spatial = [c for c in rhs_spec if c not in "IO"]
    sizes = {"N": input_shape[lhs_spec.index("N")], "C": kernel_shape[rhs_spec.index("O")]}
    for k, (name, kernel_name) in enumerate(zip(spatial, kernel_spatial)):
        n, w, s = input_shape[lhs_spec.index(name)], kernel_shape[rhs_spec.index(kernel_name)], strides[k]
        if padding == "VALID":
            out = -(-(n - w + 1) // s)
        elif padding in ("SAME", "SAME_LOWER"):
            out = -(-n // s)
        else:
            lo, hi = padding[k]
            out = (n + lo + hi - w) // s + 1
        sizes[name] = max(out, 0)
    # Output spatial axes take the names of the input's, in order.
    out_spatial = iter(spatial)
    return tuple(sizes[c] if c in "NC" else sizes[next(out_spatial)] for c in out_spec)


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
    """A convolution in the layout `dimension_numbers`, e.g. ('NHWC', 'HWIO', 'NHWC')."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        filter_sizes = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
                        else next(filter_sizes) for c in rhs_spec]
        output_shape = _conv_output_shape(input_shape, kernel_shape, strides, padding,
                                          dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6)):
    """A transposed convolution (`lax.conv_transpose`) in the layout
    `dimension_numbers`."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    strides = strides or (1,) * len(filter_shape)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        filter_sizes = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
                        else next(filter_sizes) for c in rhs_spec]
        output_shape = lax.conv_transpose_shape_tuple(input_shape, kernel_shape, strides,
                                                      padding, dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return lax.conv_transpose(inputs, W, strides, padding,
                                  dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Standardize over `axis` (batch statistics), then scale by gamma and shift by beta."""
    axis = (axis,) if jnp.ndim(axis) == 0 else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[expand] * z + beta[expand]
        if center:
            return z + beta[expand]
        if scale:
            return gamma[expand] * z
        return z
    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A parameterless layer applying `fun` to its input."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        """Pool over windows of the spatial axes (all but N and C, by default the
        first and last)."""
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        non_spatial = (0, len(window_shape) + 1) if spec is None else (
            spec.index("N"), spec.index("C"))
        for i in sorted(non_spatial):
            window_shape = tuple(window_shape[:i]) + (1,) + tuple(window_shape[i:])
            strides = tuple(strides[:i]) + (1,) + tuple(strides[i:])

        def init_fun(rng, input_shape):
            batch = -1 if input_shape[0] == -1 else None
            probe = tuple(1 if n == -1 else n for n in input_shape)
            out_shape = _pooled_shape(probe, window_shape, strides, padding)
            return (out_shape if batch is None else (-1,) + out_shape[1:]), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, window_shape, strides, padding)
            return rescale(out, inputs, spec) if rescale else out
        return init_fun, apply_fun
    return PoolingLayer


def _pooled_shape(input_shape, window_shape, strides, padding):
    sizes = []
    for n, w, s, k in zip(input_shape, window_shape, strides, range(len(input_shape))):
        if padding == "VALID":
            sizes.append(max(-(-(n - w + 1) // s), 0))
        elif padding in ("SAME", "SAME_LOWER"):
            sizes.append(-(-n // s))
        else:
            lo, hi = padding[k]
            sizes.append(max((n + lo + hi - w) // s + 1, 0))
    return tuple(sizes)


def _normalize_by_window_size(window_shape, strides, padding):
    def rescale(outputs, inputs, spec):
        non_spatial = (0, inputs.ndim - 1) if spec is None else (spec.index("N"),
                                                                 spec.index("C"))
        spatial_shape = tuple(n for i, n in enumerate(inputs.shape) if i not in non_spatial)
        window_sizes = lax.reduce_window(jnp.ones(spatial_shape, dtype=inputs.dtype), 0.,
                                         lax.add, window_shape, strides, padding)
        for i in sorted(non_spatial):
            window_sizes = jnp.expand_dims(window_sizes, i)
        return outputs / window_sizes
    return rescale


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.)
AvgPool = _pooling_layer(lax.add, 0., _normalize_by_window_size)


def _flatten():
    def init_fun(rng, input_shape):
        return (input_shape[0], functools.reduce(operator.mul, input_shape[1:], 1)), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))
    return init_fun, apply_fun


Flatten = _flatten()
Identity = elementwise(lambda x: x)


def FanOut(num):
    """Copy the input `num` times, for `parallel` layers."""
    return (lambda rng, input_shape: ([input_shape] * num, ()),
            lambda params, inputs, **kwargs: [inputs] * num)


FanInSum = (lambda rng, input_shape: (input_shape[0], ()),
            lambda params, inputs, **kwargs: sum(inputs))


def FanInConcat(axis=-1):
    """Concatenate a list of inputs along `axis`."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        first = tuple(input_shape[0])
        return first[:ax] + (concat_size,) + first[ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """Keep each input with probability `rate` (scaled by 1/rate) when training; the
    apply function needs the keyword argument rng= then."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key "
                             "argument: call apply_fun(params, inputs, rng=key) with a key "
                             "from minijax.random.key")
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)
    return init_fun, apply_fun


# -- combinators -------------------------------------------------------------------------

def serial(*layers):
    """The layers applied one after another; each gets its own key."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, layer_rng in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=layer_rng, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """Layer k applied to input k of a list of inputs."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        results = [init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)]
        return tuple(zip(*results))

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [f(p, x, rng=r, **kwargs)
                for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer chosen by the input shape: `make_layer(shape) -> (init_fun, apply_fun)`."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
