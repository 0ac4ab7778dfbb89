"""torch.compile's settings and what compiling did (docs/compiler.md): the
options checked against this PyTorch, the compiler caches a job starts
with, the operators Inductor left to ATen, Dynamo's counters and the
compile time's phases."""

import json
import os
import subprocess
import sys
import tempfile
import time

from ..contract import RUNNER_CONTRACT
from ..errors import Unsupported


# torch.compile modes that capture CUDA graphs (torch._inductor.list_mode_options()).
CUDA_GRAPH_MODES = ("reduce-overhead", "max-autotune")


def compile_options(job):
    return dict(backend=job["backend"], mode=job["compile_mode"], dynamic=job["dynamic"], fullgraph=job["fullgraph"])


def check_compile_options(torch, job):
    """Refuses, naming the option and the version, what this environment's
    PyTorch does not know or cannot do here: a mode or backend it lacks, a
    mode that captures CUDA graphs on a CPU (docs/compiler.md)."""
    import torch._dynamo
    import torch._inductor
    modes, backends = sorted(torch._inductor.list_mode_options()), torch._dynamo.list_backends(exclude_tags=())
    if job["compile_mode"] not in modes:
        raise Unsupported(f"compile_mode {job['compile_mode']}: PyTorch {torch.__version__} knows "
                          f"{', '.join(modes)}")
    if job["backend"] not in backends:
        raise Unsupported(f"backend {job['backend']}: PyTorch {torch.__version__} has no such torch.compile backend; "
                          f"it has {', '.join(name for name in backends if 'TESTING' not in name)}")
    if job["compile_mode"] in CUDA_GRAPH_MODES and not job["device"].startswith("cuda"):
        raise Unsupported(f"compile_mode {job['compile_mode']} captures CUDA graphs, which need a CUDA device; "
                          "on a CPU use default or max-autotune-no-cudagraphs")


class InductorFallbacks:
    """The operators Inductor left to ATen while the job compiled (no
    lowering of its own, or a fallback by design): each FallbackKernel it
    creates, recorded by wrapping FallbackKernel.create for the process, the
    one place every fallback passes through (docs/compiler.md). A graph
    loaded from the FX graph cache is not lowered again, so its fallbacks
    are not seen: then the list is null."""

    def __init__(self):
        self.counts = {}
        try:
            from torch._inductor.ir import FallbackKernel
        except ImportError:  # a PyTorch without Inductor
            self.available = False
            return
        self.available = True
        original, counts = FallbackKernel.create.__func__, self.counts

        def create(cls, kernel, *args, **kwargs):
            counts[str(kernel)] = counts.get(str(kernel), 0) + 1
            return original(cls, kernel, *args, **kwargs)
        FallbackKernel.create = classmethod(create)

    def section(self, counters):
        """fallback_operators: [{operator, count}], most frequent first."""
        if not self.available or counters["inductor"].get("fxgraph_cache_hit", 0):
            return None
        return [{"operator": name, "count": count}
                for name, count in sorted(self.counts.items(), key=lambda item: (-item[1], item[0]))[:20]]


class CompileCache:
    """The compiler caches a compiled job starts with (job compile_cache,
    docs/compiler.md). default: the environment's own directories, as they
    are. cold: a fresh per-job directory for Inductor's caches (FX graphs,
    AOTAutograd, generated code) and Triton's, so everything compiles.
    warm: that directory after another process of this runner compiled the
    same job in it (one untimed iteration), so the job's own compile reads
    what a previous night's run left. Set before the first compilation,
    which reads the directories from the environment."""

    def __init__(self, job, program):
        """`program`: the runner's own file, which fills a warm cache."""
        self.kind, self.fill_seconds, self.program = job["compile_cache"], None, program
        if self.kind == "default":
            return
        self.scratch = tempfile.TemporaryDirectory(prefix="torchsweep-compile-cache-")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = self.scratch.name
        os.environ["TRITON_CACHE_DIR"] = os.path.join(self.scratch.name, "triton")
        if self.kind == "warm":
            self.fill(job)

    def fill(self, job):
        filler = dict(job, compile_cache="default", epochs=1, warmup=0)
        if job["task"] != "generate":
            filler["iters"] = 1
        environment = {name: value for name, value in os.environ.items()
                       if name != RUNNER_CONTRACT["progress"]["environment_variable"]}
        started = time.perf_counter()
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            finished = subprocess.run([sys.executable, self.program, "--job", "-", "--out", out.name],
                                      input=json.dumps(filler), text=True, capture_output=True, env=environment)
        self.fill_seconds = time.perf_counter() - started
        if finished.returncode != 0:
            last = (finished.stderr.strip().splitlines() or ["no output"])[-1]
            raise RuntimeError(f"compile_cache warm: the run that fills the cache failed ({finished.returncode}): "
                               f"{last}")

    def section(self):
        return {"kind": self.kind, "fill_seconds": self.fill_seconds}


# PyTorch's compile timers (torch._dynamo.utils.compilation_time_metrics)
# the phases are read from; each sums every call (several graphs, recompiles).
DYNAMO_TIMER, BACKEND_TIMER = "_compile.compile_inner", "OutputGraph.call_user_compiler"


LAZY_BACKWARD_TIMER, INDUCTOR_TIMER = "compile_fx.<locals>.bw_compiler", "compile_fx_inner"


def compile_phases(first_iteration_seconds):
    """Compile time by phase, from PyTorch's own timers (docs/compiler.md):
    Dynamo's tracing (its compile less the backend's), the backend
    (AOTAutograd and Inductor, with a backward graph compiled lazily at the
    first backward), Inductor's code generation and compilation alone, and
    the first iteration's remainder: running it. A phase whose timer did not
    run (a cache hit, another backend) is null."""
    from torch._dynamo.utils import compilation_time_metrics as timers

    def total(name):
        return sum(timers[name]) if name in timers else None
    dynamo, backend = total(DYNAMO_TIMER), total(BACKEND_TIMER)
    if backend is not None:
        backend += total(LAZY_BACKWARD_TIMER) or 0.0
    inductor = total(INDUCTOR_TIMER)
    phases = {"dynamo_seconds": dynamo - (total(BACKEND_TIMER) or 0.0) if dynamo is not None else None,
              "backend_seconds": backend, "inductor_seconds": inductor,
              "aot_autograd_seconds": max(0.0, backend - inductor) if backend is not None and inductor is not None
              else None, "first_run_seconds": None}
    if first_iteration_seconds is not None and dynamo is not None:
        phases["first_run_seconds"] = max(0.0, first_iteration_seconds - phases["dynamo_seconds"] - (backend or 0.0))
    phases["timers"] = [{"name": name, "seconds": sum(times), "calls": len(times)}
                        for name, times in sorted(timers.items(), key=lambda item: -sum(item[1]))[:12]]
    return phases


def compile_section(torch, job, cache, fallbacks, kernels, first_iteration_seconds, warnings):
    """execution.compile (docs/compiler.md): the job's torch.compile settings
    and what Dynamo did, from its counters (torch._dynamo.utils.counters,
    guard_failures; both cleared when the run starts): graphs captured,
    graph breaks with their reasons (each reason in full, and counted by its
    summary: its first line, and the explanation newer versions put on the
    second), and recompilations with the guards that failed; the operators
    Inductor left to ATen and its own counters; the compile time's phases
    and the caches it started with; the CPU kernels' vector ISA (a warning
    in `warnings` where they are scalar on a CPU that has one)."""
    from torch._dynamo.utils import counters, guard_failures
    summaries = {}
    for reason, count in counters["graph_break"].items():
        lines = [line.strip() for line in reason.splitlines() if line.strip()]
        summary = lines[0] + (f": {lines[1].removeprefix('Explanation: ')}" if len(lines) > 1 and
                              lines[1].startswith("Explanation:") else "")
        summaries[summary] = summaries.get(summary, 0) + count
    failures = [reason.splitlines()[0] for reasons in guard_failures.values() for reason in reasons]
    return {"backend": job["backend"], "compile_mode": job["compile_mode"], "dynamic": job["dynamic"],
            "fullgraph": job["fullgraph"], "graph_breaks": sum(counters["graph_break"].values()),
            "graphs": counters["stats"].get("unique_graphs", 0),
            "break_reasons": sorted(counters["graph_break"].keys()),
            "top_break_reasons": [{"reason": reason, "count": count} for reason, count in
                                  sorted(summaries.items(), key=lambda item: (-item[1], item[0]))[:10]],
            "recompilations": len(failures), "guard_failures": failures[:10],
            "fallback_operators": fallbacks.section(counters),
            "inductor_counters": {name: int(value) for name, value in sorted(counters["inductor"].items())},
            "phases": compile_phases(first_iteration_seconds), "cache": cache.section(),
            "cpu_kernels": kernels.section(warnings)}
