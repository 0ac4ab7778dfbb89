#!/usr/bin/env python3
"""Tests of the TensorFlow and JAX runners (bin/torchsweep-tensorflow,
bin/torchsweep-jax) on CPU, each in its own venv, run as the agent runs them.

Their results are checked against schemas/result.schema.json with an
independent validator, their models against the LibTorch worker's trainable
parameter counts, their modes against each other (the same seed gives the
same first-step loss eagerly and under XLA), and their exit codes against
the worker contract.

    framework_runners_test.py --runner NAME=PATH ... --worker PATH --schemas DIR
"""
import argparse
import gzip
import hashlib
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

from runner_testing import judged, result_validator, xla_cache_environment

ARGS = None
TINY_MLP = {"schema_version": 1, "model": "mlp", "batch_size": 8, "input_size": 16, "width": 32, "depth": 2,
            "epochs": 2, "warmup": 2, "iters": 3, "threads": 1}
SMALL = [TINY_MLP,
         {"schema_version": 1, "model": "resnet18", "batch_size": 2, "input_size": 32, "num_classes": 10,
          "epochs": 1, "warmup": 1, "iters": 1, "threads": 2},
         {"schema_version": 1, "model": "resnet50", "batch_size": 2, "input_size": 32, "num_classes": 10,
          "epochs": 1, "warmup": 1, "iters": 1, "threads": 2},
         {"schema_version": 1, "model": "transformer", "batch_size": 2, "width": 32, "heads": 4, "depth": 2,
          "seq_len": 8, "num_classes": 10, "epochs": 1, "warmup": 1, "iters": 1, "threads": 1},
         {"schema_version": 1, "model": "gpt", "batch_size": 2, "vocab": 256, "width": 32, "heads": 4, "depth": 2,
          "seq_len": 8, "epochs": 1, "warmup": 1, "iters": 1, "threads": 1}]


def run(executable, job, xla_caches=False):
    """xla_caches: with XLA's compile caches where the test is given them (tests/CMakeLists.txt), for a job whose
    compile figures are not checked (a cached compile reports the cache's load, not a compile)."""
    with tempfile.TemporaryDirectory(prefix="ts_framework_") as directory:
        folder = pathlib.Path(directory)
        (folder / "job.json").write_text(json.dumps(job))
        progress = folder / "progress.jsonl"
        environment = {"PATH": "/usr/bin:/bin", "TORCHSWEEP_PROGRESS_FILE": str(progress)}
        if xla_caches:
            environment.update(xla_cache_environment())
        finished = subprocess.run([executable, "--job", str(folder / "job.json"), "--out", str(folder / "result.json")],
                                  capture_output=True, text=True, timeout=600, env=environment)
        result_file = folder / "result.json"
        result = json.loads(result_file.read_text()) if result_file.exists() else None
        lines = progress.read_text().splitlines() if progress.exists() else []
        return finished.returncode, result, finished.stderr, lines


class FrameworkRunners(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.validator = result_validator(ARGS.schemas)
        cls.worker_parameters = {}
        for job in SMALL:
            code, result, stderr, _ = run(ARGS.worker, job)
            assert code == 0, stderr
            cls.worker_parameters[job["model"]] = result["execution"]["model_parameters"]

    def assert_valid(self, result, context):
        self.assertIsNotNone(result, context)
        errors = sorted(self.validator.iter_errors(result), key=lambda e: [str(p) for p in e.path])
        self.assertEqual([f"{list(e.path)}: {e.message}" for e in errors], [], context)

    def test_each_runner_answers_its_version_with_its_frameworks(self):
        for name, path in ARGS.runners.items():
            lines = subprocess.run([path, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()
            self.assertTrue(lines[0].startswith(f"torchsweep-{name} "), lines)
            self.assertIn("keras", lines[1].split()[::2])
            # What it runs, checked at submit: graph is TensorFlow's alone; fp16 runs on a GPU.
            modes = ["eager", "graph", "compiled"] if name == "tensorflow" else ["eager", "compiled"]
            self.assertEqual(lines[2:5], ["modes " + " ".join(modes), "precisions fp32 bf16 fp16",
                                          "tasks train infer"])  # no generate: no cached decode step
            # The directories of its sys.path, which the agent's kept probes depend on.
            self.assertTrue(lines[5].startswith("site ["), lines[5:])
            site = json.loads(lines[5][len("site "):])
            self.assertTrue(all(pathlib.Path(path).is_dir() for path in site), site)
            self.assertTrue(any(path.endswith("site-packages") for path in site), site)

    def test_the_math_policy_is_each_frameworks_default_unless_asked_and_is_recorded(self):
        # JAX and TensorFlow let fp32 take TensorFloat-32 by default and autotune convolutions (docs/gpu.md).
        for name, path in ARGS.runners.items():
            for asked, held in (("framework", True), ("off", False), ("on", True)):
                code, result, stderr, _ = run(path, dict(TINY_MLP, tf32=asked, cudnn_benchmark=asked))
                self.assertEqual(code, 0, f"{name} {asked}: {stderr}")
                self.assert_valid(result, f"{name} {asked}")
                self.assertEqual(result["execution"]["math"],
                                 {"tf32": asked, "cudnn_benchmark": asked, "tf32_matmul": held, "tf32_conv": held,
                                  "conv_autotune": held}, f"{name} {asked}")

    def test_a_mode_the_runner_does_not_run_is_unsupported(self):
        for name, path in ARGS.runners.items():
            if name == "tensorflow":
                continue
            code, result, stderr, _ = run(path, dict(TINY_MLP, mode="graph"))
            self.assertEqual(code, 3, stderr)
            self.assertEqual(result["status"], "unsupported")
            self.assertIn("mode graph", result["error"])
        for name, path in ARGS.runners.items():
            code, result, stderr, _ = run(path, {"schema_version": 1, "model": "gpt", "task": "generate",
                                                 "batch_size": 2, "vocab": 64, "width": 16, "heads": 2, "depth": 1,
                                                 "seq_len": 16, "prompt_len": 4, "new_tokens": 4, "threads": 1})
            self.assertEqual(code, 3, stderr)
            self.assertEqual(result["status"], "unsupported")
            self.assertIn("task generate", result["error"])

    def test_both_modes_run_the_contract_and_agree_on_the_first_step(self):
        for name, path in ARGS.runners.items():
            results = {}
            for mode in ("eager", "compiled"):
                code, result, stderr, progress = run(path, dict(TINY_MLP, mode=mode))
                self.assertEqual(code, 0, stderr)
                self.assert_valid(result, (name, mode))
                self.assertEqual(result["runner"]["name"], name)
                self.assertEqual(result["execution"]["mode"], mode)
                self.assertEqual(result["execution"]["compiler"], "xla" if mode == "compiled" else "none")
                self.assertEqual(result["context"]["framework"]["name"], name)
                self.assertEqual(result["context"]["intra_op_threads"], 1)
                self.assertEqual(len(progress), TINY_MLP["epochs"])
                self.assertEqual(len(result["timing"]["step_seconds"][0]), TINY_MLP["iters"])
                self.assertGreater(result["memory"]["peak_rss_bytes"], 0)
                results[mode] = result
            # Same seed, same weights and data: XLA changes the kernels, not the model.
            self.assertAlmostEqual(results["eager"]["loss"]["first_step"], results["compiled"]["loss"]["first_step"],
                                   delta=1e-5, msg=name)
            # What XLA did: the step compiled once, in the warm-up; the accuracy gate against eager passes.
            xla = results["compiled"]["execution"]["xla"]
            self.assertEqual((xla["compilations"], xla["recompilations_in_timed_epochs"]), (1, 0), (name, xla))
            if name == "jax":
                self.assertGreater(xla["compile_seconds"], 0, xla)
            self.assertIsNone(results["eager"]["execution"]["xla"])
            accuracy = judged(ARGS.torchsweep, results["compiled"])["accuracy"]
            self.assertEqual(accuracy["reference"], "eager", (name, accuracy))
            self.assertIn("loss", [tensor["name"] for tensor in accuracy["tensors"]])
            self.assertEqual(accuracy["status"], "pass", (name, accuracy))
            self.assertNotIn("accuracy", judged(ARGS.torchsweep, results["eager"]))

    def test_a_profile_comes_after_the_timed_epochs_and_its_trace_is_summarized_beside_the_result(self):
        profiled = dict(TINY_MLP, mode="compiled", profile={"steps": 3})
        for name, path in ARGS.runners.items():
            with tempfile.TemporaryDirectory(prefix="ts_profile_") as directory:
                folder = pathlib.Path(directory)
                (folder / "job.json").write_text(json.dumps(profiled))
                finished = subprocess.run([path, "--job", str(folder / "job.json"), "--out", str(folder / "result.json")],
                                          capture_output=True, text=True, timeout=600, env={"PATH": "/usr/bin:/bin"})
                self.assertEqual(finished.returncode, 0, finished.stderr)
                result = json.loads((folder / "result.json").read_text())
                self.assert_valid(result, name)
                profile = result["profile"]
                self.assertEqual((profile["status"], profile["activities"], len(profile["step_seconds"])),
                                 ("ok", ["cpu"], 3), (name, profile))
                self.assertTrue(profile["profiler"].startswith({"jax": "jax.profiler ", "tensorflow": "tf.profiler "}[name]))
                trace = folder / profile["trace"]["file"]
                self.assertEqual(profile["trace"]["bytes"], trace.stat().st_size)
                self.assertEqual(profile["trace"]["sha256"], hashlib.sha256(trace.read_bytes()).hexdigest())
                events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
                marks = sorted(e["name"] for e in events if e.get("name", "").startswith("ProfilerStep#"))
                self.assertEqual(marks, ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"], name)
                self.assertEqual(sorted(p.name for p in folder.iterdir()), ["job.json", "profile.trace.json.gz",
                                                                            "result.json"], name)
                # The profiler runs no timed step: same seed, same losses as an unprofiled run.
                _, plain, stderr, _ = run(path, dict(TINY_MLP, mode="compiled"))
                self.assertEqual(result["loss"]["epoch_final"], plain["loss"]["epoch_final"], name)
                # The agent's summary of the trace (agent/trace_summary.hpp), as `torchsweep judge FILE` adds it.
                judging = subprocess.run([ARGS.torchsweep, "judge", str(folder / "result.json")], capture_output=True,
                                         text=True)
                self.assertEqual(judging.returncode, 0, judging.stderr)
                summary = json.loads(judging.stdout)["profile"]
                names = [row["name"] for row in summary["operators"]]
                self.assertIn("ProfilerStep*", names, name)  # the step marks, one row as in key_averages()
                self.assertGreater(summary["totals"]["operators"], 3, (name, names))
                self.assertGreater(summary["totals"]["self_cpu_s"], 0, name)
                # What ran within the steps only: the profiler's own start and stop are no step's.
                self.assertLess(summary["totals"]["self_cpu_s"], 3 * max(profile["step_seconds"]) * 4, name)
                self.assertEqual(summary["kernels"], [], name)

    def test_trainable_parameters_equal_the_workers_for_every_model(self):
        for name, path in ARGS.runners.items():
            for job in SMALL:
                code, result, stderr, _ = run(path, dict(job, mode="compiled"), xla_caches=True)
                self.assertEqual(code, 0, stderr)
                self.assert_valid(result, (name, job["model"]))
                self.assertEqual(result["execution"]["model_parameters"], self.worker_parameters[job["model"]],
                                 (name, job["model"]))
                expected_layout = "NHWC" if job["model"].startswith("resnet") else None
                self.assertEqual(result["execution"]["data_layout"], expected_layout)

    def test_bf16_inference_runs_and_fp16_gpus_and_bad_jobs_are_refused(self):
        for name, path in ARGS.runners.items():
            code, result, stderr, _ = run(path, dict(TINY_MLP, task="infer", precision="bf16", mode="compiled"))
            self.assertEqual(code, 0, stderr)
            self.assert_valid(result, name)
            self.assertEqual(result["execution"]["autocast_dtype"], "bfloat16")
            self.assertEqual(set(judged(ARGS.torchsweep, result)["timing"]["latency"]), {"p50", "p90", "p99"})
            code, result, stderr, _ = run(path, dict(TINY_MLP, precision="fp16"))
            self.assertEqual(code, 3, stderr)
            self.assertEqual(result["status"], "unsupported")
            self.assertIn("fp16 is unsupported on this device (cpu)", result["error"])
            self.assert_valid(result, name)
            # This machine has no GPU (nor the CUDA builds): a GPU job says so, naming the device.
            code, result, stderr, _ = run(path, dict(TINY_MLP, device="cuda:1", precision="fp16"))
            self.assertEqual(code, 3, stderr)
            self.assertEqual(result["status"], "unsupported")
            self.assertRegex(result["error"], r"^device cuda:1: \w+ sees 0 GPU\(s\) here")
            self.assertEqual((result["context"]["gpu_count"], result["context"]["gpus"]), (0, []))
            self.assert_valid(result, name)
            for job, field in ((dict(TINY_MLP, batch_size=0), "batch_size"), (dict(TINY_MLP, model="vgg"), "model"),
                               (dict(TINY_MLP, surprise=1), "surprise")):
                code, result, stderr, _ = run(path, job)
                self.assertEqual(code, 2, stderr)
                self.assertIsNone(result)
                self.assertIn(field, stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runner", action="append", required=True, help="NAME=PATH")
    parser.add_argument("--worker", required=True)
    parser.add_argument("--schemas", type=pathlib.Path, required=True)
    parser.add_argument("--torchsweep", required=True, help="for `torchsweep judge`")
    ARGS, rest = parser.parse_known_args()
    ARGS.runners = dict(entry.split("=", 1) for entry in ARGS.runner)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
