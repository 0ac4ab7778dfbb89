#!@TS_TENSORFLOW_PYTHON@
"""torchsweep-tensorflow: the TensorFlow runner.

Honours the worker contract of docs/worker.md through the harness every
Python runner shares (torchsweep_harness). What is its own: the models of
schemas/models.json in Keras 3 on the TensorFlow backend
(torchsweep_harness.keras_models, shared with the JAX runner), a training
step with tf.GradientTape run eagerly (eager), as a TensorFlow graph under
tf.function (graph) or as one XLA cluster under tf.function(jit_compile=True)
(compiled), and reading the loss back as its synchronisation. Runs in its own virtual environment (docs/frameworks.md).
"""

import os
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow's start-up banner is not a warning of ours
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), os.pardir, "share", "torchsweep",
                                "python"))
from torchsweep_harness.contract import run_main  # noqa: E402
from torchsweep_harness.keras_runner import KerasExperiment, KerasFramework  # noqa: E402

RUNNER_NAME = "tensorflow"


class TensorFlowExperiment(KerasExperiment):
    def __init__(self, framework, job, mode):
        super().__init__(framework, job, mode)
        tf = framework.tf
        model, optimizer, loss_of, decay = self.model, self.optimizer, self.loss_of, self.decay

        def train_step(inputs, targets):
            with tf.GradientTape() as tape:
                loss = loss_of(targets, model(inputs, training=True))
            variables = model.trainable_variables
            grads = tape.gradient(loss, variables)
            if decay:
                grads = [g + decay * v for g, v in zip(grads, variables)]
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

    def synchronize(self):
        pass  # each step read its result back


class TensorFlow(KerasFramework):
    MODES = ("eager", "graph", "compiled")
    COMPILERS = {"eager": "none", "graph": "tf-graph", "compiled": "xla"}

    def __init__(self):
        import tensorflow as tf
        self.tf = tf
        super().__init__("tensorflow", TensorFlowExperiment)

    def versions(self):
        return {"tensorflow": self.tf.__version__, "keras": self.keras.__version__}

    def to_device(self, arrays):
        return tuple(self.tf.constant(array) for array in arrays)

    def set_threads(self, job):
        super().set_threads(job)
        self.tf.config.threading.set_intra_op_parallelism_threads(job["threads"])
        self.tf.config.threading.set_inter_op_parallelism_threads(max(1, job["interop_threads"]))

    def framework_context(self):
        return {"framework": {"name": "tensorflow", "version": self.tf.__version__}}


if __name__ == "__main__":
    run_main(RUNNER_NAME, TensorFlow)
