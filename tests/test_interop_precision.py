"""A contraction's `precision` across the JAX bridge (`minijax/interop`).

On a GPU the precision decides whether float32 products use TensorFloat-32, on a TPU
how many bfloat16 passes they take; the CPU ignores it, so these tests compare the
programs' params and texts, and the values only as a check that nothing else changed.
A JAX program's precision -- given as `precision=`, or filled in from
`jax_default_matmul_precision` when JAX traced it -- is imported as minijax's pair of
`Precision` names (or a `DotAlgorithmPreset`'s name), exported back as JAX's, and
written by `to_python_source`; a `DotAlgorithm`, which minijax does not model, is
refused by name. Last, a gradient's
contractions keep the forward one's precision, as JAX's transpose rule does, and the
derivatives of the factorizations ask for the precision JAX's rules ask for.
"""
from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import minijax
from minijax.interop import (import_jaxpr, to_jax, to_python_source, UnsupportedParamError)
from minijax.ir import dumps
from minijax.testing import assert_trees_match
from minijax.transforms.ad_util import eval_jaxpr
from tests.devices import on_cpu

A = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
B = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
IMAGE = np.arange(18, dtype=np.float32).reshape(1, 2, 3, 3) / 10
KERNEL = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 2, 2, 1)
_CONTRACTIONS = ("dot_general", "conv_general_dilated")

# name -> (JAX function, its arguments, the precision minijax imports for each contraction)
CASES = {
    "dot_highest": (lambda a, b: lax.dot(a, b, precision=lax.Precision.HIGHEST), (A, B),
                    [("HIGHEST", "HIGHEST")]),
    "matmul_pair": (lambda a, b: jnp.matmul(a, b, precision=(lax.Precision.HIGH,
                                                              lax.Precision.HIGHEST)),
                    (A, B), [("HIGH", "HIGHEST")]),
    "dot_general_names": (lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                                       precision=("tensorfloat32", "default")),
                          (A, B), [("HIGH", "DEFAULT")]),
    "conv_and_plain_dot": (lambda x, w: (lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                                                  precision="highest"),
                                         jnp.dot(x[0, 0], x[0, 1], precision=None)),
                           (IMAGE, KERNEL), [("HIGHEST", "HIGHEST"), None]),
    # a dot algorithm preset: its name, one for both operands
    "dot_preset": (lambda a, b: lax.dot(a, b, precision=lax.DotAlgorithmPreset.F16_F16_F16),
                   (A, B), ["F16_F16_F16"]),
    "conv_preset": (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                                          precision="BF16_BF16_F32"),
                    (IMAGE, KERNEL), ["BF16_BF16_F32"]),
}


def _where_it_runs(name):
    """F16_F16_F16 runs on the CPU device: XLA refuses it on an H200 ("Unsupported
    algorithm on the current device(s)", JAX's programs and minijax's alike)."""
    return on_cpu() if "F16_F16_F16" in str(CASES[name][2]) else contextlib.nullcontext()


def _precisions(eqns):
    return [eqn.params["precision"] for eqn in eqns if eqn.primitive.name in _CONTRACTIONS]


def _run_minijax(closed, args):
    return eval_jaxpr(closed.jaxpr, closed.consts, list(args))


def _jaxpr_without_default(fun, *args):
    # what JAX records for these programs when jax_default_matmul_precision is unset
    # (the GPU runs set JAX_DEFAULT_MATMUL_PRECISION, which fills in the plain dot)
    with jax.default_matmul_precision(None):
        return jax.make_jaxpr(fun)(*args)


@pytest.mark.parametrize("name", sorted(CASES))
def test_import_keeps_the_precision_and_computes_jax_results(name):
    fun, args, expected = CASES[name]
    imported = import_jaxpr(_jaxpr_without_default(fun, *args))
    assert _precisions(imported.jaxpr.eqns) == expected
    for pair in expected:
        assert f"precision={pair!r}" in str(imported)
    with _where_it_runs(name):
        assert_trees_match(_run_minijax(imported, args),
                           jax.tree_util.tree_leaves(fun(*args)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_exported_precision_is_jaxs_own(name):
    fun, args, _ = CASES[name]
    original = _jaxpr_without_default(fun, *args)
    imported = import_jaxpr(original)
    exported = _jaxpr_without_default(to_jax(imported), *args)
    assert _precisions(exported.eqns) == _precisions(original.eqns)
    assert dumps(import_jaxpr(exported)) == dumps(imported)
    namespace = {}
    source = to_python_source(imported)
    presets = [p for p in _precisions(imported.jaxpr.eqns) if isinstance(p, str)]
    assert (f"lax.DotAlgorithmPreset.{presets[0]}" if presets else "lax.Precision.") in source
    exec(compile(source, f"<{name}>", "exec"), namespace)
    with _where_it_runs(name):
        assert_trees_match(jax.tree_util.tree_leaves(namespace["program"](*args)),
                           jax.tree_util.tree_leaves(fun(*args)))


@pytest.mark.parametrize("setting, pair", [("float32", ("HIGHEST", "HIGHEST")),
                                           ("tensorfloat32", ("HIGH", "HIGH")),
                                           ("bfloat16", ("DEFAULT", "DEFAULT"))])
def test_the_config_default_imports_as_minijax_traces_it(setting, pair):
    """JAX fills a `precision=None` contraction from jax_default_matmul_precision when it
    traces; the import carries that, and minijax's own trace under the same setting
    of its flag is the same program."""
    with jax.default_matmul_precision(setting):
        program = jax.make_jaxpr(lambda a, b: a @ b)(A, B)
        value = jax.jit(lambda a, b: a @ b)(A, B)
    with minijax.default_matmul_precision(setting):
        traced = minijax.make_jaxpr(lambda a, b: a @ b)(A, B)
    imported = import_jaxpr(program)
    assert _precisions(imported.jaxpr.eqns) == [pair]
    assert dumps(imported) == dumps(traced)
    assert_trees_match(_run_minijax(imported, (A, B)), [value])


def test_import_does_not_consult_minijaxs_flag():
    """An imported `precision=None` stays None: the JAX program says it, not the flag
    minijax runs under."""
    program = _jaxpr_without_default(lambda a, b: a @ b, A, B)
    with minijax.default_matmul_precision("highest"):
        imported = import_jaxpr(program)
    assert _precisions(imported.jaxpr.eqns) == [None]


_ALGORITHM = lax.DotAlgorithm(lhs_precision_type=np.float32, rhs_precision_type=np.float32,
                              accumulation_type=np.float32)


@pytest.mark.parametrize("fun, args", [
    (lambda a, b: lax.dot(a, b, precision=_ALGORITHM), (A, B)),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", precision=_ALGORITHM),
     (IMAGE, KERNEL))])
def test_dot_algorithms_are_refused_by_name(fun, args):
    with pytest.raises(UnsupportedParamError, match="not lax.DotAlgorithm"):
        import_jaxpr(jax.make_jaxpr(fun)(*args))


def test_minijax_takes_dot_algorithm_presets():
    """`precision=` a preset (or its name) is one param for both operands, lowered as
    JAX's: on CPU F16_F16_F16 multiplies in float16, so the values show it was passed.
    A gradient's contractions keep it. A `DotAlgorithm` is refused (JAX's CPU refuses
    every one when it lowers)."""
    with _where_it_runs("dot_preset"):
        _check_presets()


def _check_presets():
    preset = lax.DotAlgorithmPreset.F16_F16_F16
    loss = lambda lib, p: lambda a, b: lib.numpy.sum(lib.numpy.tanh(lib.lax.dot(
        a, b, precision=p)))
    for p in (preset, "F16_F16_F16"):
        ours = minijax.make_jaxpr(minijax.grad(loss(minijax, p), argnums=(0, 1)))(A, B)
        assert _precisions(ours.jaxpr.eqns) == ["F16_F16_F16"] * 3
        assert minijax.ir.dumps(minijax.ir.loads(dumps(ours))) == dumps(ours)
        assert_trees_match(minijax.jit(minijax.grad(loss(minijax, p), argnums=(0, 1)))(A, B),
                           jax.jit(jax.grad(loss(jax, p), argnums=(0, 1)))(A, B),
                           rtol=0, atol=0)
    assert_trees_match(minijax.lax.dot(A, B, precision=preset),
                       lax.dot(A, B, precision=preset), rtol=0, atol=0)
    assert not np.array_equal(lax.dot(A, B, precision=preset), lax.dot(A, B))
    assert minijax.lax.DotAlgorithmPreset is lax.DotAlgorithmPreset
    with pytest.raises(ValueError, match="precision"):
        minijax.lax.dot(A, B, precision=minijax.lax.DotAlgorithm(np.float32, np.float32,
                                                                 np.float32))


@pytest.mark.parametrize("pair", [("HIGHEST", "HIGHEST"), ("HIGH", "HIGHEST")])
def test_a_gradients_contractions_keep_the_precision(pair):
    """JAX's transpose of dot_general multiplies (cotangent, other operand) at the
    forward precision; minijax's multiplies the rhs's cotangent the other way round
    (`other . ct`), so there the pair comes reversed, each operand at JAX's precision."""
    def loss(lib, a, b):
        return lib.numpy.sum(lib.numpy.tanh(lib.lax.dot(
            a, b, precision=tuple(name.lower() for name in pair))))
    grad = lambda lib: lib.grad(lambda a, b: loss(lib, a, b), argnums=(0, 1))
    theirs = _jaxpr_without_default(grad(jax), A, B)
    with minijax.default_matmul_precision(None):
        ours = minijax.make_jaxpr(grad(minijax))(A, B)
    assert [tuple(p.name for p in pq) for pq in _precisions(theirs.eqns)] == [pair] * 3
    # forward, then b's cotangent (a . ct), then a's (ct . b)
    assert _precisions(ours.jaxpr.eqns) == [pair, pair[::-1], pair]
    assert_trees_match(minijax.grad(lambda a, b: loss(minijax, a, b), argnums=(0, 1))(A, B),
                       jax.grad(lambda a, b: loss(jax, a, b), argnums=(0, 1))(A, B))


SPD = np.array([[4., 1, 0], [1, 3, 1], [0, 1, 2]], np.float32)
FACTORIZATION_TANGENTS = {
    # JAX's cholesky, eigh, triangular_solve, lu and svd rules multiply at HIGHEST
    # precision (on a GPU, not TensorFloat-32); its qr rule at the default
    "cholesky": lambda lib, a: lib.numpy.linalg.cholesky(a),
    "eigh": lambda lib, a: lib.numpy.linalg.eigh(a)[1],
    "triangular_solve": lambda lib, a: lib.lax.linalg.triangular_solve(
        a, np.ones((3, 2), np.float32), left_side=True, lower=True),
    "lu": lambda lib, a: lib.lax.linalg.lu(a)[0],
    "svd_thin": lambda lib, a: lib.numpy.linalg.svd(a[:, :2], full_matrices=False)[0],
    "qr": lambda lib, a: lib.numpy.linalg.qr(a)[1],
}


@pytest.mark.parametrize("setting", [None, "highest"])
@pytest.mark.parametrize("name", sorted(FACTORIZATION_TANGENTS))
def test_factorization_derivatives_multiply_at_jax_precision(name, setting):
    fn = FACTORIZATION_TANGENTS[name]

    def tangent(lib):
        return lambda a: lib.jvp(lambda a: fn(lib, a), (a,), (a,))[1]

    def counts(text):     # (contractions, those at HIGHEST), nested jaxprs included
        return text.count("dot_general["), text.count("HIGHEST") // 2
    # jax_default_matmul_precision reaches the rules' own products too (qr's), as JAX's
    # reach `lax.dot_general`
    with minijax.default_matmul_precision(setting), jax.default_matmul_precision(setting):
        ours = counts(str(minijax.make_jaxpr(tangent(minijax))(SPD)))
        assert ours == counts(str(jax.make_jaxpr(tangent(jax))(SPD)))
    assert ours[0] and ours[1] == (0 if name == "qr" and setting is None else ours[0])
