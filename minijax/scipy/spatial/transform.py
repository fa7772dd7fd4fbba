"""`minijax.scipy.spatial.transform`: `Rotation` and `Slerp`, as
`jax.scipy.spatial.transform` has them.

A `Rotation` is a NamedTuple holding unit quaternions in scalar-last order, (x, y, z, w)
on the last axis: shape (4,) for one rotation, (n, 4) for a batch. Being a NamedTuple it
is a pytree with the quaternions as its one leaf, so rotations pass through `jit`,
`grad` and `vmap`. Every conversion reads the components on the last axis, so leading
axes batch (JAX vectorizes each kernel instead; the results are the same).

What JAX leaves out, minijax leaves out too, raising as JAX does: `Rotation.random`
(NotImplementedError), `identity(num)` for a batch (AssertionError), `Slerp` checking
that its times increase (it would need their values). Each kernel is compiled whole for
an eager call, as JAX's jitted kernels are.
"""
from __future__ import annotations

import re
import typing

import numpy as np

from ... import numpy as jnp
from ...frontend.eager_jit import jitted_eagerly

__all__ = ["Rotation", "Slerp"]

_AXIS_INDEX = {"x": 0, "y": 1, "z": 2}


def _axes_of(seq: str, *, exactly_three: bool):
    """The axis indices of an Euler sequence and whether it is extrinsic (lower case),
    with JAX's checks in JAX's order."""
    if exactly_three and len(seq) != 3:
        raise ValueError(f"Expected 3 axes, got {seq}.")
    if not 1 <= len(seq) <= 3:
        raise ValueError("Expected axis specification to be a non-empty string of upto "
                         f"3 characters, got {seq}")
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (extrinsic or re.match(r"^[XYZ]{1,3}$", seq) is not None):
        raise ValueError("Expected axes from `seq` to be from ['x', 'y', 'z'] or "
                         f"['X', 'Y', 'Z'], got {seq}")
    if any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return tuple(_AXIS_INDEX[a] for a in seq.lower()), extrinsic


def _norm(v):
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


def _parts(q):
    return [q[..., n] for n in range(4)]


def _normalized(q):
    return q / _norm(q)[..., None]


def _compose(p, q):
    """The quaternion of rotation q followed by rotation p (Hamilton product p q)."""
    px, py, pz, pw = _parts(p)
    qx, qy, qz, qw = _parts(q)
    c = jnp.cross(p[..., :3], q[..., :3])
    return jnp.stack([pw * qx + qw * px + c[..., 0], pw * qy + qw * py + c[..., 1],
                      pw * qz + qw * pz + c[..., 2], pw * qw - px * qx - py * qy - pz * qz],
                     axis=-1)


def _about_axis(axis: int, angle):
    zero = jnp.zeros_like(angle)
    parts = [zero, zero, zero, jnp.cos(angle / 2.)]
    parts[axis] = jnp.sin(angle / 2.)
    return jnp.stack(parts, axis=-1)


@jitted_eagerly("axes", "intrinsic")
def _from_euler(angles, degrees, axes, intrinsic):
    if angles.shape[-1] != len(axes):
        raise ValueError(f"Expected angles with a last axis of {len(axes)} (one per axis "
                         f"of the sequence), got shape {angles.shape}")
    angles = jnp.where(degrees, jnp.deg2rad(angles), angles)
    quat = _about_axis(axes[0], angles[..., 0])
    for n in range(1, len(axes)):
        step = _about_axis(axes[n], angles[..., n])
        # intrinsic: each turn about the already-turned axes, i.e. applied first
        quat = _compose(quat, step) if intrinsic else _compose(step, quat)
    return quat


@jitted_eagerly()
def _from_quat(quat):
    return _normalized(quat)


@jitted_eagerly()
def _composed(p, q):
    return _normalized(_compose(p, q))


@jitted_eagerly()
def _from_rotvec(rotvec, degrees):
    rotvec = jnp.where(degrees, jnp.deg2rad(rotvec), rotvec)
    angle = _norm(rotvec)
    angle2 = angle * angle
    # sin(a/2)/a by its Taylor series near 0, where the quotient loses precision
    series = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
    scale = jnp.where(angle <= 1e-3, series, jnp.sin(angle / 2) / angle)
    return jnp.concatenate([scale[..., None] * rotvec, jnp.cos(angle / 2)[..., None]],
                           axis=-1)


@jitted_eagerly()
def _from_matrix(matrix):
    m = [[matrix[..., r, c] for c in range(3)] for r in range(3)]
    trace = m[0][0] + m[1][1] + m[2][2]
    # Four formulas, each exact but best conditioned where its pivot (a diagonal
    # entry, or the trace) is largest: compute all, keep the best-conditioned one.
    candidates = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        q = [None] * 4
        q[i] = 1 - trace + 2 * m[i][i]
        q[j] = m[j][i] + m[i][j]
        q[k] = m[k][i] + m[i][k]
        q[3] = m[k][j] - m[j][k]
        candidates.append(jnp.stack(q, axis=-1))
    candidates.append(jnp.stack([m[2][1] - m[1][2], m[0][2] - m[2][0], m[1][0] - m[0][1],
                                 1 + trace], axis=-1))
    choice = jnp.argmax(jnp.stack([m[0][0], m[1][1], m[2][2], trace], axis=-1), axis=-1)
    quat = candidates[3]
    for n in range(3):
        quat = jnp.where((choice == n)[..., None], candidates[n], quat)
    return _normalized(quat)


@jitted_eagerly()
def _from_mrp(mrp):
    scale = jnp.sum(mrp * mrp, axis=-1)[..., None] + 1
    return jnp.concatenate([2 * mrp[..., :3], 2 - scale], axis=-1) / scale


@jitted_eagerly()
def _as_matrix(quat):
    x, y, z, w = _parts(quat)
    xx, yy, zz, ww = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [[xx - yy - zz + ww, 2 * (xy - zw), 2 * (xz + yw)],
            [2 * (xy + zw), -xx + yy - zz + ww, 2 * (yz - xw)],
            [2 * (xz - yw), 2 * (yz + xw), -xx - yy + zz + ww]]
    return jnp.stack([jnp.stack(row, axis=-1) for row in rows], axis=-2)


@jitted_eagerly()
def _as_rotvec(quat, degrees):
    # q and -q are one rotation: take w >= 0, so the angle lies in [0, pi]
    quat = jnp.where(quat[..., 3:] < 0, -quat, quat)
    angle = 2. * jnp.arctan2(_norm(quat[..., :3]), quat[..., 3])
    angle2 = angle * angle
    series = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
    scale = jnp.where(angle <= 1e-3, series, angle / jnp.sin(angle / 2))
    scale = jnp.where(degrees, jnp.rad2deg(scale), scale)
    return scale[..., None] * quat[..., :3]


@jitted_eagerly()
def _as_mrp(quat):
    sign = jnp.where(quat[..., 3] < 0, -1., 1.)
    return sign[..., None] * quat[..., :3] / (1. + sign * quat[..., 3])[..., None]


@jitted_eagerly("axes", "extrinsic")
def _as_euler(quat, degrees, axes, extrinsic):
    # Bernardes & Viollet (2022): Euler angles of any sequence from a quaternion.
    first, third = (0, 2) if extrinsic else (2, 0)
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    q = _parts(quat)
    if symmetric:
        a, b, c, d = q[3], q[i], q[j], q[k] * sign
    else:
        a, b, c, d = q[3] - q[j], q[i] + q[k] * sign, q[j] + q[3], q[k] * sign - q[i]
    middle = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
    eps = 1e-7
    # gimbal lock (middle angle 0 or pi): only a sum or a difference of the outer
    # angles is determined; the first angle takes it all, the third is 0
    case = jnp.where(jnp.abs(middle) <= eps, 1, jnp.where(jnp.abs(middle - np.pi) <= eps, 2, 0))
    half_sum, half_diff = jnp.arctan2(b, a), jnp.arctan2(d, c)
    out = [jnp.where(case == 1, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1)),
           middle, jnp.zeros_like(middle)]
    out[first] = jnp.where(case == 0, half_sum - half_diff, out[first])
    out[third] = jnp.where(case == 0, half_sum + half_diff, out[third])
    if not symmetric:
        out[third] = out[third] * sign
        out[1] = out[1] - np.pi / 2
    angles = (jnp.stack(out, axis=-1) + np.pi) % (2 * np.pi) - np.pi
    return jnp.where(degrees, jnp.rad2deg(angles), angles)


@jitted_eagerly()
def _canonical(quat):
    # the sign making the first nonzero of (w, x, y, z) positive
    neg, zero = quat < 0, quat == 0
    flip = neg[..., 3] | (zero[..., 3] & (neg[..., 0] | (zero[..., 0] & (
        neg[..., 1] | (zero[..., 1] & neg[..., 2])))))
    return jnp.where(flip[..., None], -quat, quat)


@jitted_eagerly()
def _apply(matrix, vectors, inverse):
    matrix = jnp.where(inverse, jnp.swapaxes(matrix, -1, -2), matrix)
    return jnp.sum(matrix * vectors[..., None, :], axis=-1)


@jitted_eagerly()
def _magnitude(quat):
    return 2. * jnp.arctan2(_norm(quat[..., :3]), jnp.abs(quat[..., 3]))


@jitted_eagerly()
def _mean(quat, weights):
    k = jnp.dot(weights[np.newaxis, :] * quat.T, quat)
    _, vectors = jnp.linalg.eigh(k)
    return vectors[:, -1]


@jitted_eagerly()
def _steps(quat):
    # each interval's rotation from its start to its end, as a rotation vector
    starts = quat[:-1] * jnp.array([-1, -1, -1, 1], dtype=quat.dtype)
    return _as_rotvec(_normalized(_compose(starts, quat[1:])), False)


@jitted_eagerly()
def _interpolate(key_times, timedelta, starts, rotvecs, at):
    # the interval holding each time (the first one for times before it)
    ind = jnp.maximum(jnp.searchsorted(key_times, at) - 1, 0)
    alpha = (at - key_times[ind]) / timedelta[ind]
    return _normalized(_compose(starts[ind], _from_rotvec(rotvecs[ind] * alpha[:, None], False)))


class Rotation(typing.NamedTuple):
    """Rotations in 3 dimensions, as unit quaternions (x, y, z, w); JAX's version of
    `scipy.spatial.transform.Rotation`."""
    quat: typing.Any

    @classmethod
    def concatenate(cls, rotations: typing.Sequence):
        """The rotations of a sequence of `Rotation`s, as one batch."""
        return cls(jnp.concatenate([rotation.quat for rotation in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles, degrees: bool = False):
        """From Euler angles about the axes of `seq` ('xyz': extrinsic, 'XYZ':
        intrinsic)."""
        axes, extrinsic = _axes_of(seq, exactly_three=False)
        return cls(_from_euler(jnp.atleast_1d(angles), degrees, axes, not extrinsic))

    @classmethod
    def from_matrix(cls, matrix):
        """From rotation matrices (..., 3, 3)."""
        return cls(_from_matrix(jnp.asarray(matrix)))

    @classmethod
    def from_mrp(cls, mrp):
        """From Modified Rodrigues Parameters (..., 3)."""
        return cls(_from_mrp(jnp.asarray(mrp)))

    @classmethod
    def from_quat(cls, quat):
        """From quaternions (..., 4), scalar last; normalized."""
        return cls(_from_quat(jnp.asarray(quat)))

    @classmethod
    def from_rotvec(cls, rotvec, degrees: bool = False):
        """From rotation vectors (..., 3): axis times angle."""
        return cls(_from_rotvec(jnp.asarray(rotvec), degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype=float):
        """The identity rotation (one; JAX provides no batch of them)."""
        if num is not None:
            raise AssertionError(f"Rotation.identity: num must be None (JAX makes a single "
                                 f"identity rotation only), got num={num!r}")
        return cls(jnp.array([0., 0., 0., 1.], dtype=dtype))

    @classmethod
    def random(cls, random_key, num: int | None = None):
        """Not provided, as in JAX (it needs scipy.stats.special_ortho_group)."""
        raise NotImplementedError()

    def __getitem__(self, indexer):
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self):
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other) -> Rotation:
        """`self * other`: `other` first, then `self`."""
        return Rotation(_composed(self.quat, other.quat))

    def apply(self, vectors, inverse: bool = False):
        """Rotate vectors (..., 3); `inverse` applies the inverse rotation."""
        return _apply(self.as_matrix(), jnp.asarray(vectors), inverse)

    def as_euler(self, seq: str, degrees: bool = False):
        """As Euler angles about the three axes of `seq`."""
        axes, extrinsic = _axes_of(seq, exactly_three=True)
        return _as_euler(self.quat, degrees, axes, extrinsic)

    def as_matrix(self):
        return _as_matrix(self.quat)

    def as_mrp(self):
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False):
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False):
        """The quaternions; `canonical`: the one of q, -q with w > 0 (or the first
        nonzero of x, y, z positive); `scalar_first`: as (w, x, y, z)."""
        quat = _canonical(self.quat) if canonical else self.quat
        return jnp.roll(quat, shift=1, axis=-1) if scalar_first else quat

    def inv(self):
        return Rotation(self.quat * jnp.array([-1, -1, -1, 1], dtype=self.quat.dtype))

    def magnitude(self):
        """The rotation angle(s), in [0, pi]."""
        return _magnitude(self.quat)

    def mean(self, weights=None):
        """The (weighted) mean rotation: the top eigenvector of sum_i w_i q_i q_i^T
        (Markley et al. 2007)."""
        dtype = self.quat.dtype
        w = (jnp.ones(self.quat.shape[0], dtype=dtype) if weights is None
             else jnp.asarray(weights, dtype=dtype))
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError("Expected `weights` to have number of values equal to number "
                             f"of rotations, got {w.shape[0]} values and {len(self)} "
                             "rotations.")
        return Rotation(_mean(self.quat, w))

    @property
    def single(self) -> bool:
        """Whether this holds one rotation rather than a batch."""
        return self.quat.ndim == 1


class Slerp(typing.NamedTuple):
    """Spherical linear interpolation between key rotations at increasing times; build
    it with `Slerp.init(times, rotations)`, call it with the times wanted."""
    times: typing.Any
    timedelta: typing.Any
    rotations: Rotation
    rotvecs: typing.Any

    @classmethod
    def init(cls, times, rotations: Rotation):
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError("Expected times to be specified in a 1 dimensional array, "
                             f"got {times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError("Expected number of rotations to be equal to number of "
                             f"timestamps given, got {len(rotations)} rotations and "
                             f"{times.shape[0]} timestamps.")
        quat = rotations.as_quat()
        return cls(times=times, timedelta=jnp.diff(times), rotations=Rotation(quat[:-1]),
                   rotvecs=_steps(quat))

    def __call__(self, times):
        """The interpolated rotation(s) at `times` (a scalar or 1-d)."""
        at = jnp.asarray(times, dtype=self.times.dtype)
        if at.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        quat = _interpolate(self.times, self.timedelta, self.rotations.quat, self.rotvecs,
                            jnp.atleast_1d(at))
        return Rotation(quat[0] if at.ndim == 0 else quat)
