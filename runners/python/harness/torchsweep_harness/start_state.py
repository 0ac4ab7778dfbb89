"""The shared starting point (docs/frameworks.md): a job's initial weights
and reference batch, safetensors files in PyTorch's names and layouts that
torchsweep-worker writes (--write-initial-weights, --write-reference-batch).
Read here as numpy arrays, checked against the job; a framework converts
them to its own layouts."""
from safetensors.numpy import load_file

from .contract import model_entry


def reads_tokens(job):
    """Whether the job's model is a language model: token ids in, logits
    over them at every position out (schemas/models.json's inputs)."""
    return model_entry(job["model"])["inputs"] == "tokens"


def torch_sample_shape(job):
    """One input sample in PyTorch's layout (NCHW images), without the batch:
    the torch-compile runner's inputs and the reference batch's."""
    if job["model"] == "mlp":
        return (job["input_size"],)
    if job["model"] == "transformer":
        return (job["seq_len"], job["width"])
    if reads_tokens(job):
        return (job["seq_len"],)  # token ids
    return (3, job["input_size"], job["input_size"])


def _load(job, field):
    try:
        return load_file(job[field])
    except Exception as error:  # noqa: BLE001 - any unreadable file fails the job, naming it
        raise RuntimeError(f"{field}: {job[field]}: {error}") from error


def initial_weights(job):
    """{state_dict name: array} of the job's initial_weights, or None."""
    return _load(job, "initial_weights") if job.get("initial_weights") else None


def reference_batch(job):
    """(inputs float32 in PyTorch's layout, targets int64 [batch]) of the
    job's reference_batch, or None; a language model's: token ids and the
    next ids, both int64 [batch, seq_len]."""
    if not job.get("reference_batch"):
        return None
    tensors, origin = _load(job, "reference_batch"), f"reference_batch: {job['reference_batch']}"
    if "inputs" not in tensors or "targets" not in tensors:
        raise RuntimeError(f"{origin}: needs tensors 'inputs' and 'targets', has {sorted(tensors)}")
    tokens = reads_tokens(job)
    inputs, targets = tensors["inputs"].astype("int64" if tokens else "float32"), tensors["targets"].astype("int64")
    expected = (job["batch_size"],) + torch_sample_shape(job)
    if inputs.shape != expected:
        raise RuntimeError(f"{origin}: inputs have shape {list(inputs.shape)}, the job needs {list(expected)} "
                           "(batch_size and the model's sample shape)")
    target_shape = expected if tokens else (job["batch_size"],)
    if targets.shape != target_shape:
        raise RuntimeError(f"{origin}: targets have shape {list(targets.shape)}, the job needs {list(target_shape)}")
    classes = job.get("vocab") if tokens else job["num_classes"]
    for what, indices in (("token ids", inputs), ("token ids", targets)) if tokens else (("targets", targets),):
        if indices.min() < 0 or (classes is not None and indices.max() >= classes):
            raise RuntimeError(f"{origin}: {what} must be {'' if tokens else 'class indices '}in [0, {classes})")
    return inputs, targets


def execution_fields(job):
    """What the result's execution records of the starting point."""
    return {"initial_weights": job.get("initial_weights"), "reference_batch": job.get("reference_batch")}
