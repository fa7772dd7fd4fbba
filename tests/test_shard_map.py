"""`shard_map`, the collectives across devices, and sharded training, on 8 host CPU
devices against JAX.

The device count must be fixed before JAX starts, so the checks run in a subprocess
(`tests/shard_map_cases.py`, which sets XLA_FLAGS first); this process and the rest
of the suite keep their single device.
"""
import os
import subprocess
import sys
from pathlib import Path

import jax

CASES = Path(__file__).with_name("shard_map_cases.py")
AXES_CASES = Path(__file__).with_name("shard_map_axes_cases.py")
PMAP_CASES = Path(__file__).with_name("pmap_cases.py")


def _run_on_eight_devices(script: Path) -> str:
    # The script adds the device count to the suite's XLA_FLAGS (set for compile speed
    # by conftest.py), which it inherits.
    env = dict(os.environ, JAX_PLATFORMS="cpu", MINIJAX_ENABLE_CHECKS="1",
               PYTHONPATH=os.pathsep.join([str(CASES.parent.parent), str(CASES.parent)]))
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                            text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-8000:]
    return result.stdout


def test_shard_map_on_eight_host_devices():
    stdout = _run_on_eight_devices(CASES)
    assert "all shard_map checks passed" in stdout
    for check in ("psum grad", "all_to_all vmap", "tensor-parallel matmul grad",
                  "data-parallel MLP, 3 steps"):
        assert f"ok {check}" in stdout


def test_groups_tuples_of_names_partial_meshes_and_shardings():
    stdout = _run_on_eight_devices(AXES_CASES)
    assert "all shard_map axes checks passed" in stdout
    for check in ("psum groups grad", "all_gather of a tuple reference evaluator",
                  "ppermute of a tuple jit", "axis_index_groups errors",
                  "partial matmul grad", "partial shard_map eagerly with check_vma=False",
                  "single-device jit", "ref passed in, jit", "ref passed in, vmap",
                  "psum groups of a tuple reference evaluator",
                  "context mesh jit shardings", "context mesh shard_map grad",
                  "reshard jit", "explicit jit in_shardings", "reshard grad",
                  "vmap axis inside shard_map jit", "vmap axis inside shard_map grad",
                  "grad with refs", "grad with refs, jit", "smap axis 1 jit",
                  "smap tuple in_axes", "smap grad", "smap vmap", "smap checks",
                  "pbroadcast x jit", "pbroadcast ('x', 'y') grad",
                  "auto_axes eager", "auto_axes keyword, one axis", "auto_axes grad",
                  "explicit_axes jit", "explicit_axes grad",
                  "auto_axes and explicit_axes checks"):
        assert f"ok {check}" in stdout
    # Registry entry "smap_negative_axis_names_the_first_dimension", pinned both ways
    # (the JAX side on every version it lists)
    assert "ok smap negative axis\n" in stdout and "ok smap negative axis, JAX's" in stdout
    # Registry entry "eager_partial_shard_map_without_vma_refuses_out_specs"
    from tests.test_collectives import _retire_if_fixed
    _retire_if_fixed("eager_partial_shard_map_without_vma_refuses_out_specs",
                     "without vma checks: True" in stdout)


def test_pmap_on_eight_host_devices():
    stdout = _run_on_eight_devices(PMAP_CASES)
    assert "all pmap checks passed" in stdout
    for check in ("pmap psum grad of pmap", "pmap ppermute pmap of grad",
                  "pmap all_to_all vmap", "pmap static_broadcasted_argnums",
                  "pmap out_axes None", "named vmap of a pmap", "nested pmaps grad",
                  "pmap data-parallel training, 3 steps", "pmap errors"):
        assert f"ok {check}" in stdout


def test_this_process_is_unaffected():
    assert "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", "")
    assert jax.device_count() == 1
