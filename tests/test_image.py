"""`minijax.image` (`resize`, `scale_and_translate`) against `jax.image` on the same
inputs: every method, with and without antialiasing, up- and downsampling, eagerly,
under jit, vmap and grad (with respect to the image, and to the scale and the
translation), plus dtypes and the error paths."""
import jax
import numpy as np
import pytest

import minijax

rng = np.random.default_rng(0)
X = rng.standard_normal((2, 5, 7, 1)).astype(np.float32)
METHODS = ["nearest", "linear", "bilinear", "cubic", "lanczos3", "lanczos5", "area",
           "cubic-pytorch"]
SHAPES = [(2, 9, 4, 1), (2, 3, 12, 1), (2, 5, 7, 1)]
SCALE = np.array([1.7, 0.6], np.float32)
SHIFT = np.array([0.3, -0.5], np.float32)


def close(got, want, tol=2e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("antialias", [True, False])
def test_resize(method, antialias):
    # jax.image.resize is jitted inside, so its eager results are the jit oracle too
    wants = [jax.image.resize(X, shape, method, antialias=antialias) for shape in SHAPES]
    for shape, want in zip(SHAPES, wants):
        close(minijax.image.resize(X, shape, method, antialias=antialias), want)
    shape = SHAPES[0]

    def ours(x):
        return minijax.image.resize(x, shape, method, antialias=antialias)

    def theirs(x):
        return jax.image.resize(x, shape, method, antialias=antialias)
    close(minijax.jit(ours)(X), wants[0])
    # one program for JAX's vmap and gradient instead of its loss's operations one by one
    pair = np.stack([X, -X])
    want_vmap, want_grad = jax.jit(lambda xs, x: (
        jax.vmap(theirs)(xs), jax.grad(lambda x: (theirs(x) ** 2).sum())(x)))(pair, X)
    close(minijax.vmap(ours)(pair), want_vmap)
    close(minijax.grad(lambda x: (ours(x) ** 2).sum())(X), want_grad, tol=1e-4)


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "lanczos5", "area",
                                    "cubic-pytorch", minijax.image.ResizeMethod.CUBIC])
@pytest.mark.parametrize("antialias", [True, False])
def test_scale_and_translate(method, antialias):
    jax_method = (jax.image.ResizeMethod[method.name]
                  if isinstance(method, minijax.image.ResizeMethod) else method)

    def ours(x, scale, shift):
        return minijax.image.scale_and_translate(x, (2, 8, 5, 1), (1, 2), scale, shift,
                                                 method, antialias=antialias)

    def theirs(x, scale, shift):
        return jax.image.scale_and_translate(x, (2, 8, 5, 1), (1, 2), scale, shift,
                                             jax_method, antialias=antialias)
    # JAX's side (its value, vmap and grad) as one jax.jit program:
    # jax.image.scale_and_translate is not jitted, so eagerly it would compile each of
    # its few dozen operations (and again for vmap and grad)
    scales = np.stack([SCALE, SCALE * 0.5])

    def oracle(x, scale, shift, scales):
        return (theirs(x, scale, shift), jax.vmap(theirs, (None, 0, None))(x, scales, shift),
                jax.grad(lambda *a: (theirs(*a) ** 2).sum(), argnums=(0, 1, 2))(
                    x, scale, shift))
    want, want_vmap, want_grads = jax.jit(oracle)(X, SCALE, SHIFT, scales)
    close(ours(X, SCALE, SHIFT), want)
    close(minijax.jit(ours)(X, SCALE, SHIFT), want)
    close(minijax.vmap(ours, (None, 0, None))(X, scales, SHIFT), want_vmap)
    for got, want in zip(
            minijax.grad(lambda *a: (ours(*a) ** 2).sum(), argnums=(0, 1, 2))(X, SCALE, SHIFT),
            want_grads):
        close(got, want, tol=5e-4)


def test_dtypes():
    ints = (X * 10).astype(np.int32)
    for method in ("nearest", "linear"):
        close(minijax.image.resize(ints, (2, 9, 4, 1), method),
              jax.image.resize(ints, (2, 9, 4, 1), method))
    halves = X.astype(np.float16)
    close(minijax.image.resize(halves, (2, 3, 4, 1), "cubic"),
          jax.image.resize(halves, (2, 3, 4, 1), "cubic"), tol=2e-2)


def test_errors():
    with pytest.raises(ValueError, match='Unknown resize method "bogus"'):
        minijax.image.resize(X, SHAPES[0], "bogus")
    with pytest.raises(ValueError, match="shape must have length equal"):
        minijax.image.resize(X, (9, 4), "linear")
    with pytest.raises(ValueError, match="Nearest neighbor resampling is not"):
        minijax.image.scale_and_translate(X, (2, 8, 5, 1), (1, 2), SCALE, SHIFT, "nearest")
    with pytest.raises(ValueError, match="one entry per spatial dimension"):
        minijax.image.scale_and_translate(X, (2, 8, 5, 1), (1,), SCALE, SHIFT, "linear")
    with pytest.raises(ValueError, match="one entry per spatial dimension"):
        minijax.image.scale_and_translate(X, (2, 8, 5, 1), (1, 2), np.stack([SCALE] * 2),
                                          SHIFT, "linear")
    with pytest.raises(TypeError, match="ResizeMethod"):
        minijax.image.resize(X, SHAPES[0], 3)
