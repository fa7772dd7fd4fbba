"""`minijax.version` and `minijax.distributed` against JAX's modules of those names."""
import inspect
import subprocess
import sys

import jax
import pytest

import minijax


def test_version_module_holds_the_package_version_as_jax_s_does():
    assert jax.version.__version__ == jax.version._version == jax.__version__
    assert minijax.version.__version__ == minijax.version._version == minijax.__version__
    # the numbers as a tuple, under JAX's names (libraries compare it to pick an API)
    assert jax.__version_info__ == jax.version.__version_info__ == tuple(
        int(p) for p in jax.__version__.split(".")[:3])
    assert minijax.__version_info__ == minijax.version.__version_info__ == tuple(
        int(p) for p in minijax.__version__.split(".")[:3])


def test_distributed_signatures_are_jax_s():
    for name in ("initialize", "shutdown", "is_initialized"):
        mine = inspect.signature(getattr(minijax.distributed, name)).parameters
        theirs = inspect.signature(getattr(jax.distributed, name)).parameters
        # jax 0.10.2's initialize lacks the mtls_* parameters 0.11 added
        assert list(theirs) == list(mine)[:len(theirs)], name
        assert all(theirs[p].default == mine[p].default for p in theirs), name


def test_one_process_without_a_coordinator_as_jax():
    for lib in (jax, minijax):
        assert lib.distributed.is_initialized() is False
        assert lib.distributed.shutdown() is None         # nothing to shut down
    # JAX's refusal: ValueError without a coordinator while no computation has run
    # (the fresh process below), RuntimeError after one
    for kwargs in ({}, {"num_processes": 1, "process_id": 0}):
        raised = []
        for lib in (jax, minijax):
            with pytest.raises((ValueError, RuntimeError)) as error:
                lib.distributed.initialize(**kwargs)
            raised.append((error.type, str(error.value)))
        assert raised[0] == raised[1]
    minijax.numpy.ones(2).block_until_ready()
    for lib in (jax, minijax):
        with pytest.raises(RuntimeError, match="must be called before any JAX calls"):
            lib.distributed.initialize("localhost:1", 1, 0)
    assert minijax.distributed.is_initialized() is False


def test_several_processes_are_refused():
    with pytest.raises(NotImplementedError, match="num_processes=2, but minijax serves one"):
        minijax.distributed.initialize("localhost:1", num_processes=2, process_id=0)


@pytest.mark.skipif("mtls_cert_file" in inspect.signature(jax.distributed.initialize).parameters,
                    reason="only a JAX without the parameter (0.10.2) refuses it")
def test_a_parameter_the_installed_jax_lacks_is_named():
    with pytest.raises(TypeError, match="mtls_cert_file= needs a newer JAX"):
        minijax.distributed.initialize("localhost:1", 1, 0, mtls_cert_file="cert.pem")


def test_initialize_and_shutdown_in_a_fresh_process():
    code = ("import socket, numpy as np, minijax, minijax.distributed as d\n"
            "try:\n"
            "    d.initialize()\n"
            "except ValueError as e:\n"
            "    print(str(e).replace(' ', '_'))\n"
            "s = socket.socket(); s.bind(('localhost', 0)); port = s.getsockname()[1]\n"
            "s.close()\n"
            "d.initialize(f'localhost:{port}', 1, 0, initialization_timeout=30)\n"
            "print(d.is_initialized(), minijax.process_count(),\n"
            "      float(minijax.jit(lambda x: x * 2)(np.float32(3))))\n"
            "d.shutdown(); print(d.is_initialized())\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-5:] == ["coordinator_address_should_be_defined.",
                                          "True", "1", "6.0", "False"]
