#!/usr/bin/env python3
"""`cmake --install` to a fresh prefix gives a torchsweep that runs from the
installed files alone: a sweep over the LibTorch worker and the torch.compile
runner completes from another directory, the runners resolving their harness
and schemas inside the prefix, and no installed script or text names the
source or build tree.

    installed_run_test.py --cmake PATH --build DIR --source DIR
"""
import argparse
import pathlib
import subprocess
import sys
import tempfile
import unittest

ARGS = None
SWEEP = """name: installed
axes:
  runner: [libtorch, torch-compile]
fixed: {model: mlp, batch_size: 8, input_size: 16, width: 32, depth: 2, epochs: 1, warmup: 1, iters: 2, threads: 1}
"""


class InstalledRun(unittest.TestCase):
    def test_a_sweep_runs_from_the_installed_files_alone(self):
        with tempfile.TemporaryDirectory(prefix="ts_install_") as directory:
            folder = pathlib.Path(directory)
            prefix, work = folder / "prefix", folder / "work"
            work.mkdir()
            subprocess.run([ARGS.cmake, "--install", ARGS.build, "--prefix", str(prefix)], check=True,
                           capture_output=True, timeout=300)
            for path in ("bin/torchsweep", "bin/torchsweep-worker", "bin/torchsweep-torch-compile",
                         "share/torchsweep/python/torchsweep_harness/contract.py",
                         "share/torchsweep/schemas/job.schema.json", "share/torchsweep/examples/cpu-quick.yaml",
                         "share/doc/torchsweep/README.md"):
                self.assertTrue((prefix / path).exists(), path)
            self.assertEqual(list(prefix.rglob("__pycache__")), [])
            # Text the installed programs read must not point back at the trees they came from.
            for path in list((prefix / "share/torchsweep").rglob("*.py")) + [prefix / "bin/torchsweep-torch-compile"]:
                text = path.read_text()
                for tree in (ARGS.source, ARGS.build):
                    self.assertNotIn(tree, text, path)
            (work / "installed.yaml").write_text(SWEEP)
            finished = subprocess.run([str(prefix / "bin/torchsweep"), "run", "installed.yaml", "--db", "s.db"],
                                      cwd=work, capture_output=True, text=True, timeout=600,
                                      env={"PATH": "/usr/bin:/bin", "HOME": str(work), "TMPDIR": str(work)})
            self.assertEqual(finished.returncode, 0, finished.stdout + finished.stderr)
            self.assertIn("torch-compile", finished.stdout)
            self.assertIn("libtorch", finished.stdout)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for flag in ("--cmake", "--build", "--source"):
        parser.add_argument(flag, required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
