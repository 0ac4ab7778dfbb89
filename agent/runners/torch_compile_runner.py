#!/usr/bin/env python3
"""torchsweep-torch-compile: the torch.compile runner.

Honours the worker contract of docs/worker.md exactly like torchsweep-worker:

    torchsweep-torch-compile --job FILE|- --out FILE|-

one job document in (schemas/job.schema.json), one result document out
(schemas/result.schema.json), exit 0 (ok), 2 (invalid job, no result),
3 (failed or unsupported, result written) or 1 (internal error). It runs the
methodology of docs/methodology.md with PyTorch's own eager mode and with
torch.compile (TorchInductor by default). Standard library and torch only;
torchvision's ResNets are used when it is installed.
"""

import argparse
import datetime
import json
import math
import os
import platform
import re
import socket
import sys
import tempfile
import time

RUNNER_NAME = "torch-compile"
VERSION = "@PROJECT_VERSION@"
COMMIT = "@TS_COMMIT@"
# The contracts, read from the repository's schemas/ (configured at build time).
SCHEMA_DIR = os.environ.get("TORCHSWEEP_SCHEMAS", "@TS_SCHEMA_DIR@")

EXIT_OK, EXIT_INTERNAL, EXIT_INVALID, EXIT_FAILED = 0, 1, 2, 3
NOISY_IQR_OVER_MEDIAN = 0.10

# The worker's defaults (docs/worker.md); the models' own are in schemas/models.json.
DEFAULTS = {"task": "train", "mode": "eager", "fallback": "none", "precision": "fp32", "epochs": 5,
            "warmup": 10, "data_batches": 4, "device": "cpu", "threads": 0, "interop_threads": 0, "seed": 0,
            "optimizer": "sgd", "lr": 0.01, "momentum": 0.9, "weight_decay": 0.0, "gpus": 1,
            "runner": RUNNER_NAME, "attempt": 1, "backend": "inductor", "compile_mode": "default",
            "dynamic": None, "fullgraph": False}
DEFAULT_DATASET_SIZE = 50000
MODEL_KNOBS = ("input_size", "num_classes", "width", "depth", "heads", "seq_len")


class InvalidJob(Exception):
    def __init__(self, field, problem):
        super().__init__(f"{field}: {problem}" if field else problem)
        self.field = field


class Unsupported(Exception):
    pass


def log(level, message):
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    print(f"{stamp} {level:<5} torch-compile: {message}", file=sys.stderr, flush=True)


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


# ---- the job document ---------------------------------------------------------------------------------

def check(value, schema, path):
    """The subset of JSON Schema that schemas/job.schema.json uses; raises InvalidJob naming the field."""
    where = path or "(document)"
    if "const" in schema and value != schema["const"]:
        raise InvalidJob(where, f"expected {json.dumps(schema['const'])}")
    if "enum" in schema and value not in schema["enum"]:
        raise InvalidJob(where, "expected one of " + ", ".join(json.dumps(v) for v in schema["enum"]))
    types = schema.get("type")
    if types is not None:
        types = types if isinstance(types, list) else [types]
        kinds = {"object": isinstance(value, dict), "array": isinstance(value, list),
                 "string": isinstance(value, str), "boolean": isinstance(value, bool), "null": value is None,
                 "integer": isinstance(value, int) and not isinstance(value, bool),
                 "number": isinstance(value, (int, float)) and not isinstance(value, bool)}
        if not any(kinds[t] for t in types):
            raise InvalidJob(where, "expected " + " or ".join(types))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise InvalidJob(where, f"expected at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise InvalidJob(where, f"expected at most {schema['maximum']}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            raise InvalidJob(where, f"expected more than {schema['exclusiveMinimum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0) or len(value) > schema.get("maxLength", math.inf):
            raise InvalidJob(where, "string length out of range")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            raise InvalidJob(where, f"expected a string matching {schema['pattern']}")
    if isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                raise InvalidJob(f"{path}.{name}" if path else name, "is required")
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            field = f"{path}.{name}" if path else name
            if name in properties:
                check(item, properties[name], field)
            elif extra is False:
                raise InvalidJob(field, "is not a job field (schemas/job.schema.json)")
            elif isinstance(extra, dict):
                check(item, extra, field)


def resolve_job(document):
    with open(os.path.join(SCHEMA_DIR, "job.schema.json")) as schema_file:
        check(document, json.load(schema_file), "")
    job = dict(DEFAULTS)
    job.update(document)
    with open(os.path.join(SCHEMA_DIR, "models.json")) as models_file:
        catalogue = {name: entry for name, entry in json.load(models_file).items() if not name.startswith("$")}
    if job["model"] not in catalogue:
        raise InvalidJob("model", f"unknown model '{job['model']}'; known models: " + ", ".join(sorted(catalogue)))
    model_defaults = catalogue[job["model"]]["defaults"]
    ignored = [knob for knob in MODEL_KNOBS if knob in document and knob not in model_defaults]
    for knob, value in model_defaults.items():
        job[knob] = document.get(knob, value)
    for knob in ignored:
        del job[knob]
    if job["model"] == "transformer" and job["width"] % job["heads"] != 0:
        raise InvalidJob("heads", f"must divide width ({job['width']}), got {job['heads']}")
    if "iters" not in document:
        job["iters"] = max(1, document.get("dataset_size", DEFAULT_DATASET_SIZE) // job["batch_size"])
    if job["threads"] == 0:
        job["threads"] = len(os.sched_getaffinity(0))
    return job, ignored


# ---- models -------------------------------------------------------------------------------------------

def build_model(torch, job):
    nn = torch.nn
    F = torch.nn.functional

    class Mlp(nn.Module):
        def __init__(self, input_size, width, depth, num_classes):
            super().__init__()
            self.hidden = nn.ModuleList(nn.Linear(input_size if i == 0 else width, width) for i in range(depth))
            self.head = nn.Linear(width, num_classes)

        def forward(self, x):
            for layer in self.hidden:
                x = F.gelu(layer(x))
            return self.head(x)

    class EncoderBlock(nn.Module):
        # The LibTorch worker's pre-norm block, operation for operation.
        def __init__(self, width, heads):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.fc1, self.fc2 = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

        def forward(self, x):
            batch, seq, width = x.shape
            head_dim = width // self.heads
            q, k, v = self.qkv(self.ln1(x)).view(batch, seq, 3, self.heads, head_dim).permute(2, 0, 3, 1, 4)
            scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(head_dim))
            attended = torch.matmul(torch.softmax(scores, -1), v).transpose(1, 2).reshape(batch, seq, width)
            h = x + self.proj(attended)
            return h + self.fc2(F.gelu(self.fc1(self.ln2(h))))

    class Transformer(nn.Module):
        def __init__(self, seq_len, width, depth, heads, num_classes):
            super().__init__()
            self.blocks = nn.ModuleList(EncoderBlock(width, heads) for _ in range(depth))
            self.ln_final = nn.LayerNorm(width)
            self.head = nn.Linear(width, num_classes)
            self.positions = nn.Parameter(torch.randn(seq_len, width) * 0.02)

        def forward(self, x):
            h = x + self.positions
            for block in self.blocks:
                h = block(h)
            return self.head(self.ln_final(h).mean(1))

    name = job["model"]
    if name == "mlp":
        return Mlp(job["input_size"], job["width"], job["depth"], job["num_classes"]), (job["input_size"],)
    if name == "transformer":
        model = Transformer(job["seq_len"], job["width"], job["depth"], job["heads"], job["num_classes"])
        return model, (job["seq_len"], job["width"])
    return build_resnet(torch, name, job["num_classes"]), (3, job["input_size"], job["input_size"])


def build_resnet(torch, name, num_classes):
    try:
        import torchvision
        return getattr(torchvision.models, name)(weights=None, num_classes=num_classes)
    except ImportError:
        pass
    # torchvision's ResNet v1.5 (stride on the 3x3 of a bottleneck), for hosts without torchvision.
    nn = torch.nn

    def conv3x3(cin, cout, stride=1):
        return nn.Conv2d(cin, cout, 3, stride, 1, bias=False)

    class Basic(nn.Module):
        expansion = 1

        def __init__(self, cin, width, stride, downsample):
            super().__init__()
            self.conv1, self.bn1 = conv3x3(cin, width, stride), nn.BatchNorm2d(width)
            self.conv2, self.bn2 = conv3x3(width, width), nn.BatchNorm2d(width)
            self.relu, self.downsample = nn.ReLU(inplace=True), downsample

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + (self.downsample(x) if self.downsample is not None else x))

    class Bottleneck(nn.Module):
        expansion = 4

        def __init__(self, cin, width, stride, downsample):
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width)
            self.conv2, self.bn2 = conv3x3(width, width, stride), nn.BatchNorm2d(width)
            self.conv3, self.bn3 = nn.Conv2d(width, width * 4, 1, bias=False), nn.BatchNorm2d(width * 4)
            self.relu, self.downsample = nn.ReLU(inplace=True), downsample

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            return self.relu(out + (self.downsample(x) if self.downsample is not None else x))

    class ResNet(nn.Module):
        def __init__(self, block, layers):
            super().__init__()
            self.inplanes = 64
            self.conv1, self.bn1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64)
            self.relu, self.maxpool = nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)
            self.layer1 = self._layer(block, 64, layers[0], 1)
            self.layer2 = self._layer(block, 128, layers[1], 2)
            self.layer3 = self._layer(block, 256, layers[2], 2)
            self.layer4 = self._layer(block, 512, layers[3], 2)
            self.avgpool, self.fc = nn.AdaptiveAvgPool2d(1), nn.Linear(512 * block.expansion, num_classes)
            # torchvision's initialisation, in its order: the same seed then gives the same weights.
            for module in self.modules():
                if isinstance(module, nn.Conv2d):
                    nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(module, nn.BatchNorm2d):
                    nn.init.constant_(module.weight, 1)
                    nn.init.constant_(module.bias, 0)

        def _layer(self, block, width, count, stride):
            downsample = None
            if stride != 1 or self.inplanes != width * block.expansion:
                downsample = nn.Sequential(nn.Conv2d(self.inplanes, width * block.expansion, 1, stride, bias=False),
                                           nn.BatchNorm2d(width * block.expansion))
            layers = [block(self.inplanes, width, stride, downsample)]
            self.inplanes = width * block.expansion
            layers += [block(self.inplanes, width, 1, None) for _ in range(1, count)]
            return nn.Sequential(*layers)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    return ResNet(Basic, [2, 2, 2, 2]) if name == "resnet18" else ResNet(Bottleneck, [3, 4, 6, 3])


# ---- measurement ----------------------------------------------------------------------------------------

def quantile(sorted_values, q):
    """Hyndman & Fan type 7, as the worker's shared/statistics."""
    position = (len(sorted_values) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


class Experiment:
    def __init__(self, torch, job, compiled):
        self.torch, self.job, self.compiled = torch, job, compiled
        self.device = torch.device(job["device"])
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise Unsupported(f"device {job['device']}: CUDA is not available here")
        if job["precision"] == "fp16" and self.device.type != "cuda":
            raise Unsupported("fp16 (float16 autocast with loss scaling) runs on CUDA only")
        torch.manual_seed(job["seed"])
        self.model, sample_shape = build_model(torch, job)
        self.model.to(self.device)
        self.parameters = sum(p.numel() for p in self.model.parameters())
        # As the worker's: the same seed must give the same initial weights.
        self.initial_parameter_l1 = sum(p.detach().double().abs().sum().item() for p in self.model.parameters())
        torch.manual_seed(job["seed"] + 1)
        shape = (job["batch_size"],) + tuple(sample_shape)
        self.batches = [(torch.randn(shape, device=self.device),
                         torch.randint(job["num_classes"], (job["batch_size"],), device=self.device))
                        for _ in range(job["data_batches"])]
        self.position = 0
        self.train = job["task"] == "train"
        self.model.train(self.train)
        if self.train:
            if job["optimizer"] == "adamw":
                self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=job["lr"],
                                                   weight_decay=job["weight_decay"])
            else:
                self.optimizer = torch.optim.SGD(self.model.parameters(), lr=job["lr"], momentum=job["momentum"],
                                                 weight_decay=job["weight_decay"])
        self.autocast_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(job["precision"])
        self.scaler = torch.amp.GradScaler("cuda") if job["precision"] == "fp16" and self.train else None
        self.initial_scale = self.scaler.get_scale() if self.scaler else None
        self.skipped_steps = 0
        self.forward = self.model
        if compiled:
            self.forward = torch.compile(self.model, backend=job["backend"], mode=job["compile_mode"],
                                         dynamic=job["dynamic"], fullgraph=job["fullgraph"])
        self.first_loss = None

    def next_batch(self):
        batch = self.batches[self.position]
        self.position = (self.position + 1) % len(self.batches)
        return batch

    def loss_of(self, output, targets):
        return self.torch.nn.functional.cross_entropy(output.float(), targets)

    def step(self, batch=None):
        """One step on `batch` (the next of the cycled batches when None)."""
        torch = self.torch
        inputs, targets = batch if batch is not None else self.next_batch()
        autocast = torch.autocast(self.device.type, dtype=self.autocast_dtype, enabled=self.autocast_dtype is not None)
        if self.train:
            self.optimizer.zero_grad(set_to_none=True)
            with autocast:
                loss = self.loss_of(self.forward(inputs), targets)
            if self.scaler:
                self.scaler.scale(loss).backward()
                self.scaler.step(self.optimizer)
                scale = self.scaler.get_scale()
                self.scaler.update()
                # A step with inf/nan gradients is skipped and the scale backs off.
                self.skipped_steps += self.scaler.get_scale() < scale
            else:
                loss.backward()
                self.optimizer.step()
            output = loss.detach()
        else:
            with torch.no_grad(), autocast:
                output = self.forward(inputs)
        if self.first_loss is None:
            self.first_loss = self.loss_value(output, targets)
        return output, targets

    def loss_value(self, output, targets):
        with self.torch.no_grad():
            return float(output if self.train else self.loss_of(output, targets))

    def synchronize(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)

    def timed(self, work):
        self.synchronize()
        start = time.perf_counter()
        result = work()
        self.synchronize()
        return time.perf_counter() - start, result


class HostClock:
    """The worker's HostStepClock: the host's monotonic clock around each
    step and each epoch; on CPU there is nothing to synchronise."""
    name = "steady_clock"

    def __init__(self, now=time.perf_counter):
        self.now = now

    def begin_epoch(self):
        self.steps, self.epoch_start = [], self.now()

    def begin_step(self):
        self.step_start = self.now()

    def end_step(self):
        self.steps.append(self.now() - self.step_start)

    def end_epoch(self):
        return self.now() - self.epoch_start, self.steps


class CudaEventClock:
    """The worker's CudaStepClock: a device synchronisation and a host clock
    read at each epoch boundary, steps timed by CUDA event pairs recorded on
    the stream without synchronising. The events are made (and recorded once)
    before the timed epochs, never inside them."""
    name = "cuda_events"

    def __init__(self, torch, device, steps, now=time.perf_counter):
        self.torch, self.device, self.now = torch, device, now
        self.events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                       for _ in range(steps)]
        for start, end in self.events:
            start.record()
            end.record()
        torch.cuda.synchronize(device)

    def begin_epoch(self):
        self.torch.cuda.synchronize(self.device)
        self.index, self.epoch_start = 0, self.now()

    def begin_step(self):
        self.events[self.index][0].record()

    def end_step(self):
        self.events[self.index][1].record()
        self.index += 1

    def end_epoch(self):
        self.torch.cuda.synchronize(self.device)
        seconds = self.now() - self.epoch_start
        return seconds, [start.elapsed_time(end) / 1000.0 for start, end in self.events[:self.index]]


def timed_epochs(experiment, clock, epochs, iters, on_epoch=lambda epoch, seconds: None):
    """The timed region, as the worker's (docs/methodology.md): batches are on
    the device before the clock starts, the clock sees only the steps, and the
    device is synchronised at epoch boundaries only. Returns per-epoch
    seconds, per-step seconds and each epoch's last loss."""
    epoch_seconds, step_seconds, epoch_final = [], [], []
    for epoch in range(epochs):
        clock.begin_epoch()
        for _ in range(iters):
            batch = experiment.next_batch()
            clock.begin_step()
            output, targets = experiment.step(batch)
            clock.end_step()
        seconds, steps = clock.end_epoch()
        epoch_seconds.append(seconds)
        step_seconds.append(steps)
        epoch_final.append(experiment.loss_value(output, targets))
        on_epoch(epoch, seconds)
    return epoch_seconds, step_seconds, epoch_final


def resident_size():
    """(VmRSS, VmHWM) of this process in bytes, from /proc/self/status."""
    sizes = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                sizes[name] = int(rest.split()[0]) * 1024
    return sizes.get("VmRSS", 0), sizes.get("VmHWM", 0)


class MemoryProbe:
    """Memory in phases, as the worker's memory_probe: the process's baseline
    before the model is built; at the start of the timed phase the warm-up/
    compile phase's peaks are read and the counters reset; then the timed
    phase's peaks (schemas/result.schema.json, memory)."""

    def __init__(self, torch, device):
        self.torch, self.cuda = torch, device.startswith("cuda")
        self.device = torch.device(device) if self.cuda else None
        self.report = {} if self.cuda else {"baseline_rss_bytes": resident_size()[0]}
        self.rss_at_start = 0

    def begin_timed_phase(self):
        if self.cuda:
            self.report["warmup_peak_allocated_bytes"] = self.torch.cuda.max_memory_allocated(self.device)
            self.report["warmup_peak_reserved_bytes"] = self.torch.cuda.max_memory_reserved(self.device)
            self.torch.cuda.reset_peak_memory_stats(self.device)
            return
        self.report["warmup_peak_rss_bytes"] = resident_size()[1]
        try:
            with open("/proc/self/clear_refs", "w") as clear_refs:
                clear_refs.write("5")  # 5: reset the peak resident set size (proc(5))
            self.report["hwm_reset"] = True
        except OSError:
            self.report["hwm_reset"] = False
        self.rss_at_start = resident_size()[0]

    def end(self):
        report = dict(self.report)
        if self.cuda:
            report.update(source="cuda_allocator",
                          peak_allocated_bytes=self.torch.cuda.max_memory_allocated(self.device),
                          peak_reserved_bytes=self.torch.cuda.max_memory_reserved(self.device))
            return report
        peak = resident_size()[1]
        report.update(source="rss", peak_rss_bytes=peak, rss_growth_bytes=max(0, peak - self.rss_at_start),
                      rss_footprint_bytes=max(0, peak - report["baseline_rss_bytes"]))
        return report


def run(torch, job, ignored):
    from torch._dynamo.utils import counters
    result = {"schema_version": 1, "status": "ok", "runner": {"name": RUNNER_NAME, "version": VERSION},
              "job": {k: v for k, v in job.items()}, "warnings": [], "started_at": utc_now()}
    result["warnings"] += [f"knob '{k}' does not apply to model '{job['model']}' and was ignored" for k in ignored]
    torch.set_num_threads(job["threads"])
    if job["interop_threads"] > 0:
        try:
            torch.set_num_interop_threads(job["interop_threads"])
        except RuntimeError as error:
            result["warnings"].append(f"interop_threads not applied: {error}")
    if job["gpus"] > 1:
        raise Unsupported(f"gpus = {job['gpus']}: this runner runs one process on one device")
    compiled = job["mode"] == "compiled"
    fallback_reason = None
    torch._dynamo.reset()
    counters.clear()
    timing = {"warmup_iterations": job["warmup"]}
    progress_path = os.environ.get("TORCHSWEEP_PROGRESS_FILE")

    def warm_up(experiment):
        # Compilation happens in the first step, never in the timed epochs:
        # with warmup 0 that one step still runs (as the worker's).
        first, _ = experiment.timed(experiment.step)
        rest, _ = experiment.timed(lambda: [experiment.step() for _ in range(job["warmup"] - 1)])
        return first, first + rest

    probe = MemoryProbe(torch, job["device"])  # before any model: the process's baseline
    try:
        experiment = Experiment(torch, job, compiled)
        timing["first_iteration_seconds"], timing["warmup_seconds"] = warm_up(experiment)
    except Unsupported:
        raise
    except Exception as error:  # noqa: BLE001 - any compile failure is the job's outcome
        if not compiled or job["fallback"] != "eager":
            raise
        fallback_reason = f"torch.compile failed: {type(error).__name__}: {str(error).splitlines()[0]}"
        log("WARN", f"{fallback_reason}; falling back to eager as the job allows")
        result["warnings"].append(f"compiled mode fell back to eager: {fallback_reason}")
        torch._dynamo.reset()
        experiment = Experiment(torch, job, False)
        timing["first_iteration_seconds"], timing["warmup_seconds"] = warm_up(experiment)
    if job["warmup"] == 0:
        result["warnings"].append("warmup is 0: only the first iteration (compilation) ran before the timed epochs; "
                                  "allocator growth and tuning may still fall in them")
    graph_breaks = sum(counters["graph_break"].values())
    break_reasons = sorted(counters["graph_break"].keys())
    graphs = counters["stats"].get("unique_graphs", 0)

    # Timed epochs: the worker's timed region and clocks; memory in phases.
    clock = (CudaEventClock(torch, experiment.device, job["iters"]) if experiment.device.type == "cuda"
             else HostClock())
    experiment.synchronize()
    probe.begin_timed_phase()

    def report_progress(epoch, seconds):
        if progress_path:
            with open(progress_path, "a") as progress:
                progress.write(json.dumps({"epoch": epoch + 1, "epochs": job["epochs"], "seconds": seconds}) + "\n")

    epoch_seconds, step_seconds, epoch_final = timed_epochs(experiment, clock, job["epochs"], job["iters"],
                                                            report_progress)
    experiment.synchronize()
    memory = probe.end()

    all_steps = sorted(s for epoch in step_seconds for s in epoch)
    median_step = quantile(all_steps, 0.5)
    median_epoch = quantile(sorted(epoch_seconds), 0.5)
    mean = sum(all_steps) / len(all_steps)
    spread = math.sqrt(sum((s - mean) ** 2 for s in all_steps) / (len(all_steps) - 1)) if len(all_steps) > 1 else 0.0
    iqr = quantile(all_steps, 0.75) - quantile(all_steps, 0.25)
    timing.update({"clock": clock.name, "epochs": job["epochs"], "iterations_per_epoch": job["iters"],
                   "epoch_seconds": epoch_seconds, "step_seconds": step_seconds,
                   "median_epoch_seconds": median_epoch, "median_step_seconds": median_step,
                   "samples_per_second": job["batch_size"] * job["iters"] / median_epoch,
                   "step_cv": spread / mean if mean > 0 else 0.0,
                   "step_iqr_over_median": iqr / median_step if median_step > 0 else 0.0})
    timing["noisy"] = timing["step_iqr_over_median"] > NOISY_IQR_OVER_MEDIAN
    if timing["noisy"]:
        result["warnings"].append(f"noisy measurement: step-time IQR/median is {timing['step_iqr_over_median']:.3f} "
                                  f"(above {NOISY_IQR_OVER_MEDIAN})")
    if not experiment.train:
        timing["latency"] = {"p50": median_step, "p90": quantile(all_steps, 0.9), "p99": quantile(all_steps, 0.99)}
    ran_compiled = experiment.compiled
    result["execution"] = {
        "task": job["task"], "mode": "compiled" if ran_compiled else "eager",
        "compiler": job["backend"] if ran_compiled else "none", "fallback_reason": fallback_reason,
        "capture_seconds": None, "precision": job["precision"],
        "autocast_dtype": {"bf16": "bfloat16", "fp16": "float16"}.get(job["precision"]),
        "device": str(experiment.device), "model_parameters": experiment.parameters,
        "initial_parameter_l1": experiment.initial_parameter_l1,
        "compile": {"backend": job["backend"], "compile_mode": job["compile_mode"], "dynamic": job["dynamic"],
                    "fullgraph": job["fullgraph"], "graph_breaks": graph_breaks, "graphs": graphs,
                    "break_reasons": break_reasons} if compiled else None}
    if ran_compiled and graph_breaks:
        result["warnings"].append(f"{graph_breaks} graph break(s): part of the model ran eagerly between graphs")
    if experiment.scaler:
        result["execution"]["loss_scaling"] = {"initial_scale": experiment.initial_scale,
                                               "final_scale": experiment.scaler.get_scale(),
                                               "skipped_steps": experiment.skipped_steps}
    result["timing"] = timing
    result["loss"] = {"first_step": experiment.first_loss, "epoch_final": epoch_final}
    result["memory"] = memory
    return result


def context(torch, job):
    cpu_model = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            cpu_model = next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    gpus = []
    if torch.cuda.is_available():
        for index in range(torch.cuda.device_count()):
            properties = torch.cuda.get_device_properties(index)
            gpus.append({"index": index, "name": properties.name, "memory_bytes": properties.total_memory})
    return {"hostname": socket.gethostname(), "os": platform.platform(), "kernel": platform.release(),
            "cpu_model": cpu_model, "cpu_cores_available": len(os.sched_getaffinity(0)),
            "memory_total_bytes": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"),
            "torch_version": torch.__version__, "cuda_version": torch.version.cuda,
            "cudnn_version": str(torch.backends.cudnn.version()) if torch.cuda.is_available() else None,
            "gpu_driver": None, "gpu_count": len(gpus), "gpus": gpus,
            "intra_op_threads": torch.get_num_threads(), "interop_threads": torch.get_num_interop_threads(),
            "python_version": platform.python_version(),
            "torchsweep_version": VERSION, "torchsweep_commit": COMMIT}


def write_result(path, document):
    text = json.dumps(document, indent=2) + "\n"
    if path == "-":
        sys.stdout.write(text)
        return
    # Atomically: a reader never sees half a document.
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".result-")
    with os.fdopen(handle, "w") as out:
        out.write(text)
    os.replace(temporary, path)


def main(argv):
    parser = argparse.ArgumentParser(prog="torchsweep-torch-compile", description=__doc__.splitlines()[0])
    parser.add_argument("--job", help="job document (FILE, or - for stdin)")
    parser.add_argument("--out", help="where the result document goes (FILE, or - for stdout)")
    parser.add_argument("--version", action="store_true", help="print the versions and exit")
    try:
        arguments = parser.parse_args(argv)
    except SystemExit as exit_request:
        return EXIT_OK if exit_request.code == 0 else EXIT_INVALID
    if arguments.version:
        import torch
        print(f"torchsweep-torch-compile {VERSION} ({COMMIT})")
        print(f"torch {torch.__version__} cuda {torch.version.cuda or 'none'}")
        return EXIT_OK
    if not arguments.job or not arguments.out:
        log("ERROR", "--job and --out are required")
        return EXIT_INVALID
    try:
        text = sys.stdin.read() if arguments.job == "-" else open(arguments.job).read()
        document = json.loads(text)
        job, ignored = resolve_job(document)
    except (OSError, ValueError) as error:
        log("ERROR", f"invalid job: {arguments.job}: {error}")
        return EXIT_INVALID
    except InvalidJob as error:
        log("ERROR", f"invalid job: {error}")
        return EXIT_INVALID

    import torch
    try:
        result = run(torch, job, ignored)
    except Unsupported as error:
        result = {"schema_version": 1, "status": "unsupported", "error": str(error),
                  "runner": {"name": RUNNER_NAME, "version": VERSION}, "job": job, "warnings": [],
                  "started_at": utc_now()}
    except Exception as error:  # noqa: BLE001 - the job failed; the result says why
        result = {"schema_version": 1, "status": "failed", "error": f"{type(error).__name__}: {error}",
                  "runner": {"name": RUNNER_NAME, "version": VERSION}, "job": job, "warnings": [],
                  "started_at": utc_now()}
    if result["status"] != "ok":
        log("ERROR", f"job {result['status']}: {result['error']}")
    result["context"] = context(torch, job)
    result["finished_at"] = utc_now()
    write_result(arguments.out, result)
    return EXIT_OK if result["status"] == "ok" else EXIT_FAILED


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception as error:  # noqa: BLE001 - the contract's exit 1
        log("ERROR", f"internal error: {type(error).__name__}: {error}")
        sys.exit(EXIT_INTERNAL)
