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


def test_shard_map_on_eight_host_devices():
    # The script adds the device count to the suite's XLA_FLAGS (set for compile speed
    # by conftest.py), which it inherits.
    env = dict(os.environ, JAX_PLATFORMS="cpu", MINIJAX_ENABLE_CHECKS="1",
               PYTHONPATH=str(CASES.parent.parent))
    result = subprocess.run([sys.executable, str(CASES)], env=env, capture_output=True,
                            text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-8000:]
    assert "all shard_map checks passed" in result.stdout
    for check in ("psum grad", "all_to_all vmap", "tensor-parallel matmul grad",
                  "data-parallel MLP, 3 steps"):
        assert f"ok {check}" in result.stdout


def test_this_process_is_unaffected():
    assert "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", "")
    assert jax.device_count() == 1
