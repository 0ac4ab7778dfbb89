"""The torch-compile runner's experiment: the model, its batches and
optimizer, one step eager or compiled (harness measure times it), and the
result's execution section."""

from .. import math_policy, start_state
from ..contract import AUTOCAST_DTYPES
from ..errors import Unsupported
from ..measure import ExperimentBase
from .batches import memory_format, synthetic_batch
from .compile_diagnostics import compile_options
from .library_models import set_dropout
from .losses import model_loss
from .models import build_model
from .profile import name_generated_kernels
from . import weights


class Experiment(ExperimentBase):
    def __init__(self, torch, job, compiled, feed=None):
        self.torch, self.job, self.compiled = torch, job, compiled
        self.device = torch.device(job["device"])
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise Unsupported(f"device {job['device']}: CUDA is not available here")
        if job["precision"] == "fp16" and self.device.type != "cuda":
            raise Unsupported("fp16 (float16 autocast with loss scaling) runs on CUDA only")
        torch.manual_seed(job["seed"])
        self.model, sample_shape = build_model(torch, job)
        self.dropout = set_dropout(self.model, job)
        self.sample_shape = sample_shape
        weights.load(torch, self.model, job)
        self.model.to(self.device)
        # channels_last: cuDNN's tensor-core convolutions run NHWC; weights and inputs in that layout, values
        # unchanged (the same start as contiguous), as the worker does.
        self.layout = memory_format(torch, job)
        images = sample_shape is not None and len(sample_shape) == 3 and not hasattr(self.model, "make_batch")
        if self.layout is torch.channels_last:
            if not images:
                raise Unsupported(f"memory_format channels_last: model {job['model']} takes no images")
            self.model.to(memory_format=torch.channels_last)
        self.data_layout = ("NHWC" if self.layout is torch.channels_last else "NCHW") if images else None
        self.parameters = sum(p.numel() for p in self.model.parameters())
        # As the worker's: the same seed must give the same initial weights.
        self.initial_parameter_l1 = sum(p.detach().double().abs().sum().item() for p in self.model.parameters())
        torch.manual_seed(job["seed"] + 1)
        self.feed = feed
        # A generation makes its own prompts, from this point of the generator as the worker does.
        self.batches = [] if feed or job["task"] == "generate" else [
            self.laid_out(synthetic_batch(torch, job, self.model, sample_shape, self.device))
            for _ in range(job["data_batches"])]
        reference = start_state.reference_batch(job)
        if reference is not None:
            self.reference = self.laid_out(tuple(torch.from_numpy(array).to(self.device) for array in reference))
        self.train = job["task"] == "train"
        self.model.train(self.train)
        if self.train:
            if job["optimizer"] == "adamw":
                self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=job["lr"],
                                                   weight_decay=job["weight_decay"])
            else:
                self.optimizer = torch.optim.SGD(self.model.parameters(), lr=job["lr"], momentum=job["momentum"],
                                                 weight_decay=job["weight_decay"])
        self.autocast_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(job["precision"])
        self.scaler = torch.amp.GradScaler("cuda", init_scale=job["loss_scale_initial"],
                                           growth_interval=job["loss_scale_growth_interval"]) \
            if job["precision"] == "fp16" and self.train else None
        # Steps skipped for inf/nan gradients, counted on the device: read once, after the timed epochs.
        self.skipped_steps = torch.zeros(1, dtype=torch.int64, device=self.device) if self.scaler else None
        self.forward = self.model
        if compiled:
            if job["profile"] is not None:
                name_generated_kernels(torch)
            self.forward = torch.compile(self.model, **compile_options(job))

    def laid_out(self, batch):
        """`batch` with its image inputs in the job's layout."""
        inputs, targets = batch
        return (inputs.contiguous(memory_format=self.layout) if self.data_layout else inputs), targets

    def loss_of(self, output, targets):
        return model_loss(self.torch, self.model, output, targets)

    def step(self, batch=None):
        """One step on `batch` (the next of the cycled batches when None)."""
        torch = self.torch
        inputs, targets = batch if batch is not None else self.next_batch()
        autocast = torch.autocast(self.device.type, dtype=self.autocast_dtype, enabled=self.autocast_dtype is not None)
        if self.train:
            self.optimizer.zero_grad(set_to_none=True)
            with autocast:
                loss = self.loss_of(self.forward(inputs), targets)
            if self.scaler:
                self.scaler.scale(loss).backward()
                self.scaler.step(self.optimizer)
                # A skipped step backs the scale off. Compared on the device: GradScaler.step already waits
                # for the host once a step (as the worker's scaler does), get_scale() would wait twice more.
                scale = self.scaler._scale.clone()
                self.scaler.update()
                self.skipped_steps += self.scaler._scale < scale
            else:
                loss.backward()
                self.optimizer.step()
            output = loss.detach()
        else:
            with torch.no_grad(), autocast:
                output = self.forward(inputs)
        return output, targets

    def evaluate(self, batch):
        """The eval-mode loss of `batch`, through the module as written (an
        eval-mode call of the compiled one would compile again)."""
        inputs, targets = batch
        self.model.eval()
        with self.torch.no_grad():
            loss = float(self.loss_of(self.model(inputs), targets))
        self.model.train(self.train)
        return loss

    def loss_value(self, output, targets):
        with self.torch.no_grad():
            return float(output if self.train else self.loss_of(output, targets))

    def synchronize(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)


def apply_math_policy(torch, job):
    """The job's tf32 and cudnn_benchmark (harness math_policy), set before
    any model; returns execution.math."""
    if job["tf32"] != "framework":
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = job["tf32"] == "on"
    if job["cudnn_benchmark"] != "framework":
        torch.backends.cudnn.benchmark = job["cudnn_benchmark"] == "on"
    return math_policy.record(job, torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
                              torch.backends.cudnn.benchmark)


def execution_section(job, experiment, ran_compiled, fallback_reason, dynamo, math):
    """The result's execution: what ran (`dynamo`: compile_section's, or None
    eager; `math`: apply_math_policy's)."""
    return {"task": job["task"], "mode": "compiled" if ran_compiled else "eager",
            "compiler": job["backend"] if ran_compiled else "none", "fallback_reason": fallback_reason,
            "capture_seconds": None, "precision": job["precision"], "autocast_dtype": AUTOCAST_DTYPES[job["precision"]],
            "device": str(experiment.device), "model_parameters": experiment.parameters,
            "initial_parameter_l1": experiment.initial_parameter_l1, **start_state.execution_fields(job),
            "compile": dynamo, "math": math, "data_layout": experiment.data_layout,
            "dropout": experiment.dropout}
