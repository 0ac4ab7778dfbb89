#!@TS_TENSORFLOW_PYTHON@
"""torchsweep-tensorflow: the TensorFlow runner.

Honours the worker contract of docs/worker.md through the harness every
Python runner shares (torchsweep_harness). What is its own: the models of
schemas/models.json in Keras 3 on the TensorFlow backend
(torchsweep_harness.keras_models, shared with the JAX runner), a training
step with tf.GradientTape run eagerly (eager) or as one XLA cluster under
tf.function(jit_compile=True) (compiled), and reading the loss back as its
synchronisation. Runs in its own virtual environment (docs/frameworks.md).
"""

import os
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow's start-up banner is not a warning of ours
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), os.pardir, "share", "torchsweep",
                                "python"))
from torchsweep_harness.contract import Unsupported, run_main  # noqa: E402
from torchsweep_harness.keras_runner import KerasFramework  # noqa: E402
from torchsweep_harness.measure import CyclingBatches  # noqa: E402

RUNNER_NAME = "tensorflow"


class TensorFlowExperiment(CyclingBatches):
    def __init__(self, framework, job, compiled):
        import numpy as np
        tf = framework.tf
        self.tf, self.job, self.compiled = tf, job, compiled
        self.model, sample_shape, self.optimizer, self.loss_of = framework.build(job)
        self.batches = [(tf.constant(inputs), tf.constant(targets))
                        for inputs, targets in framework.batches(job, sample_shape)]
        self.position = 0
        self.train = job["task"] == "train"
        self.parameters = framework.trainable_parameters(self.model)
        self.initial_parameter_l1 = float(sum(np.abs(v.numpy().astype(np.float64)).sum()
                                              for v in self.model.trainable_variables))
        model, optimizer, loss_of = self.model, self.optimizer, self.loss_of
        decay = job["weight_decay"] if job["optimizer"] == "sgd" else 0.0

        def train_step(inputs, targets):
            with tf.GradientTape() as tape:
                loss = loss_of(targets, model(inputs, training=True))
            variables = model.trainable_variables
            grads = tape.gradient(loss, variables)
            if decay:  # PyTorch's SGD weight decay: L2 on the gradient
                grads = [g + decay * v for g, v in zip(grads, variables)]
            optimizer.apply_gradients(zip(grads, variables))
            return loss

        def infer_step(inputs, targets):
            return model(inputs, training=False)

        step = train_step if self.train else infer_step
        self.step_function = tf.function(step, jit_compile=True) if compiled else step
        self.first_loss = None

    def step(self, batch=None):
        inputs, targets = batch if batch is not None else self.next_batch()
        output = self.step_function(inputs, targets)
        value = output.numpy()  # reading a value back waits for the step
        if self.first_loss is None:
            self.first_loss = float(value) if self.train else self.loss_value(output, targets)
        return output, targets

    def loss_value(self, output, targets):
        return float(output if self.train else self.loss_of(targets, output))

    def synchronize(self):
        pass  # each step read its result back


class TensorFlow(KerasFramework):
    def __init__(self):
        import tensorflow as tf
        self.tf = tf
        super().__init__("tensorflow")

    def versions(self):
        return {"tensorflow": self.tf.__version__, "keras": self.keras.__version__}

    def set_threads(self, job):
        super().set_threads(job)
        self.tf.config.threading.set_intra_op_parallelism_threads(job["threads"])
        self.tf.config.threading.set_inter_op_parallelism_threads(max(1, job["interop_threads"]))

    def compiler(self, compiled):
        return "xla" if compiled else "none"

    def experiment(self, job, compiled):
        if job["device"] != "cpu":
            raise Unsupported(f"device {job['device']}: the tensorflow runner times and measures CPUs only so far")
        return TensorFlowExperiment(self, job, compiled)

    def framework_context(self):
        return {"framework": {"name": "tensorflow", "version": self.tf.__version__}}


if __name__ == "__main__":
    run_main(RUNNER_NAME, TensorFlow)
