"""`minijax.experimental.ode.odeint`: JAX's adaptive Dormand-Prince solver, built from
minijax's own pieces.

The method is JAX's step for step (`jax.experimental.ode`): a 5th-order Runge-Kutta
step with a 4th-order error estimate, the step size chosen by the error ratio, and each
output time read off a 4th-order polynomial fitted to the last accepted step. The
state is raveled to one vector (`flatten_util.ravel_pytree`), so a pytree `y0` costs
nothing extra. The outer loop over output times is a `lax.scan`; the inner loop that
takes steps until the next output time is a `lax.while_loop`.

Derivatives come from the adjoint method (Chen et al. 2018, appendix C), as JAX's:
`_odeint` is a `custom_vjp` whose backward pass integrates the augmented system
(state, state cotangent, time cotangent, `args` cotangents) backwards in time with
`odeint` itself. Anything `func` closes over that may carry derivatives is turned into
an explicit argument first (`closure_convert`), so the adjoint reaches it too.

Because the same arithmetic is done in the same order, minijax's values agree with
JAX's to the float rounding of the compiled programs (the tests compare values at
rtol 2e-5 and adjoint gradients at 1e-4, in float32).
"""
from __future__ import annotations

import operator as op
from functools import partial
from typing import Callable

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..flatten_util import ravel_pytree
from ..frontend.autodiff import vjp
from ..frontend.autodiff_more import closure_convert
from ..frontend.config import default_matmul_precision
from ..frontend.jit import jit
from ..frontend.pytrees import checked_avals
from ..frontend.vmap import vmap
from ..transforms.custom_derivatives import custom_vjp
from ..tree_util import tree_leaves, tree_map

__all__ = ["odeint"]


def ravel_first_arg(f: Callable, unravel):
    def raveled(y_flat, *args):
        return ravel_pytree(f(unravel(y_flat), *args))[0]
    return raveled


def interp_fit_dopri(y0, y1, k, dt):
    """The coefficients of the 4th-order polynomial through one accepted step; the
    midpoint comes from Dormand-Prince's dense-output weights."""
    dps_c_mid = jnp.array([
        6025192743 / 30085553152 / 2, 0, 51252292925 / 65400821598 / 2,
        -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
        -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2], dtype=y0.dtype)
    y_mid = y0 + dt.astype(y0.dtype) * jnp.dot(dps_c_mid, k)
    return jnp.asarray(fit_4th_order_polynomial(y0, y1, y_mid, k[0], k[-1], dt))


def fit_4th_order_polynomial(y0, y1, y_mid, dy0, dy1, dt):
    dt = dt.astype(y0.dtype)
    a = -2. * dt * dy0 + 2. * dt * dy1 - 8. * y0 - 8. * y1 + 16. * y_mid
    b = 5. * dt * dy0 - 3. * dt * dy1 + 18. * y0 + 14. * y1 - 32. * y_mid
    c = -4. * dt * dy0 + dt * dy1 - 11. * y0 - 5. * y1 + 16. * y_mid
    d = dt * dy0
    e = y0
    return a, b, c, d, e


def initial_step_size(fun, t0, y0, order, rtol, atol, f0):
    """Hairer, Norsett and Wanner's starting step (Solving ODEs I, sec. II.4)."""
    y0, f0 = _promote_inexact(y0, f0)
    dtype = y0.dtype
    scale = atol + jnp.abs(y0) * rtol
    d0 = jnp.linalg.norm(y0 / scale.astype(dtype))
    d1 = jnp.linalg.norm(f0 / scale.astype(dtype))
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    y1 = y0 + h0.astype(dtype) * f0
    f1 = fun(y1, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale.astype(dtype)) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15),
                   jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1. / (order + 1.)))
    return jnp.minimum(100. * h0, h1)


def _promote_inexact(*xs):
    dtype = jnp.result_type(*xs)
    if not jnp.issubdtype(dtype, jnp.inexact):
        dtype = jnp.result_type(dtype, float)
    return [jnp.asarray(x, dtype) for x in xs]


# The Dormand-Prince (dopri5) Butcher tableau, as JAX writes it.
_ALPHA = [1 / 5, 3 / 10, 4 / 5, 8 / 9, 1., 1., 0]
_BETA = [[1 / 5, 0, 0, 0, 0, 0, 0], [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
         [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
         [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
         [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
         [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]]
_C_SOL = [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]
_C_ERROR = [35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085,
            125 / 192 - 451 / 720, -2187 / 6784 - -12231 / 42400,
            11 / 84 - 649 / 6300, -1. / 60.]


def runge_kutta_step(func, y0, f0, t0, dt):
    alpha = jnp.array(_ALPHA, dtype=dt.dtype)
    beta = jnp.array(_BETA, dtype=f0.dtype)
    c_sol = jnp.array(_C_SOL, dtype=f0.dtype)
    c_error = jnp.array(_C_ERROR, dtype=f0.dtype)

    def body_fun(i, k):
        ti = t0 + dt * alpha[i - 1]
        yi = y0 + dt.astype(f0.dtype) * jnp.dot(beta[i - 1, :], k)
        return k.at[i, :].set(func(yi, ti))

    k = jnp.zeros((7, f0.shape[0]), f0.dtype).at[0, :].set(f0)
    k = lax.fori_loop(1, 7, body_fun, k)
    y1 = dt.astype(f0.dtype) * jnp.dot(c_sol, k) + y0
    y1_error = dt.astype(f0.dtype) * jnp.dot(c_error, k)
    return y1, k[-1], y1_error, k


def abs2(x):
    return x.real ** 2 + x.imag ** 2 if jnp.iscomplexobj(x) else x ** 2


def mean_error_ratio(error_estimate, rtol, atol, y0, y1):
    err_tol = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    err_ratio = error_estimate / err_tol.astype(error_estimate.dtype)
    return jnp.sqrt(jnp.mean(abs2(err_ratio)))


def optimal_step_size(last_step, mean_error_ratio, safety=0.9, ifactor=10.0,
                      dfactor=0.2, order=5.0):
    """The next step size: grow by at most `ifactor`, and shrink by at most `dfactor`
    only after a rejected step."""
    dfactor = jnp.where(mean_error_ratio < 1, 1.0, dfactor)
    factor = jnp.minimum(ifactor,
                         jnp.maximum(mean_error_ratio ** (-1.0 / order) * safety, dfactor))
    return jnp.where(mean_error_ratio == 0, last_step * ifactor, last_step * factor)


def _valid_jaxtype(x) -> bool:
    try:
        checked_avals([x], "odeint argument")
    except TypeError:
        return False
    return True


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=np.inf, hmax=np.inf):
    """The solution of `dy/dt = func(y, t, *args)` from `y(t[0]) = y0` at each time of
    `t` (strictly increasing floats), as `jax.experimental.ode.odeint`: an adaptive
    Dormand-Prince Runge-Kutta method with local error tolerances `rtol`/`atol`, at
    most `mxstep` steps per output time and steps no longer than `hmax`.

    `y0` may be a pytree; the result has its structure with a leading axis of length
    `len(t)`. `args` (arrays, scalars or pytrees of them) are differentiable, as are
    `y0` and `t`; derivatives come from the adjoint ODE, solved with the same
    tolerances."""
    for arg in tree_leaves(args):
        if not _valid_jaxtype(arg):
            raise TypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {arg}.")
    if not jnp.issubdtype(t.dtype, jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    leaves = tree_leaves(y0)
    state_dtype = jnp.result_type(*leaves) if leaves else None    # ravel_pytree's
    if state_dtype is not None and not jnp.issubdtype(state_dtype, jnp.inexact):
        # JAX fails on an integer state too (its loop's carry changes type); without
        # this check the solution would come out of integer arithmetic as NaNs
        raise TypeError(f"odeint: the initial state y0 must be floating-point, but its "
                        f"leaves make a {state_dtype} state (write 1.0, not 1, or convert "
                        f"it with .astype)")
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _odeint_wrapper(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


@partial(jit, static_argnums=(0, 1, 2, 3, 4))
@default_matmul_precision("highest")
def _odeint_wrapper(func: Callable, rtol, atol, mxstep, hmax, y0, ts, *args):
    y0, unravel = ravel_pytree(y0)
    func = ravel_first_arg(func, unravel)
    out = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return vmap(unravel)(out)


@partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
@default_matmul_precision("highest")
def _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    def func_(y, t):
        return func(y, t, *args)

    def scan_fun(carry, target_t):
        def cond_fun(state):
            i, _, _, t, dt, _, _ = state
            return (t < target_t) & (i < mxstep) & (dt > 0)

        def body_fun(state):
            i, y, f, t, dt, last_t, interp_coeff = state
            next_y, next_f, next_y_error, k = runge_kutta_step(func_, y, f, t, dt)
            next_t = t + dt
            error_ratio = mean_error_ratio(next_y_error, rtol, atol, y, next_y)
            new_interp_coeff = interp_fit_dopri(y, next_y, k, dt)
            dt = jnp.clip(optimal_step_size(dt, error_ratio), min=0., max=hmax)
            # A rejected step keeps the old state and retries with the smaller step.
            new = [i + 1, next_y, next_f, next_t, dt, t, new_interp_coeff]
            old = [i + 1, y, f, t, dt, last_t, interp_coeff]
            accept = error_ratio <= 1.
            return [jnp.where(accept, a, b) for a, b in zip(new, old)]

        _, *carry = lax.while_loop(cond_fun, body_fun, [0] + carry)
        _, _, t, _, last_t, interp_coeff = carry
        relative_output_time = (target_t - last_t) / (t - last_t)
        y_target = jnp.polyval(interp_coeff,
                               relative_output_time.astype(interp_coeff.dtype))
        return carry, y_target

    f0 = func_(y0, ts[0])
    dt = jnp.clip(initial_step_size(func_, ts[0], y0, 4, rtol, atol, f0),
                  min=0., max=hmax)
    interp_coeff = jnp.array([y0] * 5)
    init_carry = [y0, f0, ts[0], dt, ts[0], interp_coeff]
    _, ys = lax.scan(scan_fun, init_carry, ts[1:])
    return jnp.concatenate((y0[None], ys))


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


@default_matmul_precision("highest")
def _odeint_rev(func, rtol, atol, mxstep, hmax, res, g):
    ys, ts, args = res

    def aug_dynamics(augmented_state, t, *args):
        # The augmented system runs in negated time (see the odeint call below), so
        # `func` sees `-t`.
        y, y_bar, *_ = augmented_state
        y_dot, vjpfun = vjp(func, y, -t, *args)
        return (-y_dot, *vjpfun(y_bar))

    def scan_fun(carry, i):
        y_bar, t0_bar, args_bar = carry
        # Moving an output time moves its value along the solution; time is real.
        t_bar = jnp.dot(func(ys[i], ts[i], *args), g[i]).real
        t0_bar = t0_bar - t_bar
        _, y_bar, t0_bar, args_bar = odeint(
            aug_dynamics, (ys[i], y_bar, t0_bar, args_bar),
            jnp.array([-ts[i], -ts[i - 1]]),
            *args, rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        y_bar, t0_bar, args_bar = tree_map(op.itemgetter(1), (y_bar, t0_bar, args_bar))
        y_bar = y_bar + g[i - 1]
        return (y_bar, t0_bar, args_bar), t_bar

    init_carry = (g[-1], 0., tree_map(jnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), rev_ts_bar = lax.scan(
        scan_fun, init_carry, jnp.arange(len(ts) - 1, 0, -1))
    ts_bar = jnp.concatenate([jnp.array([t0_bar]), rev_ts_bar[::-1]])
    return (y_bar, ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_rev)
