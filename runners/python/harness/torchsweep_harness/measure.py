"""The methodology of docs/methodology.md, once for every Python runner:
warm-up before the timed region, the timed epochs and memory in phases on
the CPU. Runners measure: the timing summary, its noise and warm-up
judgements are the agent's (agent/judge/), as for every runner."""
import time

from .contract import report_progress
from .errors import Unsupported


def timed(synchronize, work):
    """Wall time of `work`, the device synchronised before and after."""
    synchronize()
    start = time.perf_counter()
    result = work()
    synchronize()
    return time.perf_counter() - start, result


def warm_up(experiment, warmup):
    """(first iteration seconds, all warm-up seconds, the early losses).
    Compilation happens in the first step, never in the timed epochs: with
    warmup 0 that one step still runs, untimed by the epochs, as the worker's.
    A reference batch takes the first two steps of a training job (one of an
    inference job), then an eval-mode loss of it is taken: the figures that
    compare runners from the same starting point (docs/frameworks.md)."""
    reference = experiment.reference
    reference_steps = 0 if reference is None else 2 if experiment.train else 1
    losses = {"first_step": None, "second_step": None, "reference_eval": None}

    def one(index):
        output, targets = experiment.step(reference if index < reference_steps else experiment.next_batch())
        if index < 2:
            losses["first_step" if index == 0 else "second_step"] = experiment.loss_value(output, targets)
        if index + 1 == reference_steps and experiment.train:
            losses["reference_eval"] = experiment.evaluate(reference)

    iterations = max(1, warmup, reference_steps)
    first, _ = timed(experiment.synchronize, lambda: one(0))
    rest, _ = timed(experiment.synchronize, lambda: [one(index) for index in range(1, iterations)])
    return first, first + rest, losses


class ExperimentBase:
    """What the harness needs of a framework's experiment: set self.batches
    (synthetic data, made before the timed region, handed out in turn) or
    self.feed (imagefolder data, a data.Feed), self.reference (the job's
    reference batch on the device, or None) and self.train; give
    step(batch) -> (output, targets), loss_value(output, targets),
    evaluate(batch) (the eval-mode loss) and synchronize()."""
    position = 0
    reference = None
    feed = None

    def next_batch(self):
        if self.feed is not None:
            return self.feed.next_batch()
        batch = self.batches[self.position]
        self.position = (self.position + 1) % len(self.batches)
        return batch


def prepare(make_experiment, job, warnings, log, compiler, reset=lambda: None):
    """The experiment of the job's mode (make_experiment(mode)), built and
    warmed up, with the warm-up's timing, its early losses and the reason it
    fell back to eager (None if it did not): a compiled (or graph) experiment
    that fails to build or to run its first steps is rebuilt eager when the
    job's fallback allows, and says so. `compiler` names what failed."""
    mode = job["mode"]
    timing = {"warmup_iterations": job["warmup"]}
    fallback_reason = None
    try:
        experiment = make_experiment(mode)
        timing["first_iteration_seconds"], timing["warmup_seconds"], losses = warm_up(experiment, job["warmup"])
    except Unsupported:
        raise
    except Exception as error:  # noqa: BLE001 - any compile failure is the job's outcome
        if mode == "eager" or job["fallback"] != "eager":
            raise
        fallback_reason = f"{compiler} failed: {type(error).__name__}: {str(error).splitlines()[0]}"
        log.warning(f"{fallback_reason}; falling back to eager as the job allows")
        warnings.append(f"{mode} mode fell back to eager: {fallback_reason}")
        reset()
        experiment = make_experiment("eager")
        timing["first_iteration_seconds"], timing["warmup_seconds"], losses = warm_up(experiment, job["warmup"])
    return experiment, timing, losses, fallback_reason


def measure(experiment, clock, probe, job, timing):
    """The timed epochs with memory in phases: fills `timing` and returns each
    epoch's last loss, the memory report and the data report (None for
    synthetic data)."""
    experiment.synchronize()
    probe.begin_timed_phase()
    epoch_seconds, step_seconds, epoch_final, stall_seconds = timed_epochs(
        experiment, clock, job["epochs"], job["iters"],
        lambda epoch, seconds: report_progress(epoch + 1, job["epochs"], seconds))
    experiment.synchronize()
    memory = probe.end()
    timing.update(clock=clock.name, epochs=job["epochs"], iterations_per_epoch=job["iters"],
                  epoch_seconds=epoch_seconds, step_seconds=step_seconds)
    data = experiment.feed.section(stall_seconds) if experiment.feed is not None else None
    return epoch_final, memory, data


def record_measurements(result, timing, losses, epoch_final, memory, data_report):
    """The measured sections of the result document: timing, loss, memory
    and, for imagefolder data, data."""
    result["timing"] = timing
    result["loss"] = dict(losses, epoch_final=epoch_final)
    result["memory"] = memory
    if data_report:
        result["data"] = data_report


class HostClock:
    """The worker's HostStepClock: the host's monotonic clock around each
    step and each epoch. `name` is the result's timing.clock:
    steady_clock_step_sync where each step waits for the device itself (the
    Keras runners on a GPU). `synchronize` waits for work still running when
    a step has returned (JAX dispatches asynchronously: a step's loss is
    ready before its update is), before the epoch's clock is read."""

    def __init__(self, now=time.perf_counter, name="steady_clock", synchronize=lambda: None):
        self.now, self.name, self.synchronize = now, name, synchronize

    def begin_epoch(self):
        self.steps, self.epoch_start = [], self.now()

    def begin_step(self):
        self.step_start = self.now()

    def end_step(self):
        self.steps.append(self.now() - self.step_start)

    def end_epoch(self):
        self.synchronize()
        return self.now() - self.epoch_start, self.steps


def timed_epochs(experiment, clock, epochs, iters, on_epoch=lambda epoch, seconds: None):
    """The timed region, as the worker's (docs/methodology.md): synthetic
    batches are on the device before the clock starts, the step clock sees
    only the steps, and the device is synchronised at epoch boundaries only
    (by the clock). The epoch clock also sees the waits for the next batch,
    the input stall (docs/data.md). Returns per-epoch seconds, per-step
    seconds, each epoch's last loss and each epoch's input stall."""
    epoch_seconds, step_seconds, epoch_final, stall_seconds = [], [], [], []
    for epoch in range(epochs):
        clock.begin_epoch()
        stall = 0.0
        for _ in range(iters):
            waited = time.perf_counter()
            batch = experiment.next_batch()
            stall += time.perf_counter() - waited
            clock.begin_step()
            output, targets = experiment.step(batch)
            clock.end_step()
        seconds, steps = clock.end_epoch()
        epoch_seconds.append(seconds)
        step_seconds.append(steps)
        epoch_final.append(experiment.loss_value(output, targets))
        stall_seconds.append(stall)
        on_epoch(epoch, seconds)
    return epoch_seconds, step_seconds, epoch_final, stall_seconds


def resident_size():
    """(VmRSS, VmHWM) of this process in bytes, from /proc/self/status."""
    sizes = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                sizes[name] = int(rest.split()[0]) * 1024
    return sizes.get("VmRSS", 0), sizes.get("VmHWM", 0)


class RssProbe:
    """Memory in phases on a CPU, as the worker's memory_probe: the process's
    baseline before the model is built (make it first); at the start of the
    timed phase the warm-up/compile phase's high-water mark is read and reset
    (/proc/self/clear_refs, 5); then the timed phase's (result.memory).
    A framework's device probe offers the same three calls."""

    def __init__(self):
        self.report = {"baseline_rss_bytes": resident_size()[0]}
        self.rss_at_start = 0

    def begin_timed_phase(self):
        self.report["warmup_peak_rss_bytes"] = resident_size()[1]
        try:
            with open("/proc/self/clear_refs", "w") as clear_refs:
                clear_refs.write("5")  # 5: reset the peak resident set size (proc(5))
            self.report["hwm_reset"] = True
        except OSError:
            self.report["hwm_reset"] = False
        self.rss_at_start = resident_size()[0]

    def end(self):
        peak = resident_size()[1]
        return dict(self.report, source="rss", peak_rss_bytes=peak, rss_growth_bytes=max(0, peak - self.rss_at_start),
                    rss_footprint_bytes=max(0, peak - self.report["baseline_rss_bytes"]))


class AllocatorProbe:
    """A GPU framework allocator's peak in phases, as the worker's
    memory_probe on CUDA: the warm-up/compile phase's peak read at the start
    of the timed phase and the counter reset, then the timed phase's.
    `peak()` reads the peak bytes in use; `reset` is None where the
    framework cannot reset it (JAX): the timed phase's figure then spans the
    process life, and hwm_reset says so. Allocators count differently, so
    frameworks are compared by NVML's per-process memory (the agent's)."""

    def __init__(self, source, peak, reset=None):
        self.source, self.peak, self.reset = source, peak, reset
        self.report = {}

    def begin_timed_phase(self):
        self.report["warmup_peak_allocated_bytes"] = int(self.peak())
        if self.reset is not None:
            self.reset()
        self.report["hwm_reset"] = self.reset is not None

    def end(self):
        return dict(self.report, source=self.source, peak_allocated_bytes=int(self.peak()))


def generations(generator, clock, count, new_tokens, on_epoch=lambda epoch, seconds: None):
    """`count` greedy generations (task generate, docs/language-models.md),
    each one epoch of the clock: the prefill of the next prompt is its first
    step, the new_tokens - 1 decode steps the rest; the device is
    synchronised at the epoch's ends only (by the clock). The generator
    gives next_prompt(), prefill(prompt) -> the first new token [batch, 1]
    and decode(token, index) -> the next one, both left on the device.
    Returns per-generation seconds, prefill seconds, decode step seconds and
    the last generation's prompt and tokens [batch, new_tokens]."""
    epoch_seconds, prefill_seconds, step_seconds = [], [], []
    prompt = tokens = None
    for epoch in range(count):
        prompt = generator.next_prompt()
        clock.begin_epoch()
        clock.begin_step()
        token = generator.prefill(prompt)
        clock.end_step()
        tokens = [token]
        for index in range(new_tokens - 1):
            clock.begin_step()
            token = generator.decode(token, index)
            clock.end_step()
            tokens.append(token)
        seconds, steps = clock.end_epoch()
        epoch_seconds.append(seconds)
        prefill_seconds.append(steps[0])
        step_seconds.append(steps[1:])
        on_epoch(epoch, seconds)
    return epoch_seconds, prefill_seconds, step_seconds, (prompt, tokens)


def measure_generation(generator, clock, probe, job, timing):
    """Warm-up generations (compilation in the first, untimed by the
    epochs, as for training), then the timed ones with memory in phases:
    fills `timing` and returns the generation section's measurements and
    the memory report."""
    new_tokens = job["new_tokens"]
    warm_clock = HostClock()
    first, _ = timed(generator.synchronize, lambda: generations(generator, warm_clock, 1, new_tokens))
    rest, _ = timed(generator.synchronize,
                    lambda: generations(generator, warm_clock, max(1, job["warmup"]) - 1, new_tokens))
    timing.update(warmup_iterations=job["warmup"], first_iteration_seconds=first, warmup_seconds=first + rest)
    generator.synchronize()
    probe.begin_timed_phase()
    epoch_seconds, prefill_seconds, step_seconds, last = generations(
        generator, clock, job["epochs"], new_tokens,
        lambda epoch, seconds: report_progress(epoch + 1, job["epochs"], seconds))
    generator.synchronize()
    memory = probe.end()
    timing.update(clock=clock.name, epochs=job["epochs"], iterations_per_epoch=job["iters"],
                  epoch_seconds=epoch_seconds, step_seconds=step_seconds)
    return {"prompt_len": job["prompt_len"], "new_tokens": new_tokens, "prefill_seconds": prefill_seconds}, last, memory
