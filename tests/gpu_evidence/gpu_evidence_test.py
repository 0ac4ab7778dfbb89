"""scripts/gpu-evidence --cpu-dry-run, end to end on this CPU (real torchsweep,
real runners, the fake nvidia-smi), then each of its checks made to fail:
through the fake's faults where the fake is the source (no driver, no
processes), otherwise on a copy of the dry run's evidence changed the way a
defect would change it. A check that cannot fail, or that a dry run skips,
fails this test. The GPU branches of the checks (the CUDA allocator against
the agent's NVML telemetry, TF32 on a device that has it, fp16 loss scaling)
are judged on GPU-shaped evidence made from the dry run's results.

    python3 gpu_evidence_test.py --script scripts/gpu-evidence --torchsweep T --worker W [--jax-python P]
"""
import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ARGS = None
CHECKS = ["tools", "nvml_under_load", "tf32_policy", "results", "event_vs_wall", "memory", "fp16_loss_scaling",
          "first_loss", "peak_vs_load"]


def verdicts(folder):
    return {c["check"]: (c["verdict"], c["detail"]) for c in json.loads((folder / "checks.json").read_text())}


class DryRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.temp = tempfile.TemporaryDirectory(prefix="gpu-evidence-")
        cls.out = Path(cls.temp.name) / "dry-run"
        # Another test's runner on this machine, holding 600 MiB (in CI, tests run side by side): it is
        # not on the dry run's "GPU", as another user's process is not on a lent one. Its memory once
        # counted as the dry run's jobs' and failed the memory check.
        decoy = Path(cls.temp.name) / "torchsweep-worker"
        decoy.write_text("import sys, time\nheld = b'x' * (600 << 20)\nsys.stdout.write('ready\\n')\n"
                         "sys.stdout.flush()\ntime.sleep(3600)\n")
        cls.decoy = subprocess.Popen([sys.executable, str(decoy)], stdout=subprocess.PIPE, text=True)
        cls.decoy.stdout.readline()
        cls.finished = subprocess.run(cls.command(cls.out, "--worker", ARGS.worker, "--torchsweep", ARGS.torchsweep,
                                                  "--budget-s", "600"),
                                      capture_output=True, text=True, timeout=900)

    @classmethod
    def tearDownClass(cls):
        cls.decoy.kill()
        cls.decoy.wait()
        cls.temp.cleanup()

    @staticmethod
    def command(out, *more):
        return [sys.executable, ARGS.script, str(out), "--cpu-dry-run", "--jax-python", ARGS.jax_python, *more]

    def copy(self, name):
        folder = Path(self.temp.name) / name
        shutil.copytree(self.out, folder)
        return folder

    def checks_only(self, folder):
        finished = subprocess.run([sys.executable, ARGS.script, str(folder), "--checks-only"],
                                  capture_output=True, text=True, timeout=120)
        return finished.returncode, verdicts(folder)

    def assert_only_failure(self, folder, code, found, check):
        failing = sorted(name for name, (verdict, _) in found.items() if verdict != "pass")
        self.assertEqual(failing, [check], json.dumps(found, indent=1))
        self.assertEqual(code, 1)

    def edit(self, folder, name, change):
        path = folder / name
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))

    def edit_fp16(self, folder, change):
        """`change` applied to each fp16 result in `folder`."""
        self.edit(folder, "results.json",
                  lambda results: [change(r) for r in results if r["job"]["precision"] == "fp16"])

    # ---- the dry run itself ------------------------------------------------

    def test_dry_run_passes_every_check_and_writes_everything(self):
        self.assertEqual(self.finished.returncode, 0, self.finished.stdout + self.finished.stderr[-4000:])
        found = verdicts(self.out)
        self.assertEqual(sorted(found), sorted(CHECKS))
        for name, (verdict, detail) in found.items():
            self.assertEqual(verdict, "pass", f"{name}: {detail}")
        steps = json.loads((self.out / "steps.json").read_text())
        self.assertEqual([s["step"] for s in steps],
                         ["tools", "TF32 probe", "bf16 load under NVML", "sweep", "results"])
        self.assertTrue(all(s["status"] == "ok" for s in steps), steps)
        for name in ("torchsweep.db", "report.html", "compare-mode.txt", "compare-runner.txt", "summary.txt",
                     "results.json", "nvml-sweep.jsonl", "peak_flops.json", "tools.json", "tf32.json", "load.json"):
            self.assertTrue((self.out / name).stat().st_size > 0, name)
        results = json.loads((self.out / "results.json").read_text())
        self.assertEqual(len((self.out / "summary.txt").read_text().splitlines()), len(results))
        # Priority order: the first configurations ran first, each runner's and mode's.
        first = [(r["job"]["runner"], r["job"]["mode"], r["job"]["precision"]) for r in results[:4]]
        self.assertEqual(first, [("libtorch", "eager", "bf16"), ("torch-compile", "eager", "bf16"),
                                 ("libtorch", "compiled", "bf16"), ("torch-compile", "compiled", "bf16")])
        runners = {r["job"]["runner"] for r in results if r["status"] == "ok"}
        self.assertTrue({"libtorch", "torch-compile", "jax"} <= runners, runners)
        self.assertTrue(any(r["execution"]["task"] == "generate" for r in results if r["status"] == "ok"))
        self.assertIn("speedup", (self.out / "compare-mode.txt").read_text())

    # ---- each check made to fail ---------------------------------------------

    def probes_with_faults(self, name, faults):
        """The tools and probes again, the fake nvidia-smi wrong on purpose; the load's new rate is judged
        against the dry run's peak probe, so peak_vs_load is left out of the verdicts (the faults leave
        it alone, the machine's other load does not)."""
        folder = self.copy(name)
        finished = subprocess.run(self.command(folder, "--probes-only"), capture_output=True, text=True,
                                  timeout=300, env=dict(os.environ, FAKE_NVIDIA_SMI_FAULTS=faults))
        found = verdicts(folder)
        del found["peak_vs_load"]
        return finished.returncode, found, folder

    def test_tools_fails_without_a_driver_version(self):
        code, found, folder = self.probes_with_faults("no-driver", "no_driver")
        self.assert_only_failure(folder, code, found, "tools")
        self.assertIn("[N/A]", found["tools"][1])

    def test_nvml_under_load_fails_when_nvml_lists_no_process(self):
        code, found, folder = self.probes_with_faults("no-processes", "no_processes")
        self.assert_only_failure(folder, code, found, "nvml_under_load")

    def test_tf32_policy_fails_when_off_is_still_reduced(self):
        folder = self.copy("tf32-ignored")
        self.edit(folder, "tf32.json", lambda d: d["torch"].update(off_error=2e-3, on_error=2e-3))
        self.assert_only_failure(folder, *self.checks_only(folder), "tf32_policy")

    def test_results_fails_on_a_failed_job(self):
        folder = self.copy("failed-job")
        self.edit(folder, "results.json", lambda d: d[0].update(status="failed", error="CUDA error: an illegal "
                                                                                       "memory access"))
        code, found = self.checks_only(folder)
        self.assertEqual(found["results"][0], "fail")
        self.assertIn("illegal memory access", found["results"][1])

    def test_event_vs_wall_fails_when_steps_miss_time(self):
        folder = self.copy("events-short")

        def shorten(results):
            steps = results[0]["timing"]["step_seconds"]
            steps[0] = [s * 0.9 for s in steps[0]]
        self.edit(folder, "results.json", shorten)
        self.assert_only_failure(folder, *self.checks_only(folder), "event_vs_wall")

    def test_memory_fails_when_nvml_reports_ten_times_the_memory(self):
        folder = self.copy("memory-x10")
        samples = [json.loads(line) for line in (folder / "nvml-sweep.jsonl").read_text().splitlines()]
        (folder / "nvml-sweep.jsonl").write_text(
            "".join(json.dumps(dict(s, used_bytes=s["used_bytes"] * 10)) + "\n" for s in samples))
        self.assert_only_failure(folder, *self.checks_only(folder), "memory")

    def test_memory_fails_without_samples_while_a_job_ran(self):
        folder = self.copy("memory-none")
        (folder / "nvml-sweep.jsonl").write_text("")
        self.assert_only_failure(folder, *self.checks_only(folder), "memory")

    def test_fp16_fails_when_a_cpu_refusal_does_not_name_fp16(self):
        folder = self.copy("fp16-refusal")
        self.edit_fp16(folder, lambda r: r.update(error="segmentation fault"))
        self.assert_only_failure(folder, *self.checks_only(folder), "fp16_loss_scaling")

    def test_first_loss_fails_when_compiled_starts_elsewhere(self):
        folder = self.copy("first-loss")

        def move(results):
            compiled = next(r for r in results if r["status"] == "ok" and r["job"]["mode"] == "compiled"
                            and r["execution"]["task"] == "train")
            compiled["loss"]["first_step"] *= 1.1
        self.edit(folder, "results.json", move)
        self.assert_only_failure(folder, *self.checks_only(folder), "first_loss")

    def test_peak_vs_load_fails_when_the_probe_is_far_off(self):
        folder = self.copy("peak-off")
        self.edit(folder, "peak_flops.json", lambda d: d["devices"][0].update(bf16=d["devices"][0]["bf16"] * 10))
        self.assert_only_failure(folder, *self.checks_only(folder), "peak_vs_load")

    # ---- the GPU branches, on GPU-shaped evidence --------------------------

    def gpu_shaped(self, name):
        """The dry run's evidence as a GPU would give it: CUDA allocator peaks, the agent's NVML telemetry
        over the timed epochs, TF32 that rounds when on, fp16 results that scaled their loss."""
        folder = self.copy(name)

        def to_gpu(results):
            for r in results:
                if r["status"] != "ok":
                    continue
                if r["memory"]["source"] == "rss":
                    reserved = r["memory"]["peak_rss_bytes"]
                    r["memory"] = {"source": "cuda_allocator", "peak_allocated_bytes": reserved // 2,
                                   "peak_reserved_bytes": reserved}
                    r["telemetry"] = {"status": "ok", "source": "nvml", "driver": "580.65.06",
                                      "window": "timed_epochs", "samples": 4, "throttled": False,
                                      "gpus": [{"index": 0, "process_memory_bytes": {
                                          "min": reserved + (500 << 20), "median": reserved + (500 << 20),
                                          "max": reserved + (500 << 20)}}]}
            template = next(r for r in results if r["status"] == "ok" and r["job"]["runner"] == "libtorch")
            for r in results:
                if r["job"]["precision"] == "fp16":
                    job = r["job"]
                    r.clear()
                    r.update(copy.deepcopy(template))
                    r["job"] = dict(job, device="cuda")
                    r["execution"]["loss_scaling"] = {"initial_scale": 65536.0, "final_scale": 32768.0,
                                                      "skipped_steps": 1}
        self.edit(folder, "results.json", to_gpu)
        self.edit(folder, "tf32.json", lambda d: d["torch"].update(tf32_capable=True, on_error=1.2e-3))
        return folder

    def test_gpu_shaped_evidence_passes(self):
        folder = self.gpu_shaped("gpu")
        code, found = self.checks_only(folder)
        self.assertEqual(code, 0, json.dumps(found, indent=1))
        self.assertIn("scaled their loss", found["fp16_loss_scaling"][1])

    def test_gpu_memory_fails_on_nvmls_not_available_value_summed_in(self):
        folder = self.gpu_shaped("gpu-nvml-all-ones")

        def all_ones(results):
            for r in results:
                if r.get("telemetry", {}).get("status") == "ok":
                    r["telemetry"]["gpus"][0]["process_memory_bytes"]["max"] = 2**64 - 1
                    break
        self.edit(folder, "results.json", all_ones)
        self.assert_only_failure(folder, *self.checks_only(folder), "memory")

    def test_gpu_tf32_fails_when_on_does_not_round(self):
        folder = self.gpu_shaped("gpu-tf32-flag-ignored")
        self.edit(folder, "tf32.json", lambda d: d["torch"].update(on_error=3e-7))
        self.assert_only_failure(folder, *self.checks_only(folder), "tf32_policy")

    def test_gpu_fp16_fails_without_a_loss_scale(self):
        folder = self.gpu_shaped("gpu-fp16-unscaled")
        self.edit_fp16(folder, lambda r: r["execution"].update(loss_scaling=None))
        self.assert_only_failure(folder, *self.checks_only(folder), "fp16_loss_scaling")


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", required=True)
    parser.add_argument("--torchsweep", required=True)
    parser.add_argument("--worker", required=True)
    parser.add_argument("--jax-python", default="python3")
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
