"""Programs for tests/test_refs_control_flow.py: refs closed over by cond/switch
branches and scan/fori/while/map bodies, written once against a namespace `m`
(minijax or JAX) so both libraries run the very same code.

Each program makes its refs inside from the input `x` (f32[3]), so that every
transform -- jvp, grad, vjp, linearize -- sees the ref contents depend on `x`, and
returns the final contents of its refs among its outputs: comparing outputs
compares final ref contents too.

`views=False` spells the same accesses without views (`r.at[1][1:]` as `r[1, 1:]`):
JAX 0.10.2 cannot differentiate through ref views at all, so the view-free twin
is the JAX oracle for the view programs (registry entry
"jax_ref_views_in_bodies_under_autodiff_fail").
"""
from __future__ import annotations

import types

import jax
import jax.numpy as jjnp

import minijax
import minijax.numpy as mjnp

MJ = types.SimpleNamespace(new_ref=minijax.new_ref, ref=minijax.ref, np=mjnp, lax=minijax.lax)
JX = types.SimpleNamespace(new_ref=jax.new_ref, ref=jax.ref, np=jjnp, lax=jax.lax)


def cond_read(m, x, views=True):
    r = m.new_ref(x * 2.0)
    y = m.lax.cond(x[0] > 0, lambda: r[...] * x, lambda: -r[...])
    return y, r[...]


def cond_write(m, x, views=True):
    r = m.new_ref(m.np.zeros_like(x))

    def yes(x):
        r[...] = x * 3.0
        return x.sum()

    def no(x):
        r[...] = m.np.sin(x)
        return x[0]
    return m.lax.cond(x[1] < 0, yes, no, x), r[...]


def cond_accumulate(m, x, views=True):
    r = m.new_ref(x)

    def yes(x):
        r[...] += x * x

    def no(x):
        m.ref.addupdate(r, 0, x[1] * 2.0)
    m.lax.cond(x[0] > 0, yes, no, x)
    m.lax.cond(x[0] < 0, yes, no, x)
    return r[...]


def switch_rows(m, x, views=True):
    r = m.new_ref(m.np.zeros((3, 3), x.dtype))

    def branch(k):
        def b(x):
            r[k] = x * (k + 1.0)
            r[(k + 1) % 3] += x
            return r[k].sum()
        return b
    return m.lax.switch(2, [branch(0), branch(1), branch(2)], x), r[...]


def cond_views(m, x, views=True):
    r = m.new_ref(m.np.zeros((2, 3), x.dtype))

    def yes(x):
        if views:
            r.at[1].at[1:][...] = x[:2] * x[2]
            r.at[0].at[::2][...] += x[1:] ** 2
            return r.T[2, 0]
        r[1, 1:] = x[:2] * x[2]
        r[0, 0] += x[1] ** 2
        r[0, 2] += x[2] ** 2
        return r[0, 2]
    return m.lax.cond(x[2] > 0, yes, lambda x: x[0], x), r[...]


def scan_accumulate(m, x, views=True):
    r = m.new_ref(m.np.zeros_like(x))

    def body(c, xi):
        r[...] += c * xi
        return c * 1.5, r[0] * xi
    c, ys = m.lax.scan(body, x, m.np.arange(1.0, 4.0, dtype=x.dtype))
    return c, ys, r[...]


def scan_reverse_read_write(m, x, views=True):
    r = m.new_ref(x)

    def body(c, xi):
        old = r[...]
        r[...] = m.np.sin(old) * xi + c
        return c + old[0], old.sum()
    c, ys = m.lax.scan(body, x[1], x * 2.0, reverse=True, unroll=2)
    return c, ys, r[...]


def scan_views(m, x, views=True):
    r = m.new_ref(m.np.zeros((3, 3), x.dtype))

    def body(c, i):
        if views:
            row = r.at[i]
            row[...] = x * c
            row.at[1:][0] += c
            return c * x[0], r.T[i, i]
        r[i] = x * c
        r[i, 1] += c
        return c * x[0], r[i, i]
    c, ys = m.lax.scan(body, x[2], m.np.arange(3))
    return c, ys, r[...]


def fori_dynamic_index(m, x, views=True):
    r = m.new_ref(m.np.zeros_like(x))
    xr = m.new_ref(x)          # read at a traced index (a closed-over array cannot be)

    def body(i, c):
        r[i] = c * xr[i]
        r[(i + 1) % 3] += c
        return c * 2.0
    return m.lax.fori_loop(0, 3, body, x[0]), r[...]


def nested_scan_cond(m, x, views=True):
    r = m.new_ref(m.np.zeros_like(x))

    def body(c, xi):
        def yes():
            r[...] += c * x

        def no():
            r[0] = r[0] * xi + c
        m.lax.cond(xi > 1.5, yes, no)
        return c * x[1], None
    c, _ = m.lax.scan(body, x[2], m.np.arange(3.0, dtype=x.dtype))
    return c, r[...]


def nested_fori_fori(m, x, views=True):
    r = m.new_ref(m.np.zeros((3, 3), x.dtype))
    xr = m.new_ref(x)

    def outer(i, c):
        def inner(j, d):
            r[i, j] += d * xr[j]
            return d * 1.1
        return m.lax.fori_loop(0, 3, inner, c) + xr[i]
    return m.lax.fori_loop(0, 3, outer, x[0]), r[...]


def scan_in_cond(m, x, views=True):
    r = m.new_ref(x)

    def yes(x):
        def body(c, xi):
            r[...] = r[...] * xi
            return c, None
        m.lax.scan(body, 0.0, x)
        return r[0]
    return m.lax.cond(x[0] > 0, yes, lambda x: x[1], x), r[...]


def map_body(m, x, views=True):
    r = m.new_ref(m.np.zeros_like(x))

    def f(xi):
        r[...] += xi * x
        return r[1]
    return m.lax.map(f, x), r[...]


# -- forward mode only: while loops (fori_loop with traced bounds is one) ------------

def fori_traced_bounds(m, x, views=True):
    r = m.new_ref(x)

    def body(i, c):
        r[...] = r[...] * c
        return c + 1.0
    return m.lax.fori_loop(0, m.np.int32(3), body, x[0]), r[...]


def while_body_writes(m, x, views=True):
    r = m.new_ref(x)

    def body(c):
        r[...] = r[...] * 1.5 + c
        return c + 1.0
    return m.lax.while_loop(lambda c: c < 3.0, body, m.np.floor(x[0])), r[...]


def nested_cond_in_while(m, x, views=True):
    r = m.new_ref(x)

    def body(c):
        m.lax.cond(c % 2 == 0, lambda: r.__setitem__(0, r[0] * x[1]),
                   lambda: r.__setitem__(1, r[1] + x[0]))
        return c + 1
    m.lax.while_loop(lambda c: c < 3, body, 0)
    return r[...]


REVERSE = [cond_read, cond_write, cond_accumulate, switch_rows, cond_views, scan_accumulate,
           scan_reverse_read_write, scan_views, fori_dynamic_index, nested_scan_cond,
           nested_fori_fori, scan_in_cond, map_body]
FORWARD_ONLY = [fori_traced_bounds, while_body_writes, nested_cond_in_while]
ALL = REVERSE + FORWARD_ONLY
WITH_VIEWS = {cond_views, scan_views}
# JAX 0.10.2's reverse mode fails on a cond inside a loop body that uses a ref
# (registry entry "jax_grad_of_ref_cond_inside_loop_fails").
COND_IN_LOOP = {nested_scan_cond, nested_cond_in_while}
