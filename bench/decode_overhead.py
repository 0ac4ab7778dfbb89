#!/usr/bin/env python3
"""What the torch.compile runner's generation harness costs (task generate,
docs/language-models.md): the median decode-step time of the built-in
decoder through the runner (TorchCompile.run on a generate job, in this
process) against a plain PyTorch greedy loop over the same model and a
static key/value cache as a user writes it (gpt-fast's way; torch.compile
of the decode step for the compiled side). Both sides alternate round by
round, the order flipping every round. Prints each median and the ratio
runner / plain with a 95% percentile-bootstrap interval (scipy). Goal:
within 3%.

    python3 bench/decode_overhead.py --runner build/bin/torchsweep-torch-compile [--rounds 6]
"""
import argparse
import importlib.machinery
import importlib.util
import sys
import time

import torch
from interleaved import interleave, ratio_columns

SIZES = {"model": "gpt", "vocab": 8192, "width": 768, "heads": 12, "depth": 4, "seq_len": 256}


def load_runner(path):
    loader = importlib.machinery.SourceFileLoader("torch_compile_runner", path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[loader.name] = module  # Dynamo looks up the module of the functions it compiles
    loader.exec_module(module)
    return module


def job_of(mode, args):
    from torchsweep_harness.contract import resolve_job
    return resolve_job(dict(schema_version=1, task="generate", mode=mode, batch_size=args.batch,
                            prompt_len=args.prompt_len, new_tokens=args.new_tokens, epochs=args.generations,
                            warmup=2, threads=args.threads, data_batches=1, **SIZES), "torch-compile")[0]


def runner_steps(runner, mode, args):
    result = {"warnings": []}
    runner.TorchCompile().run(job_of(mode, args), result)
    if result["execution"]["mode"] != mode:
        raise RuntimeError(f"{mode}: ran {result['execution']['mode']}: {result['warnings']}")
    return [step for epoch in result["timing"]["step_seconds"] for step in epoch]


def plain_steps(runner, mode, args):
    """The user's loop: the same module, a static cache per block, argmax
    after each cached forward; the decode step compiled on its own."""
    job = job_of(mode, args)
    torch.manual_seed(0)
    from torchsweep_harness.pytorch.models import build_model
    model, _ = build_model(torch, job)
    model.eval()
    length = args.prompt_len + args.new_tokens - 1
    head_dim = SIZES["width"] // SIZES["heads"]
    caches = [(torch.zeros(args.batch, SIZES["heads"], length, head_dim),
               torch.zeros(args.batch, SIZES["heads"], length, head_dim)) for _ in model.blocks]
    prompt = torch.randint(SIZES["vocab"], (args.batch, args.prompt_len))

    def prefill(ids, positions):
        return model.forward_cached(ids, positions, caches).argmax(-1, keepdim=True)

    def decode(ids, positions):
        return model.forward_cached(ids, positions, caches).argmax(-1, keepdim=True)
    if mode == "compiled":
        prefill, decode = torch.compile(prefill), torch.compile(decode)
    prompt_positions = torch.arange(args.prompt_len)
    positions = [torch.tensor([p]) for p in range(args.prompt_len, length)]
    seconds = []
    with torch.no_grad():
        for generation in range(2 + args.generations):
            token = prefill(prompt, prompt_positions)
            for position in positions:
                start = time.perf_counter()
                token = decode(token, position)
                if generation >= 2:
                    seconds.append(time.perf_counter() - start)
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runner", required=True, help="build/bin/torchsweep-torch-compile")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--prompt-len", type=int, default=64)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--generations", type=int, default=3, help="timed generations a side a round")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--modes", nargs="*", default=["eager", "compiled"])
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    runner = load_runner(args.runner)
    print(f"torch {torch.__version__}, {args.threads} threads, gpt {SIZES}, batch {args.batch}, prompt "
          f"{args.prompt_len}, {args.new_tokens} new tokens, {args.rounds} rounds x {args.generations} generations "
          f"a side, python {sys.executable}")
    print(f"{'mode':<9} {'plain median':>13} {'runner median':>14} {'ratio':>7}  95% CI")
    for mode in args.modes:
        plain, harness = interleave(args.rounds, lambda: plain_steps(runner, mode, args),
                                    lambda: runner_steps(runner, mode, args))
        print(f"{mode:<9} {ratio_columns(plain, harness)}", flush=True)

if __name__ == "__main__":
    main()
