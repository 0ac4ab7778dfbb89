#!/usr/bin/env python3
"""The user's own models (docs/models.md), through `torchsweep run` (a real
coordinator and agent): a factory, python:PACKAGE.MODULE:FACTORY, in the
torch.compile runner, eager and compiled, with its FLOPs counted; a
TorchScript file, torchscript:FILE, in the LibTorch worker (eager and
compiled, training) and the torch.compile runner; a factory that raises and
a file that does not load are failed results quoting the error, the sweep
going on; a name leaving the --model-path roots is refused at submit (exit
2, nothing run), a symbolic link out of a root by the agent, and again by a
runner started by hand.

    user_models_test.py --torchsweep PATH --runner PATH --worker PATH
"""
import argparse
import json
import pathlib
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import unittest

ARGS = None

FACTORY = textwrap.dedent("""\
    import torch


    def small_mlp(job):
        width = job.get("width", 32)
        module = torch.nn.Sequential(torch.nn.Linear(16, width), torch.nn.GELU(), torch.nn.Linear(width, 10))
        return {"module": module,
                "make_batch": lambda n, device: (torch.randn(n, 16, device=device),
                                                 torch.randint(10, (n,), device=device)),
                "loss": lambda output, targets: torch.nn.functional.cross_entropy(output, targets)}


    def broken(job):
        raise ValueError("cannot build: width must be even")
    """)

# A scripted MLP that says what it eats (input_shape), saved with torch.jit.save.
SCRIPT = textwrap.dedent("""\
    import sys
    from typing import List
    import torch

    class Scripted(torch.nn.Module):
        input_shape: List[int]

        def __init__(self):
            super().__init__()
            self.input_shape = [16]
            self.hidden = torch.nn.Linear(16, 32)
            self.head = torch.nn.Linear(32, 10)

        def forward(self, x):
            return self.head(torch.nn.functional.gelu(self.hidden(x)))

    torch.jit.save(torch.jit.script(Scripted()), sys.argv[1])
    """)

SHAPE = "batch_size: 8, epochs: 1, warmup: 2, iters: 2, threads: 1"


class UserModels(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory(prefix="ts_user_models_")
        self.folder = pathlib.Path(self.directory.name)
        self.root = self.folder / "models"
        (self.root / "mine").mkdir(parents=True)
        (self.root / "mine" / "__init__.py").write_text("")
        (self.root / "mine" / "models.py").write_text(FACTORY)
        (self.root / "scripted").mkdir()
        subprocess.run([sys.executable, "-c", SCRIPT, str(self.root / "scripted" / "mlp.pt")], check=True, timeout=120)
        (self.root / "scripted" / "garbage.pt").write_bytes(b"not a TorchScript archive")
        (self.folder / "outside").mkdir()
        (self.folder / "outside" / "mlp.pt").write_bytes((self.root / "scripted" / "mlp.pt").read_bytes())
        (self.root / "escape").symlink_to(self.folder / "outside")

    def tearDown(self):
        self.directory.cleanup()

    def run_sweep(self, name, text):
        path = self.folder / f"{name}.yaml"
        path.write_text(text)
        return subprocess.run([ARGS.torchsweep, "run", str(path), "--db", str(self.folder / f"{name}.db"),
                               "--no-report", "--peak-probe", "off", "--model-path", str(self.root),
                               "--work-dir", str(self.folder / "work")],
                              capture_output=True, text=True, timeout=600)

    def test_factories_and_torchscript_files_run_and_their_failures_are_results(self):
        done = self.run_sweep("mine", f"name: mine\nfixed: {{{SHAPE}}}\naxes:\n  model: [python:mine.models:small_mlp]\n"
                                      "  runner: [torch-compile]\n  mode: [eager, compiled]\n"
                                      "include:\n"
                                      "  - {model: torchscript:scripted/mlp.pt, runner: libtorch, mode: eager}\n"
                                      "  - {model: torchscript:scripted/mlp.pt, runner: libtorch, mode: compiled}\n"
                                      "  - {model: torchscript:scripted/mlp.pt, runner: torch-compile, mode: eager}\n"
                                      "  - {model: python:mine.models:broken, runner: torch-compile, mode: eager}\n"
                                      "  - {model: torchscript:scripted/garbage.pt, runner: libtorch, mode: eager}\n"
                                      "  - {model: torchscript:scripted/garbage.pt, runner: torch-compile, mode: eager}\n")
        self.assertEqual(done.returncode, 3, done.stdout + done.stderr)  # three failed, the others ran
        self.assertIn("3 of 8 jobs failed", done.stderr)
        with sqlite3.connect(f"file:{self.folder / 'mine.db'}?mode=ro", uri=True) as store:
            rows = store.execute("SELECT r.model, r.runner, r.mode, r.status, r.mode_ran, r.error, r.flops_per_step, "
                                 "d.document FROM results r LEFT JOIN result_documents d "
                                 "ON d.job_id = r.job_id AND d.attempt = r.attempt").fetchall()
        outcomes = {(model, runner, mode): (status, mode_ran, error, flops, json.loads(document or "null"))
                    for model, runner, mode, status, mode_ran, error, flops, document in rows}
        self.assertEqual(len(outcomes), 8, outcomes)
        for key in (("python:mine.models:small_mlp", "torch-compile", "eager"),
                    ("python:mine.models:small_mlp", "torch-compile", "compiled"),
                    ("torchscript:scripted/mlp.pt", "libtorch", "eager"),
                    ("torchscript:scripted/mlp.pt", "libtorch", "compiled"),
                    ("torchscript:scripted/mlp.pt", "torch-compile", "eager")):
            status, mode_ran, error, _, document = outcomes[key]
            self.assertEqual((status, mode_ran), ("ok", key[2]), (key, error))
            # 16 -> 32 -> 10 with biases, whichever way it came.
            self.assertEqual(document["execution"]["model_parameters"], 16 * 32 + 32 + 32 * 10 + 10, key)
            self.assertEqual(document["job"]["model_root"], str(self.root.resolve()), key)
        # FLOPs counted by torch.utils.flop_counter: 2 per multiply-add of the two layers a sample.
        counted = outcomes[("python:mine.models:small_mlp", "torch-compile", "eager")][4]["execution"]["counted_flops"]
        self.assertEqual(counted["forward_per_sample"], 2 * (16 * 32 + 32 * 10))
        self.assertEqual(outcomes[("python:mine.models:small_mlp", "torch-compile", "eager")][3], counted["per_step"])
        # The LibTorch worker counts no FLOPs; the agent has its environment's torch.compile runner count the
        # file, the same figures that runner counted running it, so the worker's results have efficiency too.
        scripted = outcomes[("torchscript:scripted/mlp.pt", "torch-compile", "eager")][4]["execution"]["counted_flops"]
        self.assertEqual(scripted["forward_per_sample"], 2 * (16 * 32 + 32 * 10))
        for mode in ("eager", "compiled"):
            _, _, _, flops, document = outcomes[("torchscript:scripted/mlp.pt", "libtorch", mode)]
            counted_here = document["execution"]["counted_flops"]
            self.assertEqual(counted_here["counted_by"], "torch-compile in environment system", mode)
            self.assertEqual({k: counted_here[k] for k in scripted}, scripted, mode)
            self.assertEqual(flops, scripted["per_step"], mode)
            self.assertEqual(document["efficiency"]["convention"], "flop_counter_2flops_per_mac_counted_step", mode)

        status, _, error, _, _ = outcomes[("python:mine.models:broken", "torch-compile", "eager")]
        self.assertEqual(status, "failed")
        self.assertIn("the factory raised ValueError: cannot build: width must be even", error)
        self.assertIn("models.py", error)  # where, in the user's code
        for runner in ("libtorch", "torch-compile"):
            status, _, error, _, _ = outcomes[("torchscript:scripted/garbage.pt", runner, "eager")]
            self.assertEqual(status, "failed", runner)
            self.assertIn("garbage.pt does not load", error, runner)

    def test_names_leaving_the_roots_are_refused_by_submit_agent_and_runner(self):
        for model, says in (("torchscript:../outside/mlp.pt", "without '..'"),
                            ("torchscript:/etc/passwd", "without '..'"),
                            ("python:mine/models:small_mlp", "a dotted module name"),
                            ("torchscript:escape/mlp.pt", "no escape/mlp.pt under the agent's model roots"),  # a link out
                            ("torchscript:scripted/missing.pt", "no scripted/missing.pt under the agent's model roots")):
            done = self.run_sweep("refused", f"name: refused\nfixed: {{{SHAPE}, runner: libtorch}}\n"
                                             f"axes:\n  model: ['{model}']\n")
            self.assertEqual(done.returncode, 2, (model, done.stdout + done.stderr))
            self.assertIn(says, done.stderr, model)
            self.assertIn("model", done.stderr)
            self.assertFalse((self.folder / "refused.db").exists(), model)  # nothing created
        # A runner started by hand checks the path again, whatever model_root the job says.
        for runner in (ARGS.worker, ARGS.runner):
            job = {"schema_version": 1, "model": "torchscript:escape/mlp.pt", "model_root": str(self.root),
                   "batch_size": 8, "epochs": 1, "iters": 1, "warmup": 0, "threads": 1}
            done = subprocess.run([runner, "--job", "-", "--out", str(self.folder / "out.json")],
                                  input=json.dumps(job), capture_output=True, text=True, timeout=120)
            self.assertEqual(done.returncode, 2, (runner, done.stdout + done.stderr))
            self.assertIn("lies outside the model root", done.stderr, runner)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--torchsweep", required=True)
    parser.add_argument("--runner", required=True)
    parser.add_argument("--worker", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
