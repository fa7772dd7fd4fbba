"""`cross_check` on a corpus of JAX programs, and on a planted bug.

The corpus covers numpy, control flow, refs, remat and custom derivatives: every
row must agree or name a registered divergence. The planted bug (a wrong jvp rule
for `sin` swapped into minijax by the test) must be found, shrunk to a program of a
few equations, and written as a reproducer whose run under JAX and under minijax (in
a subprocess, the bug planted there too) prints different values.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.ad_checkpoint  # noqa: F401 -- imported by name: `import jax` alone lacks it
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from minijax.interop import import_jaxpr
from minijax.ir import primitives as P
from minijax.testing import cross_check, assert_cross_check, Report
from minijax.transforms.jvp import jvp_rules

X = np.array([0.5, -1.25, 2.0], np.float32)
W = (np.arange(6, dtype=np.float32).reshape(3, 2) - 2) / 4

QUICK = ["eager", "jit", "grad", "jvp", "vmap", "vmap(grad)"]


def mlp(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


def numpy_mix(x):
    y = jnp.where(x > 0, jnp.exp(x), x * 0.5)
    return jnp.sum(jnp.cumsum(y) * jnp.sort(x)) + jnp.max(x) - jnp.mean(x ** 2)


def control_flow(x):
    def body(c, v):
        return c * 0.9 + jnp.sin(v), c * v
    carry, ys = lax.scan(body, 0.5, x)
    branch = lax.cond(carry > 0, lambda a: a * 2.0, lambda a: -a, ys)
    return lax.fori_loop(0, 3, lambda i, a: a * 0.5 + 1.0, branch)


def remat_names(x):
    def block(v):
        h = jax.ad_checkpoint.checkpoint_name(jnp.sin(v) * v, "h")
        return jnp.sum(jnp.cos(h) * h)
    return jax.checkpoint(block, policy=jax.checkpoint_policies.save_only_these_names("h"))(x)


@jax.custom_jvp
def soft_clip(x):
    return jnp.tanh(x) * 2.0


@soft_clip.defjvp
def soft_clip_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return soft_clip(x), t * 0.5


@jax.custom_vjp
def scaled(x, y):
    return x * y


scaled.defvjp(lambda x, y: (scaled(x, y), (x, y)), lambda res, ct: (ct * res[1], ct * 3.0))


def custom_derivatives(x):
    return jnp.sum(soft_clip(x) + scaled(x, x + 1.0))


def internal_refs(x):
    r = jax.new_ref(jnp.zeros_like(x))
    r[...] += jnp.sin(x)
    r[1] = r[0] * 2.0
    return jnp.sum(r[...] * x)


def ref_argument(r, x):
    r[...] = r[...] + 1.0
    return jnp.sum(x * 2.0)


POLICIES = ("nothing_saveable", "dots_saveable")

# name -> (function, args, transforms (None: all), checkpoint policies)
CORPUS = {
    "mlp": (mlp, (W, np.ones((2, 3), np.float32)), None, POLICIES),
    "numpy_mix": (numpy_mix, (X,), None, ()),
    "control_flow": (control_flow, (X,), QUICK + ["grad(grad)", "linearize"], ()),
    "remat_names": (remat_names, (X,), QUICK, ()),
    "custom_derivatives": (custom_derivatives, (X,), QUICK + ["vjp", "jacrev"], ()),
    "internal_refs": (internal_refs, (X,), QUICK + ["jacfwd"], ()),
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_agrees(name):
    fun, args, transforms, policies = CORPUS[name]
    # JAX's side of each row as one jax.jit program (the rows compare up to tolerance):
    # eagerly JAX compiles a program per distinct operation of each transform. Not for
    # custom_derivatives: JAX 0.10's jit of a vmap of a custom_vjp function fails an
    # internal assertion ("non-canonical constant") on the NumPy batch closed over.
    report = assert_cross_check(fun, *args, transforms=transforms, policies=policies,
                                shrink=False, jit_oracle=name != "custom_derivatives")
    assert isinstance(report, Report) and report.rows


def test_remat_of_jit_calls_saves_what_jax_saves():
    # The policy reaches into the known part of a partly-known jit call (jnp.sort,
    # jnp.where, ... are jit calls): its outputs are recomputed, as JAX does.
    assert_cross_check(numpy_mix, X, transforms=[], policies=("nothing_saveable",),
                       shrink=False, jit_oracle=True)


def test_refs_passed_in_are_compared_after_each_transform():
    report = cross_check(ref_argument, jax.new_ref(X.copy()), X,
                         transforms=["eager", "jit", "grad", "vmap"], policies=(),
                         shrink=False)
    assert report.ok, str(report)
    assert [row.status for row in report.rows[:3]] == ["agree"] * 3


def test_report_table_names_every_row():
    report = cross_check(mlp, W, np.ones((2, 3), np.float32), transforms=["eager", "hessian"],
                         policies=("dots_saveable",), shrink=False, jit_oracle=True)
    text = str(report)
    for name in ("eager", "hessian", "checkpoint[dots_saveable]", "all agree"):
        assert name in text
    assert report.row("hessian").status == "agree"
    with pytest.raises(KeyError):
        report.row("nope")


def test_unknown_transform_is_an_error():
    with pytest.raises(ValueError, match="unknown transforms"):
        cross_check(numpy_mix, X, transforms=["gradd"], shrink=False)


def test_known_divergence_is_named():
    counter = jax.new_ref(np.float32(1.0))

    def remat_effect(y):
        out = y * counter[...]
        counter[...] += 1.0
        return out
    report = cross_check(jax.checkpoint(remat_effect), np.float32(1.0), transforms=["grad"],
                         policies=(), shrink=False)
    row = report.row("grad")
    assert row.status == "divergence", str(report)
    assert row.divergence == "remat_grad_external_ref_effect_runs_twice"
    assert report.ok


# -- a planted bug --------------------------------------------------------------------------------

_PLANT = """
from minijax.ir import primitives as P
from minijax.ir.trace import bind
from minijax.transforms.jvp import jvp_rules
_right = jvp_rules[P.sin_p]
def _wrong(primals, tangents, **params):
    result = _right(primals, tangents, **params)
    return type(result)(result.primals_out,
                        [bind(P.mul_p, t, 2.0) for t in result.tangents_out])
jvp_rules[P.sin_p] = _wrong
"""


@pytest.fixture
def wrong_sin_jvp():
    right = jvp_rules[P.sin_p]
    namespace = {}
    exec(_PLANT, namespace)
    yield
    jvp_rules[P.sin_p] = right


def _bigger_program(x, y):
    h = jnp.tanh(x) * y
    z = lax.cond(jnp.sum(y) > 0, lambda a: jnp.exp(a) + 1.0, jnp.cos, h)
    return jnp.sum(z + jnp.sin(x * 2.0)), jnp.cos(h) @ y


def test_planted_bug_is_found_shrunk_and_reproduced(wrong_sin_jvp, tmp_path):
    report = cross_check(_bigger_program, X, X + 1.0, transforms=["eager", "grad"],
                         policies=(), reproducer_dir=str(tmp_path))
    assert report.row("eager").status == "agree"
    assert report.row("grad").status == "differ" and report.row("grad").max_error > 0.1
    assert not report.ok
    path = report.reproducers["grad"]
    text = open(path).read()
    body = text.split("def program(", 1)[1].split("return", 1)[0]
    assert 1 <= body.count(" = lax.") <= 3, body   # shrunk to a few equations
    assert "lax.sin" in body
    # One subprocess runs the reproducer twice, as a script: on JAX, then -- the bug
    # planted -- with `python -m minijax run` (a Python start and JAX import fewer
    # than a subprocess per side).
    driver = tmp_path / "run_then_plant_and_run.py"
    driver.write_text("import sys\nfrom minijax.interop.run_hook import run_script\n"
                      "run_script(sys.argv[1], on_minijax=False)\nprint('-- minijax')\n"
                      + _PLANT + "from minijax.cli import main\n"
                      "sys.exit(main(['run', sys.argv[1]]))\n")
    # (the checkout goes first on the path: a relative PYTHONPATH would not survive cwd)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(__file__).parent.parent), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, str(driver), path], capture_output=True,
                         text=True, cwd=tmp_path, check=True, env=env).stdout
    jax_out, mini_out = out.split("-- minijax\n")
    assert jax_out.startswith("leaf 0:") and mini_out.startswith("leaf 0:")
    assert jax_out != mini_out
    jax_values = np.array(eval(jax_out.split(":", 1)[1]))
    mini_values = np.array(eval(mini_out.split(":", 1)[1]))
    np.testing.assert_allclose(mini_values, 2 * jax_values, rtol=1e-5)


def test_assert_cross_check_raises_on_the_planted_bug(wrong_sin_jvp):
    with pytest.raises(AssertionError, match="grad +differ"):
        assert_cross_check(lambda x: jnp.sum(jnp.sin(x)), X, transforms=["grad"],
                           policies=(), shrink=False)


def test_shrinking_is_deterministic(wrong_sin_jvp, tmp_path):
    from minijax.testing.shrink import shrink
    from minijax.testing.recipes import TRANSFORMS
    closed = import_jaxpr(jax.make_jaxpr(_bigger_program)(X, X + 1.0))
    results = [shrink(closed, [X, X + 1.0], "grad", TRANSFORMS["grad"]) for _ in range(2)]
    from minijax.ir import dumps
    assert dumps(results[0][0]) == dumps(results[1][0])
    assert len(results[0][0].jaxpr.eqns) <= 3



def test_shrinking_unnests_a_loop(wrong_sin_jvp):
    from minijax.testing.shrink import shrink
    from minijax.testing.recipes import TRANSFORMS

    def looped(x):
        def body(c, v):
            return c * 0.9 + jnp.sin(v * c), jnp.tanh(c * v)
        c, ys = lax.scan(body, 1.0, x)
        return jnp.sum(ys) + c
    closed = import_jaxpr(jax.make_jaxpr(looped)(X))
    small, small_leaves = shrink(closed, [X], "grad", TRANSFORMS["grad"])
    names = [eqn.primitive.name for eqn in small.jaxpr.eqns]
    assert "scan" not in names and "sin" in names and len(names) <= 3, names


def test_shrinking_makes_arguments_smaller(wrong_sin_jvp, tmp_path):
    big = np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(4, 6)
    report = cross_check(lambda m: jnp.sum(jnp.sin(m) @ m.T), big, transforms=["grad"],
                         policies=(), reproducer_dir=str(tmp_path))
    text = open(report.reproducers["grad"]).read()
    assert "# program(f32[1,1])" in text, text[:600]


def test_a_side_that_raises_is_an_error_row_with_both_messages():
    from minijax.transforms.vmap import vmap_rules
    right = vmap_rules[P.cos_p]

    def broken(*args, **params):
        raise RuntimeError("planted vmap failure")
    vmap_rules[P.cos_p] = broken
    try:
        report = cross_check(lambda x: jnp.cos(x) * 2.0, X, transforms=["eager", "vmap"],
                             policies=(), shrink=False)
    finally:
        vmap_rules[P.cos_p] = right
    row = report.row("vmap")
    assert row.status == "error" and "planted vmap failure" in row.minijax_error
    assert row.jax_error == "" and "jax: ok" in row.summary()
    assert not report.ok and report.row("eager").status == "agree"


def test_vmap_over_given_batch_arguments():
    batch = np.stack([X, X * 2.0, -X])
    report = cross_check(lambda x: jnp.sum(jnp.sin(x) * x), X, vmap_args=(batch,),
                         transforms=["vmap", "vmap(grad)", "grad(vmap)"], policies=(),
                         shrink=False)
    assert report.ok, str(report)
    with pytest.raises(ValueError, match="structure of the arguments"):
        cross_check(lambda x: x, X, vmap_args=(batch, batch), transforms=["vmap"],
                    policies=())


def test_jit_oracle_rows_agree_and_refs_stay_eager():
    # JAX's side under one jax.jit per row; a ref argument's row still runs eagerly,
    # so the ref's contents after the call are compared.
    report = cross_check(ref_argument, jax.new_ref(X.copy()), X,
                         transforms=["eager", "jit", "grad", "vmap"], policies=(),
                         shrink=False, jit_oracle=True)
    assert report.ok, str(report)
    assert [row.status for row in report.rows[:3]] == ["agree"] * 3
    report = cross_check(_bigger_program, X, X + 1.0, transforms=["eager", "vjp", "jvp"],
                         policies=("dots_saveable",), shrink=False, jit_oracle=True)
    assert report.ok and all(row.status == "agree" for row in report.rows), str(report)


def test_jit_oracle_still_finds_the_planted_bug(wrong_sin_jvp):
    report = cross_check(_bigger_program, X, X + 1.0, transforms=["eager", "grad"],
                         policies=(), shrink=False, jit_oracle=True)
    assert report.row("eager").status == "agree"
    assert report.row("grad").status == "differ" and report.row("grad").max_error > 0.1
    assert not report.ok
