#!/usr/bin/env python3
"""Tests of what the torch.compile runner says about compiling (docs/compiler.md)
on CPU: Dynamo's graph breaks, recompilations and compile-time phases, the
compiler caches, the operators Inductor left to ATen, the options it
refuses, and the accuracy gate's runs, judged by the agent's rule
(`torchsweep judge`). Shapes are tiny, so torch.compile takes seconds.

    torch_compile_diagnostics_test.py --runner PATH --torchsweep PATH
"""
import argparse
import pathlib
import sys
import tempfile
import unittest

from runner_testing import BREAKY, TINY_GPT_GENERATE, TINY_MLP, Run, cpu_has_avx2, judged

ARGS = None


class CompilerDiagnostics(unittest.TestCase):
    """What Dynamo did (docs/compiler.md), from its own counters."""

    def test_a_graph_break_is_counted_with_its_reason_and_nothing_recompiles(self):
        with tempfile.TemporaryDirectory(prefix="ts_breaky_") as root:
            pathlib.Path(root, "breaky.py").write_text(BREAKY)
            run = Run(ARGS.runner, {"schema_version": 1, "model": "python:breaky:build", "model_root": root,
                                    "mode": "compiled", "batch_size": 4, "epochs": 1, "warmup": 2, "iters": 2,
                                    "threads": 1})
        self.assertEqual(run.exit_code, 0, run.stderr)
        dynamo = run.result["execution"]["compile"]
        self.assertGreaterEqual(dynamo["graph_breaks"], 1, dynamo)
        self.assertGreaterEqual(dynamo["graphs"], 2, dynamo)  # one before the print, one after
        top = dynamo["top_break_reasons"][0]
        self.assertIn("print", top["reason"], dynamo)
        self.assertEqual(top["count"], dynamo["graph_breaks"], dynamo)
        self.assertEqual((dynamo["recompilations"], dynamo["guard_failures"]), (0, []), dynamo)
        self.assertTrue(any("graph break" in warning for warning in run.result["warnings"]), run.result["warnings"])

    def test_compile_time_comes_in_phases_and_a_warm_cache_compiles_clearly_faster_than_a_cold_one(self):
        job = dict(TINY_MLP, mode="compiled", epochs=1, warmup=0, iters=1)
        cold = Run(ARGS.runner, dict(job, compile_cache="cold"))
        warm = Run(ARGS.runner, dict(job, compile_cache="warm"))
        for run in (cold, warm):
            self.assertEqual(run.exit_code, 0, run.stderr)
        compile_ = cold.result["execution"]["compile"]
        self.assertEqual(compile_["cache"], {"kind": "cold", "fill_seconds": None})
        phases = compile_["phases"]
        for phase in ("dynamo_seconds", "backend_seconds", "inductor_seconds", "aot_autograd_seconds"):
            self.assertGreater(phases[phase], 0, phases)
        first = cold.result["timing"]["first_iteration_seconds"]
        self.assertAlmostEqual(phases["dynamo_seconds"] + phases["backend_seconds"] + phases["first_run_seconds"],
                               first, delta=0.05 * first, msg=phases)
        self.assertIn("_compile.compile_inner", [timer["name"] for timer in phases["timers"]])
        self.assertEqual(warm.result["execution"]["compile"]["cache"]["kind"], "warm")
        self.assertGreater(warm.result["execution"]["compile"]["cache"]["fill_seconds"], 0)
        # Inductor's generated code comes from the cache the filling run left.
        warm_first = warm.result["timing"]["first_iteration_seconds"]
        self.assertLess(warm_first, 0.6 * first, (warm_first, first))

    def test_operators_inductor_leaves_to_aten_are_named_and_a_cached_graph_says_it_cannot_tell(self):
        with tempfile.TemporaryDirectory(prefix="ts_sorting_") as root:
            pathlib.Path(root, "sorting.py").write_text(SORTING)
            job = {"schema_version": 1, "model": "python:sorting:build", "model_root": root, "mode": "compiled",
                   "batch_size": 4, "epochs": 1, "warmup": 1, "iters": 1, "threads": 1}
            cold = Run(ARGS.runner, dict(job, compile_cache="cold"))
            warm = Run(ARGS.runner, dict(job, compile_cache="warm"))
        self.assertEqual(cold.exit_code, 0, cold.stderr)
        compile_ = cold.result["execution"]["compile"]
        self.assertIn("aten.sort.stable", [entry["operator"] for entry in compile_["fallback_operators"]], compile_)
        self.assertGreaterEqual(compile_["inductor_counters"]["fxgraph_cache_miss"], 1, compile_["inductor_counters"])
        self.assertEqual(warm.exit_code, 0, warm.stderr)
        self.assertIsNone(warm.result["execution"]["compile"]["fallback_operators"])

    def test_a_second_shape_recompiles_with_dynamic_off_and_not_with_dynamic_on(self):
        job = dict(TINY_MLP, mode="compiled", epochs=1, warmup=1, iters=2, shapes=[{"batch_size": 16}])
        static, dynamic = Run(ARGS.runner, dict(job, dynamic=False)), Run(ARGS.runner, dict(job, dynamic=True))
        for run in (static, dynamic):
            self.assertEqual(run.exit_code, 0, run.stderr)
            [shape] = run.result["shapes"]
            self.assertEqual((shape["batch_size"], shape["seq_len"], len(shape["step_seconds"])), (16, None, 2))
            # The runner measures; the agent takes the median (of an even count: the middle two's mean).
            self.assertNotIn("median_step_seconds", shape)
            [judged_shape] = judged(ARGS.torchsweep, run.result)["shapes"]
            self.assertAlmostEqual(judged_shape["median_step_seconds"], sum(shape["step_seconds"]) / 2)
        self.assertEqual(static.result["shapes"][0]["recompilations"], 1, static.result["shapes"])
        self.assertEqual(dynamic.result["shapes"][0]["recompilations"], 0, dynamic.result["shapes"])
        eager = Run(ARGS.runner, dict(job, mode="eager"))
        self.assertIsNone(eager.result["shapes"][0]["recompilations"])
        gpt = Run(ARGS.runner, {"schema_version": 1, "model": "gpt", "vocab": 64, "width": 32, "heads": 2, "depth": 1,
                                "seq_len": 16, "batch_size": 2, "epochs": 1, "warmup": 1, "iters": 1,
                                "mode": "compiled", "threads": 1, "shapes": [{"seq_len": 8}, {"batch_size": 4}]})
        self.assertEqual(gpt.exit_code, 0, gpt.stderr)
        self.assertEqual([(shape["batch_size"], shape["seq_len"]) for shape in gpt.result["shapes"]], [(2, 8), (4, 16)])
        refused = Run(ARGS.runner, dict(job, shapes=[{"seq_len": 4}]))
        self.assertEqual(refused.exit_code, 2)
        self.assertIn("shapes[0].seq_len", refused.stderr)

    def test_an_option_this_pytorch_lacks_or_a_cuda_graph_mode_on_a_cpu_is_refused_naming_it_and_the_version(self):
        import torch
        for changes, named in (({"backend": "no_such_backend"}, "backend no_such_backend"),
                               ({"compile_mode": "max-autotune"}, "CUDA graphs")):
            run = Run(ARGS.runner, dict(TINY_MLP, mode="compiled", **changes))
            self.assertEqual(run.exit_code, 3, run.stderr)
            self.assertEqual(run.result["status"], "unsupported")
            self.assertIn(named, run.result["error"])
        self.assertIn(f"PyTorch {torch.__version__}", Run(ARGS.runner, dict(TINY_MLP, mode="compiled",
                                                                            backend="no_such_backend")).result["error"])

    def test_a_generation_compiles_its_prefill_and_its_decode_step_once_each(self):
        run = Run(ARGS.runner, dict(TINY_GPT_GENERATE, mode="compiled"))
        dynamo = run.result["execution"]["compile"]
        self.assertEqual((dynamo["graph_breaks"], dynamo["recompilations"]), (0, 0), dynamo)
        self.assertEqual(dynamo["graphs"], 2, dynamo)


# A model whose compiled graph computes something else: under torch.compile
# its second layer's output is scaled by 1.01, eagerly it is not (a stand-in
# for a miscompiled kernel).
MISCOMPILED = """\
import torch


class Miscompiled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first, self.second = torch.nn.Linear(16, 32), torch.nn.Linear(32, 10)

    def forward(self, x):
        out = self.second(torch.relu(self.first(x)))
        return out * 1.01 if torch.compiler.is_compiling() else out


def build(job):
    return {"module": Miscompiled(),
            "make_batch": lambda n, device: (torch.randn(n, 16, device=device), torch.randint(10, (n,), device=device))}
"""


# A user's model with a Dropout layer (#49): dropout off gives a step without random numbers.
DROPPING = """\
import torch


def build(job):
    module = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Dropout(0.5), torch.nn.Linear(32, 10))
    return {"module": module,
            "make_batch": lambda n, device: (torch.randn(n, 16, device=device), torch.randint(10, (n,), device=device))}
"""

# A model with an operator Inductor has no lowering for: sort falls back to ATen.
SORTING = """\
import torch


class Sorting(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(16, 10)

    def forward(self, x):
        return torch.sort(self.layer(x), dim=1).values


def build(job):
    return {"module": Sorting(),
            "make_batch": lambda n, device: (torch.randn(n, 16, device=device), torch.randint(10, (n,), device=device))}
"""


class AccuracyGate(unittest.TestCase):
    """The compiled step held to eager from the same weights and batch
    (docs/compiler.md): the runner measures, the agent's rule judges."""

    def test_a_faithful_compilation_passes_against_a_float64_reference_and_eager_has_no_gate(self):
        for document in (dict(TINY_MLP, mode="compiled"), dict(TINY_MLP, mode="compiled", task="infer"),
                         dict(TINY_MLP, mode="compiled", precision="bf16")):
            run = Run(ARGS.runner, document)
            self.assertEqual(run.exit_code, 0, run.stderr)
            accuracy = run.result["accuracy"]
            self.assertEqual(accuracy["reference"], "float64")
            names = [tensor["name"] for tensor in accuracy["tensors"]]
            if document.get("task") == "infer":
                self.assertEqual(names, ["output"])
            else:  # the output, the loss and every parameter's gradient
                self.assertEqual(names[:2], ["loss", *[name for name in names if name.startswith("grad:")][:1]])
                self.assertIn("output", names)
                self.assertEqual(sum(name.startswith("grad:") for name in names), 2 * (TINY_MLP["depth"] + 1))
            judged_accuracy = judged(ARGS.torchsweep, run.result)["accuracy"]
            self.assertEqual(judged_accuracy["status"], "pass", judged_accuracy)
            self.assertLessEqual(judged_accuracy["deviation"], 1.0, judged_accuracy)
            # Vectorised kernels, compared above: Debian's PyTorch needed SLEEF linked for them (docs/compiler.md).
            kernels = run.result["execution"]["compile"]["cpu_kernels"]
            if cpu_has_avx2():
                self.assertTrue(kernels["vector_isa"].startswith("avx"), (kernels, run.result["warnings"]))
        eager = Run(ARGS.runner, dict(TINY_MLP, mode="eager"))
        self.assertNotIn("accuracy", judged(ARGS.torchsweep, eager.result))
        self.assertIsNone(eager.result["execution"]["compile"])

    def test_a_compiled_graph_that_computes_something_else_fails_and_required_fails_the_job(self):
        with tempfile.TemporaryDirectory(prefix="ts_miscompiled_") as root:
            pathlib.Path(root, "miscompiled.py").write_text(MISCOMPILED)
            job = {"schema_version": 1, "model": "python:miscompiled:build", "model_root": root, "mode": "compiled",
                   "batch_size": 4, "epochs": 1, "warmup": 1, "iters": 2, "threads": 1}
            checked, required = Run(ARGS.runner, job), Run(ARGS.runner, dict(job, accuracy="required"))
            eager = Run(ARGS.runner, dict(job, mode="eager"))
        self.assertEqual(checked.exit_code, 0, checked.stderr)
        tensors = {tensor["name"]: tensor for tensor in checked.result["accuracy"]["tensors"]}
        self.assertGreater(tensors["output"]["max_scaled_difference"], 1e-3, tensors["output"])
        verdict = judged(ARGS.torchsweep, checked.result)
        self.assertEqual(verdict["status"], "ok")  # the timing stands, flagged
        self.assertEqual(verdict["accuracy"]["status"], "fail", verdict["accuracy"])
        self.assertGreater(verdict["accuracy"]["deviation"], 1.0)
        self.assertTrue(any("accuracy gate failed" in warning for warning in verdict["warnings"]), verdict["warnings"])
        failed = judged(ARGS.torchsweep, required.result)
        self.assertEqual(failed["status"], "failed")
        self.assertIn("accuracy: required", failed["error"])
        self.assertIn("timing", failed)
        self.assertNotIn("accuracy", judged(ARGS.torchsweep, eager.result))  # the same model eager: nothing to hold


    def test_with_dropout_off_the_gate_compares_the_timed_graph_itself(self):
        """A step that drops at random is compiled again for the comparison (fallback_random); with the
        job's dropout off nothing is random, and the timed graph itself is compared."""
        with tempfile.TemporaryDirectory(prefix="ts_dropping_") as root:
            pathlib.Path(root, "dropping.py").write_text(DROPPING)
            job = {"schema_version": 1, "model": "python:dropping:build", "model_root": root, "mode": "compiled",
                   "batch_size": 4, "epochs": 1, "warmup": 1, "iters": 2, "threads": 1}
            own, off = Run(ARGS.runner, job), Run(ARGS.runner, dict(job, dropout="off"))
        for run in (own, off):
            self.assertEqual(run.exit_code, 0, run.stderr)
        self.assertEqual(own.result["execution"]["dropout"], {"asked": "model", "layers": 1})
        self.assertIn("fallback_random", own.result["accuracy"]["compiled_again"])
        self.assertEqual(off.result["execution"]["dropout"], {"asked": "off", "layers": 1})
        self.assertIsNone(off.result["accuracy"]["compiled_again"])
        self.assertEqual(judged(ARGS.torchsweep, off.result)["accuracy"]["status"], "pass")

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runner", required=True)
    parser.add_argument("--torchsweep", required=True, help="for `torchsweep judge`")
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
