"""Taylor-mode differentiation: the jet trace behind `minijax.experimental.jet`.

Read `jvp.py` first: jet is forward mode carried to higher order. Where a JVP tracer
holds a value and one tangent, a `JetTracer` holds a value and a truncated Taylor
series, the coefficients of the curve through it:

    x(t) = x0 + x1 t + x2 t^2 + ... + xK t^K          (series = [x1, ..., xK])

Inside the trace the coefficients are *unscaled* (`x_k` is the k-th derivative over
k!); the public `jet` scales them by k! on the way in and out, as JAX's does unless
`factorial_scaled=False`. Each primitive's rule maps the series of its inputs to the
series of its output, truncated at the same order K; every rule runs with the
trace's parent current, so its `bind`s are ordinary operations one level out (as
in the JVP trace). The rules are in `jet_rules.py`, one per primitive, in families:

* **linear** ops (add, reshape, slice, concatenate, reduce_sum, cumsum, transpose,
  convert_element_type, ...): the k-th coefficient of `f(x(t))` is `f(x_k)`.
* **bilinear** ops (mul, dot_general, conv): the Cauchy product of the two series,

      v_k = sum_{j=0..k} f(u_j, w_{k-j}).

* **division** `v = u / w` solves `u = v w` for the next coefficient:
  `v_k = (u_k - sum_{j<k} v_j w_{k-j}) / w_0`.
* **the ODE recurrences**: a function whose derivative is known in terms of its
  input or output satisfies `v' = c(t) u'`, which term by term reads

      v_k = (1/k) sum_{j=1..k} j c_{k-j} u_j.

  `exp` (c = v), `log` (u' = u v', solved for v_k), `sin`/`cos` and `sinh`/`cosh` (each
  the other's c, in pairs), `logistic` (c = v (1 - v), whose series is built along
  with v's), `tanh` (through logistic) and `pow` (exp of y log x) use it directly;
  `erf`, `asinh` and `atan2` take `c` from a jet of the derivative, and `erf_inv`
  builds it from its own output's terms, one step behind. This is Faà di Bruno's
  formula organised so that order K costs O(K^2) products, not a sum over partitions.
* **compositions**: a rule that can be written with other primitives runs a jet of
  that composition (`sqrt` as `x ** 0.5`, `log1p` as `log(1 + x)`, `integer_pow` by
  repeated squaring, ...), as JAX's `def_comp` does.
* **piecewise constant** ops (comparisons, floor, sign, stop_gradient, bit ops): the
  output series is `zero_series`.
* **selections** (select_n, max/min, reduce_max/min, abs): the series follows the
  chosen operand (ties in max/min average the two, as JAX's rules do).

`zero_series` is the symbolic zero: a value that is not the trace's own, or the output
of a piecewise-constant op, has it. An application none of whose inputs has a series
is handed to the parent untouched, and its outputs stay plain values. Only when a
rule runs are the zero series of its other inputs made into arrays of zeros (of the
primal's dtype, as JAX does), and the outputs' at the end of `jet`.

Calls: `jit` binds a `jit` of the jet of its body (inputs: primals then every
input's K terms; outputs likewise), so a jitted function stays one call. A
`custom_jvp`/`custom_vjp` function is jet-traced through its primal body: its rules are
first-order and say nothing about higher terms (JAX ignores them too). Control flow
(cond, while, scan) and every other primitive without a rule raise KeyError naming
the primitive, as JAX's jet does.

The table `jet_rules` is not one of the passes' registered tables (`python -m
minijax rules`): jet is experimental in JAX and covers a subset of the primitives,
and it is loaded only with `minijax.experimental.jet`.
"""
from __future__ import annotations

import functools

from ..ir.core import Jaxpr, ClosedJaxpr
from ..ir.custom_primitives import custom_jvp_call_p, custom_vjp_call_p
from ..ir.staging import trace_to_jaxpr, convert_constvars_to_invars
from ..ir.trace import Trace, aval_of, bind, current_trace, set_current_trace
from .ad_util import zeros, eval_jaxpr, fresh_root
from .jvp import PrimalTracer


class ZeroSeries:
    """The series of a value that does not depend on the jet's inputs."""
    __slots__ = ()

    def __repr__(self):
        return "zero_series"


class ZeroTerm:
    """One zero coefficient (JAX's name; minijax's rules never see one: a series is
    either `zero_series` or a list of arrays)."""
    __slots__ = ()

    def __repr__(self):
        return "zero_term"


zero_series = ZeroSeries()
zero_term = ZeroTerm()

# rule(primals_in: list, series_in: list of lists, **params) -> (primal_out, series_out)
# For a primitive with several results, both parts are lists with one entry per result.
jet_rules: dict = {}


class JetTracer(PrimalTracer):
    __slots__ = ("primal", "terms")

    def __init__(self, trace: "JetTrace", primal, terms):
        self._trace = trace
        self.primal = primal
        self.terms = terms            # a list of K arrays, or zero_series


class JetTrace(Trace):
    """Propagates a truncated Taylor series of `order` terms through each primitive."""
    kind = "jet"

    def __init__(self, parent: Trace, order: int):
        super().__init__(parent)
        self.order = order

    def unpack(self, x):
        if type(x) is JetTracer and x._trace is self:
            return x.primal, x.terms
        return x, zero_series

    def wrap(self, primal, terms):
        return primal if terms is zero_series else JetTracer(self, primal, terms)

    def process_primitive(self, prim, args, params):
        primals, series = zip(*map(self.unpack, args)) if args else ((), ())
        parent = self.parent
        if all(s is zero_series for s in series) and not prim.allocates_ref:
            with set_current_trace(parent):
                return parent.process_primitive(prim, list(primals), params)
        if prim is custom_jvp_call_p or prim is custom_vjp_call_p:
            # The primal body, interpreted by this trace: the custom rules are first order.
            return eval_jaxpr(params["call_jaxpr"], (), args)
        rule = jet_rules.get(prim)
        if rule is None:
            raise KeyError(f"jet has no rule for the primitive '{prim.name}'")
        with set_current_trace(parent):
            # Strongly typed zeros, as JAX's jet makes them (`jnp.zeros`): a weakly
            # typed input's terms then lose their weak type where they meet these.
            series = [[zeros(aval_of(x).strip_weak_type())] * self.order
                      if s is zero_series else list(s) for x, s in zip(primals, series)]
            primal_out, series_out = rule(list(primals), series, **params)
        if not prim.multiple_results:
            primal_out, series_out = [primal_out], [series_out]
        elif series_out is zero_series:
            series_out = [zero_series] * len(primal_out)
        return [self.wrap(p, s) for p, s in zip(primal_out, series_out)]


def jet_flat(fun, primals, series, order: int, parent: Trace | None = None,
             instantiate: bool = True):
    """Run `fun(*primals) -> list` under a fresh jet trace of `order` terms (a child of
    `parent`, default the current trace). `series[i]` is a list of `order` arrays or
    `zero_series`. Returns `(primals_out, series_out)`, with zero series of the outputs
    made into arrays of zeros unless not `instantiate`."""
    trace = JetTrace(parent if parent is not None else current_trace(), order)
    inputs = [trace.wrap(p, s) for p, s in zip(primals, series)]
    with set_current_trace(trace):
        outs = fun(*inputs)
    pairs = [trace.unpack(x) for x in outs]
    with set_current_trace(trace.parent):
        primals_out = [p for p, _ in pairs]
        series_out = [[zeros(aval_of(p))] * order if s is zero_series and instantiate
                      else s if s is zero_series else list(s) for p, s in pairs]
    return primals_out, series_out


def jet_composition(fun, primals, series, **params):
    """The jet of `fun(*primals, **params)` (one output) at the current trace: how a rule
    written as a composition of other primitives runs (JAX's `jet2`)."""
    order = len(series[0]) if series else 0
    outs, terms = jet_flat(lambda *xs: [fun(*xs, **params)], primals, series, order)
    return outs[0], terms[0]


@functools.lru_cache(maxsize=256)
def jet_jaxpr_for_call(jaxpr: Jaxpr, term_avals: tuple) -> tuple[Jaxpr, list]:
    """The jet of a call's body as a jaxpr without constvars: inputs are the consts,
    the primals, then each primal's terms in turn (of `term_avals`, the body's input
    avals but for weak types); outputs the primals, then each output's terms in turn."""
    n = len(jaxpr.invars)
    order = len(term_avals) // n if n else 0

    def fun(*args):
        primals = args[:n]
        series = [list(args[n + i * order: n + (i + 1) * order]) for i in range(n)]
        outs, terms = jet_flat(lambda *xs: eval_jaxpr(jaxpr, (), xs), primals, series,
                               order)
        return list(outs) + [t for ts in terms for t in ts]

    with set_current_trace(fresh_root()):
        closed: ClosedJaxpr = trace_to_jaxpr(fun, jaxpr.in_avals + list(term_avals))
    return convert_constvars_to_invars(closed.jaxpr), list(closed.consts)


def call_jet(prim, primals, series, **params):
    """A call primitive binds itself on the jet of its body (see `calls.py`). The
    terms' own avals type the body, as JAX's rule does: a strongly typed term of a
    weakly typed input keeps its type through the call."""
    jaxpr = params["jaxpr"]
    order = len(series[0])
    terms = [t for ts in series for t in ts]
    body, consts = jet_jaxpr_for_call(jaxpr, tuple(aval_of(t) for t in terms))
    outs = bind(prim, *consts, *primals, *terms, **dict(params, jaxpr=body))
    n = len(jaxpr.outvars)
    return outs[:n], [outs[n + i * order: n + (i + 1) * order] for i in range(n)]
