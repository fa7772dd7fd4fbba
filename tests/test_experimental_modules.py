"""The small modules of `jax.experimental` and `jax` that programs import for their
runtime rather than their transformations, against JAX's: `experimental.mesh_utils`,
`experimental.multihost_utils` (one process), `experimental.pjit`,
`experimental.shard_map` (both deprecated, with JAX's warnings),
`experimental.compilation_cache`, `profiler` and `dlpack`."""
from __future__ import annotations

import importlib
import os
import sys
import warnings

import jax
import jax.experimental.compilation_cache.compilation_cache  # noqa: F401
import jax.experimental.mesh_utils  # noqa: F401
import jax.experimental.multihost_utils  # noqa: F401
import numpy as np
import pytest

import minijax
import minijax.experimental.compilation_cache.compilation_cache  # noqa: F401
import minijax.experimental.mesh_utils  # noqa: F401
import minijax.experimental.multihost_utils  # noqa: F401
from minijax.testing import assert_trees_match
from tests.devices import on_cpu
from tests.library_helpers import assert_raises_as_jax

X = np.arange(6, dtype=np.float32).reshape(2, 3)
TREE = {"a": X, "b": (np.float32(2.5), np.arange(3))}


def _mesh():
    return jax.sharding.Mesh(np.array(jax.devices()), ("x",))


def test_mesh_utils_as_jaxs():
    n = len(jax.devices())
    for shape in [(n,), (1, n), (n, 1, 1)]:
        ours = minijax.experimental.mesh_utils.create_device_mesh(shape)
        theirs = jax.experimental.mesh_utils.create_device_mesh(shape)
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == object
        assert list(ours.flat) == list(theirs.flat)
    hybrid = [mod.experimental.mesh_utils.create_hybrid_device_mesh(
        (n,), (1,), process_is_granule=True) for mod in (minijax, jax)]
    assert hybrid[0].shape == hybrid[1].shape and list(hybrid[0].flat) == list(hybrid[1].flat)
    assert_raises_as_jax(lambda mod: mod.experimental.mesh_utils.create_device_mesh((n + 1,)))
    keywords = [mod.experimental.mesh_utils.create_device_mesh(
        (n,), jax.devices(), contiguous_submeshes=True, allow_split_physical_axes=True)
        for mod in (minijax, jax)]
    assert list(keywords[0].flat) == list(keywords[1].flat)
    assert_raises_as_jax(lambda mod: mod.experimental.mesh_utils.create_device_mesh(("a",)))
    assert_raises_as_jax(lambda mod: mod.experimental.mesh_utils.create_hybrid_device_mesh(
        (n,), (2,), process_is_granule=True))


def test_multihost_utils_in_one_process_as_jaxs():
    ours, theirs = minijax.experimental.multihost_utils, jax.experimental.multihost_utils
    for fn in (lambda m: m.process_allgather(TREE), lambda m: m.process_allgather(TREE, tiled=True),
               lambda m: m.broadcast_one_to_all(TREE),
               lambda m: m.process_allgather(minijax.numpy.ones(2))):
        got, want = fn(ours), fn(theirs)
        assert_trees_match(got, want)
        assert all(type(a) is type(b) is np.ndarray for a, b in zip(
            jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)))
    for mod in (ours, theirs):
        mod.assert_equal(TREE, "same everywhere")
        mod.sync_global_devices("step 1")
    mesh, spec = _mesh(), jax.sharding.PartitionSpec("x")
    tree = {"w": X, "v": np.arange(4, dtype=np.float32)}
    for convert in ("host_local_array_to_global_array", "global_array_to_host_local_array"):
        got = getattr(ours, convert)(tree, mesh, spec)
        want = getattr(theirs, convert)(tree, mesh, spec)
        assert_trees_match(got, want)
        assert all(a.sharding.is_equivalent_to(b.sharding, a.ndim) for a, b in zip(
            jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)))
    # under a trace the value goes through unchanged, as JAX's rule does
    traced = minijax.jit(lambda t: ours.host_local_array_to_global_array(
        t, mesh, {"w": spec, "v": jax.sharding.PartitionSpec()}))(tree)
    assert_trees_match(traced, tree)
    assert_raises_as_jax(lambda mod: mod.experimental.multihost_utils.
                         host_local_array_to_global_array(tree, mesh, None))


def test_deprecated_pjit_and_shard_map_warn_and_work_as_jaxs():
    import minijax.experimental.pjit as mpjit
    import jax.experimental.pjit as jpjit
    for mod in (mpjit, jpjit):
        with pytest.warns(DeprecationWarning, match="pjit has been deprecated"):
            pjit = mod.pjit
        np.testing.assert_array_equal(pjit(lambda x: x * 2, static_argnums=())(X), X * 2)
    for name in ("minijax.experimental.shard_map", "jax.experimental.shard_map"):
        sys.modules.pop(name, None)
        with pytest.warns(DeprecationWarning, match="shard_map is deprecated"):
            shard_map = importlib.import_module(name).shard_map
        mapped = shard_map(lambda a: a * 2 + minijax.lax.axis_index("x")
                           if name.startswith("minijax") else a * 2 + jax.lax.axis_index("x"),
                           _mesh(), jax.sharding.PartitionSpec("x"),
                           jax.sharding.PartitionSpec("x"), check_rep=False)
        np.testing.assert_array_equal(mapped(X), X * 2)


def test_compilation_cache_is_jaxs(tmp_path):
    cc = minijax.experimental.compilation_cache.compilation_cache
    before = jax.config.jax_compilation_cache_dir
    try:
        cc.set_cache_dir(str(tmp_path))
        assert jax.config.jax_compilation_cache_dir == str(tmp_path)
        cc.reset_cache()
    finally:
        cc.set_cache_dir(before)
        cc.reset_cache()
    assert jax.config.jax_compilation_cache_dir == before


def test_profiler_traces_minijax_programs(tmp_path):
    assert sorted(minijax.profiler.__all__) == sorted(
        n for n in dir(jax.profiler) if not n.startswith("_"))
    step = minijax.profiler.annotate_function(minijax.jit(lambda x: minijax.numpy.sin(x) * 2))
    with minijax.profiler.trace(str(tmp_path)):
        with minijax.profiler.StepTraceAnnotation("train", step_num=1):
            with minijax.profiler.TraceAnnotation("forward"):
                out = step(X)
    np.testing.assert_allclose(out, np.sin(X) * 2, rtol=1e-6)
    written = [f for _, _, files in os.walk(tmp_path) for f in files]
    assert any(f.endswith(".xplane.pb") for f in written), written
    assert isinstance(minijax.profiler.device_memory_profile(), bytes)


def test_dlpack_exchanges_minijax_arrays():
    with on_cpu():      # NumPy takes a DLPack tensor from host memory only
        array = minijax.numpy.arange(4.0)
    back = minijax.dlpack.from_dlpack(np.arange(3, dtype=np.int32))
    assert isinstance(back, jax.Array) and back.dtype == np.int32
    np.testing.assert_array_equal(np.from_dlpack(array), np.arange(4.0))
    assert minijax.dlpack.is_supported_dtype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert minijax.numpy.sum(minijax.dlpack.from_dlpack(np.ones(3, np.float32))) == 3
