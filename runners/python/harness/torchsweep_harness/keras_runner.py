"""What the two Keras-based runners (TensorFlow, JAX) share beyond the
harness: building a job's model (keras_models), its optimizer with PyTorch's
update rules, its precision policy (fp16 with Keras's LossScaleOptimizer)
and seeded synthetic data, and running the methodology around a backend's
experiment. A backend adds its step, its synchronisation, its device
placement and memory probe, and its versions (tensorflow_runner.py,
jax_runner.py).
"""
import os

from . import accuracy, data, start_state
from .contract import AUTOCAST_DTYPES, Framework, logger
from .errors import Unsupported
from .measure import ExperimentBase, HostClock, RssProbe, measure, prepare, record_measurements
from .profile_section import traced_steps

# The Keras dtype policy of each job precision: bf16 and fp16 compute with
# float32 variables, as autocast does.
POLICIES = {"fp32": "float32", "bf16": "mixed_bfloat16", "fp16": "mixed_float16"}


def gpu_index(device):
    """The GPU index of a job's CUDA device: cuda is cuda:0."""
    return int(device.partition(":")[2] or 0)


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
        self.job, self.mode, self.feed, self.keras = job, mode, feed, framework.keras
        self.model, self.sample_shape, self.optimizer, self.loss_of = framework.build(job)
        weights = start_state.initial_weights(job)
        if weights is not None:
            framework.models.load_torch_state(self.model, weights, f"initial_weights: {job['initial_weights']}")
        self.train = job["task"] == "train"
        if self.train:
            self.optimizer.build(self.model.trainable_variables)  # its variables exist before the first step
        self.parameters = framework.trainable_parameters(self.model)
        self.initial_parameter_l1 = float(sum(
            np.abs(framework.keras.ops.convert_to_numpy(v).astype(np.float64)).sum()
            for v in self.model.trainable_variables))
        # PyTorch's SGD weight decay, an L2 term the backends add to the gradients.
        self.decay = job["weight_decay"] if job["optimizer"] == "sgd" else 0.0
        # fp16 training: the optimizer is a LossScaleOptimizer (framework.build).
        self.loss_scaled = self.train and job["precision"] == "fp16"
        self.train_steps = 0
        self.batches = [] if feed else [framework.to_device(batch)
                                        for batch in framework.batches(job, self.sample_shape)]
        reference = start_state.reference_batch(job)
        if reference is not None:
            inputs, targets = reference
            if len(inputs.shape) == 4:
                inputs = np.ascontiguousarray(inputs.transpose(0, 2, 3, 1))  # PyTorch's NCHW to Keras's NHWC
            if start_state.reads_tokens(job):
                inputs = inputs.astype(np.int32)
            self.reference = framework.to_device((inputs, targets.astype(np.int32)))

    def run_step(self, inputs, targets):
        raise NotImplementedError

    def optimizer_values(self, variables):
        """The current values of some of the optimizer's variables."""
        raise NotImplementedError

    def accuracy_tensors(self, inputs, targets, compiled):
        """A backend's: one step from the current weights, nothing updated,
        compiled as the job's mode compiles it or eagerly: name -> numpy
        array of its output, and training its loss and gradients
        (grad:VARIABLE_PATH)."""
        raise NotImplementedError

    def accuracy_check(self):
        """The accuracy gate's runs (docs/compiler.md), after the timed
        epochs: one step compiled and one eager on one batch (the reference
        batch where the job has one), random state seeded alike. Keras
        builds a model in one dtype policy, so there is no float64 copy:
        the reference is the eager step at the job's precision."""
        inputs, targets = self.reference if self.reference is not None else (
            self.batches[0] if self.batches else self.next_batch())
        runs = []
        for compiled in (True, False):
            self.keras.utils.set_random_seed(self.job["seed"])
            runs.append(self.accuracy_tensors(inputs, targets, compiled))
        return accuracy.section(runs[0], runs[1], None, "Keras runners: eager at the job's precision is the reference")

    def step(self, batch):
        inputs, targets = batch
        self.train_steps += self.train
        return self.run_step(inputs, targets), targets

    def loss_scaling(self):
        """The result's execution.loss_scaling (None without loss scaling): a
        step whose gradients were not finite was skipped, so the inner
        optimizer did not count it."""
        if not self.loss_scaled:
            return None
        scale, applied = self.optimizer_values([self.optimizer.dynamic_scale, self.optimizer.iterations])
        return {"initial_scale": float(self.job["loss_scale_initial"]), "final_scale": float(scale),
                "skipped_steps": self.train_steps - int(applied)}

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
        self.log = logger(backend)
        self.threads = None  # the job's, once it runs

    # ---- what a backend adds ----
    COMPILERS = {"eager": "none", "compiled": "xla"}  # the result's compiler of each

    def profiler(self):
        """The backend's profiler, as profile_section.traced_steps takes it."""
        raise NotImplementedError

    def framework_context(self):
        """The context's framework, cuda_version and gpus (the GPUs visible)."""
        raise NotImplementedError

    def place(self, job):
        """Puts what follows on the job's device, before the backend starts;
        raises Unsupported for a GPU it does not see."""
        raise NotImplementedError

    def allocator_probe(self):
        """A measure.AllocatorProbe of the backend's allocator on the job's GPU."""
        raise NotImplementedError

    def to_device(self, arrays):
        """numpy arrays as the backend's tensors on its device."""
        raise NotImplementedError

    def compile_record(self, experiment):
        """A backend's: what compiling the step did so far (execution.xla,
        docs/compiler.md): compilations of the step, and the seconds
        spent tracing, lowering and compiling where the backend times them
        (None where it does not)."""
        raise NotImplementedError

    def set_threads(self, job):
        pin_threads(job["threads"])

    def apply_math_policy(self, job):
        """Sets the job's tf32 and cudnn_benchmark (math_policy), before the
        backend starts; returns execution.math."""
        raise NotImplementedError

    def pipeline(self, job, tree, corrupt):
        """imagefolder data the way the backend's users read it (data.Feed's
        pipeline), NHWC batches on the device."""
        raise NotImplementedError

    # ---- shared ----
    def memory_probe(self, job):
        """The job's memory in phases, made before any model."""
        return RssProbe() if job["device"] == "cpu" else self.allocator_probe()

    def experiment(self, job, mode, feed):
        if mode not in self.MODES:
            raise Unsupported(f"mode {mode}: the {self.backend} runner runs " + ", ".join(self.MODES))
        if job["precision"] == "fp16" and job["device"] == "cpu":
            raise Unsupported("fp16 is unsupported on this device (cpu): float16 with dynamic loss scaling runs on "
                              "CUDA; use bf16 on a CPU")
        return self.experiment_class(self, job, mode, feed)

    def build(self, job):
        """(model, sample shape, optimizer, loss) of the job, weights seeded."""
        keras = self.keras
        keras.config.set_dtype_policy(POLICIES[job["precision"]])
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
        if job["precision"] == "fp16":
            # GradScaler's rule (factors 2 and 1/2 fixed by Keras), from the job's scale and interval.
            optimizer = keras.optimizers.LossScaleOptimizer(optimizer, initial_scale=job["loss_scale_initial"],
                                                            dynamic_growth_steps=job["loss_scale_growth_interval"])
        cross_entropy = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        def loss_of(targets, logits):
            return cross_entropy(targets, keras.ops.cast(logits, "float32"))

        return model, sample_shape, optimizer, loss_of

    def batches(self, job, sample_shape):
        """`data_batches` synthetic (inputs, targets) pairs from seed + 1, as
        numpy; a language model's, token ids and the next ids."""
        import numpy as np
        generator = np.random.default_rng(job["seed"] + 1)
        if start_state.reads_tokens(job):
            ids = [generator.integers(0, job["vocab"], (job["batch_size"], job["seq_len"] + 1), dtype=np.int32)
                   for _ in range(job["data_batches"])]
            return [(batch[:, :-1].copy(), batch[:, 1:].copy()) for batch in ids]
        return [(generator.standard_normal((job["batch_size"],) + tuple(sample_shape), dtype=np.float32),
                 generator.integers(0, job["num_classes"], job["batch_size"], dtype=np.int32))
                for _ in range(job["data_batches"])]

    def trainable_parameters(self, model):
        return self.models.trainable_parameters(model)

    def run(self, job, result):
        self.threads = job["threads"]  # as resolved: the context says it even for a job refused below
        warnings = result["warnings"]
        if job["task"] not in self.TASKS:
            raise Unsupported(f"task {job['task']}: this runner's Keras models have no key/value-cached decode step "
                              "(a Keras decoder generates through keras_hub's CausalLM, not this runner's model); the "
                              "PyTorch runners generate (docs/language-models.md)")
        if job["gpus"] > 1:
            raise Unsupported(f"gpus = {job['gpus']}: this runner runs one process on one device")
        self.set_threads(job)  # before the backend starts (place starts it)
        math = self.apply_math_policy(job)
        self.place(job)
        probe = self.memory_probe(job)  # before any model: the process's baseline
        # One pipeline, whatever mode the experiment ends up in.
        feed = data.Feed(job, lambda tree, corrupt: self.pipeline(job, tree, corrupt)) if data.reads_folder(job) \
            else None
        experiment, timing, losses, fallback_reason = prepare(
            lambda mode: self.experiment(job, mode, feed), job, warnings, self.log,
            self.COMPILERS.get(job["mode"], job["mode"]))
        # TensorFlow and JAX have no event timer: on a GPU each step waits for its
        # output (run_step), so the epoch holds each step's launch gap too.
        clock = HostClock(name="steady_clock" if job["device"] == "cpu" else "steady_clock_step_sync",
                          synchronize=experiment.synchronize)
        compiling = experiment.mode != "eager"
        warmed = self.compile_record(experiment) if compiling else None
        epoch_final, memory, data_report = measure(experiment, clock, probe, job, timing)
        xla = None
        if compiling:
            # What the warm-up compiled, and whether the timed epochs compiled again.
            after = self.compile_record(experiment)
            xla = dict(warmed, recompilations_in_timed_epochs=after["compilations"] - warmed["compilations"])
            if xla["recompilations_in_timed_epochs"]:
                warnings.append(f"the step compiled again {xla['recompilations_in_timed_epochs']} time(s) in the "
                                "timed epochs: their times include compiling")
        if job["profile"]:  # after the timed epochs and their compile count, before the gate's steps

            def profiled_step():
                experiment.step(experiment.next_batch())
                experiment.synchronize()

            result["profile"] = traced_steps(self.profiler(), profiled_step, job, self.beside_result,
                                             job["device"] != "cpu")
        result["execution"] = {
            "task": job["task"], "mode": experiment.mode,
            "compiler": self.COMPILERS[experiment.mode], "fallback_reason": fallback_reason, "capture_seconds": None,
            "precision": job["precision"], "autocast_dtype": AUTOCAST_DTYPES[job["precision"]],
            "loss_scaling": experiment.loss_scaling(),
            "device": job["device"], "model_parameters": experiment.parameters,
            "initial_parameter_l1": experiment.initial_parameter_l1, **start_state.execution_fields(job),
            "data_layout": "NHWC" if job["model"].startswith("resnet") else None, "xla": xla, "math": math}
        if job["mode"] != "eager":
            result["accuracy"] = experiment.accuracy_check() if experiment.mode == job["mode"] else \
                accuracy.skipped(f"fell back to eager: {fallback_reason}")
        record_measurements(result, timing, losses, epoch_final, memory, data_report)

    def context(self):
        context = self.framework_context()
        return dict(context, torch_version=None, gpu_count=len(context["gpus"]),
                    intra_op_threads=self.threads, interop_threads=1)
