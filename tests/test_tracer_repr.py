"""A tracer prints as JAX's tracer for the same job (`JAX_TRACER_NAMES` in
`minijax/ir/trace.py`): the same function, printing its argument inside each
transformation, run on both sides, gives the same text. JAX's spellings are the same on
0.10.2, 0.11.2 and 0.12.0.1, so nothing here branches on the version.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minijax
import minijax.numpy as mjnp
from minijax.experimental import jet as mjet
from jax.experimental import jet


def _seen(lib, np_lib, run):
    """The reprs and strs of what `run` hands to the printing function."""
    seen = []

    def show(x):
        seen.append((repr(x), str(x)))
        return x * 2.0
    run(lib, np_lib, show)
    return seen


# Each case runs `show` inside one transformation (or a nest of them).
CASES = {
    "jit": lambda lib, np_, f: lib.jit(f)(np_.ones(2)),
    "jit_weak_scalar": lambda lib, np_, f: lib.jit(f)(1.0),
    "make_jaxpr": lambda lib, np_, f: lib.make_jaxpr(f)(np_.ones(2, np_.int32)),
    "eval_shape": lambda lib, np_, f: lib.eval_shape(f, np_.ones(2)),
    "scan_body": lambda lib, np_, f: lib.lax.scan(
        lambda c, _: (f(c), None), np_.ones(2), None, length=1),
    "jvp": lambda lib, np_, f: lib.jvp(f, (np_.arange(4.0).reshape(2, 2),),
                                       (np_.ones((2, 2)),)),
    "jvp_in_jit": lambda lib, np_, f: lib.jit(
        lambda x: lib.jvp(f, (x,), (x,)))(np_.ones(2)),
    "grad": lambda lib, np_, f: lib.grad(lambda x: f(x).sum())(np_.ones(3)),
    "grad_in_jit": lambda lib, np_, f: lib.jit(lib.grad(f))(1.0),
    "vjp": lambda lib, np_, f: lib.vjp(f, 1.0),
    "linearize": lambda lib, np_, f: lib.linearize(f, np_.ones(2)),
    "jacrev": lambda lib, np_, f: lib.jacrev(f)(np_.ones(2)),
    "vmap_of_jvp": lambda lib, np_, f: lib.vmap(
        lambda x: lib.jvp(f, (x,), (x,)))(np_.ones((3, 2))),
    "vmap_of_grad": lambda lib, np_, f: lib.vmap(
        lib.grad(lambda x: f(x).sum()))(np_.ones((3, 2))),
    "vmap": lambda lib, np_, f: lib.vmap(f, in_axes=1)(np_.ones((2, 3))),
    "jit_of_vmap": lambda lib, np_, f: lib.jit(lib.vmap(f))(np_.ones((3, 2))),
    "vmap_of_jit": lambda lib, np_, f: lib.vmap(lib.jit(f))(np_.ones((3, 2))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tracer_prints_as_jax(name):
    run = CASES[name]
    assert _seen(minijax, mjnp, run) == _seen(jax, jnp, run)


def test_ref_tracer_and_jet_tracer_print_as_jax():
    def refs(lib, np_):
        seen = []

        def f(x):
            ref = lib.new_ref(x)
            seen.append(repr(ref))
            return ref[...]
        lib.jit(f)(np_.ones(2))
        return seen

    def jets(lib, np_, jet_mod):
        seen = []

        def f(x):
            seen.append(repr(x))
            return x * 2.0
        jet_mod.jet(f, (np_.ones(2),), ((np_.ones(2),),))
        return seen
    assert refs(minijax, mjnp) == refs(jax, jnp) == ["JitTracer(Ref{float32[2]})"]
    assert jets(minijax, mjnp, mjet) == jets(jax, jnp, jet) == ["JetTracer<float32[2]>"]


def test_jacfwd_tracer_is_a_grad_tracer_here():
    """Where minijax's trace differs from JAX's, the repr says which minijax ran:
    its jacfwd linearizes once and maps the linear program over the basis, so the
    function sees a linearize tracer; JAX's jacfwd is vmap of jvp (a JVPTracer whose
    tangent is a VmapTracer)."""
    def run(lib, np_, f):
        return lib.jacfwd(f)(np_.ones(2))
    assert _seen(minijax, mjnp, run) == [("GradTracer(primal=[1. 1.], typeof(tangent)=f32[2])",) * 2]
    assert _seen(jax, jnp, run) == [(
        "JVPTracer(primal=[1. 1.], tangent=VmapTracer(aval=float32[2], "
        "batched=float32[2,2]))",) * 2]


def test_error_messages_show_the_tracer():
    def f(x):
        return x if x > 0 else -x     # (a weak float's comparison is a weak bool)
    with pytest.raises(minijax.errors.TracerBoolConversionError,
                       match=r"abstract tracer, JitTracer\(~bool\[\]\)"):
        minijax.jit(f)(1.0)
    leaked = []
    minijax.jit(lambda x: leaked.append(x) or x)(np.float32(1))
    with pytest.raises(minijax.errors.UnexpectedTracerError,
                       match=r"escaped tracer JitTracer\(float32\[\]\)"):
        mjnp.sin(leaked[0])
