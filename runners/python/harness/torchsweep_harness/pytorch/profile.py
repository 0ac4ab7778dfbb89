"""The job's profile (job field profile, docs/explain.md): more steps after
the timed epochs under torch.profiler (Kineto), so the timed figures are
those of an unprofiled run; the trace (Chrome's trace event format, gzip)
beside the result, and the result's profile section: what ran, per
operator and per GPU kernel, most time first."""

import os
import time

from ..profile_section import TRACE_NAME, options, recorded_activities, trace_entry

TOP = 100  # rows of each table kept in the result; the totals and the trace have every event
TOP_SHAPES = 30  # rows per operator and input shapes
WARMUP_STEPS = 1  # under the profiler, not recorded


def name_generated_kernels(torch):
    """Inductor's generated CPU kernels as profiler events of their own
    (graph_0_cpp_fused_gelu_0) rather than time inside CompiledFunction:
    set before a profiled job compiles, it wraps each kernel in a
    record_function, which costs a thread-local check a kernel while no
    profiler runs (docs/explain.md). On a GPU the CUDA activity names
    Triton's kernels anyway."""
    import torch._inductor.config
    torch._inductor.config.cpp.enable_kernel_profile = True


def profile_steps(torch, experiment, job, folder):
    """Runs job.profile.steps steps of `experiment` under the profiler and
    returns the result's profile section, the trace written in `folder`."""
    from torch.profiler import ProfilerActivity, profile, schedule
    asked = job["profile"]
    activities, unavailable = recorded_activities(job, experiment.device.type == "cuda")
    if unavailable:
        return unavailable
    section = {"status": "ok", "profiler": f"torch.profiler {torch.__version__}", "activities": activities,
               **options(job)}
    experiment.synchronize()
    step_seconds = []
    # One step under the profiler before those it records: its start-up (Kineto's, CUPTI's) is no step's.
    with profile(activities=[{"cpu": ProfilerActivity.CPU, "cuda": ProfilerActivity.CUDA}[a] for a in activities],
                 schedule=schedule(wait=0, warmup=WARMUP_STEPS, active=asked["steps"], repeat=1),
                 record_shapes=asked["record_shapes"], profile_memory=asked["memory"],
                 with_stack=asked["with_stack"]) as profiler:
        for step in range(WARMUP_STEPS + asked["steps"]):
            started = time.perf_counter()
            experiment.step()
            experiment.synchronize()
            if step >= WARMUP_STEPS:
                step_seconds.append(time.perf_counter() - started)
            profiler.step()
    section["step_seconds"] = step_seconds
    section["trace"] = write_trace(profiler, os.path.join(folder, TRACE_NAME))
    section.update(summaries(profiler, asked["record_shapes"], asked["steps"], "cuda" in activities))
    return section


def write_trace(profiler, path):
    """The trace, gzip-compressed by the profiler's own export (a path ending
    in .gz), then renamed into place: {file, bytes, sha256}."""
    partial = path[:-len(".json.gz")] + ".partial.json.gz"
    profiler.export_chrome_trace(partial)
    os.replace(partial, path)
    return trace_entry(path)


def device_time(event, kind):
    """An averaged event's device time in µs (self_device_time_total since
    PyTorch 2.4, self_cuda_time_total before)."""
    for name in (f"{kind}device_time_total", f"{kind}cuda_time_total"):
        if hasattr(event, name):
            return getattr(event, name)
    return 0.0


def rows(events, steps, with_shapes):
    """(operators, kernels) of the profiler's averaged events: calls and
    host and device seconds per profiled step; the device's kernels apart."""
    from torch.autograd import DeviceType
    operators, kernels = [], []
    for event in events:
        row = {"name": event.key, "calls": event.count / steps,
               "self_cpu_s": max(0.0, event.self_cpu_time_total / 1e6 / steps),
               "cpu_total_s": event.cpu_time_total / 1e6 / steps,
               "self_device_s": max(0.0, device_time(event, "self_") / 1e6 / steps),
               "device_total_s": device_time(event, "") / 1e6 / steps}
        if event.device_type == DeviceType.CUDA:
            kernels.append({"name": row["name"], "calls": row["calls"], "device_s": row["self_device_s"]})
            continue
        if with_shapes:
            row["input_shapes"] = str(event.input_shapes)
        operators.append(row)
    return operators, kernels


def summaries(profiler, by_shape, steps, kernels_recorded):
    """The section's operators (per name: what `torchsweep explain` pairs),
    operator_shapes (per name and input shapes, when recorded), kernels and
    the totals over every operator and kernel, per profiled step, the most
    self time (the device's where kernels were recorded) first."""
    operators, kernels = rows(profiler.key_averages(), steps, False)
    first = "self_device_s" if kernels_recorded else "self_cpu_s"
    order = lambda row: (-row[first], row["name"], row.get("input_shapes", ""))
    operators.sort(key=order)
    kernels.sort(key=lambda row: (-row["device_s"], row["name"]))
    summary = {"operators": operators[:TOP], "kernels": kernels[:TOP],
               "totals": {"operators": len(operators), "self_cpu_s": sum(r["self_cpu_s"] for r in operators),
                          "self_device_s": sum(r["self_device_s"] for r in operators),
                          "kernels": len(kernels), "kernel_s": sum(r["device_s"] for r in kernels)}}
    if by_shape:
        shaped, _ = rows(profiler.key_averages(group_by_input_shape=True), steps, True)
        summary["operator_shapes"] = sorted(shaped, key=order)[:TOP_SHAPES]
    return summary
