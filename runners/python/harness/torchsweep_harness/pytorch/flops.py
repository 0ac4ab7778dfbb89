"""One step's FLOPs counted by PyTorch, for models schemas/models.json has no formula for."""

from .batches import synthetic_batch
from .losses import model_loss
from .models import build_model


def counted_flops(torch, job):
    """One step's FLOPs of a model schemas/models.json has no formula for,
    counted by torch.utils.flop_counter on a copy of the model: built on the
    meta device (no memory, at most half a second for a ViT-B at batch 32),
    or, for a model whose code reads tensor values on the way (BERT's masks
    in transformers 4), on the CPU at batch 1 and scaled to the batch, the
    random numbers of the run left as they were (docs/models.md)."""
    try:
        forward, backward = _step_flops(torch, job, "meta", job["batch_size"])
        batch = job["batch_size"]
    except RuntimeError:
        with torch.random.fork_rng(devices=[]):
            forward, backward = _step_flops(torch, job, "cpu", 1)
        batch = 1
    return {"counter": "torch.utils.flop_counter", "forward_per_sample": forward / batch,
            "per_step": float(forward + backward) * job["batch_size"] / batch}


def _step_flops(torch, job, device, batch_size):
    """(forward, backward) FLOPs of one step of a fresh copy of the model on
    `device` at `batch_size`; the backward is 0 for inference."""
    from torch.utils.flop_counter import FlopCounterMode
    job = dict(job, batch_size=batch_size)
    with torch.device(device):
        model, sample_shape = build_model(torch, job)
        inputs, targets = synthetic_batch(torch, job, model, sample_shape, device)
    train = job["task"] == "train"
    model.train(train)
    with FlopCounterMode(display=False) as forward:
        with torch.set_grad_enabled(train):
            loss = model_loss(torch, model, model(inputs), targets)
    if not train:
        return forward.get_total_flops(), 0
    with FlopCounterMode(display=False) as backward:
        loss.backward()
    return forward.get_total_flops(), backward.get_total_flops()
