"""What every Python runner's profile section holds (job field profile,
docs/explain.md), and the profiled steps of a framework whose profiler writes
a trace directory (JAX's, TensorFlow's): steps after the timed epochs, each
synchronized and marked ProfilerStep#N, the trace (Chrome's trace event
format, gzip) beside the result. Those profilers keep no per-operator table:
the agent sums the trace into the section's operators and kernels with the
LibTorch worker's arithmetic (agent/trace_summary.hpp)."""

import hashlib
import os
import shutil
import tempfile
import time

TRACE_NAME = "profile.trace.json.gz"
STEP_MARK = "ProfilerStep#{}"  # torch.profiler's step events; the agent's summary keeps what ran within them


def options(job):
    """What the job asked of the profile, as both kinds of section repeat it."""
    asked = job["profile"]
    return {"steps": asked["steps"], "record_shapes": asked["record_shapes"], "memory": asked["memory"],
            "with_stack": asked["with_stack"]}


def unavailable_profile(job, reason):
    """The profile section of a job whose profile could not be taken."""
    return {"status": "unavailable", "reason": reason, "profiler": None, "activities": [], **options(job)}


def recorded_activities(job, on_gpu):
    """The job's activities that record anything on this device (cuda: on a
    GPU only); none: the section saying so."""
    activities = [a for a in job["profile"]["activities"] if a == "cpu" or on_gpu]
    return activities, None if activities else unavailable_profile(
        job, f"activities [cuda] on device {job['device']}: nothing to record")


def trace_entry(path):
    """The section's trace: {file, bytes, sha256} of the file at `path`."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"file": os.path.basename(path), "bytes": os.path.getsize(path), "sha256": digest.hexdigest()}


def traced_steps(profiler, step, job, folder, on_gpu):
    """Runs job.profile.steps of `step` (one synchronized step) under
    `profiler`, which the framework gives: name, start(log_dir, job),
    stop(), mark(name) (a context naming a step in the trace) and
    trace(log_dir, path) (puts the Chrome trace it recorded in log_dir, gzip,
    at path). Returns the section, the trace in `folder`."""
    activities, unavailable = recorded_activities(job, on_gpu)
    if unavailable:
        return unavailable
    section = {"status": "ok", "profiler": profiler.name, "activities": activities, **options(job)}
    step_seconds = []
    log_dir = tempfile.mkdtemp(prefix="profile.", dir=folder)
    try:
        profiler.start(log_dir, job)
        try:
            for number in range(1, job["profile"]["steps"] + 1):
                started = time.perf_counter()
                with profiler.mark(STEP_MARK.format(number)):
                    step()
                step_seconds.append(time.perf_counter() - started)
        finally:
            profiler.stop()
        path = os.path.join(folder, TRACE_NAME)
        profiler.trace(log_dir, path)
        section["trace"] = trace_entry(path)
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
    section["step_seconds"] = step_seconds
    return section
