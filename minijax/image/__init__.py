"""`minijax.image`: image resampling as `jax.image` has it (`resize`,
`scale_and_translate`, `ResizeMethod`), written with `minijax.numpy`
(`image/_scale.py`), so it traces, jits, differentiates and batches like any other
minijax code."""
from ._scale import ResizeMethod, resize, scale_and_translate  # noqa: F401
