"""The checks of scripts/gpu-visit: pure functions of the evidence a visit
wrote (preflight.json, load.json, tf32.json, nvml-sweep.jsonl,
peak_flops.json, results.json, jobs.json: the plan's jobs and their fate),
so that they run again on a copy (`scripts/gpu-visit --read`) and each can
be shown to fail on evidence made to fail.

Each check returns ("pass" | "fail" | "not run", detail). A check fails
only on what ran: a job that failed, a figure out of bounds. A check with
nothing to judge is `not run` when the plan's jobs it judges were left out
(by the budget, or for a runner the machine lacked) and fails otherwise: a
visit must not pass by skipping one. Where a CPU cannot produce the GPU's
figure, the check judges the CPU's counterpart (named in its detail), and
tests/gpu_evidence/ holds GPU-shaped evidence for both verdicts.
"""
import datetime
import json
import math
import re
from pathlib import Path

# Thresholds, spelled once (docs/gpu.md, "What the script proves").
# CUDA-event step sum vs the synchronised epoch clock. On a CPU dry run the steps are host-clock
# intervals and the gap is the host's work between steps, a few ms of a short epoch on shared cores.
EVENT_WALL_TOLERANCE = {"gpu": 0.02, "cpu": 0.05}
GPU_CONTEXT_ALLOWANCE = 6 << 30  # NVML's process memory above the allocator: context, cuBLAS/cuDNN workspaces, NCCL
LOAD_MEMORY_SHARE = 0.9  # NVML must see at least this share of what the load probe allocated
JOB_MEMORY_SHARE = 0.75  # ... and of a job's timed peak (quarter-second samples may miss its top)
FIRST_LOSS_TOLERANCE = {"fp32": 1e-3, "tf32": 1e-2, "bf16": 3e-2, "fp16": 3e-2}  # relative, eager vs compiled
# The load's sustained bf16 rate over the peak probe's bf16 figure, measured a little apart: a visit's
# GPU is its own; a CPU dry run shares its cores with whatever else runs (CI's other tests: beside
# Inductor's compile workers the probe once measured a quarter of the load), so there the check
# catches a unit or device mix-up (a factor 1000), not a slow core.
PEAK_VS_LOAD = {"gpu": (0.5, 1.25), "cpu": (0.1, 10.0)}
TF32_REDUCED = 1e-4  # a relative matmul error above this is reduced precision (TF32: ~1e-3; IEEE fp32: ~1e-6)


def load(folder):
    """The evidence in `folder`, each missing file as None."""
    folder = Path(folder)

    def read(name):
        path = folder / name
        return json.loads(path.read_text()) if path.exists() else None

    samples_file = folder / "nvml-sweep.jsonl"
    samples = [json.loads(line) for line in samples_file.read_text().splitlines() if line.strip()] \
        if samples_file.exists() else None
    return {"tools": read("preflight.json"), "load": read("load.json"), "tf32": read("tf32.json"),
            "peak": read("peak_flops.json"), "results": read("results.json"), "samples": samples,
            "settings": read("settings.json"), "jobs": read("jobs.json") or []}


def _instant(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _ok_results(evidence):
    return [r for r in evidence["results"] or [] if r.get("status") == "ok"]


def _left_out(evidence, judged):
    """The planned jobs `judged` (a predicate on a job document) that have no result."""
    have = {r["job"]["job_id"] for r in evidence["results"] or []}
    return [p for p in evidence["jobs"] if p.get("job_id") not in have and judged(p["job"])]


def _nothing(evidence, judged, what):
    """The verdict of a check that found nothing to judge: `not run` when its jobs were left out."""
    left = _left_out(evidence, judged)
    if left:
        whys = sorted({p.get("why") or p["state"] for p in left})
        return "not run", f"{what}: {len(left)} of its jobs left out ({'; '.join(whys)[:300]})"
    return "fail", what


def _any(_job):
    return True


def _training(job):
    return job.get("task", "train") == "train"


def check_preflight(evidence):
    tools = evidence["tools"]
    if not tools:
        return "fail", "no preflight.json"
    wanted = ["driver", "gpu_name", "python", "torch", "glibc"]
    missing = [name for name in wanted if not tools.get(name)]
    if missing:
        return "fail", "not found: " + ", ".join(missing)
    if not re.fullmatch(r"\d+\.\d+(\.\d+)*", tools["driver"]):
        return "fail", f"driver version {tools['driver']!r} is not a driver's (want e.g. 580.65.06)"
    torch = tools["torch"]
    for key in ("version", "tf32_matmul", "tf32_cudnn", "cudnn_benchmark"):
        if key not in torch:
            return "fail", f"torch.{key} not recorded"
    return "pass", f"driver {tools['driver']} on {tools['gpu_name']}; torch {torch['version']} " \
                   f"(TF32 matmul {torch['tf32_matmul']}, cuDNN TF32 {torch['tf32_cudnn']}, " \
                   f"cudnn.benchmark {torch['cudnn_benchmark']})" + \
        (f"; jax {tools['jax']['version']}" if tools.get("jax") else "; no jax")


def check_nvml_under_load(evidence):
    load_probe = evidence["load"]
    if not load_probe:
        return "fail", "no load.json"
    seen = [s for s in load_probe.get("nvml", []) if s["pid"] == load_probe["pid"]]
    if not seen:
        return "fail", f"NVML never listed the load's process {load_probe['pid']}"
    used = max(s["used_bytes"] for s in seen)
    if used < LOAD_MEMORY_SHARE * load_probe["allocated_bytes"]:
        return "fail", f"NVML saw {used} bytes for the load, below {LOAD_MEMORY_SHARE:.0%} of the " \
                       f"{load_probe['allocated_bytes']} it allocated"
    return "pass", f"{len(seen)} samples of the bf16 load (pid {load_probe['pid']}): {used / 2**20:.0f} MiB " \
                   f"for {load_probe['allocated_bytes'] / 2**20:.0f} MiB allocated"


def check_tf32_policy(evidence):
    probes = evidence["tf32"]
    if not probes or "torch" not in probes:
        return "fail", "no TF32 probe of PyTorch"
    lines = []
    for framework, probe in sorted(probes.items()):
        if "error" in probe and framework == "jax" and (evidence["tools"] or {}).get("jax") is None:
            lines.append("jax: not on this machine (its jobs are left out)")
            continue
        if "error" in probe:
            return "fail", f"{framework}: {probe['error']}"
        reduced_on = probe["on_error"] > TF32_REDUCED
        reduced_off = probe["off_error"] > TF32_REDUCED
        if reduced_off:
            return "fail", f"{framework}: TF32 off still gives a reduced-precision product " \
                           f"(relative error {probe['off_error']:.1e})"
        if reduced_on != probe["tf32_capable"]:
            return "fail", f"{framework}: TF32 on gives relative error {probe['on_error']:.1e} on a device " + \
                ("with" if probe["tf32_capable"] else "without") + " TF32"
        lines.append(f"{framework} on {probe['device']}: off {probe['off_error']:.1e}, on {probe['on_error']:.1e}")
    return "pass", "; ".join(lines)


def check_event_vs_wall(evidence):
    checked, worst, limits = 0, 0.0, set()
    for result in _ok_results(evidence):
        timing = result["timing"]
        if result["execution"]["task"] == "generate":
            continue  # a generation's steps are its tokens; its epochs hold the prefill apart
        limit = EVENT_WALL_TOLERANCE["cpu" if result["job"].get("device", "cpu") == "cpu" else "gpu"]
        limits.add(limit)
        for epoch, (wall, steps) in enumerate(zip(timing["epoch_seconds"], timing["step_seconds"])):
            gap = (wall - sum(steps)) / wall
            worst = max(worst, abs(gap))
            if gap < -1e-3 or gap > limit:
                return "fail", f"{result['job']['job_id']} epoch {epoch}: steps ({timing['clock']}) sum to " \
                               f"{sum(steps):.4f} s, the epoch's clock {wall:.4f} s ({gap:+.1%})"
        checked += 1
    if not checked:
        return _nothing(evidence, _training, "no successful training result to compare")
    return "pass", f"{checked} results, worst gap {worst:.2%} (limit {'/'.join(f'{x:.0%}' for x in sorted(limits))})"


def _window_usage(samples, result):
    """The largest one-process NVML memory sampled while the result's job ran."""
    start, end = _instant(result["started_at"]), _instant(result["finished_at"])
    used = [s["used_bytes"] for s in samples if start <= s["t"] <= end]
    return max(used) if used else None


def _telemetry_max(result):
    """The agent's NVML figure over the timed epochs: the largest process memory of the job's GPUs."""
    telemetry = result.get("telemetry") or {}
    if telemetry.get("status") != "ok":
        return None
    figures = [gpu["process_memory_bytes"]["max"] for gpu in telemetry["gpus"] if gpu["process_memory_bytes"]]
    return max(figures) if figures else None


def check_memory(evidence):
    """The driver sees at least what the framework holds (NVML sampled while the job ran against the
    allocator's reserved peak of the timed epochs; on a CPU the resident size against the timed
    phase's high-water mark), and not wildly more: on a GPU the agent's NVML figure over the same
    timed epochs is within a context's allowance of that peak; on a CPU, within twice it (a
    gross error, NVML's all-ones 'not available' summed in, fails both)."""
    samples = evidence["samples"]
    if samples is None:
        return _nothing(evidence, _any, "no NVML samples of the sweep")
    checked = []
    for result in _ok_results(evidence):
        memory, job_id = result["memory"], result["job"]["job_id"]
        sampled = _window_usage(samples, result)
        if sampled is None:
            return "fail", f"{job_id}: no NVML sample while it ran"
        if memory["source"] == "cuda_allocator":
            own = memory["peak_reserved_bytes"]
            timed = _telemetry_max(result)
            if timed is None:
                return "fail", f"{job_id}: no NVML process memory in its telemetry ({result.get('telemetry')})"
            high, limit = timed, own + GPU_CONTEXT_ALLOWANCE
        elif memory["source"] == "rss":
            own = memory["peak_rss_bytes"]
            high, limit = sampled, 2 * own
        else:
            continue  # TensorFlow's and XLA's allocators count differently (docs/frameworks.md)
        if sampled < JOB_MEMORY_SHARE * own:
            return "fail", f"{job_id}: NVML saw at most {sampled / 2**20:.0f} MiB, below the runner's own " \
                           f"{memory['source']} peak {own / 2**20:.0f} MiB"
        if high > limit:
            return "fail", f"{job_id}: NVML {high / 2**20:.0f} MiB against the runner's {memory['source']} peak " \
                           f"{own / 2**20:.0f} MiB (limit {limit / 2**20:.0f} MiB)"
        checked.append(high / max(own, 1))
    if not checked:
        return _nothing(evidence, _any, "no result whose memory could be compared")
    return "pass", f"{len(checked)} results; NVML over the runner's own peak: " \
                   f"{min(checked):.2f}..{max(checked):.2f}"


def check_fp16_loss_scaling(evidence):
    fp16 = [r for r in evidence["results"] or [] if r["job"].get("precision") == "fp16"]
    if not fp16:
        return _nothing(evidence, lambda job: job.get("precision") == "fp16", "no fp16 result")
    ran = 0
    for result in fp16:
        job_id = result["job"]["job_id"]
        if result["status"] == "unsupported" and result["job"].get("device", "cpu") == "cpu":
            if "fp16" not in (result.get("error") or ""):
                return "fail", f"{job_id}: unsupported without naming fp16: {result.get('error')!r}"
            continue  # a CPU's answer: fp16 with loss scaling needs CUDA
        if result["status"] != "ok":
            return "fail", f"{job_id}: {result['status']}: {result.get('error')}"
        scaling = result["execution"].get("loss_scaling")
        steps = result["timing"]["warmup_iterations"] + result["timing"]["epochs"] * result["timing"][
            "iterations_per_epoch"]
        if not scaling or not scaling["initial_scale"] > 0 or not scaling["final_scale"] > 0:
            return "fail", f"{job_id}: no dynamic loss scale recorded ({scaling})"
        if scaling["skipped_steps"] >= steps:
            return "fail", f"{job_id}: all {steps} steps skipped (overflow every step)"
        finals = [loss for loss in result["loss"]["epoch_final"] if loss is not None]
        if not finals or not all(math.isfinite(loss) for loss in finals):
            return "fail", f"{job_id}: non-finite losses {result['loss']['epoch_final']}"
        ran += 1
    return "pass", f"{ran} fp16 results scaled their loss" if ran else \
        f"{len(fp16)} fp16 jobs refused on CPU, naming fp16 (the GPU verdict: tests/gpu_evidence)"


def check_first_loss(evidence):
    pairs = {}
    for result in _ok_results(evidence):
        job = result["job"]
        if result["execution"]["task"] != "train" or result["loss"]["first_step"] is None:
            continue
        key = json.dumps({k: v for k, v in job.items() if k not in ("mode", "job_id", "attempt", "sweep")},
                         sort_keys=True)
        pairs.setdefault(key, {})[job["mode"]] = result
    compared = []
    for key, sides in pairs.items():
        if "eager" not in sides or "compiled" not in sides:
            continue
        if sides["compiled"]["execution"]["mode"] != "compiled":
            return "fail", f"{sides['compiled']['job']['job_id']}: fell back to eager: " \
                           f"{sides['compiled']['execution']['fallback_reason']}"
        eager, compiled = sides["eager"]["loss"]["first_step"], sides["compiled"]["loss"]["first_step"]
        precision = sides["eager"]["job"].get("precision", "fp32")
        if sides["eager"]["execution"].get("math", {}).get("tf32_matmul"):
            precision = "tf32" if precision == "fp32" else precision
        difference = abs(compiled - eager) / max(abs(eager), 1e-12)
        if difference > FIRST_LOSS_TOLERANCE[precision]:
            return "fail", f"{sides['compiled']['job']['job_id']}: first-step loss {compiled:.6g}, eager " \
                           f"{eager:.6g} ({difference:.2%} apart, limit {FIRST_LOSS_TOLERANCE[precision]:.1%})"
        compared.append(difference)
    if not compared:
        return _nothing(evidence, _training, "no eager/compiled pair of training results")
    return "pass", f"{len(compared)} pairs, largest difference {max(compared):.2e}"


def check_accuracy_gate(evidence):
    """Every compiled result computes what eager does (the agent's gate, docs/compiler.md): a fast wrong
    model, or one the gate could not judge, is no evidence that the compiled path works."""
    compiled = [r for r in _ok_results(evidence) if r["job"].get("mode") == "compiled"]
    if not compiled:
        return _nothing(evidence, lambda job: job.get("mode") == "compiled", "no successful compiled result")
    for result in compiled:
        accuracy = result.get("accuracy") or {}
        if accuracy.get("status") != "pass":
            why = "; ".join(accuracy.get("failed") or []) or accuracy.get("skipped") or "no verdict"
            return "fail", f"{result['job']['job_id']} ({result['job']['runner']}): accuracy " \
                           f"{accuracy.get('status')}: {why}"
    worst = max((r["accuracy"].get("deviation") or 0.0) for r in compiled)
    return "pass", f"{len(compiled)} compiled results passed the gate, worst deviation {worst:.3g}"


def check_peak_vs_load(evidence):
    load_probe, peak = evidence["load"], evidence["peak"]
    if not load_probe:
        return "fail", "no load.json"
    if not peak:
        return _nothing(evidence, lambda job: job.get("runner", "libtorch") == "libtorch",
                        "no peak probe figures (the worker probes them)")
    device = load_probe["device"] if load_probe["device"] != "cuda" else "cuda:0"
    figures = [d for d in peak["devices"] if d["device"] == device]
    if not figures or not figures[0].get("bf16"):
        return "fail", f"the peak probe has no bf16 figure for {device}"
    ratio = load_probe["flops_per_s"] / figures[0]["bf16"]
    text = f"load {load_probe['flops_per_s'] / 1e12:.3f} TFLOP/s (n={load_probe['n']}) over the peak probe's " \
           f"{figures[0]['bf16'] / 1e12:.3f}: {ratio:.2f}"
    low, high = PEAK_VS_LOAD["cpu" if device == "cpu" else "gpu"]
    return ("pass" if low <= ratio <= high else "fail"), text + f" (want {low}..{high})"


def check_energy(evidence):
    """Every result the agent judged has its energy section (docs/methodology.md): on a GPU, NVML's
    counter over the timed epochs, which the judge holds against the integral of the sampled power
    (its warning, agent/judge/energy.hpp, fails the check); on a CPU, RAPL's or absent with the reason."""
    ok = _ok_results(evidence)
    if not ok:
        return _nothing(evidence, _any, "no successful result")
    if not any("energy" in r for r in ok):
        return "not run", "no result came through an agent (the runners ran directly): no energy section"
    problems, lines = [], []
    for result in ok:
        energy, job_id = result.get("energy") or {}, result["job"]["job_id"]
        if not str(result["job"].get("device", "cpu")).startswith("cuda"):
            lines.append(energy.get("source") or f"absent ({(energy.get('reason') or 'no section')[:80]})")
            continue
        if energy.get("status") != "ok" or energy.get("source") != "nvml" or not energy.get("joules", 0) > 0:
            problems.append(f"{job_id}: {energy.get('reason') or 'no NVML energy over its timed epochs'}")
        problems += [f"{job_id}: {w}" for w in result.get("warnings", []) if w.startswith("energy:")]
        if energy.get("status") == "ok":
            lines.append(f"{energy['joules']:.0f} J at {energy['average_power_w']:.0f} W")
    if problems:
        return "fail", "; ".join(problems)[:600]
    return "pass", f"{len(ok)} results: " + ", ".join(sorted(set(lines)))[:300]


def check_results(evidence):
    results = evidence["results"]
    if results is None:
        return _nothing(evidence, _any, "no results.json")
    ok = _ok_results(evidence)
    broken = [r for r in results if r["status"] == "failed"]
    if broken:
        return "fail", f"{len(broken)} failed: " + "; ".join(
            f"{r['job']['job_id']}: {(r.get('error') or '')[:200]}" for r in broken)
    if not ok:
        return _nothing(evidence, _any, "no successful result")
    return "pass", f"{len(ok)} ok, {len(results) - len(ok)} unsupported"


def _class_check(name):
    """Every job of the plan's class `name` ran: a result ok, or on a CPU dry run unsupported with its
    reason (fp16, NCCL). A failed one fails, and so does a GPU job its runner calls unsupported: the
    class is what the lease must prove; one left out is `not run`."""

    def check(evidence):
        planned = [p for p in evidence["jobs"] if p["class"] == name]
        if not planned:
            return "fail", f"no {name} jobs in the plan (jobs.json)"
        results = {r["job"]["job_id"]: r for r in evidence["results"] or []}
        failed = [p for p in planned if p.get("job_id") in results and (
            results[p["job_id"]]["status"] == "failed" or (results[p["job_id"]]["status"] == "unsupported"
                                                           and p["job"].get("device", "cpu") != "cpu"))]
        if failed:
            return "fail", "; ".join(f"{p['job_id']} ({p['job'].get('runner', 'libtorch')} {p['job']['model']} "
                                     f"{p['job'].get('precision', 'fp32')} {p['job'].get('mode', 'eager')}): "
                                     f"{(results[p['job_id']].get('error') or '')[:160]}" for p in failed)
        left = [p for p in planned if p.get("job_id") not in results]
        if left:
            whys = sorted({p.get("why") or p["state"] for p in left})
            return "not run", f"{len(planned) - len(left)} of {len(planned)} ran; left out: " + "; ".join(whys)[:300]
        runners = sorted({p["job"].get("runner", "libtorch") for p in planned})
        return "pass", f"all {len(planned)} ran ({', '.join(runners)})"

    return check


CHECKS = [
    ("preflight", check_preflight),
    ("nvml_under_load", check_nvml_under_load),
    ("tf32_policy", check_tf32_policy),
    ("results", check_results),
    ("event_vs_wall", check_event_vs_wall),
    ("memory", check_memory),
    ("energy", check_energy),
    ("fp16_loss_scaling", check_fp16_loss_scaling),
    ("first_loss", check_first_loss),
    ("accuracy_gate", check_accuracy_gate),
    ("peak_vs_load", check_peak_vs_load),
    ("core", _class_check("core")),
    ("extras", _class_check("extras")),
]


def run_all(folder):
    """[(name, verdict, detail)] for the evidence in `folder`; a check that raises fails with the reason."""
    evidence = load(folder)
    verdicts = []
    for name, check in CHECKS:
        try:
            verdict, detail = check(evidence)
        except (KeyError, TypeError, ValueError, ZeroDivisionError) as error:
            verdict, detail = "fail", f"unreadable evidence: {type(error).__name__}: {error}"
        verdicts.append((name, verdict, detail))
    return verdicts
