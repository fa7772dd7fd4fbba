"""minijax.scipy.spatial.transform (Rotation, Slerp) against jax.scipy.spatial.transform:
each constructor and converter on a batch of rotations and on one of them, eagerly, under
jit, with gradients and under vmap (which takes the batch apart into single rotations);
the pytree structure; JAX's errors. The API is the same on jax 0.10.2 to 0.12."""
from __future__ import annotations

import jax
import jax.scipy.spatial.transform   # noqa: F401  (JAX's submodule loads on import)
import numpy as np
import pytest

import minijax
import minijax.scipy.spatial.transform   # noqa: F401
from tests.library_helpers import check_everywhere


def _t(mod):
    return mod.scipy.spatial.transform


# Unnormalized on purpose; w, x, y, z largest in turn (each of from_matrix's four
# formulas), and one with w < 0 (as_rotvec, as_mrp and the canonical sign flip).
QUATS = np.array([[0.1, 0.2, 0.3, 1.8], [0.9, 0.1, -0.2, 0.3], [-0.2, 0.8, 0.1, 0.3],
                  [0.1, -0.3, 0.9, -0.2]], np.float32)
OTHER = np.array([[0.3, -0.1, 0.5, 0.7], [-0.4, 0.2, 0.1, 0.8], [0.2, 0.6, -0.3, 0.4],
                  [0.5, 0.5, 0.5, 0.5]], np.float32)
# the last is small enough for the series branches (angle <= 1e-3)
ROTVECS = np.array([[0.3, -1.2, 0.5], [2.0, 0.4, -0.9], [4e-4, -2e-4, 3e-4]], np.float32)
VECTORS = np.array([[1.0, -2.0, 0.5], [0.3, 0.7, -1.1], [-0.4, 0.0, 2.0]], np.float32)
ANGLES = np.array([[0.4, -1.1, 2.5], [-2.9, 0.6, 0.3], [1.2, 2.2, -0.7]], np.float32)
MATRICES = np.asarray(jax.jit(lambda q: _t(jax).Rotation.from_quat(q).as_matrix())(QUATS))


def _converted(r):
    return (r.as_quat(), r.as_quat(canonical=True, scalar_first=True), r.as_matrix(),
            r.as_rotvec(degrees=True), r.as_mrp(), r.magnitude(), r.as_euler("xyz"),
            r.as_euler("ZYZ"))


def _from_quat(mod, q):
    r = _t(mod).Rotation.from_quat(q)
    one = r if r.single else r[1]    # (vmap: the batch taken apart)
    return _converted(r) + (one.as_rotvec(),)


def _apply(mod, rotvec, vectors):
    r = _t(mod).Rotation.from_rotvec(rotvec)
    d = _t(mod).Rotation.from_rotvec(rotvec * 30, degrees=True)
    return (r.as_quat(), r.apply(vectors), r.apply(vectors, inverse=True),
            d.apply(vectors[0]))


def _euler(mod, angles):
    rotation = _t(mod).Rotation
    return tuple(rotation.from_euler(seq, a, degrees=deg).as_quat() for seq, a, deg in [
        ("xyz", angles, False), ("ZX", angles[..., :2], True),
        ("Y", angles.reshape(-1)[0], False)])


def _compose(mod, q, p):
    rotation = _t(mod).Rotation
    r, s = rotation.from_quat(q), rotation.from_quat(p)
    both = rotation.concatenate([r, s]) if not r.single else r
    return (r * s).as_quat(), (s.inv() * r).as_matrix(), both.magnitude()


def _mean(mod, q, weights):
    r = _t(mod).Rotation.from_quat(q)
    return r.mean().as_matrix(), r.mean(weights).as_matrix()


def _slerp(mod, times, q):
    t = _t(mod)
    slerp = t.Slerp.init(np.array([0.0, 1.0, 1.5, 3.0], np.float32), t.Rotation.from_quat(q))
    return slerp(times).as_quat(), slerp(1.25).as_quat()


CASES = {
    # (no vmap: the single-rotation results are among its outputs, and vmap's are
    # checked by the cases below)
    "from_quat": (_from_quat, (QUATS,), dict(vmap=False)),
    "from_matrix_mrp": (lambda mod, m, v: (
        _t(mod).Rotation.from_matrix(m).as_quat(), _t(mod).Rotation.from_mrp(v).as_quat()),
        (MATRICES, ROTVECS / 3), dict(argnums=(0, 1))),
    # the loss's gradient through from_rotvec and apply, in the vectors and the rotation
    "apply": (_apply, (ROTVECS, VECTORS), dict(argnums=(0, 1))),
    "from_euler": (_euler, (ANGLES,), {}),
    "compose": (_compose, (QUATS, OTHER), dict(argnums=(0, 1))),
    # over a batch only (vmap would leave single rotations, which have no mean)
    "mean": (_mean, (QUATS, np.array([0.5, 2.0, 1.0, 0.1], np.float32)),
             dict(vmap=False, argnums=(0, 1))),
    # at and between the key times, before and past them; vmap: one time at a time
    "slerp": (_slerp, (np.array([-0.5, 0.0, 0.4, 1.5, 2.2, 3.5], np.float32), QUATS), {}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_against_jax(name):
    fn, args, options = CASES[name]
    check_everywhere(fn, *args, **{"rtol": 2e-5, "atol": 2e-5, **options})


def _leaves_and_def(tree):
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return [np.asarray(leaf) for leaf in leaves], treedef.num_leaves


def test_pytrees_as_jaxs():
    ours, theirs = _t(minijax), _t(jax)
    times = np.array([0.0, 1.0, 1.5, 3.0], np.float32)
    r_ours = ours.Rotation.from_quat(QUATS)
    s_ours = ours.Slerp.init(times, r_ours)
    # (JAX's side jitted: JAX runs these op by op, a compile per operation)
    r_theirs, s_theirs = jax.jit(lambda q: (
        theirs.Rotation.from_quat(q), theirs.Slerp.init(times, theirs.Rotation.from_quat(q))))(
        QUATS)
    assert r_ours._fields == r_theirs._fields == ("quat",)
    assert s_ours._fields == s_theirs._fields
    ours_leaves = minijax.tree_util.tree_leaves(s_ours)
    assert len(ours_leaves) == len(jax.tree_util.tree_leaves(s_theirs)) == 4
    for a, b in zip(ours_leaves, jax.tree_util.tree_leaves(s_theirs)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(ours.Rotation.identity().quat),
                                  np.asarray(theirs.Rotation.identity().quat))
    # rotations and interpolators as arguments of jit and vmap
    got = minijax.jit(lambda r, s, v: (r.apply(v), s(0.7).as_quat()))(r_ours, s_ours, VECTORS[0])
    want = jax.jit(lambda r, s, v: (r.apply(v), s(0.7).as_quat()))(r_theirs, s_theirs, VECTORS[0])
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    got = minijax.vmap(lambda r: r.as_rotvec())(r_ours)
    np.testing.assert_allclose(np.asarray(got), np.asarray(r_ours.as_rotvec()), rtol=1e-6)


def _single(mod):
    return _t(mod).Rotation.from_quat(QUATS[0])


def _batch(mod):
    return _t(mod).Rotation.from_quat(QUATS)


ERRORS = {
    "euler_too_long": lambda mod: _t(mod).Rotation.from_euler("xyzx", ANGLES),
    "euler_empty": lambda mod: _t(mod).Rotation.from_euler("", ANGLES),
    "euler_mixed_case": lambda mod: _t(mod).Rotation.from_euler("xYz", ANGLES),
    "euler_repeated": lambda mod: _t(mod).Rotation.from_euler("xxy", ANGLES),
    "euler_angle_count": lambda mod: _t(mod).Rotation.from_euler("Y", ANGLES[0]),
    "as_euler_two_axes": lambda mod: _batch(mod).as_euler("xy"),
    "as_euler_axis_name": lambda mod: _batch(mod).as_euler("xwz"),
    "as_euler_repeated": lambda mod: _batch(mod).as_euler("ZYY"),
    "single_index": lambda mod: _single(mod)[0],
    "single_len": lambda mod: len(_single(mod)),
    "single_mean": lambda mod: _single(mod).mean(),
    "random": lambda mod: _t(mod).Rotation.random(None, 3),
    "identity_num": lambda mod: _t(mod).Rotation.identity(3),
    "mean_weights_2d": lambda mod: _batch(mod).mean(np.ones((4, 1), np.float32)),
    "mean_weights_count": lambda mod: _batch(mod).mean(np.ones(3, np.float32)),
    "slerp_not_rotation": lambda mod: _t(mod).Slerp.init([0.0, 1.0], QUATS[:2]),
    "slerp_single": lambda mod: _t(mod).Slerp.init([0.0], _single(mod)),
    "slerp_times_2d": lambda mod: _t(mod).Slerp.init(np.ones((4, 1)), _batch(mod)),
    "slerp_times_count": lambda mod: _t(mod).Slerp.init([0.0, 1.0], _batch(mod)),
    "slerp_call_2d": lambda mod: _t(mod).Slerp.init(np.arange(4.0), _batch(mod))(
        np.ones((2, 2))),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_jaxs(name):
    with pytest.raises(Exception) as ours:
        ERRORS[name](minijax)
    with pytest.raises(Exception) as theirs:
        ERRORS[name](jax)
    assert type(ours.value) is type(theirs.value), (ours.value, theirs.value)
    # (JAX's identity asserts bare; its vectorize words the angle count in its own terms)
    if name not in ("identity_num", "euler_angle_count"):
        assert str(ours.value) == str(theirs.value)
