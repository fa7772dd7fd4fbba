"""`minijax.distributed`: `initialize`, `shutdown`, `is_initialized`, as `jax.distributed`.

minijax runs its programs on JAX's runtime (its devices are `jax.devices()`), so the
distributed system these start and stop is JAX's: a coordinator at
`coordinator_address` for `num_processes` processes. minijax serves the one-process
case, where JAX's own rules apply unchanged: without a coordinator `initialize`
raises JAX's ValueError, it must come before the first computation (JAX's
RuntimeError), `shutdown` before `initialize` does nothing. A run of several
processes is refused with NotImplementedError: `minijax.experimental.multihost_utils`
and the collectives assume the one process.
"""
from __future__ import annotations

import inspect
from typing import Sequence

import jax

__all__ = ["initialize", "shutdown", "is_initialized"]


def initialize(coordinator_address: str | None = None,
               num_processes: int | None = None,
               process_id: int | None = None,
               local_device_ids: int | Sequence[int] | None = None,
               cluster_detection_method: str | None = None,
               initialization_timeout: int = 300,
               heartbeat_timeout_seconds: int = 100,
               shutdown_timeout_seconds: int = 300,
               coordinator_bind_address: str | None = None,
               slice_index: int | None = None,
               partition_index: int | None = None,
               mtls_cert_file: str | None = None,
               mtls_key_file: str | None = None,
               mtls_ca_file: str | None = None,
               mtls_peer_uri_prefix: str | None = None,
               verify_secure_credentials: bool | None = None):
    """Start JAX's distributed system for this one process (`num_processes=1`,
    `process_id=0`, a free `coordinator_address` such as 'localhost:1234'); the
    arguments are JAX's (jax 0.12's: the `mtls_*` ones and `verify_secure_credentials`
    need a JAX that has them)."""
    given = dict(locals())
    if num_processes is not None and num_processes != 1:
        raise NotImplementedError(
            f"minijax.distributed.initialize: num_processes={num_processes}, but minijax "
            f"serves one process (its multihost_utils and collectives assume it); "
            f"pass num_processes=1, process_id=0")
    accepted = inspect.signature(jax.distributed.initialize).parameters
    defaults = inspect.signature(initialize).parameters
    for name, value in given.items():
        if name not in accepted and value != defaults[name].default:
            raise TypeError(f"minijax.distributed.initialize: {name}= needs a newer JAX "
                            f"than the installed {jax.__version__}, whose initialize "
                            f"has no such parameter")
    jax.distributed.initialize(**{k: v for k, v in given.items() if k in accepted})
    if jax.process_count() != 1:        # a cluster found by auto-detection
        count = jax.process_count()
        jax.distributed.shutdown()
        raise NotImplementedError(
            f"minijax.distributed.initialize: the cluster detected has {count} "
            f"processes, but minijax serves one; pass num_processes=1, process_id=0")


def shutdown():
    """Stop the distributed system `initialize` started (nothing if none was)."""
    jax.distributed.shutdown()


def is_initialized() -> bool:
    """Whether `initialize` has run (and `shutdown` not since)."""
    return jax.distributed.is_initialized()
