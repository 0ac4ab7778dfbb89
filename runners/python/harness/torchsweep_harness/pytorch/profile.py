"""The job's profile (job field profile, docs/explain.md): more steps after
the timed epochs under torch.profiler (Kineto), so the timed figures are
those of an unprofiled run; the trace (Chrome's trace event format, gzip)
beside the result, and the result's profile section: what ran, per
operator and per GPU kernel, most time first."""

import hashlib
import os
import time

TOP = 50  # rows of each table kept in the result; the trace has every event
TRACE_NAME = "profile.trace.json.gz"


def options(job):
    """What the job asked of the profile, as both kinds of section repeat it."""
    asked = job["profile"]
    return {"steps": asked["steps"], "record_shapes": asked["record_shapes"], "memory": asked["memory"],
            "with_stack": asked["with_stack"]}


def unavailable_profile(job, reason):
    """The profile section of a job whose profile could not be taken."""
    return {"status": "unavailable", "reason": reason, "profiler": None, "activities": [], **options(job)}


def profile_steps(torch, experiment, job, folder):
    """Runs job.profile.steps steps of `experiment` under the profiler and
    returns the result's profile section, the trace written in `folder`."""
    from torch.profiler import ProfilerActivity, profile
    asked = job["profile"]
    on_gpu = experiment.device.type == "cuda"
    activities = [a for a in asked["activities"] if a == "cpu" or on_gpu]
    if not activities:
        return unavailable_profile(job, f"activities [cuda] on device {experiment.device}: nothing to record")
    section = {"status": "ok", "profiler": f"torch.profiler {torch.__version__}", "activities": activities,
               **options(job)}
    experiment.synchronize()
    step_seconds = []
    with profile(activities=[{"cpu": ProfilerActivity.CPU, "cuda": ProfilerActivity.CUDA}[a] for a in activities],
                 record_shapes=asked["record_shapes"], profile_memory=asked["memory"],
                 with_stack=asked["with_stack"]) as profiler:
        for _ in range(asked["steps"]):
            started = time.perf_counter()
            experiment.step()
            experiment.synchronize()
            step_seconds.append(time.perf_counter() - started)
    section["step_seconds"] = step_seconds
    section["trace"] = write_trace(profiler, os.path.join(folder, TRACE_NAME))
    section["operators"], section["kernels"] = summaries(profiler, asked["record_shapes"], asked["steps"], on_gpu)
    return section


def write_trace(profiler, path):
    """The trace, gzip-compressed by the profiler's own export (a path ending
    in .gz), then renamed into place: {file, bytes, sha256}."""
    partial = path[:-len(".json.gz")] + ".partial.json.gz"
    profiler.export_chrome_trace(partial)
    os.replace(partial, path)
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"file": os.path.basename(path), "bytes": os.path.getsize(path), "sha256": digest.hexdigest()}


def device_time(event, kind):
    """An averaged event's device time in µs (self_device_time_total since
    PyTorch 2.4, self_cuda_time_total before)."""
    for name in (f"{kind}device_time_total", f"{kind}cuda_time_total"):
        if hasattr(event, name):
            return getattr(event, name)
    return 0.0


def summaries(profiler, by_shape, steps, on_gpu):
    """(operators, kernels): the profiler's averages per operator (per
    operator and input shapes when they were recorded), calls and host and
    device seconds per profiled step, the most self time (the device's on a
    GPU) first; the device's kernels apart."""
    from torch.autograd import DeviceType
    operators, kernels = [], []
    for event in profiler.key_averages(group_by_input_shape=by_shape):
        row = {"name": event.key, "calls": event.count / steps,
               "self_cpu_s": max(0.0, event.self_cpu_time_total / 1e6 / steps),
               "cpu_total_s": event.cpu_time_total / 1e6 / steps,
               "self_device_s": max(0.0, device_time(event, "self_") / 1e6 / steps),
               "device_total_s": device_time(event, "") / 1e6 / steps}
        if event.device_type == DeviceType.CUDA:
            kernels.append({"name": row["name"], "calls": row["calls"], "device_s": row["self_device_s"]})
            continue
        if by_shape:
            row["input_shapes"] = str(event.input_shapes)
        operators.append(row)
    first = "self_device_s" if on_gpu else "self_cpu_s"
    operators.sort(key=lambda row: (-row[first], row["name"]))
    kernels.sort(key=lambda row: (-row["device_s"], row["name"]))
    return operators[:TOP], kernels[:TOP]
