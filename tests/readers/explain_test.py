#!/usr/bin/env python3
"""torchsweep explain A B and the traces beside the store (docs/explain.md),
through `torchsweep run` (a real coordinator, agent and torch.compile
runner):

- a user's model with a planted slow operator (a chain of batched matrix
  products behind a second factory) is named by explain at the top, added,
  with the operators' difference reconciled against the measured one
  within the bound it states; the sides, run without a profile, are
  profiled by explain itself, once;
- eager against compiled on an MLP shows Inductor's fused kernels added and
  ATen's GELUs removed, the compiler's figures on the compiled side;
- bad sides are refused naming the side and what is wrong, the store
  unchanged; --format markdown is a block with each side's reproducing
  command;
- a trace over the job's max_trace_mib is not stored, the result is;
  `torchsweep gc` keeps traces by age and total size.

    explain_test.py --torchsweep PATH
"""
import argparse
import contextlib
import gzip
import hashlib
import json
import pathlib
import re
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import unittest

ARGS = None

PLANTED = textwrap.dedent("""\
    import torch


    class Planted(torch.nn.Module):
        def __init__(self, slow):
            super().__init__()
            self.hidden = torch.nn.Linear(64, 128)
            self.head = torch.nn.Linear(128, 10)
            self.chain = torch.nn.Parameter(torch.randn(8, 128, 128) / 12)
            self.slow = slow

        def forward(self, x):
            h = torch.nn.functional.gelu(self.hidden(x))
            if self.slow:  # the planted slow operator: batched products whose result changes nothing
                z = self.chain
                for _ in range(6):
                    z = torch.bmm(z, self.chain)
                h = h + 0 * z.mean()
            return self.head(h)


    def factory(slow):
        return lambda job: {"module": Planted(slow),
                            "make_batch": lambda n, device: (torch.randn(n, 64, device=device),
                                                             torch.randint(10, (n,), device=device))}


    plain = factory(False)
    slow = factory(True)
    """)

SHAPE = "batch_size: 16, epochs: 3, warmup: 3, iters: 6, threads: 1"


def run(*arguments, timeout=900):
    return subprocess.run([ARGS.torchsweep, *arguments], capture_output=True, text=True, timeout=timeout)


def read_only(db):
    return contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True))


def results_count(db):
    with read_only(db) as store:
        return store.execute("SELECT COUNT(*) FROM results").fetchone()[0]


class Store(unittest.TestCase):
    """A sweep run into a store of its own, in a folder of its own."""

    SWEEP = ""

    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory(prefix="ts_explain_")
        cls.folder = pathlib.Path(cls.directory.name)
        cls.root = cls.folder / "models"
        (cls.root / "planted").mkdir(parents=True)
        (cls.root / "planted" / "__init__.py").write_text("")
        (cls.root / "planted" / "mlp.py").write_text(PLANTED)
        cls.db = cls.folder / "explain.db"
        (cls.folder / "sweep.yaml").write_text(cls.SWEEP)
        done = run("run", str(cls.folder / "sweep.yaml"), *cls.local("--db", str(cls.db)), "--no-report")
        assert done.returncode == 0, done.stdout + done.stderr

    @classmethod
    def tearDownClass(cls):
        cls.directory.cleanup()

    @classmethod
    def local(cls, *arguments):
        return [*arguments, "--peak-probe", "off", "--model-path", str(cls.root), "--work-dir",
                str(cls.folder / "work")]

    def explain(self, a, b, *arguments):
        return run("explain", a, b, *self.local("--db", str(self.db)), *arguments)


class PlantedOperator(Store):
    SWEEP = f"name: planted\nfixed: {{{SHAPE}, runner: torch-compile, mode: eager}}\n" \
            "axes:\n  model: [python:planted.mlp:plain, python:planted.mlp:slow]\nrepeats: 2\n"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.first = run("explain", "model=python:planted.mlp:plain", "model=python:planted.mlp:slow",
                        *cls.local("--db", str(cls.db)), "--format", "json")

    def test_the_planted_operator_comes_first_and_the_profile_accounts_for_the_difference(self):
        self.assertEqual(self.first.returncode, 0, self.first.stderr)
        # Neither side had a profile: explain ran one profiling job a side, in a sweep of its own.
        self.assertEqual(self.first.stderr.count("has no profiled run: profiling it"), 2, self.first.stderr)
        explanation = json.loads(self.first.stdout)
        self.assertEqual([side["runs"] for side in explanation["sides"]], [3, 3])  # 2 runs and the profiled one
        top = explanation["operators"][0]
        self.assertEqual((top["name"], top["change"]), ("aten::bmm", "added"), explanation["operators"][:3])
        self.assertGreater(top["share"], 0.5)
        self.assertEqual(top["calls"][0], 0)
        self.assertGreaterEqual(top["calls"][1], 12)  # six forward, twice that backward
        reconciliation = explanation["reconciliation"]
        self.assertGreater(reconciliation["measured_s"], 0)
        self.assertTrue(reconciliation["within_bound"], reconciliation)
        self.assertLessEqual(abs(reconciliation["unexplained_s"]), reconciliation["bound_s"])
        # The terms add up to the measured difference.
        terms = (reconciliation["operators_s"] + reconciliation["outside_operators_s"]
                 - reconciliation["profiler_cost_s"] + reconciliation["profiled_runs_s"])
        self.assertAlmostEqual(terms, reconciliation["measured_s"], delta=1e-9)
        self.assertEqual(explanation["time"], "self_cpu_s")
        self.assertEqual(explanation["kernels"], [])  # a CPU
        self.assertEqual(explanation["compiler"]["sides"], [None, None])  # neither side compiled

    def test_each_side_has_its_trace_beside_the_store_and_a_second_explain_profiles_nothing(self):
        explanation = json.loads(self.first.stdout)
        for side in explanation["sides"]:
            trace = pathlib.Path(side["trace"]["path"])
            self.assertTrue(side["trace"]["present"])
            self.assertEqual(trace.parent.parent, pathlib.Path(f"{self.db}.artifacts"))
            self.assertEqual(hashlib.sha256(trace.read_bytes()).hexdigest(), trace.name)
            self.assertEqual(trace.stat().st_size, side["trace"]["bytes"])
            events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
            self.assertTrue(any(event.get("name") == "aten::bmm" for event in events) == (side["side"] == "B"))
        before = results_count(self.db)
        again = self.explain("model=python:planted.mlp:plain", "model=python:planted.mlp:slow", "--no-profile",
                             "--format", "json")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual(results_count(self.db), before)
        self.assertEqual([side["profiled_run"] for side in json.loads(again.stdout)["sides"]],
                         [side["profiled_run"] for side in explanation["sides"]])

    def test_markdown_is_a_block_with_the_table_and_each_sides_reproducing_command(self):
        done = self.explain("model=python:planted.mlp:plain", "model=python:planted.mlp:slow", "--no-profile",
                            "--format", "markdown")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(done.stdout.startswith("### Why B differs from A\n"), done.stdout[:200])
        self.assertRegex(done.stdout, r"\| aten::bmm \| added \| 0 \| \d+ \|")
        self.assertEqual(done.stdout.count("torchsweep run repro.json"), 2)
        self.assertIn('"model":["python:planted.mlp:slow"]', done.stdout)

    def test_bad_sides_are_refused_naming_the_side_and_the_store_is_unchanged(self):
        before = results_count(self.db)
        cases = [
            (("model=python:planted.mlp:plain", "colour=red"), "B: unknown axis 'colour'"),
            (("model=python:planted.mlp:plain", "mode"), "B: expected AXIS=VALUE, got 'mode'"),
            (("model=nothing", "model=python:planted.mlp:slow"), "A: no ok result passes 'model=nothing'"),
            (("runner=torch-compile", "model=python:planted.mlp:slow"),
             "A: 'runner=torch-compile' names 2 configurations, which differ in model (python:planted.mlp:plain, "
             "python:planted.mlp:slow)"),
        ]
        for (a, b), message in cases:
            done = self.explain(a, b, "--no-profile")
            self.assertEqual(done.returncode, 2, (a, b, done.stderr))
            self.assertIn(message, done.stderr)
        done = self.explain("model=python:planted.mlp:plain", "model=python:planted.mlp:slow", "--format", "csv")
        self.assertEqual(done.returncode, 2)
        self.assertIn("--format: expected table, json or markdown", done.stderr)
        self.assertEqual(results_count(self.db), before)


class EagerAndCompiled(Store):
    """The README's example: examples/cpu-explain.yaml, then explain mode=eager mode=compiled."""
    SWEEP = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "cpu-explain.yaml").read_text()

    def test_compiled_shows_inductors_fused_kernels_and_the_compilers_figures(self):
        # --where: the other test adds a run of batch size 16 to this store.
        done = self.explain("mode=eager", "mode=compiled", "--no-profile", "--format", "json", "--top", "40",
                            "--where", "batch_size=32")
        self.assertEqual(done.returncode, 0, done.stderr)
        explanation = json.loads(done.stdout)
        self.assertEqual([(side["runs"], side["profiled_runs"]) for side in explanation["sides"]], [(5, 5), (5, 5)])
        self.assertEqual(explanation["timed"]["interval_from"], "runs")
        self.assertTrue(explanation["reconciliation"]["within_bound"], explanation["reconciliation"])
        rows = {row["name"]: row for row in explanation["operators"]}
        fused = [name for name, row in rows.items() if "cpp_fused" in name and row["change"] == "added"]
        self.assertTrue(any("gelu" in name for name in fused), sorted(rows))
        for name in ("aten::gelu", "aten::gelu_backward"):
            self.assertEqual(rows[name]["change"], "removed")
            self.assertEqual(rows[name]["calls"], [3, 0])  # three hidden layers
        self.assertEqual((rows["aten::mm"]["change"], rows["aten::mm"]["calls"]), ("changed", [7, 7]))
        self.assertEqual((rows["aten::addmm"]["change"], rows["aten::addmm"]["calls"]), ("changed", [4, 4]))
        self.assertEqual(len([name for name in fused if "gelu" in name]), 6, fused)  # three forward, three backward
        compiler = explanation["compiler"]
        self.assertIsNone(compiler["sides"][0])
        self.assertGreaterEqual(compiler["sides"][1]["graphs"], 1)
        self.assertGreater(compiler["sides"][1]["compile_s"], 0)
        text = self.explain("mode=eager", "mode=compiled", "--no-profile", "--where", "batch_size=32")
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("A: not compiled", text.stdout)
        # The report's Why section: this pair, its traces linked relative to the page (the browser test reads it).
        page = self.folder / "pages" / "report.html"
        page.parent.mkdir()
        written = run("report", "--db", str(self.db), "--sweep", "cpu-explain", "--out", str(page))
        self.assertEqual(written.returncode, 0, written.stderr)
        data = json.loads(re.search(r'<script id="report-data" type="application/json">(.*?)</script>',
                                    page.read_text(), re.S).group(1))
        entries = data["why"]["entries"]
        self.assertEqual([entry["kind"] for entry in entries], ["compiled vs eager"])
        self.assertEqual(data["why"]["without_profiles"], 0)
        for side in entries[0]["sides"]:
            self.assertTrue(side["trace"].startswith("../explain.db.artifacts/"), side)
            self.assertTrue((page.parent / side["trace"]).is_file(), side)
        self.assertRegex(text.stdout, r"B: \d+ graph\(s\), 0 graph break\(s\)")

    def test_traces_over_their_limit_are_not_stored_and_gc_keeps_them_by_age_and_size(self):
        # After the other test of the class (unittest runs them by name): gc removes the traces it reads.
        artifacts = pathlib.Path(f"{self.db}.artifacts")
        stored = sorted(artifacts.glob("*/*"))
        self.assertEqual(len(stored), 10)
        limited = self.folder / "limited.yaml"
        limited.write_text(f"name: limited\nfixed: {{{SHAPE}, model: mlp, runner: torch-compile, "
                           "profile: {steps: 2, max_trace_mib: 0.001}}\naxes: {mode: [eager]}\n")
        done = run("run", str(limited), *self.local("--db", str(self.db)), "--no-report")
        self.assertEqual(done.returncode, 0, done.stderr)
        with read_only(self.db) as store:
            document, = store.execute("SELECT d.document FROM result_documents d JOIN results r USING (job_id, attempt) "
                                      "JOIN sweeps s ON s.sweep_id = r.sweep_id WHERE s.name = 'limited'").fetchone()
            self.assertEqual(store.execute("SELECT COUNT(*) FROM artifacts").fetchone()[0], 10)
        trace = json.loads(document)["profile"]["trace"]
        self.assertFalse(trace["stored"])
        self.assertIn("over the job's profile.max_trace_mib of 0.001 MiB", trace["reason"])
        self.assertEqual(sorted(artifacts.glob("*/*")), stored)

        dry = run("gc", "--db", str(self.db), "--older-than", "0", "--dry-run")
        self.assertEqual(dry.returncode, 0, dry.stderr)
        self.assertIn("dry run, nothing changed: 10 traces of results dropped; 10 files removed", dry.stdout)
        self.assertEqual(sorted(artifacts.glob("*/*")), stored)
        # The newest result's trace fits in the total, the others go.
        newest = max(path.stat().st_size for path in stored)
        sized = run("gc", "--db", str(self.db), "--max-total-mib", str((newest + 1) / (1024 * 1024)))
        self.assertEqual(sized.returncode, 0, sized.stderr)
        self.assertIn("9 traces of results dropped; 9 files removed", sized.stdout)
        self.assertEqual(len(list(artifacts.glob("*/*"))), 1)
        # Explain still explains from the summaries, and says the trace is gone.
        aged = run("gc", "--db", str(self.db), "--older-than", "0")
        self.assertIn("1 trace of results dropped; 1 file removed", aged.stdout)
        self.assertEqual(list(artifacts.glob("*/*")), [])
        text = self.explain("mode=eager", "mode=compiled", "--no-profile", "--where", "batch_size=32")
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("no stored trace", text.stdout)
        bad = run("gc", "--db", str(self.folder / "none.db"))
        self.assertEqual(bad.returncode, 2)
        self.assertIn("--db: no store at", bad.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--torchsweep", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest])
