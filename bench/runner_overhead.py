#!/usr/bin/env python3
"""What the torch.compile runner's harness costs (issue #29, item 9): the
median training-step time of a library model through the runner (its
Experiment and timed epochs, in this process) against a plain PyTorch loop
of the same module built by the library directly, as a user would write it
(SGD with momentum, cross-entropy, torch.compile for the compiled side),
cycling as many distinct batches as the runner does (--data-batches, the
runner's data_batches). Both sides alternate round by round, the order flipping
every round, so both see the same machine. Prints each median and the
ratio runner / plain with a 95% percentile-bootstrap interval (scipy).
Goal: within 2%.

    python3 bench/runner_overhead.py --runner build/bin/torchsweep-torch-compile [--rounds 6] [--iters 20]

Run it with an environment's python that has timm and transformers (the
set-up's /opt/torchsweep/venvs/torch-2.6 or torch-2.15).
"""
import argparse
import importlib.machinery
import importlib.util
import sys
import time

import torch
from interleaved import interleave, ratio_columns

CASES = {
    "timm:resnet18": {"batch_size": 16, "input_size": 64, "num_classes": 100},
    "hf:gpt2": {"batch_size": 8, "seq_len": 128, "width": 256, "depth": 2, "heads": 4},
}


def load_runner(path):
    loader = importlib.machinery.SourceFileLoader("torch_compile_runner", path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def runner_steps(runner, model, mode, sizes, args):
    from torchsweep_harness.contract import resolve_job
    job, _ = resolve_job(dict(schema_version=1, model=model, mode=mode, runner="torch-compile", epochs=1,
                              iters=args.iters, warmup=args.warmup, threads=args.threads,
                              data_batches=args.data_batches, **sizes), "torch-compile")
    result = {"warnings": []}
    runner.TorchCompile().run(job, result)
    if result["execution"]["mode"] != mode:
        raise RuntimeError(f"{model} {mode}: ran {result['execution']['mode']}: {result['warnings']}")
    return [step for epoch in result["timing"]["step_seconds"] for step in epoch]


def plain_module(model, sizes, count):
    """The module, how to call it on a batch's inputs, and `count` batches,
    straight from the library."""
    library, _, name = model.partition(":")
    if library == "timm":
        import timm
        module = timm.create_model(name, pretrained=False, num_classes=sizes["num_classes"])
        batches = [(torch.randn(sizes["batch_size"], 3, sizes["input_size"], sizes["input_size"]),
                    torch.randint(sizes["num_classes"], (sizes["batch_size"],))) for _ in range(count)]
        return module, (lambda m, inputs: m(inputs)), batches
    import transformers
    config = transformers.AutoConfig.for_model(name, hidden_size=sizes["width"], num_hidden_layers=sizes["depth"],
                                               num_attention_heads=sizes["heads"], intermediate_size=4 * sizes["width"])
    module = transformers.AutoModelForCausalLM.from_config(config)
    batches = []
    for _ in range(count):
        ids = torch.randint(config.vocab_size, (sizes["batch_size"], sizes["seq_len"]))
        batches.append((ids, torch.cat([ids[:, 1:], torch.full((sizes["batch_size"], 1), -100)], 1)))
    return module, (lambda m, ids: m(input_ids=ids).logits), batches


def plain_steps(model, mode, sizes, args):
    torch.manual_seed(1)
    module, forward, batches = plain_module(model, sizes, args.data_batches)
    module.train()
    run = torch.compile(module) if mode == "compiled" else module
    optimizer = torch.optim.SGD(module.parameters(), lr=0.01, momentum=0.9)

    def step(index):
        inputs, targets = batches[index % len(batches)]
        optimizer.zero_grad(set_to_none=True)
        output = forward(run, inputs)
        loss = torch.nn.functional.cross_entropy(output.flatten(0, -2).float(), targets.flatten())
        loss.backward()
        optimizer.step()
    for index in range(args.warmup):
        step(index)
    seconds = []
    for index in range(args.warmup, args.warmup + args.iters):
        start = time.perf_counter()
        step(index)
        seconds.append(time.perf_counter() - start)
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runner", required=True, help="build/bin/torchsweep-torch-compile")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--iters", type=int, default=20, help="timed steps a side a round")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data-batches", type=int, default=4,
                        help="distinct batches each side cycles (the runner's data_batches; the job default is 4)")
    parser.add_argument("--models", nargs="*", default=list(CASES))
    parser.add_argument("--modes", nargs="*", default=["eager", "compiled"])
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    runner = load_runner(args.runner)
    print(f"torch {torch.__version__}, {args.threads} threads, {args.rounds} rounds x {args.iters} steps a side, "
          f"python {sys.executable}")
    print(f"{'model':<16} {'mode':<9} {'plain median':>13} {'runner median':>14} {'ratio':>7}  95% CI")
    for model in args.models:
        for mode in args.modes:
            plain, harness = interleave(args.rounds, lambda: plain_steps(model, mode, CASES[model], args),
                                        lambda: runner_steps(runner, model, mode, CASES[model], args))
            print(f"{model:<16} {mode:<9} {ratio_columns(plain, harness)}", flush=True)

if __name__ == "__main__":
    main()
