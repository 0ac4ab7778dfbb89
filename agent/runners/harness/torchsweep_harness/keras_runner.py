"""What the two Keras-based runners (TensorFlow, JAX) share beyond the
harness: building a job's model (keras_models), its optimizer with PyTorch's
update rules, its precision policy and seeded synthetic data, and running
the methodology around a backend's experiment. A backend adds its step,
its synchronisation and its versions (tensorflow_runner.py, jax_runner.py).
"""
import os

from . import data, start_state
from .contract import Framework, Log, Unsupported
from .measure import ExperimentBase, HostClock, RssProbe, measure, prepare


def pin_threads(threads):
    """Intra-op threads, as every runner sets them: XLA's CPU thread pool has
    no public size knob, so the process is confined to `threads` cores before
    the backend makes its pools (docs/frameworks.md)."""
    cores = sorted(os.sched_getaffinity(0))
    if threads < len(cores):
        os.sched_setaffinity(0, cores[:threads])


class KerasExperiment(ExperimentBase):
    """What the backends' experiments share: the job's model (from the
    initial-weights file when the job names one), optimizer and loss, the
    figures of its initial weights, and its batches on the device. A backend
    gives run_step, which runs one step and waits for its output."""

    def __init__(self, framework, job, mode, feed=None):
        import numpy as np
        self.job, self.mode, self.feed = job, mode, feed
        self.model, self.sample_shape, self.optimizer, self.loss_of = framework.build(job)
        weights = start_state.initial_weights(job)
        if weights is not None:
            framework.models.load_torch_state(self.model, weights, f"initial_weights: {job['initial_weights']}")
        self.train = job["task"] == "train"
        self.parameters = framework.trainable_parameters(self.model)
        self.initial_parameter_l1 = float(sum(
            np.abs(framework.keras.ops.convert_to_numpy(v).astype(np.float64)).sum()
            for v in self.model.trainable_variables))
        # PyTorch's SGD weight decay, an L2 term the backends add to the gradients.
        self.decay = job["weight_decay"] if job["optimizer"] == "sgd" else 0.0
        self.batches = [] if feed else [framework.to_device(batch)
                                        for batch in framework.batches(job, self.sample_shape)]
        reference = start_state.reference_batch(job)
        if reference is not None:
            inputs, targets = reference
            if len(inputs.shape) == 4:
                inputs = np.ascontiguousarray(inputs.transpose(0, 2, 3, 1))  # PyTorch's NCHW to Keras's NHWC
            self.reference = framework.to_device((inputs, targets.astype(np.int32)))

    def run_step(self, inputs, targets):
        raise NotImplementedError

    def step(self, batch):
        inputs, targets = batch
        return self.run_step(inputs, targets), targets

    def loss_value(self, output, targets):
        return float(output if self.train else self.loss_of(targets, output))

    def evaluate(self, batch):
        inputs, targets = batch
        return float(self.loss_of(targets, self.model(inputs, training=False)))


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
    PRECISIONS = ("fp32", "bf16")  # fp16 with loss scaling needs a GPU, which these runners do not run yet
    COMPILERS = {"eager": "none", "compiled": "xla"}  # the result's compiler of each

    def framework_context(self):
        raise NotImplementedError

    def to_device(self, arrays):
        """numpy arrays as the backend's tensors on its device."""
        raise NotImplementedError

    def set_threads(self, job):
        pin_threads(job["threads"])

    def pipeline(self, job, tree, corrupt):
        """imagefolder data the way the backend's users read it (data.Feed's
        pipeline), NHWC batches on the device."""
        raise NotImplementedError

    # ---- shared ----
    def experiment(self, job, mode, feed):
        if job["device"] != "cpu":
            raise Unsupported(f"device {job['device']}: the {self.backend} runner times and measures CPUs only so far")
        if mode not in self.MODES:
            raise Unsupported(f"mode {mode}: the {self.backend} runner runs " + ", ".join(self.MODES))
        return self.experiment_class(self, job, mode, feed)

    def build(self, job):
        """(model, sample shape, optimizer, loss) of the job, weights seeded."""
        keras = self.keras
        if job["precision"] == "fp16":
            raise Unsupported(f"fp16 is unsupported on this device ({job['device']}): float16 with loss scaling "
                              "runs on CUDA only, which this runner does not run yet")
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
        # One pipeline, whatever mode the experiment ends up in.
        feed = data.Feed(job, lambda tree, corrupt: self.pipeline(job, tree, corrupt)) if data.reads_folder(job) \
            else None
        experiment, timing, losses, fallback_reason = prepare(
            lambda mode: self.experiment(job, mode, feed), job, warnings, self.log,
            self.COMPILERS.get(job["mode"], job["mode"]))
        epoch_final, memory, data_report = measure(experiment, HostClock(), probe, job, timing, warnings)
        result["execution"] = {
            "task": job["task"], "mode": experiment.mode,
            "compiler": self.COMPILERS[experiment.mode], "fallback_reason": fallback_reason, "capture_seconds": None,
            "precision": job["precision"], "autocast_dtype": "bfloat16" if job["precision"] == "bf16" else None,
            "device": job["device"], "model_parameters": experiment.parameters,
            "initial_parameter_l1": experiment.initial_parameter_l1, **start_state.execution_fields(job),
            "data_layout": "NHWC" if job["model"].startswith("resnet") else None}
        result["timing"] = timing
        result["loss"] = dict(losses, epoch_final=epoch_final)
        result["memory"] = memory
        if data_report:
            result["data"] = data_report

    def context(self):
        return dict(self.framework_context(), torch_version=None, cuda_version=None, gpu_count=0, gpus=[],
                    intra_op_threads=self.threads or len(os.sched_getaffinity(0)), interop_threads=1)
