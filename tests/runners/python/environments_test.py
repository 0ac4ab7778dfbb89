#!/usr/bin/env python3
"""PyTorch versions as environments (docs/environments.md), through real
coordinator and agent processes: the agent offers the installed
environments (the system's PyTorch and the set-up's newest) and one an
operator names with --env; a sweep with an `env` axis runs the
torch.compile runner in each, eager and compiled; every result names the
environment and the PyTorch version that ran it; `query --compare env`
sets the versions side by side with intervals; and `submit` refuses an
environment no agent offers, naming those offered, and one without the
job's runner. The LibTorch worker runs in each PyTorch version too, the
build linked against that environment's LibTorch. Library models
(torchvision:NAME, timm:NAME) are built by
each environment's own library, or refused naming its versions; so are
language models from transformers' configurations (hf:gpt2, hf:bert),
which also generate (hf:gpt2, hf:llama), eager and compiled.
Their parameters and FLOPs are checked against the library and
torch.utils.flop_counter run here.

    environments_test.py --torchsweep PATH --newest-python PATH
"""
import argparse
import json
import math
import pathlib
import sqlite3
import subprocess
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "support"))
from processes import ProcessTestCase, wait_until  # noqa: E402
from runner_testing import cpu_has_avx2  # noqa: E402

ARGS = None
SHAPE = "{model: mlp, batch_size: 8, input_size: 16, width: 32, depth: 2, epochs: 2, warmup: 2, iters: 2, threads: 1}"


# A library model's parameter count and one training step's FLOPs at a
# job's shape, from the library and torch.utils.flop_counter on real CPU
# tensors: an independent count. argv[1]: the jobs (model and sizes), all
# counted in one process of the environment (its imports once).
INDEPENDENT_COUNT = """
import json, sys, torch
from torch.utils.flop_counter import FlopCounterMode


def count(job):
    library, _, name = job["model"].partition(":")
    if library == "torchvision":
        import torchvision
        model = torchvision.models.get_model(name, weights=None, num_classes=job["num_classes"])
    elif library == "timm":
        import timm
        model = timm.create_model(name, pretrained=False, num_classes=job["num_classes"])
    else:
        import transformers
        config = transformers.AutoConfig.for_model(name, hidden_size=job["width"], num_hidden_layers=job["depth"],
                                                   num_attention_heads=job["heads"], intermediate_size=4 * job["width"],
                                                   **({"vocab_size": job["vocab"]} if "vocab" in job else {}))
        lm = transformers.AutoModelForMaskedLM if name == "bert" else transformers.AutoModelForCausalLM
        model = lm.from_config(config)
    model.train()
    if library == "hf":
        ids = torch.randint(config.vocab_size, (job["batch_size"], job["seq_len"]))
        run = lambda: model(input_ids=ids).logits.flatten(0, 1)
        targets = ids.flatten()
    else:
        run = lambda: model(torch.randn(job["batch_size"], 3, job["input_size"], job["input_size"]))
        targets = torch.randint(job["num_classes"], (job["batch_size"],))
    with FlopCounterMode(display=False) as forward:
        loss = torch.nn.functional.cross_entropy(run(), targets)
    with FlopCounterMode(display=False) as backward:
        loss.backward()
    return {"parameters": sum(p.numel() for p in model.parameters()), "forward": forward.get_total_flops(),
            "per_step": forward.get_total_flops() + backward.get_total_flops()}


print(json.dumps([count(job) for job in json.loads(sys.argv[1])]))
"""


class Environments(ProcessTestCase):
    FOLDER_PREFIX = "ts_environments_"

    def torchsweep(self, *arguments, check=True):
        done = subprocess.run([ARGS.torchsweep, *arguments], capture_output=True, text=True, timeout=120)
        if check:
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        return done

    def submit(self, name, text):
        path = self.folder / f"{name}.yaml"
        path.write_text(text)
        return self.torchsweep("submit", "--coordinator", f"127.0.0.1:{self.port}", str(path), check=False)

    def wait_finished(self, sweep_id, jobs, seconds=800):
        """Until the sweep's `jobs` jobs are all done or failed."""
        wait_until(lambda: (lambda s: s and sum(s["jobs"].get(k, 0) for k in ("done", "failed")) == jobs)(
            self.sweep_states(sweep_id)), seconds, f"the {jobs} jobs of {sweep_id}")

    def finished_sweep(self, name, text, jobs):
        """Submits a sweep, waits for its `jobs` jobs and returns its id."""
        submitted = self.submit(name, text)
        self.assertEqual(submitted.returncode, 0, submitted.stdout + submitted.stderr)
        sweep_id = submitted.stdout.split()[2].rstrip(":")
        self.wait_finished(sweep_id, jobs)
        return sweep_id

    @staticmethod
    def stored(db, columns, sweep_id):
        """The rows of `columns` (of results r) and each result's document, of one sweep."""
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as store:
            return store.execute(f"SELECT {columns}, d.document FROM results r JOIN result_documents d ON "
                                 "d.job_id = r.job_id AND d.attempt = r.attempt WHERE r.sweep_id = ?",
                                 (sweep_id,)).fetchall()

    def sweep_states(self, sweep_id):
        status = json.loads(self.torchsweep("status", "--coordinator", f"127.0.0.1:{self.port}", "--json").stdout)
        for sweep in status["sweeps"]:
            if sweep["sweep_id"] == sweep_id:
                return sweep
        return None

    def test_each_environment_runs_its_own_pytorch_and_query_compares_them(self):
        db = self.folder / "store.db"
        self.start("coordinator", [ARGS.torchsweep, "coordinator", "--listen", "127.0.0.1:0", "--db", str(db),
                                   "--port-file", str(self.folder / "port"), "--heartbeat-s", "0.5"])
        self.port = wait_until(lambda: self.read_file("port"), 60, "the coordinator's port")
        self.start("agent", [ARGS.torchsweep, "agent", "--coordinator", f"127.0.0.1:{self.port}", "--name", "envs",
                             "--env", f"operators={ARGS.newest_python}", "--peak-probe", "off",
                             "--work-dir", str(self.folder / "agent")])

        def offered():
            status = json.loads(self.torchsweep("status", "--coordinator", f"127.0.0.1:{self.port}", "--json").stdout)
            return status["agents"] if status.get("agents") else None
        agents = wait_until(offered, 120, "the agent's registration")
        self.assertEqual(len(agents), 1, agents)

        # Refused at submit: an environment no agent offers, and one without the job's runner.
        refused = self.submit("unknown", f"name: unknown\nfixed: {SHAPE}\naxes:\n  env: [system, torch-0.1]\n")
        self.assertEqual(refused.returncode, 2, refused.stdout + refused.stderr)
        self.assertIn("torch-0.1", refused.stderr)
        self.assertIn("offered: ", refused.stderr)
        for name in ("system", "torch-2.15", "operators"):
            self.assertIn(name, refused.stderr)

        # Eager five times in each version (an interval needs five runs a
        # side); compiled once in each, and in the operator's environment.
        eager = self.submit("eager", f"name: eager\nfixed: {SHAPE[:-1]}, runner: torch-compile}}\n"
                                     "axes:\n  env: [system, torch-2.15]\nrepeats: 5\n")
        compiled = self.submit("compiled", f"name: compiled\nfixed: {SHAPE[:-1]}, runner: torch-compile, mode: compiled}}\n"
                                           "axes:\n  env: [system, torch-2.15, operators]\n")
        sweep_ids = []
        for submitted in (eager, compiled):
            self.assertEqual(submitted.returncode, 0, submitted.stdout + submitted.stderr)
            sweep_ids.append(submitted.stdout.split()[2].rstrip(":"))
        for sweep_id, jobs in zip(sweep_ids, (10, 3)):
            self.wait_finished(sweep_id, jobs)
            self.assertEqual(self.sweep_states(sweep_id)["jobs"].get("done"), jobs, self.sweep_states(sweep_id))

        # Every result names its environment and the PyTorch that ran.
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as store:
            rows = store.execute("SELECT r.env, r.torch_version, r.mode_ran, d.document FROM results r "
                                 "JOIN result_documents d ON d.job_id = r.job_id AND d.attempt = r.attempt "
                                 "WHERE r.sweep_id = ?", (sweep_ids[1],)).fetchall()
            counts = dict(store.execute("SELECT env, COUNT(*) FROM results WHERE sweep_id = ? GROUP BY env",
                                        (sweep_ids[0],)).fetchall())
        self.assertEqual(counts, {"system": 5, "torch-2.15": 5})
        versions = {}
        for env, torch_version, mode_ran, document in rows:
            self.assertEqual(mode_ran, "compiled", env)  # TorchInductor ran, no eager fallback
            result = json.loads(document)
            context = result["context"]
            self.assertEqual(context["env"]["name"], env)
            # Inductor's kernels use this CPU's vector instructions in every environment: in a venv's PyTorch
            # beside the system's LibTorch its ISA probe once linked the system's library, failed to load, and
            # every kernel was scalar (docs/compiler.md).
            kernels = result["execution"]["compile"]["cpu_kernels"]
            if cpu_has_avx2():
                self.assertTrue(kernels["vector_isa"].startswith("avx"), (env, kernels, result["warnings"]))
            self.assertFalse([w for w in result["warnings"] if "vector" in w], (env, result["warnings"]))
            self.assertEqual(context["env"]["versions"]["torch"].split("+")[0], torch_version.split("+")[0])
            versions[env] = torch_version
        self.assertEqual(sorted(versions), ["operators", "system", "torch-2.15"])
        self.assertTrue(versions["torch-2.15"].startswith("2.15."), versions)
        self.assertTrue(versions["system"].startswith("2.6."), versions)  # Debian's
        self.assertEqual(versions["operators"], versions["torch-2.15"])  # the same interpreter, another name

        # The versions side by side, with the speedup's interval.
        compared = json.loads(self.torchsweep("query", "--db", str(db), "--sweep", sweep_ids[0], "--compare",
                                              "env=system,torch-2.15", "--format", "json").stdout)
        self.assertEqual(len(compared), 1, compared)
        row = compared[0]
        self.assertEqual((row["runs:system"], row["runs:torch-2.15"]), (5, 5))
        self.assertLessEqual(row["speedup_low"], row["speedup"])
        self.assertLessEqual(row["speedup"], row["speedup_high"])
        table = self.torchsweep("query", "--db", str(db), "--sweep", sweep_ids[0], "--compare",
                                "env=system,torch-2.15").stdout
        self.assertIn("epoch_time_s:torch-2.15", table)

        # Models named from the libraries, built by each PyTorch version's
        # own, eager and compiled. Refused at submit, as the environments'
        # runners listed their libraries' models: a name an environment's
        # library lacks or where it is not installed (the bare system python
        # has no timm), naming the environments that have it; a name no
        # library has, with the closest. The runner refuses them too, naming
        # the versions, when it is started by hand.
        shape = ("runner: torch-compile, batch_size: 4, input_size: 32, num_classes: 10, epochs: 1, warmup: 2, "
                 "iters: 2, threads: 1")
        elsewhere = self.submit("elsewhere", f"name: elsewhere\nfixed: {{{shape}, env: system}}\n"
                                             "axes:\n  model: [timm:test_resnet]\n")
        self.assertEqual(elsewhere.returncode, 2, elsewhere.stdout + elsewhere.stderr)
        self.assertIn("runner 'torch-compile' has no model 'timm:test_resnet' in environment 'system'", elsewhere.stderr)
        self.assertIn("environments that have it: operators, torch-2.15, torch-2.6", elsewhere.stderr)
        mistyped = self.submit("mistyped", f"name: mistyped\nfixed: {{{shape}, env: torch-2.15}}\n"
                                           "axes:\n  model: [torchvision:resnet_999]\n")
        self.assertEqual(mistyped.returncode, 2, mistyped.stdout + mistyped.stderr)
        self.assertIn("no runner 'torch-compile' can run model 'torchvision:resnet_999' in environment 'torch-2.15'; "
                      "closest: torchvision:resnet", mistyped.stderr)
        for python, model, says in (("python3", "timm:test_resnet", "timm is not installed in this environment "
                                                                     "(torch 2.6"),
                                    (ARGS.newest_python, "torchvision:resnet_999", "torchvision 0.29.2")):
            job = self.folder / "by_hand.json"
            job.write_text(json.dumps({"schema_version": 1, "model": model, "batch_size": 4, "input_size": 32}))
            by_hand = subprocess.run([python, str(pathlib.Path(ARGS.torchsweep).parent / "torchsweep-torch-compile"),
                                      "--job", str(job), "--out", "-"], capture_output=True, text=True, timeout=300)
            self.assertEqual(by_hand.returncode, 3, by_hand.stderr)
            self.assertEqual(json.loads(by_hand.stdout)["status"], "unsupported")
            self.assertIn(says, json.loads(by_hand.stdout)["error"])
        library = (f"name: libraries\nfixed: {{{shape}}}\n"
                   "axes:\n  model: [torchvision:squeezenet1_1, timm:test_resnet]\n"
                   "  env: [torch-2.6, torch-2.15]\n  mode: [eager, compiled]\n"
                   # AlexNet's pooling needs more than 32 pixels: a model that fails to step, one failed result.
                   "include:\n  - {model: torchvision:alexnet, env: torch-2.15, mode: eager}\n")
        library_id = self.finished_sweep("libraries", library, 9)
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as store:
            outcomes = {(model, env, mode): (status, error, mode_ran) for model, env, mode, status, error, mode_ran in
                        store.execute("SELECT model, env, mode, status, error, mode_ran FROM results "
                                      "WHERE sweep_id = ?", (library_id,))}
        self.assertEqual(len(outcomes), 9, outcomes)
        status, error, _ = outcomes[("torchvision:alexnet", "torch-2.15", "eager")]
        self.assertEqual(status, "failed")
        self.assertIn("Output size is too small", error)
        for model in ("torchvision:squeezenet1_1", "timm:test_resnet"):
            for env in ("torch-2.6", "torch-2.15"):
                for mode in ("eager", "compiled"):
                    self.assertEqual(outcomes[(model, env, mode)][::2], ("ok", mode), (model, env))

        # The suite's summary, as the compiler dashboard gives it: per
        # environment, the configurations run (failed ones included), how
        # many passed, and the geometric mean of their compiled speedups.
        summary = {row["env"]: row for row in json.loads(self.torchsweep(
            "query", "--db", str(db), "--sweep", library_id, "--compare", "mode", "--summary", "--group-by", "env",
            "--format", "json").stdout)}
        self.assertEqual({env: (row["configurations"], row["passed"]) for env, row in summary.items()},
                         {"torch-2.6": (2, 2), "torch-2.15": (3, 2)})
        speedups = [row["speedup"] for row in json.loads(self.torchsweep(
            "query", "--db", str(db), "--sweep", library_id, "--compare", "mode", "--where", "env=torch-2.15",
            "--format", "json").stdout)]
        self.assertEqual(len(speedups), 2)
        self.assertAlmostEqual(summary["torch-2.15"]["geomean_speedup"], math.sqrt(speedups[0] * speedups[1]))

        # Language models from transformers' configurations, two layers of
        # width 64: GPT-2 (causal) and BERT (masked), in both versions (each
        # with its own transformers), eager and compiled.
        language_id = self.finished_sweep(
            "language", "name: language\nfixed: {runner: torch-compile, batch_size: 2, seq_len: 32, width: 64, depth: 2, "
                        "heads: 4, epochs: 1, warmup: 2, iters: 2, threads: 1}\n"
                        "axes:\n  model: [hf:gpt2, hf:bert]\n  env: [torch-2.6, torch-2.15]\n  mode: [eager, compiled]\n"
                        "include:\n  - {model: hf:llama-3.2-1b, env: torch-2.15, mode: eager}\n"
                        # The job's vocabulary and no dropout (#49): GPT-2's 50,257 tokens were kept whatever vocab said.
                        "  - {model: hf:gpt2, env: torch-2.15, mode: eager, vocab: 1000, dropout: 'off'}\n", 10)
        ran = self.stored(db, "r.model, r.env, r.mode, r.status, r.mode_ran, r.error", language_id)
        self.assertEqual(len(ran), 10, ran)
        for model, env, mode, status, mode_ran, error, _ in ran:
            self.assertEqual((status, mode_ran), ("ok", mode), (model, env, error))
        # A configuration the repository names (schemas/hf_configurations.json),
        # at the job's sizes: Llama 3.2's vocabulary of 128256, embeddings tied.
        llama = next(json.loads(document)["execution"]["model_parameters"]
                     for model, *_, document in ran if model == "hf:llama-3.2-1b")
        layer = 4 * 64 * 64 + 3 * 64 * 256 + 2 * 64  # q, k, v, o (4 key/value heads: gcd(8, 4)); the MLP; two norms
        self.assertEqual(llama, 128256 * 64 + 2 * layer + 64)
        gpt2 = {json.loads(document)["job"].get("vocab"): json.loads(document)["execution"]
                for model, env, mode, *_, document in ran if (model, env, mode) == ("hf:gpt2", "torch-2.15", "eager")}
        self.assertEqual(gpt2[None]["model_parameters"] - gpt2[1000]["model_parameters"], (50257 - 1000) * 64)
        self.assertEqual(gpt2[None]["dropout"]["asked"], "model")
        self.assertEqual(gpt2[1000]["dropout"]["asked"], "off")
        self.assertGreater(gpt2[1000]["dropout"]["layers"], 0)  # embeddings', attention's and residual drops

        # Generation (docs/language-models.md) of transformers' causal models
        # in both versions: DynamicCache eager, StaticCache compiled, and the
        # gate: compiled greedy tokens equal eager ones.
        generate_id = self.finished_sweep(
            "generate", "name: generate\nfixed: {runner: torch-compile, task: generate, batch_size: 2, width: 64, "
                        "depth: 2, heads: 4, prompt_len: 8, new_tokens: 6, epochs: 2, warmup: 1, threads: 1}\n"
                        "axes:\n  model: [hf:gpt2, hf:llama]\n  env: [torch-2.6, torch-2.15]\n"
                        "  mode: [eager, compiled]\n", 8)
        generated = self.stored(db, "r.model, r.env, r.mode_ran, r.status, r.error, r.tokens_match, r.decode_p50_s",
                                generate_id)
        self.assertEqual(len(generated), 8, generated)
        tokens = {}
        for model, env, mode_ran, status, error, match, decode_p50, document in generated:
            self.assertEqual(status, "ok", (model, env, error))
            self.assertEqual(match, 1 if mode_ran == "compiled" else None, (model, env, mode_ran))
            self.assertGreater(decode_p50, 0)
            generation = json.loads(document)["generation"]
            self.assertEqual(generation["cache"], "static" if mode_ran == "compiled" else "dynamic")
            tokens.setdefault((model, env), []).append(generation["tokens"])
        for case, lists in tokens.items():
            self.assertEqual(lists[0], lists[1], case)  # eager and compiled, the same weights and prompts
        # Refused by the runner, naming the field: a masked model, and a
        # generation beyond GPT-2's 1024 positions (the model type's own).
        for document, field in (({"model": "hf:bert"}, "task"),
                                ({"model": "hf:gpt2", "prompt_len": 1000, "new_tokens": 100}, "new_tokens")):
            job = self.folder / "generate.json"
            job.write_text(json.dumps(dict({"schema_version": 1, "task": "generate", "batch_size": 1, "width": 64,
                                            "depth": 1, "heads": 4}, **document)))
            refused = subprocess.run([ARGS.newest_python, str(pathlib.Path(ARGS.torchsweep).parent /
                                                              "torchsweep-torch-compile"),
                                      "--job", str(job), "--out", str(self.folder / "refused.json")],
                                     capture_output=True, text=True, timeout=300)
            self.assertEqual(refused.returncode, 2, refused.stderr)
            self.assertIn(f"invalid job: {field}: ", refused.stderr)
            self.assertFalse((self.folder / "refused.json").exists())

        # Parameters and FLOPs as the library and torch.utils.flop_counter
        # give them here, on real tensors, against what the runner reported
        # and the store's efficiency figures.
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as store:
            counted = store.execute(
                "SELECT r.model, r.env, r.flops_per_step, r.achieved_flops_per_s, d.document FROM results r "
                "JOIN result_documents d ON d.job_id = r.job_id AND d.attempt = r.attempt "
                "WHERE r.sweep_id IN (?, ?) AND r.status = 'ok' AND r.mode = 'eager' AND r.model != 'hf:llama-3.2-1b'",
                (library_id, language_id)).fetchall()
        self.assertEqual(len(counted), 9, counted)
        by_python = {}
        for row in counted:
            by_python.setdefault(json.loads(row[-1])["context"]["env"]["python"], []).append(row)
        owns = {}
        for python, rows in by_python.items():
            jobs = [json.loads(row[-1])["job"] for row in rows]
            found = json.loads(subprocess.run([python, "-c", INDEPENDENT_COUNT, json.dumps(jobs)], capture_output=True,
                                              text=True, check=True, timeout=600).stdout)
            owns.update((id(row), own) for row, own in zip(rows, found))
        for row in counted:
            model, env, flops_per_step, achieved, document = row
            own = owns[id(row)]
            document = json.loads(document)
            execution = document["execution"]
            batch = document["job"]["batch_size"]
            self.assertEqual(execution["model_parameters"], own["parameters"], (model, env))
            self.assertEqual(execution["counted_flops"]["per_step"], own["per_step"], (model, env))
            self.assertEqual(execution["counted_flops"]["forward_per_sample"] * batch, own["forward"], (model, env))
            self.assertEqual(flops_per_step, own["per_step"], (model, env))
            self.assertGreater(achieved, 0)

        # The LibTorch worker, built once per PyTorch environment: the job's
        # env picks the binary, linked against that environment's LibTorch,
        # eager and compiled (its TorchScript path).
        native_id = self.finished_sweep("worker", f"name: worker\nfixed: {SHAPE[:-1]}, runner: libtorch}}\n"
                                                  "axes:\n  env: [system, torch-2.6, torch-2.15]\n"
                                                  "  mode: [eager, compiled]\n", 6)
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as store:
            ran = store.execute("SELECT r.env, r.mode, r.status, r.mode_ran, r.torch_version, r.error, d.document "
                                "FROM results r JOIN result_documents d ON d.job_id = r.job_id AND "
                                "d.attempt = r.attempt WHERE r.sweep_id = ?", (native_id,)).fetchall()
        self.assertEqual(len(ran), 6, ran)
        programs = {}
        for env, mode, status, mode_ran, torch_version, error, document in ran:
            self.assertEqual((status, mode_ran), ("ok", mode), (env, error))
            self.assertTrue(torch_version.startswith("2.15." if env == "torch-2.15" else "2.6."), (env, torch_version))
            programs[env] = json.loads(document)["context"]["env"]
        self.assertEqual(programs["torch-2.15"]["versions"]["torch"].split("+")[0], "2.15.0")
        # A program of its own runs only where it was built: not in an operator's interpreter.
        wrong = self.submit("wrong", f"name: wrong\nfixed: {SHAPE[:-1]}, runner: libtorch}}\n"
                                     "axes:\n  env: [operators]\n")
        self.assertEqual(wrong.returncode, 2, wrong.stdout + wrong.stderr)
        self.assertIn("runner 'libtorch' does not run in environment 'operators'", wrong.stderr)
        # A library model in a runner that builds none is refused at submit.
        native = self.submit("native", "name: native\nfixed: {runner: libtorch, model: timm:test_resnet}\naxes: {batch_size: [4]}\n")
        self.assertEqual(native.returncode, 2, native.stdout + native.stderr)
        self.assertIn("no runner 'libtorch' can run model 'timm:test_resnet'", native.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--torchsweep", required=True)
    parser.add_argument("--newest-python", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
