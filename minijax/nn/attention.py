"""`minijax.nn.dot_product_attention`: scaled dot-product attention, as JAX's
`implementation='xla'` computes it.

For queries `q[B, T, N, H]` and keys/values `k, v[B, S, K, H]` (K key/value heads,
N = K * G query heads: grouped-query attention when G > 1):

    logits[b, n, t, s] = scale * sum_h q[b, t, n, h] k[b, s, n // G, h]   (f32 or wider)
    logits += bias;  masked-out logits := -0.7 * finfo(dtype).max
    probs = softmax(logits over s), in float32, cast to the keys' dtype
    out[b, t, n, h] = sum_s probs[b, n, t, s] v[b, s, n // G, h]

The mask is the `and` of `mask`, the causal mask (`is_causal`: s <= t), the local
window (`local_window_size=(left, right)`: t - left <= s <= t + right) and the padding
masks of `query_seq_lengths`/`key_value_seq_lengths`; outputs of padded queries are
zeros. The grouping is spelt as one extra axis (G) in the contractions, so each
query head meets its key/value head without copying the keys. Rank-3 inputs
([T, N, H]) are taken as a batch of one, as in JAX.
"""
from __future__ import annotations

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..numpy._dtypes import finfo
from ..scipy.special import logsumexp
from .functions import softmax


def _as_4d(x):
    x = jnp.asarray(x)
    return jnp.expand_dims(x, tuple(range(4 - x.ndim))) if x.ndim < 4 else x


def _check(x, shape, dtype, name):
    if x is None:
        return
    if x.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {x.ndim}")
    if dtype is not None and x.dtype != dtype:
        raise ValueError(f"{name} dtype should be {np.dtype(dtype)}, but got {x.dtype}")
    if any(want != -1 and got != want for got, want in zip(x.shape, shape)):
        raise ValueError(f"{name} shape should be {list(shape)}: but got {x.shape}")


def _grouped(x, n_kv_heads, group):
    """A [B, N or 1, T, S] bias or mask as [B, K or 1, G, T, S], head n at (n // G, n % G)."""
    if x is None:
        return None
    b, heads, t, s = x.shape
    if heads == 1:
        return jnp.broadcast_to(x[:, :, None], (b, 1, group, t, s))
    return jnp.reshape(x, (b, n_kv_heads, group, t, s))


def _combined_mask(mask, is_causal, window, q_lengths, kv_lengths, t, s):
    """The [.., T, S] boolean mask of the logits to keep, or None to keep them all."""
    keep = [] if mask is None else [mask]
    q_pos, k_pos = jnp.arange(t)[:, None], jnp.arange(s)[None, :]
    if is_causal:
        keep.append(k_pos <= q_pos)
    if window is not None:
        left, right = window
        keep.append((q_pos <= k_pos + left) & (q_pos >= k_pos - right))
    if q_lengths is not None or kv_lengths is not None:
        padding = True
        if q_lengths is not None:
            padding = jnp.arange(t)[None, :, None] < q_lengths[:, None, None]
        if kv_lengths is not None:
            padding = padding & (jnp.arange(s)[None, None, :] < kv_lengths[:, None, None])
        keep.append(padding[:, None, None])              # [B, 1, 1, T, S]
    if not keep:
        return None
    combined = keep[0]
    for more in keep[1:]:
        combined = combined & more
    return combined


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal: bool = False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual: bool = False):
    """Scaled dot-product attention (see the module docstring), as
    `jax.nn.dot_product_attention` with `implementation='xla'` (or None). With
    `return_residual=True` also the log-sum-exp of each query's logits, [B, T, N]."""
    if implementation not in (None, "xla"):
        if implementation == "cudnn":
            raise ValueError("minijax computes dot_product_attention with "
                             "implementation='xla' (or None); 'cudnn' is a fused GPU kernel "
                             "it does not have")
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out_shape = jnp.shape(query)
    q, k, v = _as_4d(query), _as_4d(key), _as_4d(value)
    bias = None if bias is None else _as_4d(bias)
    mask = None if mask is None else _as_4d(mask)
    q_lengths = None if query_seq_lengths is None else jnp.asarray(query_seq_lengths)
    kv_lengths = None if key_value_seq_lengths is None else jnp.asarray(key_value_seq_lengths)
    window = ((local_window_size, local_window_size) if isinstance(local_window_size, int)
              else local_window_size)
    batch, s, n_kv, head_dim = k.shape
    _check(v, [batch, s, n_kv, head_dim], k.dtype, "value")
    _check(q, [batch, -1, -1, head_dim], k.dtype, "query")
    _check(mask, [-1] * 4, np.dtype(bool), "mask")
    _check(bias, [-1] * 4, None, "bias")
    _check(q_lengths, [batch], np.dtype("int32"), "query_seq_lengths")
    _check(kv_lengths, [batch], np.dtype("int32"), "key_value_seq_lengths")
    n_heads, t = q.shape[2], q.shape[1]
    if n_heads % n_kv != 0:
        raise ValueError(f"The number of query heads must be a multiple of key/value "
                         f"heads, but got {n_heads} vs {n_kv}")
    group = n_heads // n_kv
    scale = (1.0 / np.sqrt(head_dim)) if scale is None else scale

    logits_dtype = jnp.promote_types(q.dtype, np.float32)
    q = jnp.reshape(q, (batch, t, n_kv, group, head_dim))
    logits = jnp.einsum("BTKGH,BSKH->BKGTS", q, k, preferred_element_type=logits_dtype)
    logits = logits * jnp.array(scale, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + _grouped(bias, n_kv, group)).astype(logits.dtype)
    keep = _combined_mask(_grouped(mask, n_kv, group), is_causal, window, q_lengths,
                          kv_lengths, t, s)
    if keep is not None:
        dtype_max = min(float(finfo(logits.dtype).max), float(finfo(np.float32).max))
        logits = jnp.where(keep, logits, jnp.asarray(-0.7 * dtype_max, dtype=logits.dtype))
    logits = logits.astype(np.float32)
    probs = softmax(logits, axis=-1).astype(k.dtype)
    out = jnp.einsum("BKGTS,BSKH->BTKGH", probs, v)
    if q_lengths is not None:
        valid = jnp.arange(t)[None, :] < q_lengths[:, None]
        out = out * valid[:, :, None, None, None].astype(out.dtype)
    out = jnp.reshape(out, out_shape)
    if not return_residual:
        return out
    residual = logsumexp(logits, axis=-1).astype(k.dtype)           # [B, K, G, T]
    residual = jnp.reshape(jnp.moveaxis(residual, 3, 1), (batch, t, n_heads))
    return out, lax.stop_gradient(residual)
