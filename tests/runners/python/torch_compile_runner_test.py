#!/usr/bin/env python3
"""Tests of the torch.compile runner (bin/torchsweep-torch-compile) on CPU.

The runner is run as the agent runs it (--job FILE --out FILE); its result
documents are checked with an independent validator (python3-jsonschema)
against schemas/result.schema.json, its models against the LibTorch
worker's parameter counts, initial weights and first-step losses, and its
exit codes against the worker contract.
Shapes are tiny, so torch.compile takes seconds.

    torch_compile_runner_test.py --runner PATH --worker PATH --schemas DIR
"""
import argparse
import gzip
import hashlib
import importlib.machinery
import importlib.util
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

from runner_testing import BREAKY, TINY_GPT_GENERATE, TINY_MLP, Run, judged, result_validator

ARGS = None


def runner_module():
    """The runner's source as a module, for tests of its harness in-process."""
    loader = importlib.machinery.SourceFileLoader("torch_compile_runner", ARGS.runner)
    spec = importlib.util.spec_from_loader("torch_compile_runner", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class TimedRegion(unittest.TestCase):
    """Where the harness synchronises and reads clocks, on a fake device that
    records every call: on CPU synchronisation is a no-op, so only a fake can
    show the CUDA path keeps to the worker's timed region."""

    def setUp(self):
        runner_module()  # puts the harness on the path
        from torchsweep_harness import measure
        from torchsweep_harness.pytorch import probes
        self.measure, self.probes = measure, probes
        self.calls = []
        calls = self.calls

        class FakeEvent:
            def __init__(self, enable_timing):
                calls.append("event made")

            def record(self):
                calls.append("record")

            def elapsed_time(self, other):
                return 2.0  # milliseconds

        class FakeCuda:
            Event = FakeEvent

            @staticmethod
            def synchronize(device):
                calls.append("sync")

        class FakeTorch:
            cuda = FakeCuda

        class FakeExperiment:
            def next_batch(self):
                calls.append("batch")
                return ("inputs", "targets")

            def step(self, batch):
                calls.append("step")
                return "loss", "targets"

            def loss_value(self, output, targets):
                return 1.0

        self.torch, self.experiment = FakeTorch, FakeExperiment()
        self.ticks = iter(range(1000))

    def now(self):
        self.calls.append("clock")
        return float(next(self.ticks))

    def test_cuda_events_and_a_synchronisation_at_epoch_boundaries_only(self):
        clock = self.probes.CudaEventClock(self.torch, "cuda:0", 2, now=self.now)
        self.assertEqual(self.calls, ["event made"] * 4 + ["record"] * 4 + ["sync"])  # made before timing
        del self.calls[:]
        epochs, steps, losses, _ = self.measure.timed_epochs(self.experiment, clock, 2, 2)
        epoch = ["sync", "clock"] + ["batch", "record", "step", "record"] * 2 + ["sync", "clock"]
        self.assertEqual(self.calls, epoch * 2)  # no event made, no synchronisation inside an epoch
        self.assertEqual(steps, [[0.002, 0.002], [0.002, 0.002]])
        self.assertEqual(epochs, [1.0, 1.0])
        self.assertEqual(clock.name, "cuda_events")

    def test_the_host_clock_reads_around_steps_with_the_batch_ready_before(self):
        clock = self.measure.HostClock(now=self.now)
        self.measure.timed_epochs(self.experiment, clock, 1, 2)
        self.assertEqual(self.calls, ["clock"] + ["batch", "clock", "step", "clock"] * 2 + ["clock"])

    def test_the_host_clock_ends_an_epoch_once_the_last_steps_work_is_done(self):
        """A framework that dispatches asynchronously (JAX, the last step's
        update still running when its loss is ready) is waited for before
        the epoch's clock is read."""
        clock = self.measure.HostClock(now=self.now, synchronize=lambda: self.calls.append("sync"))
        self.measure.timed_epochs(self.experiment, clock, 1, 2)
        self.assertEqual(self.calls, ["clock"] + ["batch", "clock", "step", "clock"] * 2 + ["sync", "clock"])


class TorchCompileRunner(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.validator = result_validator(ARGS.schemas)
        cls.eager = Run(ARGS.runner, dict(TINY_MLP, mode="eager"))
        cls.compiled = Run(ARGS.runner, dict(TINY_MLP, mode="compiled"))

    def assert_valid(self, run):
        self.assertIsNotNone(run.result, run.stderr)
        errors = sorted(self.validator.iter_errors(run.result), key=lambda e: list(e.path))
        self.assertEqual([f"{list(e.path)}: {e.message}" for e in errors], [])

    def test_results_validate_against_the_schema(self):
        for run in (self.eager, self.compiled):
            self.assertEqual(run.exit_code, 0, run.stderr)
            self.assert_valid(run)
            self.assertEqual(run.result["status"], "ok")
            self.assertEqual(run.result["runner"]["name"], "torch-compile")

    def test_compiled_runs_inductor_and_reports_compile_facts(self):
        execution = self.compiled.result["execution"]
        self.assertEqual(execution["mode"], "compiled")
        self.assertEqual(execution["compiler"], "inductor")
        self.assertEqual(execution["compile"]["graph_breaks"], 0)
        self.assertGreaterEqual(execution["compile"]["graphs"], 1)
        timing = judged(ARGS.torchsweep, self.compiled.result)["timing"]
        # Compilation lands in the first iteration, not in the timed epochs.
        self.assertGreater(timing["first_iteration_seconds"], 10 * timing["median_step_seconds"])
        self.assertIsNone(self.eager.result["execution"]["compile"])

    def test_the_math_policy_is_pytorchs_default_unless_asked_and_is_recorded(self):
        # PyTorch's defaults (docs/gpu.md): TF32 off for products, on for cuDNN convolutions, benchmark off.
        self.assertEqual(self.eager.result["execution"]["math"],
                         {"tf32": "framework", "cudnn_benchmark": "framework", "tf32_matmul": False,
                          "tf32_conv": True, "conv_autotune": False})
        for asked in ("on", "off"):
            run = Run(ARGS.runner, dict(TINY_MLP, tf32=asked, cudnn_benchmark=asked))
            self.assertEqual(run.exit_code, 0, run.stderr)
            self.assert_valid(run)
            held = asked == "on"
            self.assertEqual(run.result["execution"]["math"],
                             {"tf32": asked, "cudnn_benchmark": asked, "tf32_matmul": held, "tf32_conv": held,
                              "conv_autotune": held})

    def test_eager_and_compiled_agree_on_the_first_step_loss(self):
        self.assertAlmostEqual(self.eager.result["loss"]["first_step"], self.compiled.result["loss"]["first_step"],
                               delta=1e-4 * abs(self.eager.result["loss"]["first_step"]))

    def test_with_warmup_0_compilation_still_comes_before_the_timed_epochs(self):
        run = Run(ARGS.runner, dict(TINY_MLP, mode="compiled", warmup=0))
        self.assertEqual(run.exit_code, 0, run.stderr)
        timing = judged(ARGS.torchsweep, run.result)["timing"]
        self.assertEqual(timing["warmup_iterations"], 0)
        self.assertGreater(timing["first_iteration_seconds"], 10 * timing["median_step_seconds"])
        self.assertEqual(timing["clock"], "steady_clock")

    def test_progress_lines_for_every_timed_epoch(self):
        lines = [json.loads(line) for line in self.eager.progress.read_text().splitlines()]
        self.assertEqual([line["epoch"] for line in lines], [1, 2])
        self.assertEqual(lines[-1]["epochs"], 2)

    def test_bad_jobs_exit_2_without_a_result(self):
        for job, field in ((dict(TINY_MLP, batch_size=0), "batch_size"),
                           (dict(TINY_MLP, model="resnet9000"), "model"),
                           (dict(TINY_MLP, compile_mode="fastest"), "compile_mode"),
                           (dict(TINY_MLP, surprise=1), "surprise"),
                           # Refused by the resolution this runner asks of `torchsweep resolve` (docs/worker.md).
                           (dict(TINY_MLP, model="transformer", width=32, heads=5), "heads")):
            run = Run(ARGS.runner, job)
            self.assertEqual(run.exit_code, 2, run.stderr)
            self.assertIsNone(run.result)
            self.assertIn(field, run.stderr)

    def test_failed_compile_falls_back_to_eager_only_when_allowed(self):
        # fullgraph: the print between the layers cannot be compiled into one graph.
        with tempfile.TemporaryDirectory(prefix="ts_breaky_") as root:
            pathlib.Path(root, "breaky.py").write_text(BREAKY)
            broken = {"schema_version": 1, "model": "python:breaky:build", "model_root": root, "mode": "compiled",
                      "fullgraph": True, "batch_size": 4, "epochs": 1, "warmup": 1, "iters": 1, "threads": 1}
            failed, fell_back = Run(ARGS.runner, broken), Run(ARGS.runner, dict(broken, fallback="eager"))
        self.assertEqual(failed.exit_code, 3, failed.stderr)
        self.assert_valid(failed)
        self.assertEqual(failed.result["status"], "failed")
        self.assertIn("print", failed.result["error"])
        self.assertEqual(fell_back.exit_code, 0, fell_back.stderr)
        self.assert_valid(fell_back)
        self.assertEqual(fell_back.result["execution"]["mode"], "eager")
        self.assertIn("torch.compile failed", fell_back.result["execution"]["fallback_reason"])
        self.assertIn("fell back to eager", fell_back.result["accuracy"]["skipped"])

    def test_fp16_on_cpu_is_unsupported_and_inference_reports_latency(self):
        fp16 = Run(ARGS.runner, dict(TINY_MLP, precision="fp16"))
        self.assertEqual(fp16.exit_code, 3)
        self.assert_valid(fp16)
        self.assertEqual(fp16.result["status"], "unsupported")
        infer = Run(ARGS.runner, dict(TINY_MLP, task="infer", mode="compiled", precision="bf16"))
        self.assertEqual(infer.exit_code, 0, infer.stderr)
        self.assert_valid(infer)
        self.assertEqual(set(judged(ARGS.torchsweep, infer.result)["timing"]["latency"]), {"p50", "p90", "p99"})

    def test_same_job_same_seed_gives_the_workers_parameters_weights_and_first_step_loss(self):
        """Both runners eager, fp32, same seed: the same trainable parameters,
        the same initial weights (their float64 sum of |w|) and the same loss
        before the first update, so both train the same model on the same
        data from the same start."""
        jobs = [TINY_MLP,
                {"schema_version": 1, "model": "transformer", "batch_size": 2, "width": 32, "heads": 4, "depth": 2,
                 "seq_len": 8, "num_classes": 10, "epochs": 1, "warmup": 1, "iters": 1, "threads": 1},
                {"schema_version": 1, "model": "gpt", "batch_size": 2, "vocab": 256, "width": 32, "heads": 4, "depth": 2,
                 "seq_len": 8, "epochs": 1, "warmup": 1, "iters": 1, "threads": 1},
                {"schema_version": 1, "model": "resnet18", "batch_size": 2, "input_size": 32, "num_classes": 10,
                 "epochs": 1, "warmup": 1, "iters": 1, "threads": 1}]
        jobs.append(dict(jobs[-1], model="resnet50"))
        for job in jobs:
            theirs = Run(ARGS.worker, job)
            self.assertEqual(theirs.exit_code, 0, theirs.stderr)
            # torchvision's ResNets, and the runner's own when torchvision is missing.
            for hidden in ([False, True] if job["model"].startswith("resnet") else [False]):
                ours = Run(ARGS.runner, job, without_torchvision=hidden)
                self.assertEqual(ours.exit_code, 0, ours.stderr)
                case = (job["model"], "runner's own model" if hidden else "torchvision's")
                self.assertEqual(ours.result["execution"]["model_parameters"],
                                 theirs.result["execution"]["model_parameters"], case)
                self.assertAlmostEqual(ours.result["execution"]["initial_parameter_l1"] /
                                       theirs.result["execution"]["initial_parameter_l1"], 1.0, delta=1e-9, msg=case)
                self.assertAlmostEqual(ours.result["loss"]["first_step"] / theirs.result["loss"]["first_step"], 1.0,
                                       delta=1e-5, msg=case)


class Profile(unittest.TestCase):
    """The job's profile (docs/explain.md): steps under torch.profiler after
    the timed epochs, a trace beside the result, the operators in it."""

    @classmethod
    def setUpClass(cls):
        cls.validator = result_validator(ARGS.schemas)
        cls.plain = Run(ARGS.runner, dict(TINY_MLP, mode="eager"))
        cls.eager = Run(ARGS.runner, dict(TINY_MLP, mode="eager", profile={"steps": 3}))
        cls.compiled = Run(ARGS.runner, dict(TINY_MLP, mode="compiled", profile={"steps": 2, "record_shapes": False}))

    def test_profiled_steps_come_after_the_timed_epochs_and_leave_them_alone(self):
        plain, profiled = self.plain.result, self.eager.result
        # The same weights and batches: the timed steps compute the same losses bit for bit, profile or not.
        self.assertEqual(plain["loss"], profiled["loss"])
        self.assertEqual(len(profiled["timing"]["step_seconds"]), len(plain["timing"]["step_seconds"]))
        self.assertEqual([len(epoch) for epoch in profiled["timing"]["step_seconds"]], [3, 3])
        self.assertEqual(len(profiled["profile"]["step_seconds"]), 3)
        times = [judged(ARGS.torchsweep, run.result)["timing"]["median_epoch_seconds"] for run in (self.plain, self.eager)]
        self.assertLess(max(times) / min(times), 5, times)  # a loose bound: tests share the cores

    def test_a_profile_names_the_operators_and_writes_a_trace_perfetto_opens(self):
        for run, steps in ((self.eager, 3), (self.compiled, 2)):
            self.assertEqual(run.exit_code, 0, run.stderr)
            errors = sorted(self.validator.iter_errors(run.result), key=lambda e: list(e.path))
            self.assertEqual([f"{list(e.path)}: {e.message}" for e in errors], [])
            profile = run.result["profile"]
            self.assertEqual((profile["status"], profile["steps"], profile["activities"]), ("ok", steps, ["cpu"]))
            self.assertTrue(profile["profiler"].startswith("torch.profiler 2."), profile["profiler"])
            self.assertEqual(profile["kernels"], [])  # no GPU here
            trace = pathlib.Path(run.directory.name) / profile["trace"]["file"]
            self.assertEqual(trace.stat().st_size, profile["trace"]["bytes"])
            self.assertEqual(hashlib.sha256(trace.read_bytes()).hexdigest(), profile["trace"]["sha256"])
            events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
            self.assertTrue(any(event.get("ph") == "X" for event in events))
        # The MLP's Linear layers: three a forward step (two hidden, one head), a row for each input shapes.
        eager = self.eager.result["profile"]
        addmm = [row for row in eager["operators"] if row["name"] == "aten::addmm"]
        self.assertEqual(len(addmm), 1)  # operators: one row a name, what explain pairs
        self.assertAlmostEqual(addmm[0]["calls"], 3)
        # Per input shapes, the top 30 rows: an addmm of little time may fall beyond them on a busy machine.
        shaped = [row for row in eager["operator_shapes"] if row["name"] == "aten::addmm"]
        self.assertTrue(1 <= len(shaped) <= 3 and sum(row["calls"] for row in shaped) <= 3, shaped)
        self.assertEqual(len({row["input_shapes"] for row in shaped}), len(shaped))
        self.assertLessEqual(sum(row["self_cpu_s"] for row in shaped), addmm[0]["self_cpu_s"] + 1e-9)
        self.assertTrue(addmm[0]["self_cpu_s"] > 0)
        shares = [row["self_cpu_s"] for row in eager["operators"]]
        self.assertEqual(shares, sorted(shares, reverse=True))
        # The totals cover every operator, the rows kept or not.
        self.assertEqual(eager["totals"]["operators"], len(eager["operators"]))  # fewer than the rows kept here
        self.assertAlmostEqual(eager["totals"]["self_cpu_s"], sum(shares), delta=1e-9)
        self.assertLess(eager["totals"]["self_cpu_s"], max(eager["step_seconds"]) * 1.05)
        # Compiled, the graph runs as one region and Inductor's generated kernels, named, do the GELUs: no
        # aten::gelu, a fused kernel forward and one backward.
        compiled = {row["name"] for row in self.compiled.result["profile"]["operators"]}
        self.assertIn("aten::gelu", {row["name"] for row in eager["operators"]})
        self.assertNotIn("aten::gelu", compiled)
        fused = sorted(name for name in compiled if "cpp_fused" in name)
        self.assertTrue(any("gelu_backward" in name for name in fused), fused)
        self.assertTrue(any("gelu" in name and "backward" not in name for name in fused), fused)
        self.assertIn("CompiledFunction", compiled)
        self.assertTrue(any(name.startswith("Torch-Compiled Region") for name in compiled), compiled)
        self.assertNotIn("operator_shapes", self.compiled.result["profile"])  # record_shapes: false

    def test_a_generation_is_profiled_whole_and_the_workers_rows_pair_with_these(self):
        # A generation's profiled step is one whole generation, its prefill and decode steps.
        generation = Run(ARGS.runner, dict(TINY_GPT_GENERATE, profile={"steps": 2}))
        self.assertEqual(generation.exit_code, 0, generation.stderr)
        profile = generation.result["profile"]
        self.assertEqual((profile["status"], len(profile["step_seconds"])), ("ok", 2), profile)
        linear = [row for row in profile["operators"] if row["name"] == "aten::linear"]
        self.assertTrue(linear and linear[0]["calls"] >= TINY_GPT_GENERATE["new_tokens"], profile["operators"][:5])
        # The worker's profile (LibTorch's profiler API) of the same MLP: its rows pair by name with
        # torch.profiler's, call for call.
        worker = Run(ARGS.worker, dict(TINY_MLP, mode="eager", profile={"steps": 3}))
        self.assertEqual(worker.exit_code, 0, worker.stderr)
        errors = sorted(self.validator.iter_errors(worker.result), key=lambda e: list(e.path))
        self.assertEqual([f"{list(e.path)}: {e.message}" for e in errors], [])
        theirs = worker.result["profile"]
        self.assertTrue(theirs["profiler"].startswith("LibTorch profiler"), theirs["profiler"])
        ours = {row["name"]: row["calls"] for row in self.eager.result["profile"]["operators"]}
        calls = {row["name"]: row["calls"] for row in theirs["operators"]}
        for name in ("aten::addmm", "aten::mm", "aten::gelu", "ProfilerStep*"):
            self.assertAlmostEqual(calls.get(name), ours[name], msg=name)


class Generation(unittest.TestCase):
    """Task generate (docs/language-models.md) on the tiny decoder: eager and
    compiled greedy decoding agree token for token, and with the worker's
    from the same seed; the key/value cache gives what recomputing the whole
    sequence gives; bad generate jobs are refused naming the field."""

    @classmethod
    def setUpClass(cls):
        cls.validator = result_validator(ARGS.schemas)
        cls.eager = Run(ARGS.runner, TINY_GPT_GENERATE)
        cls.compiled = Run(ARGS.runner, dict(TINY_GPT_GENERATE, mode="compiled"))

    def test_results_validate_and_report_prefill_decode_and_the_cache(self):
        for run in (self.eager, self.compiled):
            self.assertEqual(run.exit_code, 0, run.stderr)
            self.assertEqual([f"{list(e.path)}: {e.message}" for e in self.validator.iter_errors(run.result)], [])
            judged_result = judged(ARGS.torchsweep, run.result)
            generation, timing = judged_result["generation"], judged_result["timing"]
            self.assertEqual(len(generation["prefill_seconds"]), 2)
            self.assertEqual([len(steps) for steps in timing["step_seconds"]], [5, 5])  # new_tokens - 1 decode steps
            self.assertEqual(timing["iterations_per_epoch"], 5)
            self.assertLessEqual(generation["decode_latency"]["p50"], generation["decode_latency"]["p99"])
            self.assertEqual(timing["tokens_per_second"], generation["decode_tokens_per_second"])
            self.assertGreater(generation["decode_tokens_per_second"], 0)
            # keys and values of 2 blocks, batch 2, 4 heads, 8 + 6 - 1 positions, 16 dims, fp32
            self.assertEqual(generation["kv_cache_bytes"], 2 * 2 * 2 * 4 * 13 * 16 * 4)
            self.assertEqual(len(generation["tokens"]), 6)
            self.assertNotIn("efficiency", judged_result)
        self.assertIsNone(self.eager.result["generation"]["matches_eager"])
        self.assertEqual(self.compiled.result["execution"]["mode"], "compiled")

    def test_compiled_greedy_tokens_equal_eager_ones(self):
        self.assertIs(self.compiled.result["generation"]["matches_eager"], True)
        self.assertIsNone(self.compiled.result["generation"]["first_mismatch"])
        self.assertEqual(self.compiled.result["generation"]["tokens"], self.eager.result["generation"]["tokens"])
        self.assertGreater(self.compiled.result["timing"]["first_iteration_seconds"],
                           10 * max(max(steps) for steps in self.compiled.result["timing"]["step_seconds"]))

    def test_the_worker_generates_the_same_tokens_from_the_same_seed(self):
        worker = Run(ARGS.worker, TINY_GPT_GENERATE)
        self.assertEqual(worker.exit_code, 0, worker.stderr)
        self.assertEqual([f"{list(e.path)}: {e.message}" for e in self.validator.iter_errors(worker.result)], [])
        self.assertEqual(worker.result["generation"]["tokens"], self.eager.result["generation"]["tokens"])
        self.assertEqual(worker.result["generation"]["kv_cache_bytes"],
                         self.eager.result["generation"]["kv_cache_bytes"])
        compiled = Run(ARGS.worker, dict(TINY_GPT_GENERATE, mode="compiled"))
        self.assertEqual(compiled.result["status"], "unsupported")
        self.assertIn("torch-compile runner", compiled.result["error"])

    def test_the_cached_decode_equals_recomputing_the_whole_sequence(self):
        import torch
        runner = runner_module()
        from torchsweep_harness.contract import resolve_job  # on the path the runner put it
        job = resolve_job(dict(TINY_GPT_GENERATE, data_batches=1), runner.RUNNER_NAME)
        torch.manual_seed(0)
        from torchsweep_harness.pytorch.models import build_model
        model, _ = build_model(torch, job)
        model.eval()
        with torch.no_grad():
            generation = model.generation(job, torch.device("cpu"), torch.float32, False)
            prompt = generation.next_prompt()
            tokens = generation.generate(prompt)
            sequence = prompt
            for index in range(job["new_tokens"]):
                logits = model(sequence)[:, -1]  # no cache: every position recomputed
                expected = logits.argmax(-1, keepdim=True)
                self.assertTrue(torch.equal(expected, tokens[:, index:index + 1]), index)
                if index:
                    cached = generation.step(tokens[:, index - 1:index],
                                             generation.decode_positions[index - 1])
                    # the cache already holds this position's keys: writing them again changes nothing
                    torch.testing.assert_close(cached, logits, rtol=1e-5, atol=1e-5)
                sequence = torch.cat([sequence, expected], 1)

    def test_under_cuda_graph_modes_each_token_is_copied_out_before_the_next_step(self):
        """CUDA-graph replays overwrite their outputs ("accessing tensor output of CUDAGraphs that has been
        overwritten"), and a generation keeps every token: under reduce-overhead each step begins a new
        step of the graph tree and its token is cloned. A CPU has no CUDA graphs, so Inductor compiles
        without them here; the path (the mark, the copy, the same tokens as eager) is what runs."""
        import torch
        runner = runner_module()
        from torchsweep_harness.contract import resolve_job  # on the path the runner put it
        job = resolve_job(dict(TINY_GPT_GENERATE, data_batches=1, mode="compiled"), runner.RUNNER_NAME)
        torch.manual_seed(0)
        from torchsweep_harness.pytorch.models import build_model
        model, _ = build_model(torch, job)
        model.eval()
        marks = []
        mark = torch.compiler.cudagraph_mark_step_begin
        torch.compiler.cudagraph_mark_step_begin = lambda: marks.append(1) or mark()
        try:
            with torch.no_grad():
                eager = model.generation(job, torch.device("cpu"), torch.float32, False)
                graphs = model.generation(dict(job, compile_mode="reduce-overhead"), torch.device("cpu"),
                                          torch.float32, True)
                self.assertFalse(eager.copies_outputs)
                self.assertTrue(graphs.copies_outputs)
                prompt = eager.next_prompt()
                expected = eager.generate(prompt)
                tokens = [graphs.prefill(prompt)]
                for index in range(len(graphs.decode_positions)):
                    tokens.append(graphs.decode(tokens[-1], index))
        finally:
            torch.compiler.cudagraph_mark_step_begin = mark
            torch._dynamo.reset()
        self.assertEqual(len(marks), job["new_tokens"])
        self.assertEqual(len({token.data_ptr() for token in tokens}), len(tokens))  # each its own copy
        self.assertTrue(torch.equal(torch.cat(tokens, 1), expected))

    def test_bad_generate_jobs_exit_2_naming_the_field(self):
        for job, field in ((dict(TINY_GPT_GENERATE, prompt_len=30), "new_tokens"),
                           (dict(TINY_GPT_GENERATE, iters=3), "iters"),
                           (dict(TINY_GPT_GENERATE, new_tokens=1), "new_tokens"),
                           (dict(TINY_MLP, task="generate"), "task")):
            for executable in (ARGS.runner, ARGS.worker):
                job = {key: value for key, value in job.items() if key != "iters" or field == "iters"}
                run = Run(executable, job)
                self.assertEqual(run.exit_code, 2, (executable, field, run.stderr))
                self.assertIsNone(run.result)
                self.assertIn(field, run.stderr)

    def test_cuda_graph_modes_are_refused_on_a_cpu_with_the_reason(self):
        run = Run(ARGS.runner, dict(TINY_GPT_GENERATE, mode="compiled", compile_mode="reduce-overhead"))
        self.assertEqual(run.result["status"], "unsupported")
        self.assertIn("CUDA graphs", run.result["error"])


class ResolvedJob(unittest.TestCase):
    def test_a_knob_the_model_does_not_take_is_refused_naming_it(self):
        runner_module()
        from torchsweep_harness.contract import resolve_job  # on the path the runner put it
        from torchsweep_harness.errors import InvalidJob
        with self.assertRaises(InvalidJob) as refused:
            resolve_job({"schema_version": 1, "model": "mlp", "batch_size": 2, "width": 8, "vocab": 5}, "torch-compile")
        self.assertIn("vocab", str(refused.exception))
        self.assertIn("model 'mlp' does not take it", str(refused.exception))
        job = resolve_job({"schema_version": 1, "model": "gpt", "batch_size": 2, "vocab": 5}, "torch-compile")
        self.assertEqual((job["vocab"], job["seq_len"]), (5, 1024))


class ModelFlops(unittest.TestCase):
    """The analytic FLOP counts every result carries (shared/models/flops.cpp)
    held against torch.utils.flop_counter on the runner's own models: the
    forward pass exactly, at default and odd sizes; the training step's
    3-forward convention close to the counted forward + backward."""

    DOCUMENTS = [{"model": "mlp"}, {"model": "mlp", "input_size": 17, "width": 40, "depth": 1, "num_classes": 3},
                 {"model": "transformer"}, {"model": "transformer", "seq_len": 9, "width": 24, "heads": 3, "depth": 2},
                 {"model": "gpt", "vocab": 1000, "width": 64, "heads": 4, "depth": 2, "seq_len": 32},
                 {"model": "gpt", "vocab": 257, "width": 24, "heads": 3, "depth": 1, "seq_len": 9},
                 {"model": "resnet18"}, {"model": "resnet18", "input_size": 33, "num_classes": 7},
                 {"model": "resnet50"}, {"model": "resnet50", "input_size": 64}]

    def test_analytic_flops_match_torch_flop_counter(self):
        import torch
        from torch.utils.flop_counter import FlopCounterMode
        runner = runner_module()
        from torchsweep_harness.contract import resolve_job  # on the path the runner put it
        from torchsweep_harness.pytorch.models import build_model
        jobs = [resolve_job(dict(document, schema_version=1, batch_size=2, threads=1), runner.RUNNER_NAME)
                for document in self.DOCUMENTS]
        jobs.append(dict(jobs[0], task="infer", gpus=3))
        probe = subprocess.run([ARGS.flops_probe], input=json.dumps(jobs), capture_output=True, text=True, check=True)
        analytic = json.loads(probe.stdout)
        torch.manual_seed(0)
        for job, counted in zip(jobs, analytic):
            case = json.dumps({k: job[k] for k in ("model", "input_size", "width", "depth", "seq_len") if k in job})
            model, sample_shape = build_model(torch, job)
            inputs = (torch.randint(job["vocab"], (job["batch_size"], *sample_shape)) if job["model"] == "gpt"
                      else torch.randn(job["batch_size"], *sample_shape))
            with FlopCounterMode(display=False) as forward:
                output = model(inputs)
            self.assertEqual(forward.get_total_flops(), round(counted["forward_per_sample"] * job["batch_size"]), case)
            samples = job["batch_size"] * job["gpus"]
            factor = 3 if job["task"] == "train" else 1
            self.assertEqual(counted["per_step"], counted["forward_per_sample"] * samples * factor, case)
            if job["model"].startswith("resnet") and job["input_size"] >= 64:
                # Backward is twice the forward but for the first layer's input gradient, never computed.
                with FlopCounterMode(display=False) as step:
                    model(inputs).sum().backward()
                self.assertGreater(step.get_total_flops() / forward.get_total_flops(), 2.9, case)
                self.assertLessEqual(step.get_total_flops() / forward.get_total_flops(), 3.0, case)
            del output


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runner", required=True)
    parser.add_argument("--worker", required=True)
    parser.add_argument("--schemas", type=pathlib.Path, required=True)
    parser.add_argument("--flops-probe", required=True)
    parser.add_argument("--torchsweep", required=True, help="for `torchsweep judge`")
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
