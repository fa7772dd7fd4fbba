"""Regression tests from the fuzzer's residual-set findings of the linear-algebra
primitives (docs/fuzzing_findings.md, F20-F29).

A checkpointed decomposition must save what JAX's saves (the sorted residual types
of `print_saved_residuals`), with the same gradient; where JAX saves arrays that
minijax has no reason to form, the explained matcher accepts exactly that
difference. Matrices are the fuzzer's kind: small entries plus a diagonal that keeps
them far from singular points."""
import jax
import jax.ad_checkpoint  # noqa: F401 -- jax.ad_checkpoint.print_saved_residuals
import numpy as np
import pytest

import minijax
from minijax.testing import JAX_VERSION, assert_trees_match
from minijax.testing.recipes import Side
from minijax.testing.report import Row

CHECKPOINT = "checkpoint[everything_saveable]"


def _saved(api, f, policy, *args):
    remat = api.checkpoint(f, policy=getattr(api.checkpoint_policies, policy))
    return Side(api.__name__, api, None).saved_residuals(remat, *args)


def _matrix(rows, cols):
    x = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    return np.tanh(x * 0.37 - 0.4).astype(np.float32) * 0.3


def _cholesky(api, x):
    n = x.shape[0]
    return api.lax.linalg.cholesky(x @ x.T + np.eye(n, dtype=np.float32) * n,
                                   symmetrize_input=False)


def _solve(left, lower, transpose_a, unit_diagonal):
    def op(api, x):
        n = x.shape[0]
        a = x + np.eye(n, dtype=np.float32) * (n + 1)
        b = x[:, :1] * 2.0 + 1.0
        b = b if left else b.T
        return api.lax.linalg.triangular_solve(a, b, left_side=left, lower=lower,
                                               transpose_a=transpose_a,
                                               unit_diagonal=unit_diagonal)
    return op


def _lu(api, x):
    rows, cols = x.shape
    anti = np.flip(np.eye(rows, cols, dtype=np.float32) * 3.0, axis=1)
    return api.lax.linalg.lu(x + anti)[0]


def _eigh(api, x):
    n = x.shape[0]
    v, w = api.lax.linalg.eigh(x + x.T + np.diag(np.arange(n, dtype=np.float32) * 3.0),
                               symmetrize_input=False)
    return v * v, w


def _svd(compute_uv):
    def op(api, x):
        rows, cols = x.shape
        k = min(rows, cols)
        spread = np.zeros((rows, cols), np.float32)
        spread[:k, :k] = np.diag(np.arange(k, dtype=np.float32) * 3.0 + 1.0)
        out = api.lax.linalg.svd(x + spread, full_matrices=False, compute_uv=compute_uv)
        if not compute_uv:
            return out
        s, u, vt = out
        return s, u * u, vt * vt
    return op


def _qr(api, x):
    q, r = api.lax.linalg.qr(x + np.eye(*x.shape, dtype=np.float32), full_matrices=False)
    return q * q, r * r


def _loss(api, op):
    def f(x):
        outs = op(api, x)
        outs = outs if isinstance(outs, tuple) else (outs,)
        return sum(api.numpy.sum(o) for o in outs)
    return f


def _both(op, x, policy="everything_saveable"):
    """(minijax's saved types, JAX's), after checking the gradients agree (to a
    tolerance, so JAX's gradient is one jitted program, not eager op-by-op dispatch)."""
    assert_trees_match(minijax.grad(_loss(minijax, op))(x),
                       jax.jit(jax.grad(_loss(jax, op)))(x), rtol=2e-5, atol=2e-6)
    return [_saved(api, _loss(api, op), policy, x) for api in (minijax, jax)]


SAME_AS_JAX = [
    # F23-F26 (docs/fuzzing_findings.md): triangles as selects against zeros, the
    # permutation as a row gather, the diagonal as a gather, Uᵀ formed once
    ("cholesky", _cholesky, (2, 2)),
    ("cholesky3", _cholesky, (3, 3)),
    *[(f"solve-{left}-{lower}-{trans}-{unit}", _solve(left, lower, trans, unit), (2, 2))
      for left in (True, False) for lower in (True, False) for trans in (True, False)
      for unit in (False, True)],
    ("lu-square", _lu, (2, 2)),
    ("lu-tall", _lu, (3, 2)),
    ("lu-wide", _lu, (2, 3)),
    ("eigh", _eigh, (2, 2)),
    ("eigh3", _eigh, (3, 3)),
    ("svd-values", _svd(False), (2, 2)),
    ("svd-values-tall", _svd(False), (3, 2)),
]




def _without_the_mirrored_tangent(saved, n, count=1):
    """`saved` less what `count` Cholesky jvps spend on taking the tangent's lower
    triangle and mirroring it (tril and strict tril: a bool mask and zeros each).
    minijax's rule does so as JAX's does from 0.11; JAX 0.10's read the whole
    tangent, though the primitive reads only the lower triangle of its operand."""
    out = list(saved)
    for residual in [f"bool[{n},{n}]", f"f32[{n},{n}]"] * 2 * count:
        out.remove(residual)
    return tuple(out)


@pytest.mark.parametrize("name, op, shape", SAME_AS_JAX, ids=[c[0] for c in SAME_AS_JAX])
def test_checkpointed_linalg_saves_what_jax_saves(name, op, shape):
    mini, theirs = _both(op, _matrix(*shape))
    if name.startswith("cholesky") and JAX_VERSION < (0, 11):
        mini = _without_the_mirrored_tangent(mini, shape[0])
    assert mini == theirs


def test_triangles_are_selects_so_a_nonfinite_entry_outside_stays_out():
    # the triangle of a tangent is a select (as JAX's _tril): an inf in the ignored
    # triangle of the matrix's tangent does not turn the solve's tangent into NaN
    a = np.array([[2.0, 0.0], [0.5, 3.0]], np.float32)
    b = np.array([[1.0], [2.0]], np.float32)
    a_dot = np.array([[0.0, np.inf], [0.1, 0.0]], np.float32)

    def f(api):
        return lambda a, b: api.lax.linalg.triangular_solve(a, b, left_side=True, lower=True)
    mini = minijax.jvp(f(minijax), (a, b), (a_dot, np.zeros_like(b)))
    theirs = jax.jvp(f(jax), (a, b), (a_dot, np.zeros_like(b)))
    assert np.all(np.isfinite(np.asarray(mini[1])))
    assert_trees_match(mini, theirs)


# -- explained differences -------------------------------------------------------------

def _residual_row(mini_saved, jax_saved):
    return Row(CHECKPOINT, "differ",
               detail=f"saved residuals differ: minijax saves {list(mini_saved)}, "
                      f"jax saves {list(jax_saved)}")


def _explained(op, x, finding, jax_saved=None):
    """The difference exists, its matcher names it, and one residual more or the same
    difference in a program without the primitive is not explained. `jax_saved`: the
    list to explain in place of what the installed JAX saves."""
    from minijax.testing import fuzz
    mini, theirs = _both(op, x)
    theirs = theirs if jax_saved is None else jax_saved(mini, theirs)
    assert mini != theirs
    program = minijax.make_jaxpr(_loss(minijax, op))(x)
    assert fuzz.known_divergence(CHECKPOINT, program, _residual_row(mini, theirs)) == \
        f"explained:{finding}"
    odd = _residual_row(list(mini) + ["f32[7]"], theirs)
    assert fuzz.known_divergence(CHECKPOINT, program, odd) == ""
    plain = minijax.make_jaxpr(lambda x: minijax.numpy.sum(minijax.numpy.sin(x)))(x)
    assert fuzz.known_divergence(CHECKPOINT, plain, _residual_row(mini, theirs)) == ""
    return mini, theirs


@pytest.mark.parametrize("shape", [(2, 2), (3, 2), (2, 3)])
def test_qr_complex_correction_identity_is_explained(shape):
    # F20: JAX's QR rule saves an identity [k, k] for a term that is zero for real input
    mini, theirs = _explained(_qr, _matrix(*shape), "F20")
    k = min(shape)
    assert sorted(theirs) == sorted(list(mini) + [f"f32[{k},{k}]"])


@pytest.mark.parametrize("shape", [(3, 2), (2, 3), (3, 1)])
def test_singular_value_broadcasts_are_explained(shape):
    # F21: JAX saves s as [1, k] and [k, 1] (implicit broadcasting), minijax the
    # broadcasts it needs, [k, k] twice and [max(m, n), k]
    _explained(_svd(True), _matrix(*shape), "F21")


def _as_jax_011_saves(extra):
    """JAX 0.10's Cholesky residuals lack the mirrored tangent's (one set per
    Cholesky) that minijax's and JAX 0.11's have: on JAX 0.10 the explained row is
    the one JAX 0.11 gives, minijax's residuals and `extra`, and what JAX 0.10 saved
    is checked to be that row less the mirrored tangent's."""
    def jax_saved(mini, theirs):
        if JAX_VERSION >= (0, 11):
            return theirs
        expected = tuple(sorted(list(mini) + extra))
        assert theirs == _without_the_mirrored_tangent(expected, 2)
        return expected
    return jax_saved


def test_cholesky_feeding_a_solve_is_explained():
    # F22: JAX saves the factor twice (its `cholesky` and its rule each take tril)
    def op(api, x):
        factor = _cholesky(api, x)
        return api.lax.linalg.triangular_solve(factor, x[:1] * 0.5, left_side=False,
                                               lower=True)
    mini, theirs = _explained(op, _matrix(2, 2), "F22", _as_jax_011_saves(["f32[2,2]"]))
    assert sorted(theirs) == sorted(list(mini) + ["f32[2,2]"])


def test_several_decompositions_in_one_row_are_explained_together():
    # seed s5fzlin-la2:2 (features linalg): a Cholesky feeding a solve and a QR in one
    # program, JAX saving one array more for each (F22 and F20 in the same row); here
    # the rows are synthetic, on a program holding both decompositions
    from minijax.testing import fuzz

    def op(api, x):
        solved = _solve(True, True, False, False)(api, x)
        q, r = api.lax.linalg.qr(x + np.eye(2, dtype=np.float32), full_matrices=False)
        return _cholesky(api, x), solved, q * q, r * r
    x = _matrix(2, 2)
    mini, theirs = _both(op, x)
    theirs = _as_jax_011_saves(["f32[2,2]"])(mini, theirs)
    program = minijax.make_jaxpr(_loss(minijax, op))(x)
    assert fuzz.known_divergence(CHECKPOINT, program, _residual_row(mini, theirs)) != ""
    both = _residual_row([], ["f32[2,2]", "f32[2,2]"])
    assert fuzz.known_divergence(CHECKPOINT, program, both) == "explained:F20-F22"
    three = _residual_row([], ["f32[2,2]"] * 3)
    assert fuzz.known_divergence(CHECKPOINT, program, three) == ""


def test_residual_lists_with_many_types_are_read_whole():
    # the matchers' parser stopped at the first ']' inside JAX's list, so they saw only
    # its first type; a row with a real difference after it was then misread
    from minijax.testing.fuzz_explained import _unmatched
    row = _residual_row(["bool[2,2]", "f32[2,2]", "f32[2,2]"],
                        ["bool[2,2]", "f32[1,2]", "f32[2,1]"])
    assert _unmatched(row) == ([("f32", (2, 2)), ("f32", (2, 2))],
                               [("f32", (1, 2)), ("f32", (2, 1))])
    assert _unmatched(_residual_row([], ["f32[3]"])) == ([], [("f32", (3,))])


# -- F27 (fixed): a policy reaches the dots of a scan body -----------------------------------

@pytest.mark.parametrize("policy", ["dots_saveable", "dots_with_no_batch_dims_saveable"])
def test_dots_saveable_saves_the_dots_of_a_scan_body(policy):
    # finding 028 of campaign s4last, minimized: not linear algebra (triangular_solve
    # is no dot for either side); JAX saves the body's dots stacked, f32[2,2,2]
    def f(api):
        lax = api.lax

        def body(c, _):
            w = lax.broadcast_in_dim(lax.reduce_sum(c, (0, 1)), (2, 2), ()) \
                + lax.broadcasted_iota(np.float32, (2, 2), 1)
            return lax.dot_general(c, w, (((1,), (0,)), ((), ()))), None
        return lambda x: api.numpy.sum(lax.scan(body, x, None, length=2)[0])
    x = np.arange(4, dtype=np.float32).reshape(2, 2) * 0.1
    assert_trees_match(minijax.grad(f(minijax))(x), jax.grad(f(jax))(x), rtol=1e-6)
    assert _saved(minijax, f(minijax), policy, x) == _saved(jax, f(jax), policy, x)


def test_cholesky_residuals_of_jax_before_0_11_are_the_registry_entry():
    # JAX 0.10's Cholesky rule reads the whole tangent (registry entry
    # cholesky_derivative_reads_the_ignored_triangle): the fuzzer files its checkpoint
    # rows, minijax saving the mirroring's masks and zeros, under that entry -- there
    # only; from JAX 0.11 the two sides save the same
    from minijax.testing import fuzz
    x = _matrix(3, 3)
    mini, theirs = _both(_cholesky, x)
    program = minijax.make_jaxpr(_loss(minijax, _cholesky))(x)
    synthetic = _without_the_mirrored_tangent(mini, 3)
    explained = fuzz.known_divergence(CHECKPOINT, program, _residual_row(mini, synthetic))
    if JAX_VERSION >= (0, 11):
        assert mini == theirs and explained == ""
    else:
        assert theirs == synthetic
        assert explained == "cholesky_derivative_reads_the_ignored_triangle"
    # one mirroring's masks without its zeros, or a residual more, is not the entry
    for odd in (list(synthetic) + ["bool[3,3]", "bool[3,3]"], list(mini) + ["f32[7]"]):
        assert fuzz.known_divergence(CHECKPOINT, program, _residual_row(odd, synthetic)) == ""
