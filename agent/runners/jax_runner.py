#!@TS_JAX_PYTHON@
"""torchsweep-jax: the JAX runner.

Honours the worker contract of docs/worker.md through the harness every
Python runner shares (torchsweep_harness). What is its own: the models of
schemas/models.json in Keras 3 on the JAX backend (torchsweep_harness.
keras_models, shared with the TensorFlow runner), a functional training step
(Keras's stateless_call, jax.value_and_grad, the optimizer's stateless_apply)
run op by op (eager) or under jax.jit (compiled), and block_until_ready as its
synchronisation. Runs in its own virtual environment (docs/frameworks.md).
"""

import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), os.pardir, "share", "torchsweep",
                                "python"))
from torchsweep_harness.contract import Unsupported, run_main  # noqa: E402
from torchsweep_harness.keras_runner import KerasFramework  # noqa: E402
from torchsweep_harness.measure import CyclingBatches  # noqa: E402

RUNNER_NAME = "jax"


class JaxExperiment(CyclingBatches):
    """The job's model, optimizer, synthetic batches and step, functionally:
    the state (trainable, non-trainable and optimizer variables) goes in and
    out of each step, so jax.jit compiles the whole step."""

    def __init__(self, framework, job, compiled):
        import jax
        import numpy as np
        keras = framework.keras
        self.jax, self.job, self.compiled = jax, job, compiled
        self.model, sample_shape, self.optimizer, self.loss_of = framework.build(job)
        self.batches = [tuple(jax.device_put(array) for array in batch) for batch in framework.batches(job, sample_shape)]
        self.position = 0
        self.train = job["task"] == "train"
        self.parameters = framework.trainable_parameters(self.model)
        self.initial_parameter_l1 = float(sum(np.abs(np.asarray(v.value, dtype=np.float64)).sum()
                                              for v in self.model.trainable_variables))
        trainable = [v.value for v in self.model.trainable_variables]
        non_trainable = [v.value for v in self.model.non_trainable_variables]
        if self.train:
            self.optimizer.build(self.model.trainable_variables)
            self.state = (trainable, non_trainable, [v.value for v in self.optimizer.variables])
        else:
            self.state = (trainable, non_trainable)
        decay = job["weight_decay"] if job["optimizer"] == "sgd" else 0.0
        model, optimizer, loss_of = self.model, self.optimizer, self.loss_of

        def loss_and_state(trainable, non_trainable, inputs, targets):
            logits, non_trainable = model.stateless_call(trainable, non_trainable, inputs, training=True)
            return loss_of(targets, logits), non_trainable

        gradient = jax.value_and_grad(loss_and_state, has_aux=True)

        def train_step(state, inputs, targets):
            trainable, non_trainable, optimizer_state = state
            (loss, non_trainable), grads = gradient(trainable, non_trainable, inputs, targets)
            if decay:  # PyTorch's SGD weight decay: L2 on the gradient
                grads = [g + decay * w for g, w in zip(grads, trainable)]
            trainable, optimizer_state = optimizer.stateless_apply(optimizer_state, grads, trainable)
            return loss, (trainable, non_trainable, optimizer_state)

        def infer_step(state, inputs, targets):
            logits, _ = model.stateless_call(state[0], state[1], inputs, training=False)
            return logits, state

        step = train_step if self.train else infer_step
        self.step_function = jax.jit(step, donate_argnums=0) if compiled else step
        self.first_loss = None

    def step(self, batch=None):
        inputs, targets = batch if batch is not None else self.next_batch()
        output, self.state = self.step_function(self.state, inputs, targets)
        output.block_until_ready()  # JAX dispatches asynchronously, on a CPU too
        if self.first_loss is None:
            self.first_loss = self.loss_value(output, targets)
        return output, targets

    def loss_value(self, output, targets):
        return float(output if self.train else self.loss_of(targets, output))

    def synchronize(self):
        for leaf in self.jax.tree_util.tree_leaves(self.state):
            leaf.block_until_ready()


class Jax(KerasFramework):
    def __init__(self):
        super().__init__("jax")
        import jax
        import jaxlib
        self.jax, self.jaxlib = jax, jaxlib

    def versions(self):
        return {"jax": self.jax.__version__, "jaxlib": self.jaxlib.__version__, "keras": self.keras.__version__}

    def compiler(self, compiled):
        return "xla" if compiled else "none"

    def experiment(self, job, compiled):
        if job["device"] != "cpu":
            raise Unsupported(f"device {job['device']}: the jax runner times and measures CPUs only so far")
        return JaxExperiment(self, job, compiled)

    def framework_context(self):
        return {"framework": {"name": "jax", "version": self.jax.__version__, "backend": self.jax.default_backend()}}


if __name__ == "__main__":
    run_main(RUNNER_NAME, Jax)
