#!@TS_TENSORFLOW_PYTHON@
"""torchsweep-tensorflow: the TensorFlow runner.

Honours the worker contract of docs/worker.md through the harness every
Python runner shares (torchsweep_harness). What is its own: the models of
schemas/models.json in Keras 3 on the TensorFlow backend
(torchsweep_harness.keras_models, shared with the JAX runner), a training
step with tf.GradientTape run eagerly (eager), as a TensorFlow graph under
tf.function (graph) or as one XLA cluster under tf.function(jit_compile=True)
(compiled), and reading the loss back as its synchronisation; on a GPU, the
one GPU of the job made the only visible one, its memory grown as needed and
measured by TensorFlow's allocator statistics. Runs in its own virtual
environment (docs/frameworks.md).
"""

import glob
import gzip
import json
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow's start-up banner is not a warning of ours
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), os.pardir, "share", "torchsweep",
                                "python"))
from torchsweep_harness import data, math_policy  # noqa: E402
from torchsweep_harness.contract import run_main  # noqa: E402
from torchsweep_harness.errors import Unsupported  # noqa: E402
from torchsweep_harness.keras_runner import KerasExperiment, KerasFramework, gpu_index  # noqa: E402
from torchsweep_harness.measure import AllocatorProbe  # noqa: E402

RUNNER_NAME = "tensorflow"


class TfDataPipeline:
    """imagefolder data as TensorFlow's users read it: tf.data with parallel
    decoding (num_parallel_calls = loader_workers) and prefetch, the
    ImageNet training transforms of schemas/transforms.json in tf.image
    (sample_distorted_bounding_box, antialiased bilinear resize, flip), each
    pass its own seeded shuffle. A file that does not decode as JPEG is
    dropped by ignore_errors() and found missing at the end of its pass
    (batches carry their indices): counted then, or the job fails naming it."""
    name = "tf.data"

    def __init__(self, tf, job, tree, corrupt):
        self.tf, self.job, self.tree, self.corrupt = tf, job, tree, corrupt
        self.workers, self.prefetch = job["loader_workers"], job["prefetch"]
        self.paths = tf.constant([path for path, _ in tree.samples])
        self.labels = tf.constant([label for _, label in tree.samples], dtype=tf.int32)

    def dataset(self, epoch):
        tf, job = self.tf, self.job
        figures = data.transforms()
        crop, normalize, side = figures["random_resized_crop"], figures["normalize"], job["input_size"]
        mean, std = tf.constant(normalize["mean"]), tf.constant(normalize["std"])

        def load(index):
            contents = tf.io.read_file(tf.gather(self.paths, index))
            # decode_jpeg also decodes PNG and GIF: a file that is not a JPEG is corrupt here as everywhere.
            with tf.control_dependencies([tf.debugging.Assert(tf.io.is_jpeg(contents), ["not a JPEG image"])]):
                image = tf.io.decode_jpeg(contents, channels=3)
            seed = tf.stack([tf.cast(job["seed"] + epoch, tf.int64), index])
            begin, size, _ = tf.image.stateless_sample_distorted_bounding_box(
                tf.shape(image), bounding_boxes=tf.constant([[[0.0, 0.0, 1.0, 1.0]]]), seed=seed,
                min_object_covered=0.0, aspect_ratio_range=crop["ratio"], area_range=crop["scale"],
                max_attempts=crop["attempts"], use_image_if_no_bounding_boxes=True)
            image = tf.image.resize(tf.slice(image, begin, size), [side, side], method="bilinear", antialias=True)
            image = tf.image.stateless_random_flip_left_right(image, seed + 1)  # p = 0.5, tf.image's only
            return (image / 255.0 - mean) / std, tf.gather(self.labels, index), index

        count = len(self.tree.samples)
        return (tf.data.Dataset.range(count).shuffle(count, seed=job["seed"] + epoch)
                .map(load, num_parallel_calls=self.workers).ignore_errors()
                .batch(job["batch_size"]).prefetch(self.prefetch))

    def batches(self):
        for epoch in iter(int, 1):  # endless passes
            seen = set()
            for images, labels, indices in self.dataset(epoch):
                seen.update(indices.numpy().tolist())
                if images.shape[0] == self.job["batch_size"]:  # the last, partial batch is decoded, not trained on
                    yield images, labels
            for index in sorted(set(range(len(self.tree.samples))) - seen):
                self.corrupt.found(self.tree.samples[index][0], "tf.data could not decode it")


class TensorFlowExperiment(KerasExperiment):
    def __init__(self, framework, job, mode, feed=None):
        super().__init__(framework, job, mode, feed)
        tf = self.tf = framework.tf
        model, optimizer, loss_of = self.model, self.optimizer, self.loss_of
        decay, scaled = self.decay, self.loss_scaled

        def train_step(inputs, targets):
            # fp16: the gradients of the scaled loss, unscaled (and the step
            # skipped when one is not finite) by the LossScaleOptimizer.
            scale = optimizer.dynamic_scale if scaled else 1.0
            with tf.GradientTape() as tape:
                loss = loss_of(targets, model(inputs, training=True))
                objective = loss * scale if scaled else loss
            variables = model.trainable_variables
            grads = tape.gradient(objective, variables)
            if decay:
                grads = [g + decay * scale * v for g, v in zip(grads, variables)]
            optimizer.apply_gradients(zip(grads, variables))
            return loss

        def infer_step(inputs, targets):
            return model(inputs, training=False)

        step = train_step if self.train else infer_step
        self.step_function = {"eager": step, "graph": tf.function(step),
                              "compiled": tf.function(step, jit_compile=True)}[mode]

    def run_step(self, inputs, targets):
        output = self.step_function(inputs, targets)
        output.numpy()  # reading a value back waits for the step
        return output

    def optimizer_values(self, variables):
        return [variable.numpy() for variable in variables]

    def accuracy_tensors(self, inputs, targets, compiled):
        tf, model, loss_of, train = self.tf, self.model, self.loss_of, self.train
        variables = model.trainable_variables

        def tensors(inputs, targets):
            if not train:
                return {"output": model(inputs, training=False)}
            with tf.GradientTape() as tape:
                logits = model(inputs, training=True)
                loss = loss_of(targets, logits)
            grads = tape.gradient(loss, variables)
            # An embedding's gradient comes as IndexedSlices: made dense to compare.
            return dict({f"grad:{v.path}": tf.convert_to_tensor(g) for v, g in zip(variables, grads) if g is not None},
                        output=logits, loss=loss)

        run = {"graph": tf.function(tensors), "compiled": tf.function(tensors, jit_compile=True)}.get(self.mode) \
            if compiled else tensors
        return {name: value.numpy() for name, value in run(inputs, targets).items()}

    def synchronize(self):
        pass  # each step read its result back


def xspace_to_chrome_trace(xspace_path, path):
    """TensorFlow's profile (an XSpace protobuf; the Chrome trace is
    TensorBoard's plugin's job, not TensorFlow's) as a Chrome trace, gzip:
    a process per plane (/host:CPU, /device:GPU:0), a thread per line (a
    host thread, a GPU stream), a complete event per event, times in µs."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
    space = xplane_pb2.XSpace()
    with open(xspace_path, "rb") as handle:
        space.ParseFromString(handle.read())
    events = []
    for pid, plane in enumerate(space.planes, start=1):
        events.append({"ph": "M", "pid": pid, "name": "process_name", "args": {"name": plane.name}})
        for line in plane.lines:
            events.append({"ph": "M", "pid": pid, "tid": line.id, "name": "thread_name",
                           "args": {"name": line.display_name or line.name}})
            for event in line.events:
                metadata = plane.event_metadata[event.metadata_id]
                events.append({"ph": "X", "pid": pid, "tid": line.id, "name": metadata.display_name or metadata.name,
                               "ts": line.timestamp_ns / 1e3 + event.offset_ps / 1e6, "dur": event.duration_ps / 1e6})
    with gzip.open(path, "wt") as trace:
        json.dump({"displayTimeUnit": "ns", "traceEvents": events}, trace)


class TensorFlowProfiler:
    """tf.profiler, as profile_section.traced_steps takes it: TensorFlow's
    host events (its ops, tf.function's and XLA's) and, on a GPU, the
    device's streams; Python frames only with profile.with_stack."""

    def __init__(self, tf):
        self.tf = tf
        self.name = f"tf.profiler {tf.__version__}"

    def start(self, log_dir, job):
        # The defaults are host tracer level 2 (TensorFlow's ops), the device's, no Python frames.
        options = self.tf.profiler.experimental.ProfilerOptions(python_tracer_level=1) \
            if job["profile"]["with_stack"] else None
        self.tf.profiler.experimental.start(log_dir, options=options)

    def stop(self):
        self.tf.profiler.experimental.stop()

    def mark(self, name):
        return self.tf.profiler.experimental.Trace(name)

    def trace(self, log_dir, path):
        found = glob.glob(os.path.join(log_dir, "plugins", "profile", "*", "*.xplane.pb"))
        if len(found) != 1:
            raise RuntimeError(f"tf.profiler wrote {len(found)} XSpace files in {log_dir}, not one")
        xspace_to_chrome_trace(found[0], path)


class TensorFlow(KerasFramework):
    MODES = ("eager", "graph", "compiled")
    COMPILERS = {"eager": "none", "graph": "tf-graph", "compiled": "xla"}

    def __init__(self):
        import tensorflow as tf
        self.tf = tf
        super().__init__("tensorflow", TensorFlowExperiment)

    def profiler(self):
        return TensorFlowProfiler(self.tf)

    def versions(self):
        return {"tensorflow": self.tf.__version__, "keras": self.keras.__version__}

    def compile_record(self, experiment):
        # TensorFlow times neither tracing nor XLA's compile publicly: only the traces are counted.
        return {"compilations": experiment.step_function.experimental_get_tracing_count(), "trace_seconds": None,
                "lower_seconds": None, "compile_seconds": None}

    def place(self, job):
        tf = self.tf
        gpus = tf.config.list_physical_devices("GPU")
        chosen = []
        if job["device"] != "cpu":
            index = gpu_index(job["device"])
            if index >= len(gpus):
                build = "" if tf.test.is_built_with_cuda() else " (a TensorFlow without CUDA: docs/frameworks.md)"
                raise Unsupported(f"device {job['device']}: TensorFlow sees {len(gpus)} GPU(s) here{build}")
            chosen = [gpus[index]]
        # The job's GPU alone (a CPU job none), grown as needed rather than
        # all of it taken at start, so that NVML's process memory is the job's.
        tf.config.set_visible_devices(chosen, "GPU")
        for gpu in chosen:
            tf.config.experimental.set_memory_growth(gpu, True)
        self.device = "/GPU:0" if chosen else "/CPU:0"

    def allocator_probe(self):
        memory = self.tf.config.experimental
        return AllocatorProbe("tf_allocator", lambda: memory.get_memory_info("GPU:0")["peak"],
                              lambda: memory.reset_memory_stats("GPU:0"))

    def to_device(self, arrays):
        with self.tf.device(self.device):
            return tuple(self.tf.identity(self.tf.constant(array)) for array in arrays)

    def pipeline(self, job, tree, corrupt):
        return TfDataPipeline(self.tf, job, tree, corrupt)

    def apply_math_policy(self, job):
        tf = self.tf
        autotune = math_policy.xla_autotune(job)  # the compiled (jit_compile) steps
        if job["cudnn_benchmark"] != "framework":  # the eager and graph steps' cuDNN convolutions
            os.environ["TF_CUDNN_USE_AUTOTUNE"] = "1" if job["cudnn_benchmark"] == "on" else "0"
        autotune = autotune and os.environ.get("TF_CUDNN_USE_AUTOTUNE", "1").lower() not in ("0", "false")
        if job["tf32"] != "framework":
            tf.config.experimental.enable_tensor_float_32_execution(job["tf32"] == "on")
        tf32 = tf.config.experimental.tensor_float_32_execution_enabled()  # products and convolutions alike
        return math_policy.record(job, tf32, tf32, autotune)

    def set_threads(self, job):
        super().set_threads(job)
        self.tf.config.threading.set_intra_op_parallelism_threads(job["threads"])
        self.tf.config.threading.set_inter_op_parallelism_threads(max(1, job["interop_threads"]))

    def framework_context(self):
        tf = self.tf
        details = tf.config.experimental.get_device_details
        gpus = [{"index": index, "name": details(gpu).get("device_name", "unknown GPU")}
                for index, gpu in enumerate(tf.config.list_physical_devices("GPU"))]
        build = tf.sysconfig.get_build_info()
        cuda = build.get("is_cuda_build", False)
        return {"framework": {"name": "tensorflow", "version": tf.__version__}, "gpus": gpus,
                "cuda_version": build.get("cuda_version") if cuda else None,
                "cudnn_version": build.get("cudnn_version") if cuda else None}


if __name__ == "__main__":
    run_main(RUNNER_NAME, TensorFlow)
