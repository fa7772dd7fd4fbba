"""The golden batched jaxprs in docs/vmap.md are what minijax prints today.

Each `<!-- golden:NAME -->` block in the page is regenerated here; if a change to
the batching rules (or the printer) alters one, this test shows the new text so the
page can be updated along with the change.
"""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import minijax
from minijax import lax
from minijax.ir.verify import verify_jaxpr
from minijax.transforms import vmap_jaxpr

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "vmap.md"
f32 = np.float32


def layer(x, w, b):
    return lax.tanh(lax.add(lax.dot(x, w), b))


def pick(table, i):
    return lax.dynamic_index_in_dim(table, i, axis=0, keepdims=False)


def loss(w, x):
    return lax.reduce_sum(lax.tanh(lax.dot(x, w)), axes=(0,))


def _batched(jaxpr, in_axes):
    result = vmap_jaxpr(jaxpr, in_axes=in_axes, axis_size=5)
    verify_jaxpr(result.jaxpr)
    return f"{result.jaxpr}\nout_axes = {result.out_axes}"


def _generate():
    # the page shows the default config's programs (a JAX_DEFAULT_MATMUL_PRECISION in the
    # environment would put its precision on each dot)
    with minijax.default_matmul_precision(None):
        layer_jaxpr = minijax.make_jaxpr(layer)(np.zeros(3, f32), np.zeros((3, 4), f32),
                                                np.zeros(4, f32))
        pick_jaxpr = minijax.make_jaxpr(pick)(np.zeros((6, 3), f32), np.int32(0))
        grads = minijax.make_jaxpr(minijax.vmap(minijax.grad(loss), in_axes=(None, 0)))(
            np.zeros((3, 4), f32), np.zeros((5, 3), f32))
    verify_jaxpr(grads)
    return {
        "layer": str(layer_jaxpr),
        "layer-batched-x": _batched(layer_jaxpr, (0, None, None)),
        "layer-batched-x1-b0": _batched(layer_jaxpr, (1, None, 0)),
        "pick-batched-index": _batched(pick_jaxpr, (None, 0)),
        "pick-batched-both": _batched(pick_jaxpr, (0, 0)),
        "per-example-grad": str(grads),
    }


def _golden_blocks():
    text = DOC.read_text()
    return dict(re.findall(r"<!-- golden:([\w-]+) -->\n```text\n(.*?)\n```", text, re.S))


def test_every_golden_block_is_generated():
    assert set(_golden_blocks()) == set(_generate())


@pytest.mark.parametrize("name", sorted(_golden_blocks()))
def test_golden_block_matches(name):
    assert _generate()[name] == _golden_blocks()[name], (
        f"docs/vmap.md block {name!r} is out of date; minijax now prints:\n"
        f"{_generate()[name]}")
