"""What the two Keras-based runners (TensorFlow, JAX) share beyond the
harness: building a job's model (keras_models), its optimizer with PyTorch's
update rules, its precision policy and seeded synthetic data, and running
the methodology around a backend's experiment. A backend adds its step,
its synchronisation and its versions (tensorflow_runner.py, jax_runner.py).
"""
import os

from .contract import Framework, Log, Unsupported
from .measure import HostClock, RssProbe, measure, prepare


def pin_threads(threads):
    """Intra-op threads, as every runner sets them: XLA's CPU thread pool has
    no public size knob, so the process is confined to `threads` cores before
    the backend makes its pools (docs/frameworks.md)."""
    cores = sorted(os.sched_getaffinity(0))
    if threads < len(cores):
        os.sched_setaffinity(0, cores[:threads])


class KerasFramework(Framework):
    def __init__(self, backend):
        os.environ["KERAS_BACKEND"] = backend
        import keras
        self.keras = keras
        from . import keras_models
        self.models = keras_models
        self.log = Log(backend)

    # ---- what a backend adds ----
    def compiler(self, compiled):
        raise NotImplementedError

    def experiment(self, job, compiled):
        raise NotImplementedError

    def framework_context(self):
        raise NotImplementedError

    def set_threads(self, job):
        pin_threads(job["threads"])

    # ---- shared ----
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
        self.threads = job["threads"]

    def context(self):
        threads = len(os.sched_getaffinity(0))
        return dict(self.framework_context(), torch_version=None, cuda_version=None, gpu_count=0, gpus=[],
                    intra_op_threads=getattr(self, "threads", threads), interop_threads=1)
