"""What the two Keras-based runners (TensorFlow, JAX) share beyond the
harness: building a job's model (keras_models), its optimizer with PyTorch's
update rules, its precision policy and seeded synthetic data, and running
the methodology around a backend's experiment. A backend adds its step,
its synchronisation and its versions (tensorflow_runner.py, jax_runner.py).
"""
import os

from .contract import Framework, Log, Unsupported
from .measure import CyclingBatches, HostClock, RssProbe, measure, prepare


def pin_threads(threads):
    """Intra-op threads, as every runner sets them: XLA's CPU thread pool has
    no public size knob, so the process is confined to `threads` cores before
    the backend makes its pools (docs/frameworks.md)."""
    cores = sorted(os.sched_getaffinity(0))
    if threads < len(cores):
        os.sched_setaffinity(0, cores[:threads])


class KerasExperiment(CyclingBatches):
    """What the backends' experiments share: the job's model, optimizer and
    loss, the figures of its initial weights, and a step that records the
    first loss. A backend sets self.batches (on its device) and gives
    run_step, which runs one step and waits for its output."""

    def __init__(self, framework, job, compiled):
        import numpy as np
        self.job, self.compiled = job, compiled
        self.model, self.sample_shape, self.optimizer, self.loss_of = framework.build(job)
        self.position = 0
        self.train = job["task"] == "train"
        self.parameters = framework.trainable_parameters(self.model)
        self.initial_parameter_l1 = float(sum(
            np.abs(framework.keras.ops.convert_to_numpy(v).astype(np.float64)).sum()
            for v in self.model.trainable_variables))
        # PyTorch's SGD weight decay, an L2 term the backends add to the gradients.
        self.decay = job["weight_decay"] if job["optimizer"] == "sgd" else 0.0
        self.first_loss = None

    def run_step(self, inputs, targets):
        raise NotImplementedError

    def step(self, batch=None):
        inputs, targets = batch if batch is not None else self.next_batch()
        output = self.run_step(inputs, targets)
        if self.first_loss is None:
            self.first_loss = self.loss_value(output, targets)
        return output, targets

    def loss_value(self, output, targets):
        return float(output if self.train else self.loss_of(targets, output))


class KerasFramework(Framework):
    def __init__(self, backend, experiment_class):
        os.environ["KERAS_BACKEND"] = backend
        import keras
        self.keras = keras
        from . import keras_models
        self.models = keras_models
        self.backend, self.experiment_class = backend, experiment_class
        self.log = Log(backend)
        self.threads = None  # the job's, once it runs

    # ---- what a backend adds ----
    def framework_context(self):
        raise NotImplementedError

    def set_threads(self, job):
        pin_threads(job["threads"])

    # ---- shared ----
    def compiler(self, compiled):
        return "xla" if compiled else "none"  # both backends compile the step with XLA

    def experiment(self, job, compiled):
        if job["device"] != "cpu":
            raise Unsupported(f"device {job['device']}: the {self.backend} runner times and measures CPUs only so far")
        return self.experiment_class(self, job, compiled)

    def build(self, job):
        """(model, sample shape, optimizer, loss) of the job, weights seeded."""
        keras = self.keras
        if job["precision"] == "fp16":
            raise Unsupported("fp16 (float16 with loss scaling) runs on CUDA only")
        keras.config.set_dtype_policy("mixed_bfloat16" if job["precision"] == "bf16" else "float32")
        keras.utils.set_random_seed(job["seed"])
        model, sample_shape = self.models.build(job)
        if job["optimizer"] == "adamw":
            # PyTorch's AdamW: decoupled weight decay, eps 1e-8.
            optimizer = keras.optimizers.AdamW(learning_rate=job["lr"], weight_decay=job["weight_decay"],
                                               epsilon=1e-8)
        else:
            # With a constant rate Keras's momentum update equals PyTorch's
            # (v <- mu v + g; w <- w - lr v); its weight decay is decoupled,
            # so the experiments add PyTorch's L2 term to the gradients.
            optimizer = keras.optimizers.SGD(learning_rate=job["lr"], momentum=job["momentum"])
        cross_entropy = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        def loss_of(targets, logits):
            return cross_entropy(targets, keras.ops.cast(logits, "float32"))

        return model, sample_shape, optimizer, loss_of

    def batches(self, job, sample_shape):
        """`data_batches` synthetic (inputs, targets) pairs from seed + 1, as numpy."""
        import numpy as np
        generator = np.random.default_rng(job["seed"] + 1)
        return [(generator.standard_normal((job["batch_size"],) + tuple(sample_shape), dtype=np.float32),
                 generator.integers(0, job["num_classes"], job["batch_size"], dtype=np.int32))
                for _ in range(job["data_batches"])]

    def trainable_parameters(self, model):
        return self.models.trainable_parameters(model)

    def run(self, job, result):
        warnings = result["warnings"]
        if job["gpus"] > 1:
            raise Unsupported(f"gpus = {job['gpus']}: this runner runs one process on one device")
        self.set_threads(job)
        self.threads = job["threads"]
        probe = RssProbe()  # before any model: the process's baseline
        experiment, timing, fallback_reason = prepare(lambda compiled: self.experiment(job, compiled), job, warnings,
                                                      self.log, self.compiler(True))
        epoch_final, memory = measure(experiment, HostClock(), probe, job, timing, warnings)
        ran_compiled = experiment.compiled
        result["execution"] = {
            "task": job["task"], "mode": "compiled" if ran_compiled else "eager",
            "compiler": self.compiler(ran_compiled), "fallback_reason": fallback_reason, "capture_seconds": None,
            "precision": job["precision"], "autocast_dtype": "bfloat16" if job["precision"] == "bf16" else None,
            "device": job["device"], "model_parameters": experiment.parameters,
            "initial_parameter_l1": experiment.initial_parameter_l1,
            "data_layout": "NHWC" if job["model"].startswith("resnet") else None}
        result["timing"] = timing
        result["loss"] = {"first_step": experiment.first_loss, "epoch_final": epoch_final}
        result["memory"] = memory

    def context(self):
        return dict(self.framework_context(), torch_version=None, cuda_version=None, gpu_count=0, gpus=[],
                    intra_op_threads=self.threads or len(os.sched_getaffinity(0)), interop_threads=1)
