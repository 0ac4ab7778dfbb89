#!/usr/bin/env python3
"""Initial weights under the library's own names (#49, docs/frameworks.md):
a transformers model's own state_dict(), saved by transformers' user with
safetensors, is the starting point of every run of the model in every
environment whose transformers builds it, eager and compiled: the first
loss on a reference batch is the one transformers itself computes from
those weights. `torchsweep weights` writes such a file for a library
model (a tied tensor once) and for a built-in one, and a run from it
starts where a run of the same seed does.

    library_weights_test.py --torchsweep PATH --python NAME=PYTHON ...
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

ARGS = None
SIZES = {"width": 64, "depth": 2, "heads": 4, "vocab": 1000, "seq_len": 16}

# GPT-2 as its user makes it, with the job's sizes and no dropout; its own
# state_dict() (the LM head tied to the embedding: both names, as
# state_dict() gives them) and a reference batch, and the loss transformers
# computes on it. argv: weights file, batch file.
OWN_MODEL = f"""
import json, sys, torch, transformers
from safetensors.torch import save_file
config = transformers.AutoConfig.for_model("gpt2", hidden_size={SIZES['width']}, num_hidden_layers={SIZES['depth']},
                                           num_attention_heads={SIZES['heads']}, vocab_size={SIZES['vocab']},
                                           resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
torch.manual_seed(123)
model = transformers.AutoModelForCausalLM.from_config(config).train()
save_file({{name: tensor.clone().contiguous() for name, tensor in model.state_dict().items()}}, sys.argv[1])
ids = torch.randint({SIZES['vocab']}, (2, {SIZES['seq_len']} + 1), generator=torch.Generator().manual_seed(5))
inputs, targets = ids[:, :-1].contiguous(), ids[:, 1:].contiguous()
save_file({{"inputs": inputs, "targets": targets}}, sys.argv[2])
loss = torch.nn.functional.cross_entropy(model(input_ids=inputs).logits.flatten(0, 1), targets.flatten())
print(json.dumps({{"loss": loss.item()}}))
"""


class LibraryWeights(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory(prefix="ts_library_weights_")
        cls.folder = pathlib.Path(cls.directory.name)
        cls.runner = pathlib.Path(ARGS.torchsweep).parent / "torchsweep-torch-compile"

    @classmethod
    def tearDownClass(cls):
        cls.directory.cleanup()

    def run_job(self, python, job):
        """The torch-compile runner in `python`'s environment: its result."""
        job_file, out = self.folder / "job.json", self.folder / "result.json"
        out.unlink(missing_ok=True)
        job_file.write_text(json.dumps(dict({"schema_version": 1, "batch_size": 2, "epochs": 1, "warmup": 2,
                                             "iters": 1, "threads": 1}, **job)))
        finished = subprocess.run([python, str(self.runner), "--job", str(job_file), "--out", str(out)],
                                  capture_output=True, text=True, timeout=600)
        self.assertEqual(finished.returncode, 0, finished.stderr[-3000:])
        return json.loads(out.read_text())

    def test_a_transformers_models_own_state_dict_starts_every_run_where_transformers_does(self):
        weights, batch = self.folder / "gpt2.safetensors", self.folder / "batch.safetensors"
        first_python = next(iter(ARGS.pythons.values()))
        made = subprocess.run([first_python, "-c", OWN_MODEL, str(weights), str(batch)], capture_output=True,
                              text=True, timeout=300, check=True)
        expected = json.loads(made.stdout)["loss"]
        job = dict(SIZES, model="hf:gpt2", dropout="off", initial_weights=str(weights), reference_batch=str(batch))
        runs = [(env, "eager") for env in ARGS.pythons] + [(next(iter(ARGS.pythons)), "compiled")]
        for env, mode in runs:
            result = self.run_job(ARGS.pythons[env], dict(job, mode=mode))
            self.assertEqual(result["status"], "ok", (env, mode, result.get("error")))
            self.assertEqual(result["execution"]["mode"], mode)
            self.assertEqual(result["execution"]["dropout"]["asked"], "off")
            first = result["loss"]["first_step"]
            self.assertAlmostEqual(first, expected, delta=1e-5 * abs(expected), msg=(env, mode))

    def test_torchsweep_weights_writes_what_a_run_of_that_seed_starts_from(self):
        python = next(iter(ARGS.pythons.values()))
        for model, fields, extra in (("hf:gpt2", SIZES, ["--python", python]), ("mlp", {"width": 32, "depth": 2}, [])):
            out = self.folder / f"{model.replace(':', '_')}.safetensors"
            sets = [argument for knob, value in fields.items() for argument in ("--set", f"{knob}={value}")]
            written = subprocess.run([ARGS.torchsweep, "weights", model, str(out), "--seed", "11", *sets, *extra],
                                     capture_output=True, text=True, timeout=300)
            self.assertEqual(written.returncode, 0, written.stderr[-3000:])
            self.assertIn("wrote the initial weights of " + model, written.stdout)
            job = dict(fields, model=model, seed=11, **({"dropout": "off"} if model.startswith("hf:") else {}))
            seeded = self.run_job(python, job)
            from_file = self.run_job(python, dict(job, initial_weights=str(out)))
            self.assertEqual(from_file["loss"]["first_step"], seeded["loss"]["first_step"], model)
            self.assertEqual(from_file["execution"]["initial_parameter_l1"], seeded["execution"]["initial_parameter_l1"])
        # A knob the model does not take is refused before any runner starts, naming it.
        refused = subprocess.run([ARGS.torchsweep, "weights", "resnet18", str(self.folder / "x.safetensors"),
                                  "--set", "width=64"], capture_output=True, text=True, timeout=60)
        self.assertEqual(refused.returncode, 2, refused.stderr)
        self.assertIn("width", refused.stderr)
        self.assertFalse((self.folder / "x.safetensors").exists())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--torchsweep", required=True)
    parser.add_argument("--python", action="append", required=True, help="ENV=PYTHON, an environment with transformers")
    ARGS, rest = parser.parse_known_args()
    ARGS.pythons = dict(entry.split("=", 1) for entry in ARGS.python)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
