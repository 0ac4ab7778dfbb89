#!/usr/bin/env python3
"""The correctness gate of cross-framework comparisons (docs/frameworks.md):
one job through every runner and mode (the MLP, ResNet-18 and the GPT decoder) (LibTorch eager and compiled,
torch.compile eager and compiled, TensorFlow eager, graph and XLA, JAX eager
and jit) from the same initial-weights file and reference batch, written by
the LibTorch worker, gives the same first- and second-step losses and the same
eval-mode loss after the two steps, in fp32 within stated tolerances. The
second step sees the update rule and weight decay; the eval-mode loss after
two updates also sees SGD's momentum and BatchNorm's running statistics.

    same_start_test.py --runner NAME=PATH ... --schemas DIR
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

from runner_testing import result_validator, xla_cache_environment

ARGS = None
# Rates, momentum and decay large enough that a wrong rule moves the losses
# beyond the tolerances (measured in docs/frameworks.md); small shapes.
TRAINING = {"schema_version": 1, "epochs": 1, "iters": 1, "warmup": 2, "threads": 1, "momentum": 0.9, "seed": 7}
JOBS = {"mlp": dict(TRAINING, model="mlp", batch_size=8, input_size=16, width=32, depth=2, num_classes=10, lr=0.1,
                    weight_decay=0.01),
        "resnet18": dict(TRAINING, model="resnet18", batch_size=8, input_size=64, num_classes=10, lr=0.01,
                         weight_decay=0.1),
        # The decoder (docs/language-models.md): token ids, causal attention, the next token at every position.
        "gpt": dict(TRAINING, model="gpt", batch_size=4, vocab=256, width=64, depth=2, heads=4, seq_len=32, lr=0.1,
                    weight_decay=0.01)}
MODES = {"libtorch": ("eager", "compiled"), "torch-compile": ("eager", "compiled"),
         "tensorflow": ("eager", "graph", "compiled"), "jax": ("eager", "compiled")}
# Relative tolerances against LibTorch eager, fp32. The MLP's runners agree
# to 1e-7. The ResNet's first step agrees to 1e-6; after an update its
# runners fall in two groups 4.4e-4 apart, by how BatchNorm's backward is
# formed (the closed form of LibTorch and of XLA's simplified graphs, or
# autodiff of the mean and variance: Inductor, TensorFlow and JAX eager):
# the step is that sensitive to rounding. The decoder's agree to 2e-7.
TOLERANCE = {"mlp": {"first_step": 1e-5, "second_step": 1e-5, "reference_eval": 1e-5},
             "gpt": {"first_step": 1e-5, "second_step": 1e-5, "reference_eval": 1e-5},
             "resnet18": {"first_step": 1e-5, "second_step": 1e-3, "reference_eval": 1e-3}}


# A bare environment, but for XLA's compile caches where the test is given them (tests/CMakeLists.txt).
RUNNER_ENVIRONMENT = dict({"PATH": "/usr/bin:/bin"}, **xla_cache_environment())


def run(executable, job, directory):
    job_file, result_file = directory / "job.json", directory / "result.json"
    result_file.unlink(missing_ok=True)
    job_file.write_text(json.dumps(job))
    finished = subprocess.run([executable, "--job", str(job_file), "--out", str(result_file)], capture_output=True,
                              text=True, timeout=600, env=RUNNER_ENVIRONMENT)
    return finished.returncode, json.loads(result_file.read_text()) if result_file.exists() else None, finished.stderr


class SameStartingPoint(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.validator = result_validator(ARGS.schemas)
        cls.directory = tempfile.TemporaryDirectory(prefix="ts_same_start_")
        cls.folder = pathlib.Path(cls.directory.name)
        cls.files = {}
        cls.layouts = {}  # (model, runner, mode, memory_format asked) -> execution.data_layout
        for model, job in JOBS.items():
            weights, batch = cls.folder / f"{model}.weights.safetensors", cls.folder / f"{model}.batch.safetensors"
            (cls.folder / "start.json").write_text(json.dumps(job))
            subprocess.run([ARGS.runners["libtorch"], "--job", str(cls.folder / "start.json"),
                            "--write-initial-weights", str(weights), "--write-reference-batch", str(batch)],
                           check=True, capture_output=True, timeout=120)
            cls.files[model] = {"initial_weights": str(weights), "reference_batch": str(batch)}

    @classmethod
    def tearDownClass(cls):
        cls.directory.cleanup()

    def losses_of_every_runner(self, model, runners=None, **fields):
        losses = {}
        for runner, path in ARGS.runners.items():
            if runners and runner not in runners:
                continue
            for mode in MODES[runner]:
                code, result, stderr = run(path, dict(JOBS[model], mode=mode, **self.files[model], **fields),
                                           self.folder)
                self.assertEqual(code, 0, f"{runner} {mode}: {stderr}")
                errors = [error.message for error in self.validator.iter_errors(result)]
                self.assertEqual(errors, [], (runner, mode))
                self.assertEqual(result["execution"]["mode"], mode, (runner, mode))
                self.assertEqual(result["execution"]["initial_weights"], self.files[model]["initial_weights"])
                self.assertEqual(result["execution"]["reference_batch"], self.files[model]["reference_batch"])
                self.layouts[(model, runner, mode, fields.get("memory_format"))] = result["execution"]["data_layout"]
                losses[f"{runner} {mode}"] = result["loss"]
        return losses

    def assert_same_losses(self, model):
        losses = self.losses_of_every_runner(model)
        reference = losses["libtorch eager"]
        table = "\n".join(f"{name:24} " + " ".join(f"{loss[key]:.7f}" for key in TOLERANCE[model])
                          for name, loss in losses.items())
        print(f"\n{model}: first_step second_step reference_eval\n{table}", file=sys.stderr)
        for name, loss in losses.items():
            for key, tolerance in TOLERANCE[model].items():
                self.assertIsNotNone(loss[key], (name, key))
                self.assertLessEqual(abs(loss[key] - reference[key]), tolerance * abs(reference[key]),
                                     f"{name} {key}: {loss[key]} against libtorch eager's {reference[key]}\n{table}")
        # The steps did something: a runner that ignored the update would pass the first check alone.
        self.assertGreater(abs(reference["second_step"] - reference["first_step"]), 1e-3)
        return losses

    def test_mlp_every_runner_and_mode_same_losses(self):
        self.assert_same_losses("mlp")

    def test_resnet18_every_runner_and_mode_same_losses(self):
        self.assert_same_losses("resnet18")

    def test_gpt_every_runner_and_mode_same_losses(self):
        self.assert_same_losses("gpt")

    def test_resnet18_in_channels_last_starts_where_contiguous_does(self):
        """memory_format channels_last (the PyTorch runners' NHWC, docs/gpu.md): the same weights and batch in
        another layout give libtorch eager's contiguous losses, and every result names the layout that ran."""
        contiguous = self.losses_of_every_runner("resnet18", runners=("libtorch",))["libtorch eager"]
        channels_last = self.losses_of_every_runner("resnet18", runners=("libtorch", "torch-compile"),
                                                    memory_format="channels_last")
        for name, loss in channels_last.items():
            for key, tolerance in TOLERANCE["resnet18"].items():
                self.assertLessEqual(abs(loss[key] - contiguous[key]), tolerance * abs(contiguous[key]),
                                     f"{name} channels_last {key}: {loss[key]} against contiguous {contiguous[key]}")
        ran = {key: layout for key, layout in self.layouts.items() if key[0] == "resnet18"}
        self.assertEqual(ran[("resnet18", "libtorch", "eager", None)], "NCHW")
        for runner in ("libtorch", "torch-compile"):
            for mode in MODES[runner]:
                self.assertEqual(ran[("resnet18", runner, mode, "channels_last")], "NHWC", (runner, mode))

    def test_channels_last_is_refused_for_a_model_without_images(self):
        """Refused before anything runs, as an invalid job (exit 2), by the one resolution every runner's job
        goes through (shared/job_resolution.cpp, the sweep's own check too), each naming it. The torch.compile
        runner said unsupported (exit 3) while it resolved jobs itself."""
        for runner, refusal in (("libtorch", 2), ("torch-compile", 2)):
            code, result, stderr = run(ARGS.runners[runner], dict(JOBS["gpt"], memory_format="channels_last"),
                                       self.folder)
            self.assertEqual(code, refusal, f"{runner}: {stderr}")
            said = stderr + ((result or {}).get("error") or "")
            self.assertIn("channels_last", said, runner)
            self.assertNotEqual((result or {}).get("status"), "ok", runner)

    def test_a_file_that_does_not_fit_the_model_fails_the_job_naming_it(self):
        # mlp weights of width 32 for a model of width 64; a batch of 8 for a job of 4.
        for field, change in (("initial_weights", {"width": 64}), ("reference_batch", {"batch_size": 4})):
            job = dict(JOBS["mlp"], **{field: self.files["mlp"][field]}, **change)
            for runner, path in ARGS.runners.items():
                code, result, stderr = run(path, job, self.folder)
                self.assertEqual(code, 3, f"{runner}: {stderr}")
                self.assertEqual(result["status"], "failed", runner)
                self.assertIn(field, result["error"], runner)
                self.assertIn("shape", result["error"], runner)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runner", action="append", required=True, help="NAME=PATH; libtorch is required")
    parser.add_argument("--schemas", type=pathlib.Path, required=True)
    ARGS, rest = parser.parse_known_args()
    ARGS.runners = dict(entry.split("=", 1) for entry in ARGS.runner)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
