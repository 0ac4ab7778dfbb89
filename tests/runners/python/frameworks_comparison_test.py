#!/usr/bin/env python3
"""The frameworks example (docs/examples.md) as a test that asserts its answer: the
sweep of examples/cpu-frameworks.yaml, narrowed to the MLP compiled at a
tiny shape (five repeats, so that ratios carry intervals), run by
`torchsweep run` with the real runners in their environments (LibTorch in
the system's PyTorch, TensorFlow and JAX in their venvs), then the
example's own query. Every other runner must pair with LibTorch: five runs
a side, a speedup with its 95% interval around it, each side's
environment named, and the memory figures compared. Since environments
became an axis this printed `runs:libtorch 0` and no speedup beside
TensorFlow and JAX, and no test noticed.

    frameworks_comparison_test.py --torchsweep PATH --doc docs/examples.md --example examples/cpu-frameworks.yaml
"""
import argparse
import json
import pathlib
import shlex
import subprocess
import sys
import tempfile
import unittest

import yaml

ARGS = None
EXPECTED_ENV = {"libtorch": "system", "torch-compile": "system", "tensorflow": "tensorflow", "jax": "jax"}


def documented_query():
    """The documented query of the frameworks example, as arguments after `torchsweep`."""
    for line in ARGS.doc.read_text().splitlines():
        if "torchsweep query" in line and "frameworks.db" in line and "--compare" in line:
            words = shlex.split(line)
            return words[words.index("build/bin/torchsweep") + 1:]
    raise AssertionError("docs/examples.md shows no query of build/frameworks.db")


class FrameworksComparison(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.temp = tempfile.TemporaryDirectory(prefix="ts_frameworks_")
        folder = pathlib.Path(cls.temp.name)
        sweep = yaml.safe_load(ARGS.example.read_text())
        sweep["name"] = "cpu-frameworks-narrowed"
        sweep["axes"].update(mode=["compiled"], model=["mlp"])
        sweep["fixed"].update(batch_size=8, input_size=16, width=32, epochs=2, warmup=2, iters=2, threads=1)
        (folder / "sweep.yaml").write_text(yaml.safe_dump(sweep))
        cls.db = folder / "frameworks.db"
        cls.ran = subprocess.run([ARGS.torchsweep, "run", str(folder / "sweep.yaml"), "--db", str(cls.db),
                                  "--work-dir", str(folder / "work"), "--no-report"],
                                 capture_output=True, text=True, timeout=1200)
        query = documented_query()
        query[query.index("build/frameworks.db")] = str(cls.db)
        cls.query = subprocess.run([ARGS.torchsweep, *query, "--format", "json"], capture_output=True, text=True,
                                   timeout=120)

    @classmethod
    def tearDownClass(cls):
        cls.temp.cleanup()

    def test_the_run_succeeds(self):
        self.assertEqual(self.ran.returncode, 0, self.ran.stdout + self.ran.stderr[-4000:])

    def test_every_runner_pairs_with_libtorch_with_an_interval_and_each_sides_environment(self):
        self.assertEqual(self.query.returncode, 0, self.query.stderr)
        rows = {row["runner"]: row for row in json.loads(self.query.stdout)}
        self.assertEqual(set(rows), {"torch-compile", "tensorflow", "jax"}, rows)
        for runner, row in rows.items():
            self.assertEqual((row["runs:libtorch"], row["runs:other"]), (5, 5), row)
            self.assertEqual((row["env:libtorch"], row["env:other"]), (EXPECTED_ENV["libtorch"], EXPECTED_ENV[runner]),
                             row)
            self.assertEqual(row["model"], "mlp")
            for column in ("speedup", "speedup_low", "speedup_high"):
                self.assertIsInstance(row[column], float, (runner, column, row))
            self.assertLessEqual(row["speedup_low"], row["speedup"], row)
            self.assertLessEqual(row["speedup"], row["speedup_high"], row)
            # The speedup is the ratio of the two sides' median epoch times.
            self.assertAlmostEqual(row["speedup"], row["epoch_time_s:libtorch"] / row["epoch_time_s:other"], places=9)
            self.assertNotIn("not comparable", row["memory_field"] or "", row)
            self.assertIsNotNone(row["memory_reduction"], row)

    def test_the_table_names_each_sides_environment(self):
        table = subprocess.run([ARGS.torchsweep, *documented_query()[:1], "--db", str(self.db), "--compare",
                                "runner=libtorch,*", "--where", "mode=compiled"], capture_output=True, text=True)
        self.assertEqual(table.returncode, 0, table.stderr)
        for text in ("env:libtorch", "env:other", "speedup [95% CI]", "tensorflow", "jax"):
            self.assertIn(text, table.stdout)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--torchsweep", required=True)
    parser.add_argument("--doc", type=pathlib.Path, required=True)
    parser.add_argument("--example", type=pathlib.Path, required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
