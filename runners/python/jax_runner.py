#!@TS_JAX_PYTHON@
"""torchsweep-jax: the JAX runner.

Honours the worker contract of docs/worker.md through the harness every
Python runner shares (torchsweep_harness). What is its own: the models of
schemas/models.json in Keras 3 on the JAX backend (torchsweep_harness.
keras_models, shared with the TensorFlow runner), a functional training step
(Keras's stateless_call, jax.value_and_grad, the optimizer's stateless_apply)
run op by op (eager) or under jax.jit (compiled), and block_until_ready as its
synchronisation; on a GPU, the job's GPU as JAX's default device, memory
allocated as needed and measured by XLA's allocator statistics. Runs in its
own virtual environment (docs/frameworks.md).
"""

import glob
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
# Before JAX starts: allocate GPU memory as needed instead of 75% of it at
# start, so that NVML's process memory is the job's (docs/frameworks.md).
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), os.pardir, "share", "torchsweep",
                                "python"))
from torchsweep_harness import math_policy  # noqa: E402
from torchsweep_harness.contract import run_main  # noqa: E402
from torchsweep_harness.errors import Unsupported  # noqa: E402
from torchsweep_harness.keras_runner import KerasExperiment, KerasFramework, gpu_index  # noqa: E402
from torchsweep_harness.measure import AllocatorProbe  # noqa: E402

RUNNER_NAME = "jax"


class JaxExperiment(KerasExperiment):
    """The step, functionally: the state (trainable, non-trainable and
    optimizer variables) goes in and out of each step, so jax.jit compiles
    the whole step."""

    def __init__(self, framework, job, mode, feed=None):
        super().__init__(framework, job, mode, feed)
        jax = self.jax = framework.jax
        trainable = [v.value for v in self.model.trainable_variables]
        non_trainable = [v.value for v in self.model.non_trainable_variables]
        if self.train:
            self.state = (trainable, non_trainable, [v.value for v in self.optimizer.variables])
        else:
            self.state = (trainable, non_trainable)
        model, optimizer, loss_of = self.model, self.optimizer, self.loss_of
        decay, scaled = self.decay, self.loss_scaled
        scale_at = self.optimizer_index(optimizer.dynamic_scale) if scaled else None

        def scaled_loss_and_state(trainable, non_trainable, scale, inputs, targets):
            logits, non_trainable = model.stateless_call(trainable, non_trainable, inputs, training=True)
            loss = loss_of(targets, logits)
            return (loss * scale if scaled else loss), (loss, non_trainable)

        gradient = jax.value_and_grad(scaled_loss_and_state, has_aux=True)

        def train_step(state, inputs, targets):
            # fp16: the gradients of the scaled loss, unscaled (and the step
            # skipped when one is not finite) by the LossScaleOptimizer.
            trainable, non_trainable, optimizer_state = state
            scale = optimizer_state[scale_at] if scaled else 1.0
            (_, (loss, non_trainable)), grads = gradient(trainable, non_trainable, scale, inputs, targets)
            if decay:
                grads = [g + decay * scale * w for g, w in zip(grads, trainable)]
            trainable, optimizer_state = optimizer.stateless_apply(optimizer_state, grads, trainable)
            return loss, (trainable, non_trainable, optimizer_state)

        def infer_step(state, inputs, targets):
            logits, _ = model.stateless_call(state[0], state[1], inputs, training=False)
            return logits, state

        step = train_step if self.train else infer_step
        self.step_function = jax.jit(step, donate_argnums=0) if mode == "compiled" else step

    def run_step(self, inputs, targets):
        output, self.state = self.step_function(self.state, inputs, targets)
        output.block_until_ready()  # JAX dispatches asynchronously, on a CPU too
        return output

    def accuracy_tensors(self, inputs, targets, compiled):
        import numpy
        jax, model, loss_of, train = self.jax, self.model, self.loss_of, self.train
        trainable, non_trainable = self.state[0], self.state[1]
        names = [f"grad:{variable.path}" for variable in model.trainable_variables]

        def tensors(trainable, non_trainable, inputs, targets):
            if not train:
                return {"output": model.stateless_call(trainable, non_trainable, inputs, training=False)[0]}

            def objective(trainable):
                logits, _ = model.stateless_call(trainable, non_trainable, inputs, training=True)
                return loss_of(targets, logits), logits
            (loss, logits), grads = jax.value_and_grad(objective, has_aux=True)(trainable)
            return dict(zip(names, grads), output=logits, loss=loss)

        run = jax.jit(tensors) if compiled else tensors
        return {name: numpy.asarray(value) for name, value in run(trainable, non_trainable, inputs, targets).items()}

    def optimizer_index(self, variable):
        """Where `variable` is in the optimizer state the steps carry."""
        return [id(v) for v in self.optimizer.variables].index(id(variable))

    def optimizer_values(self, variables):
        return [self.state[2][self.optimizer_index(variable)] for variable in variables]

    def evaluate(self, batch):
        """The eval-mode loss from the current state (the model's own
        variables still hold the initial one)."""
        inputs, targets = batch
        logits, _ = self.model.stateless_call(self.state[0], self.state[1], inputs, training=False)
        return float(self.loss_of(targets, logits))

    def synchronize(self):
        for leaf in self.jax.tree_util.tree_leaves(self.state):
            leaf.block_until_ready()


class JaxProfiler:
    """jax.profiler, as profile_section.traced_steps takes it: XLA's host
    events (its thunks and fusions, the PjRt runtime's) and, on a GPU, the
    device's streams; Python frames only with profile.with_stack. Its own
    Chrome trace (xprof's conversion of the XSpace it records) is the trace."""

    def __init__(self, jax):
        self.jax = jax
        self.name = f"jax.profiler {jax.__version__}"

    def start(self, log_dir, job):
        options = self.jax.profiler.ProfileOptions()
        options.host_tracer_level = 2
        options.python_tracer_level = 1 if job["profile"]["with_stack"] else 0
        self.jax.profiler.start_trace(log_dir, profiler_options=options)

    def stop(self):
        self.jax.profiler.stop_trace()

    def mark(self, name):
        return self.jax.profiler.TraceAnnotation(name)

    def trace(self, log_dir, path):
        found = glob.glob(os.path.join(log_dir, "plugins", "profile", "*", "*.trace.json.gz"))
        if len(found) != 1:
            raise RuntimeError(f"jax.profiler wrote {len(found)} Chrome traces in {log_dir}, not one")
        os.replace(found[0], path)


class Jax(KerasFramework):
    # JAX's compile events (jax.monitoring) and the execution.xla field each sums into.
    COMPILE_EVENTS = {"/jax/core/compile/jaxpr_trace_duration": "trace_seconds",
                      "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower_seconds",
                      "/jax/core/compile/backend_compile_duration": "compile_seconds"}

    def __init__(self):
        super().__init__("jax", JaxExperiment)
        import jax
        import jax.monitoring
        import jaxlib
        self.jax, self.jaxlib = jax, jaxlib
        self.compile_seconds = dict.fromkeys(self.COMPILE_EVENTS.values(), 0.0)
        jax.monitoring.register_event_duration_secs_listener(self.compile_event)

    def compile_event(self, event, duration, **_):
        if event in self.COMPILE_EVENTS:
            self.compile_seconds[self.COMPILE_EVENTS[event]] += duration

    def compile_record(self, experiment):
        # Every compilation of the process: the step's, and eager operations' on the way.
        return dict(self.compile_seconds, compilations=experiment.step_function._cache_size())

    def apply_math_policy(self, job):
        autotune = math_policy.xla_autotune(job)
        if job["tf32"] != "framework":
            precision = "tensorfloat32" if job["tf32"] == "on" else "float32"
            self.jax.config.update("jax_default_matmul_precision", precision)
        # JAX's default precision lets fp32 products and convolutions take TF32 on GPUs that have it.
        tf32 = self.jax.config.jax_default_matmul_precision not in ("float32", "highest")
        return math_policy.record(job, tf32, tf32, autotune)

    def place(self, job):
        jax = self.jax
        if job["device"] == "cpu":
            device = jax.devices("cpu")[0]
        else:
            try:
                gpus = jax.devices("gpu")
            except RuntimeError:  # no GPU platform: a jaxlib without CUDA, or no driver
                gpus = []
            index = gpu_index(job["device"])
            if index >= len(gpus):
                raise Unsupported(f"device {job['device']}: JAX sees {len(gpus)} GPU(s) here"
                                  + ("" if gpus else " (a jaxlib without CUDA: docs/frameworks.md)"))
            device = gpus[index]
        jax.config.update("jax_default_device", device)
        self.device = device

    def allocator_probe(self):
        return AllocatorProbe("xla_allocator", lambda: self.device.memory_stats()["peak_bytes_in_use"])

    def to_device(self, arrays):
        # To the default device (place made it the job's), uncommitted as the
        # model's variables are: arrays committed to a device would give the
        # step a new signature after its first run, and compile it again.
        return tuple(self.jax.device_put(array) for array in arrays)

    def pipeline(self, job, tree, corrupt):
        from torchsweep_harness.grain_pipeline import GrainPipeline
        return GrainPipeline(self.jax.device_put, job, tree, corrupt)

    def profiler(self):
        return JaxProfiler(self.jax)

    def versions(self):
        return {"jax": self.jax.__version__, "jaxlib": self.jaxlib.__version__, "keras": self.keras.__version__}

    def framework_context(self):
        jax = self.jax
        try:
            gpus = [{"index": index, "name": gpu.device_kind,
                     "memory_bytes": (gpu.memory_stats() or {}).get("bytes_limit")}
                    for index, gpu in enumerate(jax.devices("gpu"))]
        except RuntimeError:
            gpus = []
        return {"framework": {"name": "jax", "version": jax.__version__, "backend": jax.default_backend()},
                "gpus": gpus, "cuda_version": None}


if __name__ == "__main__":
    run_main(RUNNER_NAME, Jax)
