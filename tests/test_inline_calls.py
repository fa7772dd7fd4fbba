"""`jit(..., inline=True)` and the `inline` param of the `jit` equation (issue 18).

A call marked `inline` is one `jit` equation wherever it is evaluated or transformed
(the root compiles it whole, eager `grad`/`vmap` keep it one call), and none where a
staging trace records it: `make_jaxpr`, an outer `jit`, and a pullback or linearized
function traced later show the body's equations in place, with the *caller's* source
lines -- not those of whichever call first traced the body (which the cached body
holds). The jnp functions' calls are such calls (`frontend/eager_jit.py`); the flag
prints and parses in the text form. Compared with JAX's `jit(inline=True)`.
"""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mnp
from minijax.interop import to_jax, to_python_source
from minijax.ir import parse_jaxpr, pp_jaxpr
from minijax.ir.verify import VerifierError, verify_jaxpr
from minijax.testing import JAX_VERSION, assert_trees_match
from minijax.transforms.ad_util import eval_jaxpr
from minijax.transforms.linearize import linearize_flat

HERE = __file__
LINES = open(HERE).read().splitlines()
_V = np.array([0.5, -1.0, 2.0, 0.25], np.float32)


def _line_of(snippet) -> int:
    return next(i for i, text in enumerate(LINES) if snippet in text) + 1


def _eqns(closed):
    """Every equation, nested bodies' too."""
    jaxpr = getattr(closed, "jaxpr", closed)
    for eqn in jaxpr.eqns:
        yield eqn
        for value in eqn.params.values():
            inner = getattr(value, "jaxpr", value)
            if hasattr(inner, "eqns"):
                yield from _eqns(inner)


def _calls(closed) -> list:
    return [e.primitive.name for e in _eqns(closed) if e.primitive.name == "jit"]


def _names_and_lines(closed) -> list:
    return [(e.primitive.name, e.source_info.line if e.source_info else None)
            for e in closed.jaxpr.eqns]


def _jax_names_and_lines(closed) -> list:
    text = closed.pretty_print(source_info=True, name_stack=False)
    return [(name, int(line)) for name, line in
            re.findall(r"= ([a-z_]+)\b[^\n#]*# [^\n]*?:(\d+)(?::\d+)? \(", text)]


def _scaled_sine(np_):
    def body(x):
        return np_.sin(x) * 2.0                              # body line
    return body


def _caller(t, np_, inline=True):
    inner = t.jit(_scaled_sine(np_), inline=inline)

    def caller(x):
        y = inner(x)                                         # call line
        return y + 1.0
    return caller


def test_make_jaxpr_of_an_inline_jit_shows_its_body_at_the_callers_line_as_jax():
    ours = minijax.make_jaxpr(_caller(minijax, mnp))(_V)
    # From JAX 0.11, inline=True means jax.Inline.JAX_LATE (one jit equation, inlined
    # when lowered); 0.10's inline=True, which minijax's is, is JAX_EARLY.
    early = jax.Inline.JAX_EARLY if JAX_VERSION >= (0, 11) else True
    theirs = jax.make_jaxpr(_caller(jax, jnp, early))(_V)
    call = _line_of("y = inner(x)                                         # call line")
    assert _names_and_lines(ours) == [("sin", call), ("mul", call), ("add", call + 1)]
    assert _names_and_lines(ours) == _jax_names_and_lines(theirs)
    # A plain `jit` stays one nested call, as before.
    plain = minijax.make_jaxpr(lambda x: minijax.jit(_scaled_sine(mnp))(x))(_V)
    assert _calls(plain) == ["jit"] and "inline" not in plain.jaxpr.eqns[0].params


@pytest.mark.parametrize("how", ["eager", "jit", "grad", "vmap", "grad under jit"])
def test_an_inline_jit_computes_what_jax_does(how):
    def run(t, np_):
        f = _caller(t, np_)
        g = lambda x: np_.sum(f(x) ** 2)
        return {"eager": lambda: f(_V), "jit": lambda: t.jit(f)(_V),
                "grad": lambda: t.grad(g)(_V), "vmap": lambda: t.vmap(f)(_V),
                "grad under jit": lambda: t.jit(t.grad(g))(_V)}[how]()
    for _ in range(2):
        assert_trees_match(run(minijax, mnp), run(jax, jnp), rtol=1e-6, what=how)


def test_an_inline_jit_is_one_call_under_an_eager_grad():
    f = minijax.jit(lambda x: mnp.sum(mnp.sin(x) * mnp.cos(x)), inline=True)
    _, f_jvp = minijax.linearize(f, _V)
    lin = linearize_flat(lambda x: [f(x)], [_V])
    assert [e.primitive.name for e in lin.linear_jaxpr.jaxpr.eqns] == ["jit"]
    assert lin.linear_jaxpr.jaxpr.eqns[0].params["inline"] is True
    assert _calls(minijax.make_jaxpr(f_jvp)(_V)) == []
    assert_trees_match(minijax.grad(f)(_V), jax.grad(
        lambda x: jnp.sum(jnp.sin(x) * jnp.cos(x)))(_V), rtol=1e-6)


# -- the caller's lines, whichever call traced the body first ---------------------------

def _site_one(v):
    return mnp.sum(mnp.cumsum(mnp.sin(v) * v) ** 2)         # site one


def _site_two(v):
    w = mnp.sin(v) * v                                      # site two, first line
    return mnp.sum(mnp.cumsum(w) ** 2)                      # site two, second line


_SITE_LINES = {
    _site_one: {_line_of("# site one")},
    _site_two: {_line_of("# site two, first line"), _line_of("# site two, second line")},
}


def _programs_of(site):
    """make_jaxpr of the site's vjp pullback, its linearized function and its grad."""
    _, pullback = minijax.vjp(site, _V)
    _, f_jvp = minijax.linearize(site, _V)
    return {"pullback": minijax.make_jaxpr(pullback)(np.float32(1.0)),
            "linearized": minijax.make_jaxpr(f_jvp)(_V),
            "grad": minijax.make_jaxpr(minijax.grad(site))(_V)}


@pytest.mark.parametrize("order", [(_site_one, _site_two), (_site_two, _site_one)],
                         ids=["one first", "two first"])
def test_traced_pullbacks_show_no_call_and_the_callers_lines(order):
    # The jnp functions' bodies (and their transformed bodies) are traced and cached
    # at the first site; the second site's programs must still name its own lines.
    minijax.clear_caches()
    for site in order:
        for what, closed in _programs_of(site).items():
            assert _calls(closed) == [], (site.__name__, what, closed)
            eqns = list(_eqns(closed))
            assert eqns, what
            functions = {e.source_info.function for e in eqns if e.source_info is not None}
            lines = {e.source_info.line for e in eqns
                     if e.source_info is not None and e.source_info.function == site.__name__}
            # (The pullback's sum of the two cotangents of `v` is from the `vjp` line,
            # op by op too.)
            assert site.__name__ in functions <= {site.__name__, "_programs_of"}, functions
            assert lines <= _SITE_LINES[site], (site.__name__, what, lines)
    # ... and the values are JAX's.
    theirs = jax.grad(lambda v: jnp.sum(jnp.cumsum(jnp.sin(v) * v) ** 2))(_V)
    for site in order:
        assert_trees_match(minijax.grad(site)(_V), theirs, rtol=2e-5)
        assert_trees_match(minijax.vjp(site, _V)[1](np.float32(1.0))[0], theirs, rtol=2e-5)


# -- the text form ----------------------------------------------------------------------

def _linear_program():
    return linearize_flat(lambda v: [mnp.cumsum(mnp.sin(v))], [_V]).linear_jaxpr


def test_the_inline_flag_round_trips_through_the_text_form():
    closed = _linear_program()
    text = pp_jaxpr(closed)
    assert text.count("inline=True") == 2, text
    back = parse_jaxpr(text)      # (the residuals are constvars without values)
    assert pp_jaxpr(back) == text
    assert [e.params.get("inline") for e in back.eqns] == [True, True]
    # Read back and traced, the calls are inlined; run, they compute the same.
    traced = minijax.make_jaxpr(lambda t: eval_jaxpr(back, closed.consts, [t]))(_V)
    assert _calls(traced) == [] and [e.primitive.name for e in traced.jaxpr.eqns][-1] == "cumsum"
    assert_trees_match(eval_jaxpr(back, closed.consts, [_V]),
                       eval_jaxpr(closed.jaxpr, closed.consts, [_V]))
    # A plain call prints no flag.
    plain = pp_jaxpr(minijax.make_jaxpr(lambda x: minijax.jit(mnp.sin)(x))(_V))
    assert "inline" not in plain


def test_a_bad_inline_param_is_refused_by_the_verifier():
    text = pp_jaxpr(_linear_program()).replace("inline=True", "inline=1", 1)
    with pytest.raises(VerifierError, match="the inline param must be True or False"):
        verify_jaxpr(parse_jaxpr(text))


def test_inline_calls_go_to_jax_as_inline_jits():
    # `to_jax` and `to_python_source` give JAX `jax.jit(..., inline=True)` calls.
    closed = _linear_program()
    expected = eval_jaxpr(closed.jaxpr, closed.consts, [_V])
    source = to_python_source(closed)
    assert source.count("inline=True") == 2, source
    namespace = {}
    exec(source, namespace)
    assert_trees_match(list(namespace["program"](_V)), expected)   # (consts inside)
    assert_trees_match(list(to_jax(closed)(_V)), expected)


def test_an_inline_call_batched_under_named_axes_of_other_sizes():
    # Batched bodies are cached (with the named axes around the call in the key):
    # collectives over the outer axis, and over both, stay JAX's for outer axes of
    # other sizes, call after call.
    def run(t, sizes):
        body = t.jit(lambda x: t.lax.psum(x * 2.0, "i") + x * t.lax.axis_index(("i", "j")),
                     inline=True)
        return [t.vmap(t.vmap(body, axis_name="j"), axis_name="i")(
            np.arange(n * 2, dtype=np.float32).reshape(n, 2)) for n in sizes]
    for _ in range(2):
        assert_trees_match(run(minijax, (2, 3, 2)), run(jax, (2, 3, 2)))
