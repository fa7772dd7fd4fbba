"""The device the suite runs on, for the few tests whose claims hold on XLA's CPU only.

The suite runs on JAX's CPU backend unless `JAX_PLATFORMS` says otherwise
(`conftest.py`). On a GPU machine run it as `JAX_PLATFORMS=cuda,cpu make test`: JAX's
host callbacks (`debug.print`, `pure_callback`) place their operands on the CPU
backend, so it must be there beside the GPU. Nearly every test compares minijax with
JAX on the same device and holds on both. Four kinds need this module:

* bit-for-bit comparisons of two different programs: XLA's GPU compiler fuses each
  program in its own way, and fused kernels contract multiply-adds and use
  approximate division and transcendentals, so two programs for the same function
  can differ in the last bits (`assert_same_bits`: exact on CPU, a few ulps elsewhere);
* claims about XLA's CPU compiler: the reference evaluator reproduces its numerics,
  and the memory model its buffer sizes; these run the JAX side on the CPU device
  (`on_cpu`), since a GPU's division is not correctly rounded, it rejects integer
  convolutions, and its matrix products take workspace;
* what XLA's GPU backend does not run or computes its own way, in JAX's programs and
  minijax's alike (seen on an H200, jax 0.11.2): the `F16_F16_F16` dot algorithm
  ("Unsupported algorithm"), `hessenberg`/`schur`/`eig` (lowered on the CPU only), a
  round trip through a narrow float inside one program (excess precision: f32 ->
  float4 -> f32 may come back unrounded), and `symmetric_product`'s upper triangle
  (left as the input's); those tests run on the CPU device or compare what JAX defines;
* transcripts in the docs (README, lessons, guides), which show CPU output (`on_cpu`).
"""
import contextlib

import jax
import numpy as np
import pytest

ON_CPU = jax.default_backend() == "cpu"


def cpu_device():
    """JAX's CPU device; the test is skipped where only an accelerator is available."""
    try:
        return jax.devices("cpu")[0]
    except RuntimeError:
        pytest.skip("needs JAX's CPU backend beside the accelerator: JAX_PLATFORMS=cuda,cpu")


@contextlib.contextmanager
def on_cpu():
    """Run what the block computes with JAX on the CPU device (a no-op on CPU)."""
    if ON_CPU:
        yield
        return
    with jax.default_device(cpu_device()):
        yield


def assert_same_bits(got, want, ulps_off_cpu=8, err_msg=""):
    """Equal bit for bit on CPU; elsewhere floats within `ulps_off_cpu` units in the last
    place of their magnitude (other dtypes still exactly)."""
    got, want = np.asarray(got), np.asarray(want)
    if ON_CPU or got.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want, err_msg=err_msg)
        return
    eps = np.finfo(got.dtype).eps
    np.testing.assert_allclose(got, want, rtol=ulps_off_cpu * eps,
                               atol=ulps_off_cpu * eps * float(np.max(np.abs(want), initial=0)),
                               err_msg=err_msg)
