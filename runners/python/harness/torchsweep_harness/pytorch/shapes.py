"""The job's shapes: other batch sizes and sequence lengths through the same
model after the timed epochs (docs/compiler.md)."""

from .. import start_state
from ..errors import InvalidJob
from ..measure import timed
from .batches import synthetic_batch


def check_shapes(job):
    """The job's shapes: a language model may shorten its sequences, no
    other model has a sequence length to change (InvalidJob naming the
    field)."""
    for index, shape in enumerate(job.get("shapes") or []):
        if job["task"] == "generate":
            raise InvalidJob("shapes", "a generation's shapes are its prompt_len and new_tokens; give them as axes")
        if "seq_len" not in shape:
            continue
        if not start_state.reads_tokens(job):
            raise InvalidJob(f"shapes[{index}].seq_len", f"model {job['model']} has no sequence length to vary")
        if shape["seq_len"] > job["seq_len"]:
            raise InvalidJob(f"shapes[{index}].seq_len", f"{shape['seq_len']} is longer than the job's seq_len "
                             f"{job['seq_len']}, which sized the model")


def shape_sweep(torch, experiment, job):
    """The result's shapes (docs/compiler.md): after the timed epochs, each
    of the job's shapes in turn through the same model, compiled or eager:
    its first step, where Dynamo compiles again when its guards do not
    hold for the shape (counted by the guard failures it records), then
    iters steps, each timed with the device synchronised around it."""
    from torch._dynamo.utils import guard_failures

    def failures():
        return sum(len(reasons) for reasons in guard_failures.values())
    measured = []
    for shape in job.get("shapes") or []:
        variant = dict(job, **shape)
        batch = synthetic_batch(torch, variant, experiment.model, experiment.sample_shape, experiment.device)
        before = failures()
        first, _ = timed(experiment.synchronize, lambda: experiment.step(batch))
        steps = [timed(experiment.synchronize, lambda: experiment.step(batch))[0] for _ in range(job["iters"])]
        measured.append({"batch_size": variant["batch_size"],
                         "seq_len": variant["seq_len"] if start_state.reads_tokens(job) else None,
                         "first_step_seconds": first, "step_seconds": steps,
                         "recompilations": failures() - before if experiment.compiled else None})
    return measured
