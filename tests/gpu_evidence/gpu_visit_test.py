"""The GPU visit's kit proven on this CPU (docs/gpu.md): scripts/gpu-visit-pack
--stand-in packs this build's programs, the kit is moved into an empty
folder, and scripts/gpu-visit --cpu-dry-run runs from there with its Python
runners started by interpreters at paths of their own (as a GPU image's
python3 would start them), with real torchsweep, real runners and the fake
nvidia-smi. Then: what comes back fits a lease's limits; the budget classes
(a planted slow job pushes the extras out: `incomplete`, not `failed`); the
kit's refusals (a worker built for another PyTorch, a torchsweep that cannot
start: the runners run directly and their raw results are judged here with
--read); and each check made to fail, through the fake's faults or on a copy
of the dry run's evidence changed the way a defect would change it. The GPU
branches of the checks are judged on GPU-shaped evidence made from the dry
run's results.

    python3 gpu_visit_test.py --repo R --bin BUILD_BIN --jax-python P
"""
import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest
from pathlib import Path

ARGS = None
CHECKS = ["preflight", "nvml_under_load", "tf32_policy", "results", "event_vs_wall", "memory", "energy",
          "fp16_loss_scaling", "first_loss", "accuracy_gate", "peak_vs_load", "core", "extras"]
RETURNED = {"evidence.tar.gz", "summary.txt", "preflight.json", "console.log"}


def verdicts(evidence):
    return {c["check"]: (c["verdict"], c["detail"]) for c in json.loads((evidence / "checks.json").read_text())}


def interpreter(folder, name, real, log):
    """An interpreter at a path of its own that logs how it was started, then is `real`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {real} "$@"\n')
    path.chmod(0o755)
    return path


class Visit(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.temp = tempfile.TemporaryDirectory(prefix="gpu-visit-")
        root = Path(cls.temp.name)
        packed = subprocess.run([str(Path(ARGS.repo) / "scripts" / "gpu-visit-pack"), str(root / "packed"),
                                 "--stand-in", "--from", ARGS.bin], capture_output=True, text=True, timeout=300)
        assert packed.returncode == 0, packed.stderr
        # Unpacked in an empty folder, the packed copy gone: nothing may point back.
        cls.kit = root / "elsewhere" / "kit"
        shutil.copytree(root / "packed", cls.kit)
        shutil.rmtree(root / "packed")
        cls.launches = root / "launches.log"
        image = root / "image" / "bin"
        cls.python = interpreter(image, "python3", shutil.which("python3"), cls.launches)
        cls.jax_python = interpreter(image, "python3-jax", ARGS.jax_python, cls.launches)
        # Another test's runner on this machine, holding 600 MiB (in CI, tests run side by side): it is
        # not on the dry run's "GPU", as another user's process is not on a lent one.
        decoy = root / "torchsweep-worker"
        decoy.write_text("import sys, time\nheld = b'x' * (600 << 20)\nsys.stdout.write('ready\\n')\n"
                         "sys.stdout.flush()\ntime.sleep(3600)\n")
        cls.decoy = subprocess.Popen([sys.executable, str(decoy)], stdout=subprocess.PIPE, text=True)
        cls.decoy.stdout.readline()
        cls.out, cls.work = root / "returned", root / "work"
        cls.finished = cls.visit(cls.kit, cls.out, "--work", cls.work, "--budget-s", "900")
        cls.evidence = cls.work / "evidence"

    @classmethod
    def tearDownClass(cls):
        cls.decoy.kill()
        cls.decoy.wait()
        cls.temp.cleanup()

    @classmethod
    def visit(cls, kit, out, *more, env=None):
        command = [sys.executable, str(Path(ARGS.repo) / "scripts" / "gpu-visit"), str(kit), str(out), "--cpu-dry-run",
                   "--python", str(cls.python), "--jax-python", str(cls.jax_python), *map(str, more)]
        return subprocess.run(command, capture_output=True, text=True, timeout=1200, env=env)

    @classmethod
    def read(cls, returned):
        return subprocess.run([sys.executable, str(Path(ARGS.repo) / "scripts" / "gpu-visit"), "--read", str(returned),
                               "--torchsweep", str(Path(ARGS.bin) / "torchsweep")],
                              capture_output=True, text=True, timeout=300)

    def kit_copy(self, name, change_plan=None):
        kit = Path(self.temp.name) / name / "kit"
        shutil.copytree(self.kit, kit)
        if change_plan:
            change_plan(kit / "plan")
        return kit

    def copy(self, name):
        """The dry run's evidence in a folder of its own, as --read finds what came back."""
        folder = Path(self.temp.name) / name
        shutil.copytree(self.evidence, folder / "evidence")
        return folder / "evidence"

    def checks_only(self, evidence):
        finished = self.read(evidence.parent)
        return finished.returncode, verdicts(evidence)

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

    def test_dry_run_passes_every_check_and_returns_four_files(self):
        self.assertEqual(self.finished.returncode, 0, self.finished.stdout + self.finished.stderr[-4000:])
        found = verdicts(self.evidence)
        self.assertEqual(sorted(found), sorted(CHECKS))
        for name, (verdict, detail) in found.items():
            self.assertEqual(verdict, "pass", f"{name}: {detail}")
        steps = json.loads((self.evidence / "steps.json").read_text())
        self.assertEqual([s["step"] for s in steps],
                         ["preflight", "kit", "wheels", "runners", "TF32 probe", "bf16 load under NVML", "peak probe",
                          "estimate", "class core", "class extras", "results"])
        self.assertTrue(all(s["status"] == "ok" for s in steps), steps)
        # What comes back: four files, none over 16 MiB, nothing deeper.
        self.assertEqual({p.name for p in self.out.iterdir()}, RETURNED)
        for path in self.out.iterdir():
            self.assertTrue(path.is_file() and 0 < path.stat().st_size <= 16 << 20, path)
        with tarfile.open(self.out / "evidence.tar.gz") as archive:
            names = set(archive.getnames())
        for name in ("torchsweep.db", "report.html", "compare-mode.txt", "compare-runner.txt", "results.json",
                     "jobs.json", "checks.json", "estimate.json", "nvml-sweep.jsonl", "peak_flops.json",
                     "preflight.json", "tf32.json", "load.json", "run-core.log", "run-extras.log"):
            self.assertIn(f"evidence/{name}", names)
        self.assertLessEqual(max(name.count("/") for name in names), 1 + 1)  # evidence/FILE; the tarball is one file
        preflight = json.loads((self.out / "preflight.json").read_text())
        for key in ("os", "glibc", "driver", "gpu", "python", "packages", "kit", "torch"):
            self.assertTrue(preflight.get(key), key)
        self.assertEqual(preflight["kit"]["kind"], "stand-in")
        # The estimate was printed before the classes ran, a line per job.
        console = (self.out / "console.log").read_text()
        self.assertLess(console.index("core: "), console.index("class core ..."))
        estimate = json.loads((self.evidence / "estimate.json").read_text())
        self.assertEqual(len(estimate["core"]["jobs"]), 8)
        # Core first, in the plan's order; every runner started from the kit by the "image's" interpreters.
        results = json.loads((self.evidence / "results.json").read_text())
        jobs = json.loads((self.evidence / "jobs.json").read_text())
        self.assertEqual([j["class"] for j in jobs], ["core"] * 8 + ["extras"] * 4)
        self.assertEqual({r["job"]["runner"] for r in results if r["status"] == "ok"},
                         {"libtorch", "torch-compile", "jax"})
        launched = self.launches.read_text()
        for runner in ("torchsweep-torch-compile", "torchsweep-jax"):
            self.assertIn(str(self.kit / "torchsweep" / "bin" / runner), launched)
        self.assertNotIn("/opt/torchsweep/venvs", launched)
        self.assertTrue(any(r["execution"]["task"] == "generate" for r in results if r["status"] == "ok"))
        self.assertIn("speedup", (self.evidence / "compare-mode.txt").read_text())
        summary = (self.out / "summary.txt").read_text()
        self.assertTrue(summary.startswith("exit 0: all passed"), summary[:200])

    def test_the_kit_is_within_its_size_and_the_pack_refuses_more(self):
        kit = json.loads((self.kit / "kit.json").read_text())
        self.assertLessEqual(kit["bytes"], 56 << 20)
        self.assertEqual(set(kit["files"]) >= {"torchsweep/bin/torchsweep", "torchsweep/bin/torchsweep-worker",
                                               "plan/plan.json", "plan/core.jsonl", "plan/extras.jsonl",
                                               "plan/core.resolved.json", "plan/extras.resolved.json"}, True)
        listing = json.loads((self.kit / "torchsweep/share/torchsweep/runners.json").read_text())
        self.assertEqual(set(listing["environments"].values()), {"python3"})
        refused = subprocess.run([str(Path(ARGS.repo) / "scripts" / "gpu-visit-pack"),
                                  str(Path(self.temp.name) / "too-big"), "--stand-in", "--from", ARGS.bin,
                                  "--limit-mib", "1"], capture_output=True, text=True, timeout=300)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("over its 1 MiB", refused.stderr)
        self.assertFalse((Path(self.temp.name) / "too-big").exists())

    def test_a_planted_slow_core_job_pushes_the_extras_out_incomplete_not_failed(self):
        """A CPU job of 200,000 steps (minutes here) first in the core, a 140 s budget: whatever this machine's
        speed, the core's budget ends in it, the extras never start, and no check fails for what did not run.
        One thread: it only has to outlast the budget, and the tests beside it share the cores."""
        def plant(plan):
            core = (plan / "core.jsonl").read_text()
            slow = {"schema_version": 1, "sweep": json.loads(core.splitlines()[0])["sweep"], "model": "mlp",
                    "device": "cpu", "batch_size": 64, "input_size": 256, "width": 512, "depth": 2, "epochs": 1,
                    "warmup": 1, "iters": 200000, "threads": 1, "timeout_s": 600}
            (plan / "core.jsonl").write_text(json.dumps(slow) + "\n" + core)
        kit = self.kit_copy("planted", plant)
        out, work = Path(self.temp.name) / "planted" / "returned", Path(self.temp.name) / "planted" / "work"
        finished = self.visit(kit, out, "--work", work, "--budget-s", "140")
        found = verdicts(work / "evidence")
        self.assertEqual(finished.returncode, 3, json.dumps(found, indent=1) + finished.stderr[-3000:])
        self.assertEqual(found["extras"][0], "not run", found["extras"])
        self.assertIn("budget", found["extras"][1])
        self.assertFalse([n for n, (v, _) in found.items() if v == "fail"], json.dumps(found, indent=1))
        self.assertTrue((out / "summary.txt").read_text().startswith("exit 3: incomplete"))

    def test_a_worker_built_for_another_torch_and_a_runner_that_cannot_start_are_refused_with_why(self):
        kit = self.kit_copy("mismatch")
        self.edit(kit, "kit.json", lambda k: k.update(torch_version="9.9.9+cu999"))
        broken = kit / "torchsweep" / "bin" / "torchsweep-jax"
        broken.write_text("import sys\nsys.exit(\"ModuleNotFoundError: No module named 'keras'\")\n")
        out = Path(self.temp.name) / "mismatch" / "returned"
        finished = self.visit(kit, out, "--work", out.parent / "work", "--probes-only")
        console = (out / "console.log").read_text()
        self.assertIn("the kit's worker was built against torch 9.9.9+cu999", console)
        self.assertIn("refused", console)
        # A runner that cannot start is left out at once, not waited for until the budget ends.
        self.assertIn("runner jax does not start with", console)
        self.assertIn("No module named 'keras'", console)
        steps = {s["step"]: s for s in json.loads((out.parent / "work/evidence/steps.json").read_text())}
        self.assertEqual(steps["peak probe"]["status"], "failed")
        self.assertIn("no worker", steps["peak probe"]["detail"])
        found = verdicts(out.parent / "work/evidence")
        self.assertEqual(found["peak_vs_load"][0], "fail")  # nothing planned here: no job it judges was left out
        self.assertNotEqual(finished.returncode, 0)

    def test_when_torchsweep_cannot_start_the_runners_run_directly_and_are_judged_here(self):
        def small(plan):
            core = [json.loads(line) for line in (plan / "core.jsonl").read_text().splitlines()]
            eager = [j for j in core if j["mode"] == "eager" and j["precision"] == "bf16"
                     and j.get("data_parallel") is None][:2]
            (plan / "core.jsonl").write_text("".join(json.dumps(j) + "\n" for j in eager))
            (plan / "extras.jsonl").write_text((plan / "extras.jsonl").read_text().splitlines()[0] + "\n")
        kit = self.kit_copy("direct", small)
        broken = kit / "torchsweep" / "bin" / "torchsweep"
        broken.write_text("#!/bin/sh\necho \"$0: /lib/x86_64-linux-gnu/libc.so.6: version \\`GLIBC_2.99' not "
                          "found\" >&2\nexit 1\n")
        out = Path(self.temp.name) / "direct" / "returned"
        finished = self.visit(kit, out, "--work", out.parent / "work", "--budget-s", "400")
        self.assertEqual(finished.returncode, 3, finished.stderr[-3000:])
        console = (out / "console.log").read_text()
        self.assertIn("GLIBC_2.99", console)
        self.assertIn("the runners run directly", console)
        self.assertEqual({p.name for p in out.iterdir()}, RETURNED)
        read = self.read(out)
        found = verdicts(out / "evidence")
        self.assertEqual(found["core"][0], "pass", json.dumps(found, indent=1) + read.stderr[-2000:])
        self.assertEqual(found["extras"][0], "pass", found["extras"])
        results = json.loads((out / "evidence" / "results.json").read_text())
        self.assertEqual(len(results), 3)
        self.assertTrue(all(r["timing"].get("median_epoch_seconds") for r in results if r["status"] == "ok"))

    # ---- each check made to fail ---------------------------------------------

    def probes_with_faults(self, name, faults):
        """The preflight and probes again over a copy of the dry run's evidence, the fake nvidia-smi wrong on
        purpose; the load's new rate is judged against a new peak probe, so peak_vs_load is left out of the
        verdicts (the faults leave it alone, the machine's other load does not)."""
        evidence = self.copy(name)
        out = evidence.parent / "returned"
        finished = self.visit(self.kit, out, "--work", evidence.parent, "--probes-only",
                              env=dict(os.environ, FAKE_NVIDIA_SMI_FAULTS=faults))
        found = verdicts(evidence)
        del found["peak_vs_load"]
        return finished.returncode, found, evidence

    def test_preflight_fails_without_a_driver_version(self):
        code, found, folder = self.probes_with_faults("no-driver", "no_driver")
        self.assert_only_failure(folder, code, found, "preflight")
        self.assertIn("[N/A]", found["preflight"][1])

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
        self.assertEqual(found["core"][0], "fail")  # its class's check names it too
        self.assertEqual(code, 1)

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

    def test_gpu_energy_fails_without_nvmls_counter_or_when_it_disagrees_with_the_power(self):
        absent = {"status": "absent", "reason": "the nvml energy counter of GPU 0 cannot be read"}
        for name, change in (("energy-absent", lambda r: r.update(energy=absent)),
                             ("energy-apart", lambda r: r["warnings"].append(
                                 "energy: the nvml counter says 1300 J over the timed epochs, the integral of the "
                                 "sampled power 700 J; more than 20% apart, the energy figures may be wrong"))):
            folder = self.gpu_shaped(name)
            self.edit(folder, "results.json",
                      lambda results: [change(r) for r in results if r["job"]["precision"] == "fp16"][:1])
            code, found = self.checks_only(folder)
            self.assertEqual(found["energy"][0], "fail", (name, found["energy"]))

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

    def test_accuracy_gate_fails_on_a_compiled_result_that_computes_something_else(self):
        folder = self.copy("inaccurate")

        def plant(results):
            compiled = next(r for r in results if r["status"] == "ok" and r["job"]["mode"] == "compiled"
                            and r["execution"]["task"] == "train")
            compiled["accuracy"].update(status="fail", deviation=40.0, failed=["output: RMSE from float64 4e-3"])
        self.edit(folder, "results.json", plant)
        code, found = self.checks_only(folder)
        self.assert_only_failure(folder, code, found, "accuracy_gate")
        self.assertIn("RMSE from float64", found["accuracy_gate"][1])

    def test_peak_vs_load_fails_when_the_probe_is_far_off(self):
        folder = self.copy("peak-off")
        self.edit(folder, "peak_flops.json", lambda d: d["devices"][0].update(bf16=d["devices"][0]["bf16"] * 1000))
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
                    r["energy"] = {"status": "ok", "source": "nvml", "window": "timed_epochs", "seconds": 2.0,
                                   "joules": 1300.0, "average_power_w": 650.0, "power_integral_joules": 1290.0,
                                   "counter_wraps": 0, "domains": []}
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
                    if job["mode"] == "compiled":  # a compiled run carries the gate's verdict
                        r["accuracy"] = {"reference": "float64", "status": "pass", "deviation": 0.4,
                                         "tolerance": 1e-2, "worst": "loss", "failed": []}
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
    parser.add_argument("--repo", required=True)
    parser.add_argument("--bin", required=True, help="the build's bin/: torchsweep, the worker, the runners")
    parser.add_argument("--jax-python", default="python3")
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
