"""`minijax.errors` against `jax.errors`: the same public classes in the same
hierarchy, and the same class raised for each common mistake with a traced value.

Each mistake runs through both libraries (`mod` is `minijax` or `jax`). Where JAX
raises one of its named classes, minijax must raise the class of that name; where JAX
raises a builtin exception, minijax must raise an instance of it (minijax's own class
may be more specific). No case compiles a program: each fails while tracing."""
import jax
import numpy as np
import pytest

import minijax

# Classes of `jax.errors` minijax leaves out: symbolic shapes only (see minijax.errors).
NOT_IN_MINIJAX = {"InconclusiveDimensionOperation"}


def _public_classes(module):
    return {name: getattr(module, name) for name in dir(module)
            if not name.startswith("_") and isinstance(getattr(module, name), type)}


def test_the_public_classes_are_jax_s():
    ours, theirs = _public_classes(minijax.errors), _public_classes(jax.errors)
    assert set(ours) == set(theirs) - NOT_IN_MINIJAX
    assert set(minijax.errors.__all__) == set(ours)


@pytest.mark.parametrize("name", sorted(set(_public_classes(jax.errors)) - NOT_IN_MINIJAX))
def test_each_class_has_jax_s_ancestors(name):
    def ancestors(cls, names):
        # the public and builtin classes above `cls` (JAX's private mixin left out)
        return [c.__name__ for c in cls.__mro__[1:]
                if c.__name__ in names or c.__module__ == "builtins"]
    ours, theirs = getattr(minijax.errors, name), getattr(jax.errors, name)
    public = set(_public_classes(jax.errors))
    assert ancestors(ours, public) == ancestors(theirs, public)
    assert issubclass(ours, minijax.MinijaxError) or ours is theirs


def test_jax_runtime_error_is_the_runtime_s_own():
    # minijax's programs run as jax.jit executables: their run-time failures are JAX's
    assert minijax.errors.JaxRuntimeError is jax.errors.JaxRuntimeError


_leaked = []


def _store(value):
    _leaked.append(value)
    return value


MISTAKES = {
    "bool_under_jit": lambda m: m.jit(lambda v: 1 if v > 0 else 0)(1.0),
    "bool_under_vmap": lambda m: m.vmap(lambda v: 1 if v > 0 else 0)(np.ones(2, np.float32)),
    "int": lambda m: m.jit(lambda v: int(v))(1.0),
    "float": lambda m: m.jit(lambda v: float(v))(1.0),
    "complex": lambda m: m.jit(lambda v: complex(v))(1.0),
    "item": lambda m: m.jit(lambda v: v.item())(1.0),
    "tolist": lambda m: m.jit(lambda v: v.tolist())(np.ones(2, np.float32)),
    "range": lambda m: m.jit(lambda v: range(v))(3),
    "list_index": lambda m: m.jit(lambda v: [1, 2][v])(0),
    "np_asarray": lambda m: m.jit(lambda v: np.asarray(v))(np.ones(2, np.float32)),
    "numpy_function": lambda m: m.jit(lambda v: np.sin(v))(np.ones(2, np.float32)),
    "mask_index": lambda m: m.jit(lambda v: v[v > 0])(np.ones(2, np.float32)),
    "mask_update": lambda m: m.jit(lambda v: v.at[v > 0].set(0.0))(np.ones(2, np.float32)),
    "traced_slice_bound": lambda m: m.jit(lambda v, i: v[i:])(np.ones(3, np.float32), 1),
    "nonzero": lambda m: m.jit(lambda v: m.numpy.nonzero(v))(np.ones(2, np.float32)),
    "arange": lambda m: m.jit(lambda n: m.numpy.arange(n))(3),
    "traced_shape": lambda m: m.jit(lambda n: m.numpy.zeros(n))(3),
    "traced_slice_size": lambda m: m.jit(
        lambda v, n: m.lax.dynamic_slice(v, (0,), (n,)))(np.ones(3, np.float32), 2),
    "leak_from_jit": lambda m: (m.jit(_store)(1.0), m.numpy.sin(_leaked[-1])),
    "leak_from_grad": lambda m: (m.grad(_store)(1.0), m.numpy.sin(_leaked[-1])),
    "leak_from_vmap": lambda m: (m.vmap(_store)(np.ones(2, np.float32)),
                                 m.numpy.sin(_leaked[-1])),
    # A reduction's axis must be static: JAX's ConcretizationTypeError, not a TypeError.
    "traced_axis_sum": lambda m: m.jit(lambda v, a: m.numpy.sum(v, axis=a))(
        np.ones(2, np.float32), 0),
    "traced_axis_max": lambda m: m.jit(lambda v, a: v.max(axis=a))(np.ones(2, np.float32), 0),
    "traced_axis_softmax": lambda m: m.jit(lambda v, a: m.nn.softmax(v, axis=a))(
        np.ones(2, np.float32), 0),
    "traced_split_sections": lambda m: m.jit(lambda n: m.numpy.split(m.numpy.ones(4), n))(2),
    "grad_of_while_loop": lambda m: m.grad(
        lambda x: m.lax.while_loop(lambda c: c < 10, lambda c: c * 2, x))(1.0),
}


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_each_mistake_raises_jax_s_class(mistake):
    raised = []
    for mod in (minijax, jax):
        with pytest.raises(Exception) as info:
            MISTAKES[mistake](mod)
        raised.append(info.value)
    ours, theirs = raised
    if type(theirs).__module__ == "jax.errors":
        assert type(ours).__name__ == type(theirs).__name__, (ours, theirs)
        assert isinstance(ours, getattr(minijax.errors, type(theirs).__name__))
    else:
        assert isinstance(ours, type(theirs)), (ours, theirs)
    assert isinstance(ours, minijax.MinijaxError)


def test_the_message_names_the_mistake():
    with pytest.raises(minijax.errors.TracerBoolConversionError, match="bool()"):
        minijax.jit(lambda v: 1 if v > 0 else 0)(1.0)
    with pytest.raises(minijax.errors.NonConcreteBooleanIndexError, match="jnp.where"):
        minijax.jit(lambda v: v[v > 0])(np.ones(2, np.float32))
    with pytest.raises(minijax.errors.ConcretizationTypeError,
                       match="axis argument must be known statically"):
        minijax.jit(lambda v, a: minijax.numpy.sum(v, axis=a))(np.ones(2, np.float32), 0)
    with pytest.raises(minijax.errors.UnexpectedTracerError, match="escaped tracer"):
        minijax.grad(_store)(1.0)
        minijax.numpy.sin(_leaked[-1])
