"""The accuracy gate's measurements (docs/compiler.md), once for every
Python runner: for each output, loss and gradient of one step run compiled
and eager from the same weights and batch, the figures the agent's rule
(agent/judge/accuracy_gate.hpp) judges. The runner measures; whether that is
a pass is decided once, in C++, for every runner alike."""
import numpy


def _finite_pair(compiled, eager):
    finite_compiled, finite_eager = numpy.isfinite(compiled), numpy.isfinite(eager)
    return finite_compiled & finite_eager, int(numpy.count_nonzero(finite_compiled != finite_eager))


def _rmse(values, reference):
    return float(numpy.sqrt(numpy.mean(numpy.square(values - reference)))) if values.size else 0.0


def tensor_figures(name, compiled, eager, reference=None):
    """One compared tensor (numpy arrays of one shape; `reference` the
    float64 eager run's, or None): the largest difference from eager in
    units of allclose's scale (|compiled - eager| / (1 + |eager|), so
    allclose(atol=rtol=tol) holds iff it is <= tol), their cosine
    similarity, the positions where only one of them is finite, and each
    one's RMSE from the float64 reference."""
    compiled = numpy.asarray(compiled, dtype=numpy.float64).reshape(-1)
    eager = numpy.asarray(eager, dtype=numpy.float64).reshape(-1)
    if compiled.shape != eager.shape:
        raise ValueError(f"accuracy: {name}: compiled has {compiled.size} values, eager {eager.size}")
    both, nonfinite = _finite_pair(compiled, eager)
    compiled_finite, eager_finite = compiled[both], eager[both]
    scaled = numpy.abs(compiled_finite - eager_finite) / (1.0 + numpy.abs(eager_finite))
    norms = float(numpy.linalg.norm(compiled_finite) * numpy.linalg.norm(eager_finite))
    figures = {"name": name, "numel": int(compiled.size), "nonfinite_mismatches": nonfinite,
               "max_scaled_difference": float(scaled.max()) if scaled.size else 0.0,
               "cosine": float(numpy.dot(compiled_finite, eager_finite) / norms) if norms > 0 else None,
               "compiled_rmse": None, "eager_rmse": None}
    if reference is not None:
        reference = numpy.asarray(reference, dtype=numpy.float64).reshape(-1)
        kept = both & numpy.isfinite(reference)
        figures["compiled_rmse"] = _rmse(compiled[kept], reference[kept])
        figures["eager_rmse"] = _rmse(eager[kept], reference[kept])
    return figures


def section(compiled, eager, reference=None, reference_note=None):
    """The result's `accuracy` section from three runs of one step, each a
    dict of name -> numpy array (the same names; `reference` the float64
    run's, or None when it could not be afforded, `reference_note` saying
    why)."""
    missing = sorted(set(eager) ^ set(compiled))
    if missing:
        raise ValueError(f"accuracy: compiled and eager steps gave different tensors: {', '.join(missing)}")
    tensors = [tensor_figures(name, compiled[name], eager[name], None if reference is None else reference[name])
               for name in eager]
    return {"reference": "float64" if reference is not None else "eager", "reference_note": reference_note,
            "tensors": tensors}


def skipped(reason):
    """The section of a compiled job whose step was not compared."""
    return {"skipped": reason}
