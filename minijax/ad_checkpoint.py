"""`minijax.ad_checkpoint`: `jax.ad_checkpoint`'s names -- `checkpoint`/`remat`,
`checkpoint_name`, `checkpoint_policies`, `saved_residuals` and
`print_saved_residuals`, the policies' `Offloadable`/`Recompute`/`Saveable` -- and
minijax's checkpointed loops (`checkpointed_scan`, `checkpointed_while_loop`,
`checkpoint_schedule`).

As JAX's, this module is imported by name (`import minijax.ad_checkpoint`):
`import minijax` alone does not make `minijax.ad_checkpoint` an attribute, so a
program that works here works on JAX too. The code is in `frontend/checkpoint.py`.
"""
import importlib as _importlib

# The policies' markers are JAX's own objects, so a policy written for either library
# answers with the same ones. (Imported here, where a program imports this module by
# name as it would `jax.ad_checkpoint`, not with `import minijax`.)
from jax.ad_checkpoint import Offloadable, Recompute, Saveable
from .frontend.checkpoint import (checkpoint, checkpoint_name, checkpoint_policies,
                                  checkpoint_schedule, checkpointed_scan,
                                  checkpointed_while_loop, print_saved_residuals,
                                  remat, saved_residuals)

__all__ = ["checkpoint", "remat", "checkpoint_name", "saved_residuals",
           "print_saved_residuals", "checkpoint_policies", "checkpointed_scan",
           "checkpointed_while_loop", "checkpoint_schedule", "Offloadable", "Recompute",
           "Saveable"]


def __getattr__(name):  # JAX's primitive objects (`name_p`): their table loads on first use
    if not name.endswith("_p"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _importlib.import_module("minijax.lax.primitives").lookup(__name__, name)


def __dir__():  # the module's names and JAX's primitive names it answers
    return _importlib.import_module("minijax.lax.primitives").module_dir(__name__, globals())
