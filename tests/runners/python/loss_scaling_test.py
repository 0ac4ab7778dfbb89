"""fp16 dynamic loss scaling in a Keras runner (TensorFlow or JAX), run by
that runner's own venv Python on the runner's own code.

A job asks for fp16 on CUDA only (on a CPU the runner answers unsupported,
which framework_runners_test checks), but XLA and TensorFlow compute
float16 on a CPU too, so this test builds the runner's experiment for a CPU
fp16 job itself, past the device check, and runs its training steps: the
loss scale grows after `loss_scale_growth_interval` clean steps, a step
whose scaled gradients overflow float16 is skipped (the weights unchanged)
and halves the scale, the result's loss_scaling counts what happened, and
with a scale that does not overflow fp16 training follows fp32 training,
weight decay included (which the runner adds to the scaled gradients).
Also: JAX's jitted step, fp32 or fp16, compiles once.

    PYTHON loss_scaling_test.py --runner NAME=PATH
"""
import argparse
import importlib.machinery
import importlib.util
import sys
import unittest

import numpy as np

ARGS = None
MLP = {"schema_version": 1, "model": "mlp", "batch_size": 8, "input_size": 16, "width": 32, "depth": 2,
       "num_classes": 10, "epochs": 1, "warmup": 0, "iters": 1, "threads": 1, "seed": 3}


def load_runner(path):
    """The runner program as a module (it has no .py suffix)."""
    loader = importlib.machinery.SourceFileLoader("runner_under_test", path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class LossScaling(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.runner = load_runner(ARGS.path)
        from torchsweep_harness import contract
        cls.contract = contract
        cls.framework = next(value for value in vars(cls.runner).values()
                             if isinstance(value, type) and issubclass(value, contract.Framework)
                             and value.__module__ == cls.runner.__name__)()
        # Once, as the runner does before its backend starts.
        job = contract.resolve_job(MLP, ARGS.name)
        cls.framework.set_threads(job)
        cls.framework.place(job)

    def experiment(self, mode="compiled", **knobs):
        job = self.contract.resolve_job(dict(MLP, **knobs), ARGS.name)
        # Past framework.experiment(), which refuses fp16 on a CPU.
        return self.framework.experiment_class(self.framework, job, mode)

    def weights(self, experiment):
        variables = experiment.state[0] if hasattr(experiment, "state") else experiment.model.trainable_variables
        return [np.array(variable, dtype=np.float64) for variable in variables]

    def train(self, experiment, steps):
        losses = []
        for _ in range(steps):
            output, targets = experiment.step(experiment.next_batch())
            losses.append(experiment.loss_value(output, targets))
        return losses

    def test_the_runner_refuses_fp16_on_a_cpu_job(self):
        job = self.contract.resolve_job(dict(MLP, precision="fp16"), ARGS.name)
        with self.assertRaisesRegex(self.contract.Unsupported, "fp16 is unsupported on this device"):
            self.framework.experiment(job, "compiled", None)

    def test_the_scale_doubles_after_each_growth_interval_of_clean_steps(self):
        for mode in self.framework.MODES:
            experiment = self.experiment(mode, precision="fp16", loss_scale_initial=1024,
                                         loss_scale_growth_interval=2)
            self.train(experiment, 5)
            self.assertEqual(experiment.loss_scaling(),
                             {"initial_scale": 1024.0, "final_scale": 4096.0, "skipped_steps": 0}, mode)

    def test_an_overflowing_step_is_skipped_and_halves_the_scale(self):
        for mode in self.framework.MODES:
            # 2^100 times the loss overflows float16 in the backward pass of every step.
            experiment = self.experiment(mode, precision="fp16", loss_scale_initial=2.0 ** 100)
            before = self.weights(experiment)
            losses = self.train(experiment, 3)
            self.assertTrue(all(np.isfinite(losses)), losses)
            self.assertEqual(experiment.loss_scaling(),
                             {"initial_scale": 2.0 ** 100, "final_scale": 2.0 ** 97, "skipped_steps": 3}, mode)
            for start, now in zip(before, self.weights(experiment)):
                np.testing.assert_array_equal(start, now, err_msg=mode)

    def test_the_jitted_step_compiles_once(self):
        # Batches placed unlike the model's variables once gave the step a new
        # signature after its first run: a second compilation, in warm-up or,
        # with warmup 0 or 1, in the timed epochs.
        if ARGS.name != "jax":
            self.skipTest("jax.jit's cache is JAX's")
        for precision in ("fp32", "fp16"):
            experiment = self.experiment(precision=precision)
            self.train(experiment, 3)
            self.assertEqual(experiment.step_function._cache_size(), 1, precision)

    def test_fp16_training_follows_fp32_with_weight_decay(self):
        # A decay large enough that one left unscaled (65536 times too small)
        # would leave the weights 10% apart after three steps.
        knobs = dict(lr=0.05, weight_decay=1.0)
        fp32 = self.experiment(**knobs)
        fp16 = self.experiment(precision="fp16", **knobs)
        self.assertIsNone(fp32.loss_scaling())
        losses32, losses16 = self.train(fp32, 3), self.train(fp16, 3)
        np.testing.assert_allclose(losses16, losses32, rtol=1e-2)
        for w32, w16 in zip(self.weights(fp32), self.weights(fp16)):
            np.testing.assert_allclose(np.abs(w16).sum(), np.abs(w32).sum(), rtol=1e-2)
        self.assertEqual(fp16.loss_scaling(), {"initial_scale": 65536.0, "final_scale": 65536.0, "skipped_steps": 0})


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runner", required=True, help="NAME=PATH")
    ARGS, rest = parser.parse_known_args()
    ARGS.name, ARGS.path = ARGS.runner.split("=", 1)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
