#!/usr/bin/env python3
"""torchsweep-torch-compile: the torch.compile runner.

Honours the worker contract of docs/worker.md exactly like torchsweep-worker,
through the harness every Python runner shares (torchsweep_harness, installed
in share/torchsweep/python beside the binaries): the same job document, result
document, exit codes and methodology. What is its own: PyTorch's models (the
worker's, torchvision's ResNets when torchvision is installed, any
torchvision:NAME, timm:NAME or hf:TYPE model its environment's library builds,
and the user's own: python:MODULE:FACTORY and torchscript:FILE), its step in
eager mode or under torch.compile (TorchInductor by default), CUDA events and
the caching allocator's peaks on a GPU.
"""

import copy
import json
import math
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), os.pardir, "share", "torchsweep",
                                "python"))
from torchsweep_harness.contract import (AUTOCAST_DTYPES, RUNNER_CONTRACT, Framework, InvalidJob,  # noqa: E402
                                         Unsupported, check_positions, logger, run_main, schema)
from torchsweep_harness import accuracy, data, math_policy, start_state, user_models  # noqa: E402
from torchsweep_harness.measure import (ExperimentBase, HostClock, RssProbe, measure,  # noqa: E402,F401
                                        measure_generation, prepare, record_measurements, timed,
                                        timed_epochs)  # timed_epochs: for the tests of its clocks

RUNNER_NAME = "torch-compile"
log = logger("torch-compile")


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
        # The LibTorch worker's pre-norm block, operation for operation; causal: the decoder's.
        def __init__(self, width, heads, causal=False):
            super().__init__()
            self.heads, self.causal = heads, causal
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.fc1, self.fc2 = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

        def forward(self, x):
            q, k, v = self.queries_keys_values(x)
            seq = x.shape[1]
            later = torch.ones(seq, seq, dtype=torch.bool, device=x.device).triu(1) if self.causal else None
            return self.attend(x, q, k, v, later)

        def forward_cached(self, x, positions, cache):
            """x at `positions` ([T] ids): its keys and values written into
            `cache` (keys, values: [batch, heads, length, head_dim]) there,
            then attention over every cache position, the later ones masked:
            one shape for every decode step, as torch.compile wants it."""
            q, k, v = self.queries_keys_values(x)
            keys, values = cache
            keys.index_copy_(2, positions, k.to(keys.dtype))
            values.index_copy_(2, positions, v.to(values.dtype))
            later = torch.arange(keys.shape[2], device=x.device) > positions[:, None]
            return self.attend(x, q, keys, values, later)

        def queries_keys_values(self, x):
            batch, seq, width = x.shape
            return self.qkv(self.ln1(x)).view(batch, seq, 3, self.heads, width // self.heads).permute(2, 0, 3, 1, 4)

        def attend(self, x, q, k, v, later):
            batch, seq, width = x.shape
            scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(width // self.heads))
            if later is not None:
                scores = scores.masked_fill(later, float("-inf"))
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

    class Gpt(nn.Module):
        # The LibTorch worker's decoder (models/gpt.hpp), built in its order.
        def __init__(self, vocab, seq_len, width, depth, heads):
            super().__init__()
            self.tokens = nn.Embedding(vocab, width)
            nn.init.normal_(self.tokens.weight, 0.0, 0.02)
            self.positions = nn.Parameter(torch.randn(seq_len, width) * 0.02)
            self.blocks = nn.ModuleList(EncoderBlock(width, heads, causal=True) for _ in range(depth))
            self.ln_final = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab, bias=False)

        def forward(self, ids):
            h = self.tokens(ids) + self.positions[:ids.shape[1]]
            for block in self.blocks:
                h = block(h)
            return self.head(self.ln_final(h))

        def forward_cached(self, ids, positions, caches):
            """Logits at the last of `ids`' `positions`, through the blocks' key/value caches."""
            h = self.tokens(ids) + self.positions[positions]
            for block, cache in zip(self.blocks, caches):
                h = block.forward_cached(h, positions, cache)
            return self.head(self.ln_final(h[:, -1]))

        def generation(self, job, device, dtype, compiled):
            return GptGeneration(torch, self, job, device, dtype, compiled)

        def make_batch(self, job, device):
            # Token ids one longer than a sample: inputs all but the last, targets the next token at each position.
            ids = torch.randint(job["vocab"], (job["batch_size"], job["seq_len"] + 1), device=device)
            return ids[:, :-1], ids[:, 1:]

    name = job["model"]
    if name.startswith(("python:", "torchscript:")):
        return build_user_model(torch, job), None
    if ":" in name:
        return build_library_model(torch, job), start_state.torch_sample_shape(job)
    if name == "mlp":
        model = Mlp(job["input_size"], job["width"], job["depth"], job["num_classes"])
    elif name == "transformer":
        model = Transformer(job["seq_len"], job["width"], job["depth"], job["heads"], job["num_classes"])
    elif name == "gpt":
        model = Gpt(job["vocab"], job["seq_len"], job["width"], job["depth"], job["heads"])
    else:
        model = build_resnet(torch, name, job["num_classes"])
    return model, start_state.torch_sample_shape(job)


def library_models(library):
    """The NAMEs of LIBRARY:NAME this environment's library builds (what
    --list-models lists, and submit checks): torchvision's classification
    models, timm's models, the Hugging Face model types with a masked or
    causal language model and the configurations the repository names; []
    where the library is not installed."""
    package = {"hf": "transformers"}.get(library, library)
    try:
        module = __import__(package)
    except ImportError:
        return []
    if library == "torchvision":
        return module.models.list_models(module=module.models)
    if library == "timm":
        return module.list_models()
    from transformers.models.auto import modeling_auto
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES
    language = set(modeling_auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES) | set(modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
    named = [key for key, entry in schema("hf_configurations.json").items()
             if not key.startswith("$") and entry["model_type"] in CONFIG_MAPPING_NAMES]
    return sorted(model_type for model_type in CONFIG_MAPPING_NAMES if model_type in language) + sorted(named)


def build_library_model(torch, job):
    """LIBRARY:NAME (schemas/model_libraries.json), built by the library of this
    environment, randomly initialised; Unsupported, naming the versions, where
    the library or the name is not there."""
    import difflib
    library, _, name = job["model"].partition(":")
    where = f"torch {torch.__version__}"
    package = {"hf": "transformers"}.get(library, library)
    try:
        module = __import__(package)
    except ImportError:
        raise Unsupported(f"model {job['model']}: {package} is not installed in this environment ({where}, "
                          f"{sys.executable})") from None
    where = f"{package} {module.__version__}, {where}"
    if library == "hf":
        return build_language_model(torch, module, job, name, where)
    known = library_models(library)
    if name not in known:
        close = difflib.get_close_matches(name, known, n=5)
        raise Unsupported(f"model {job['model']}: {where} has no model '{name}'"
                          + (f"; close: {', '.join(close)}" if close else ""))
    if library == "torchvision":
        return module.models.get_model(name, weights=None, num_classes=job["num_classes"])
    return module.create_model(name, pretrained=False, num_classes=job["num_classes"])


def build_user_model(torch, job):
    """The user's own model (harness user_models): a factory's module with its
    batches and loss, or a TorchScript file's module, fed float batches of its
    input_shape attribute (else images at input_size) and trained with
    cross-entropy over its outputs' last dimension."""
    if job["model"].startswith("python:"):
        parts = user_models.call_factory(job)
        make_batch, loss = parts["make_batch"], parts["loss"]
        module = parts["module"]
        if not isinstance(module, torch.nn.Module):
            raise RuntimeError(f"{job['model']}: the factory's module is a {type(module).__name__}, not a "
                               "torch.nn.Module")
    else:
        path = user_models.torchscript_file(job)
        try:
            module = torch.jit.load(path, map_location="cpu")
        except Exception as error:  # noqa: BLE001 - the user's file: any error fails the job, quoted
            raise RuntimeError(f"{job['model']}: {path} does not load: {user_models.first_lines(error)}") from None
        sample_shape = tuple(getattr(module, "input_shape", None) or (3, job["input_size"], job["input_size"]))
        with torch.no_grad():
            classes = module.eval()(torch.zeros((1,) + sample_shape)).shape[-1]

        def make_batch(batch_size, device):
            return (torch.randn((batch_size,) + sample_shape, device=device),
                    torch.randint(classes, (batch_size,), device=device))
        loss = None

    class UserModel(torch.nn.Module):
        """The user's module with the batches and loss that go with it; a
        tuple of inputs is passed as arguments, a dict as keywords."""
        def __init__(self):
            super().__init__()
            self.module = module

        def forward(self, inputs):
            if isinstance(inputs, dict):
                return self.module(**inputs)
            return self.module(*inputs) if isinstance(inputs, (tuple, list)) else self.module(inputs)

        def make_batch(self, job, device):
            return make_batch(job["batch_size"], device)

        def loss(self, output, targets):
            return loss(output, targets) if loss else class_loss(torch, output, targets)

    return UserModel()


def build_language_model(torch, transformers, job, name, where):
    """hf:MODEL_TYPE, or hf:NAME of a configuration the repository names
    (schemas/hf_configurations.json): transformers' configuration of that
    type with the named sizes, then the job's where given, as a masked
    language model where transformers has one for the type, else a causal
    one (schemas/model_libraries.json)."""
    import difflib
    from transformers.models.auto import modeling_auto
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES
    named = {key: entry for key, entry in schema("hf_configurations.json").items() if not key.startswith("$")}
    model_type, base = (named[name]["model_type"], named[name]["config"]) if name in named else (name, {})
    if model_type not in CONFIG_MAPPING_NAMES:
        close = difflib.get_close_matches(name, list(CONFIG_MAPPING_NAMES) + list(named), n=5)
        raise Unsupported(f"model {job['model']}: {where} has no model type '{model_type}' and the repository names "
                          "no such configuration" + (f"; close: {', '.join(close)}" if close else ""))
    sizes = {attribute: job[knob] for knob, attribute in
             (("width", "hidden_size"), ("depth", "num_hidden_layers"), ("heads", "num_attention_heads")) if knob in job}
    default = transformers.AutoConfig.for_model(model_type, **base)
    if "width" in job and hasattr(default, "intermediate_size"):
        sizes["intermediate_size"] = 4 * job["width"]
    if "heads" in job and getattr(default, "num_key_value_heads", None):
        # Grouped-query attention: as many key/value heads as still divide the job's heads.
        sizes["num_key_value_heads"] = math.gcd(default.num_key_value_heads, job["heads"])
    config = transformers.AutoConfig.for_model(model_type, **{**base, **sizes})
    positions = getattr(config, "max_position_embeddings", None)
    if positions is not None and job["seq_len"] > positions:
        raise InvalidJob("seq_len", f"{job['seq_len']} is beyond the {positions} positions of '{job['model']}' "
                                    "(its configuration's max_position_embeddings)")
    if positions is not None and job["task"] == "generate":
        check_positions(job, positions, "its configuration's max_position_embeddings")
    if model_type in modeling_auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        model, masked = transformers.AutoModelForMaskedLM.from_config(config), True
    elif model_type in modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        model, masked = transformers.AutoModelForCausalLM.from_config(config), False
    else:
        raise Unsupported(f"model {job['model']}: {where} has neither a masked nor a causal language model of type "
                          f"'{model_type}'")

    class LanguageModel(torch.nn.Module):
        """Token ids in, logits out; its batches are ids and the targets of its
        objective: 15% of the positions masked and predicted (masked), or the
        next token (causal). -100 marks a position the loss skips."""
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, ids):
            return self.model(input_ids=ids).logits

        def generation(self, job, device, dtype, compiled):
            if masked:
                raise InvalidJob("task", f"generate needs a causal language model; '{job['model']}' is a masked one "
                                         f"({where})")
            return HfGeneration(torch, transformers, self.model, job, device, dtype, compiled)

        def make_batch(self, job, device):
            shape = (job["batch_size"], job["seq_len"])
            ids = torch.randint(config.vocab_size, shape, device=device)
            if masked:
                chosen = torch.rand(shape, device=device) < 0.15
                # The configuration names no mask token; the last id stands for it (the cost is the same).
                return torch.where(chosen, config.vocab_size - 1, ids), torch.where(chosen, ids, -100)
            return ids, torch.cat([ids[:, 1:], torch.full((shape[0], 1), -100, device=device)], 1)

    return LanguageModel()


# ---- generation -----------------------------------------------------------------------------------------

def compile_options(job):
    return dict(backend=job["backend"], mode=job["compile_mode"], dynamic=job["dynamic"], fullgraph=job["fullgraph"])


class Generation:
    """Greedy generation (task generate, docs/language-models.md): the
    prompts (data_batches of them, random ids made before the timed region,
    handed out in turn), a prefill step and a decode step, each compiled on
    its own (one shape each) when the job is: torch.compile of the decode
    step, as users write compiled decoding. A subclass gives step(ids,
    positions) -> logits at the last position, reset() (the cache emptied
    for a new prompt), cache_kind() (the result's generation.cache) and
    kv_cache_bytes()."""

    def __init__(self, torch, job, device, dtype, vocab, compiled):
        self.torch, self.device, self.dtype = torch, device, dtype
        self.batch, self.prompt_len = job["batch_size"], job["prompt_len"]
        self.length = job["prompt_len"] + job["new_tokens"] - 1  # the last token is not fed back
        self.prompts = [torch.randint(vocab, (self.batch, self.prompt_len), device=device)
                        for _ in range(job["data_batches"])]
        self.position = 0
        self.prompt_positions = torch.arange(self.prompt_len, device=device)
        self.decode_positions = [torch.tensor([p], device=device) for p in range(self.prompt_len, self.length)]
        self.compiled = compiled
        self.prefill_step, self.decode_step = self.greedy_prefill, self.greedy_decode
        if compiled:  # two functions, so Dynamo caches each shape apart instead of making one dynamic
            self.prefill_step = torch.compile(self.greedy_prefill, **compile_options(job))
            self.decode_step = torch.compile(self.greedy_decode, **compile_options(job))

    def greedy_prefill(self, ids, positions):
        return self.greedy(ids, positions)

    def greedy_decode(self, ids, positions):
        return self.greedy(ids, positions)

    def greedy(self, ids, positions):
        with self.torch.autocast(self.device.type, dtype=self.dtype, enabled=self.dtype != self.torch.float32):
            return self.step(ids, positions).argmax(-1, keepdim=True)

    def next_prompt(self):
        prompt = self.prompts[self.position]
        self.position = (self.position + 1) % len(self.prompts)
        return prompt

    def prefill(self, prompt):
        self.reset()
        return self.prefill_step(prompt, self.prompt_positions)

    def decode(self, token, index):
        return self.decode_step(token, self.decode_positions[index])

    def generate(self, prompt):
        """All new_tokens greedy tokens of `prompt` [batch, new_tokens], off the clock."""
        tokens = [self.prefill(prompt)]
        for index in range(len(self.decode_positions)):
            tokens.append(self.decode(tokens[-1], index))
        return self.torch.cat(tokens, 1)

    def synchronize(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)


class GptGeneration(Generation):
    """The built-in decoder's: a static key/value cache per block ([batch,
    heads, prompt_len + new_tokens - 1, head_dim], in the autocast dtype),
    written at each step's positions; every step attends over the whole
    cache with the later positions masked, so the decode step has one shape
    (gpt-fast's way). The cache tensors are buffers of a module, so CUDA
    graphs (compile_mode reduce-overhead) keep their addresses."""

    def __init__(self, torch, model, job, device, dtype, compiled):
        self.model = model
        heads = job["heads"]
        shape = (job["batch_size"], heads, job["prompt_len"] + job["new_tokens"] - 1, job["width"] // heads)
        self.cache = torch.nn.Module()
        for index in range(len(model.blocks)):
            for part in ("keys", "values"):
                self.cache.register_buffer(f"{part}{index}", torch.zeros(shape, dtype=dtype, device=device))
        super().__init__(torch, job, device, dtype, job["vocab"], compiled)

    def step(self, ids, positions):
        caches = [(getattr(self.cache, f"keys{i}"), getattr(self.cache, f"values{i}"))
                  for i in range(len(self.model.blocks))]
        return self.model.forward_cached(ids, positions, caches)

    def reset(self):
        pass  # every position a step reads was written by this prompt's steps first

    def cache_kind(self):
        return "static"

    def kv_cache_bytes(self):
        return sum(buffer.nbytes for buffer in self.cache.buffers())


class HfGeneration(Generation):
    """A Hugging Face causal language model's, through its own caches as
    users generate with it: a DynamicCache (growing each step) eager, a
    StaticCache (allocated for prompt_len + new_tokens - 1 positions)
    compiled, the way transformers documents compiled decoding."""

    def __init__(self, torch, transformers, model, job, device, dtype, compiled):
        self.model, self.transformers = model, transformers
        self.cache = None
        if compiled:
            self.cache = transformers.StaticCache(config=model.config,
                                                  max_cache_len=job["prompt_len"] + job["new_tokens"] - 1)
        super().__init__(torch, job, device, dtype, model.config.vocab_size, compiled)

    def step(self, ids, positions):
        output = self.model(input_ids=ids, past_key_values=self.cache, cache_position=positions, use_cache=True,
                            logits_to_keep=1)
        return output.logits[:, -1]

    def reset(self):
        if self.compiled:
            self.cache.reset()
        else:
            self.cache = self.transformers.DynamicCache()

    def cache_kind(self):
        return "static" if self.compiled else "dynamic"

    def kv_cache_bytes(self):
        layers = getattr(self.cache, "layers", None)
        pairs = ([(layer.keys, layer.values) for layer in layers] if layers is not None
                 else zip(self.cache.key_cache, self.cache.value_cache))
        return sum(t.nbytes for pair in pairs for t in pair if t is not None and hasattr(t, "nbytes"))


def synthetic_batch(torch, job, model, sample_shape, device):
    """One batch of random inputs and targets: the model's own kind where it
    makes them (a language model's tokens), else samples and class labels."""
    if hasattr(model, "make_batch"):
        return model.make_batch(job, device)
    return (torch.randn((job["batch_size"],) + tuple(sample_shape), device=device),
            torch.randint(job["num_classes"], (job["batch_size"],), device=device))


def model_loss(torch, model, output, targets):
    """The model's own loss where it has one (the user's), else class_loss."""
    return model.loss(output, targets) if hasattr(model, "loss") else class_loss(torch, output, targets)


def class_loss(torch, output, targets):
    """Cross-entropy over classes, or over every position of a sequence's
    logits (positions marked -100 skipped)."""
    if output.dim() == 3:
        output, targets = output.flatten(0, 1), targets.flatten()
    # fp32 at least: the accuracy gate's float64 reference keeps its width.
    return torch.nn.functional.cross_entropy(output if output.dtype == torch.float64 else output.float(), targets)


def counted_flops(torch, job):
    """One step's FLOPs of a model schemas/models.json has no formula for,
    counted by torch.utils.flop_counter on a copy of the model: built on the
    meta device (no memory, at most half a second for a ViT-B at batch 32),
    or, for a model whose code reads tensor values on the way (BERT's masks
    in transformers 4), on the CPU at batch 1 and scaled to the batch, the
    random numbers of the run left as they were (docs/models.md)."""
    try:
        forward, backward = _step_flops(torch, job, "meta", job["batch_size"])
        batch = job["batch_size"]
    except RuntimeError:
        with torch.random.fork_rng(devices=[]):
            forward, backward = _step_flops(torch, job, "cpu", 1)
        batch = 1
    return {"counter": "torch.utils.flop_counter", "forward_per_sample": forward / batch,
            "per_step": float(forward + backward) * job["batch_size"] / batch}


def _step_flops(torch, job, device, batch_size):
    """(forward, backward) FLOPs of one step of a fresh copy of the model on
    `device` at `batch_size`; the backward is 0 for inference."""
    from torch.utils.flop_counter import FlopCounterMode
    job = dict(job, batch_size=batch_size)
    with torch.device(device):
        model, sample_shape = build_model(torch, job)
        inputs, targets = synthetic_batch(torch, job, model, sample_shape, device)
    train = job["task"] == "train"
    model.train(train)
    with FlopCounterMode(display=False) as forward:
        with torch.set_grad_enabled(train):
            loss = model_loss(torch, model, model(inputs), targets)
    if not train:
        return forward.get_total_flops(), 0
    with FlopCounterMode(display=False) as backward:
        loss.backward()
    return forward.get_total_flops(), backward.get_total_flops()


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

class DataLoaderPipeline:
    """imagefolder data as PyTorch's users read it: torchvision's ImageFolder
    with the ImageNet training transforms (schemas/transforms.json) and a
    DataLoader of worker processes, pinned memory on CUDA, batches copied to
    the device without blocking."""
    name = "torchvision.datasets.ImageFolder + torch.utils.data.DataLoader"

    def __init__(self, torch, job, device, tree, corrupt):
        import torchvision
        from torchvision import transforms as T
        figures = data.transforms()
        crop, normalize = figures["random_resized_crop"], figures["normalize"]
        folder = torchvision.datasets.ImageFolder(tree.folder, loader=data.decode_jpeg, is_valid_file=data.is_jpeg_name,
                                                  transform=T.Compose([
                                                      T.RandomResizedCrop(job["input_size"], scale=crop["scale"],
                                                                          ratio=crop["ratio"], antialias=True),
                                                      T.RandomHorizontalFlip(figures["horizontal_flip"]),
                                                      T.ToTensor(), T.Normalize(normalize["mean"], normalize["std"])]))
        self.torch, self.device, self.corrupt = torch, device, corrupt
        self.workers, self.prefetch = job["loader_workers"], job["prefetch"]
        self.source = data.SkippingSource(folder.__getitem__, [path for path, _ in folder.samples], corrupt.fail)
        self.options = dict(batch_size=job["batch_size"], shuffle=True, drop_last=True, num_workers=self.workers,
                            prefetch_factor=-(-self.prefetch // self.workers), persistent_workers=True,
                            pin_memory=device.type == "cuda")
        self.seed = job["seed"]

    def batches(self):
        torch = self.torch
        loader = torch.utils.data.DataLoader(self.source, generator=torch.Generator().manual_seed(self.seed),
                                             **self.options)
        while True:
            for inputs, targets, skipped in loader:
                data.count_skipped(self.corrupt, skipped)
                yield inputs.to(self.device, non_blocking=True), targets.to(self.device, non_blocking=True)


class Experiment(ExperimentBase):
    def __init__(self, torch, job, compiled, feed=None):
        self.torch, self.job, self.compiled = torch, job, compiled
        self.device = torch.device(job["device"])
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise Unsupported(f"device {job['device']}: CUDA is not available here")
        if job["precision"] == "fp16" and self.device.type != "cuda":
            raise Unsupported("fp16 (float16 autocast with loss scaling) runs on CUDA only")
        torch.manual_seed(job["seed"])
        self.model, sample_shape = build_model(torch, job)
        self.sample_shape = sample_shape
        weights = start_state.initial_weights(job)
        if weights is not None:
            try:  # strict: every parameter and buffer, nothing left over, shapes checked
                self.model.load_state_dict({name: torch.from_numpy(array) for name, array in weights.items()})
            except RuntimeError as error:
                raise RuntimeError(f"initial_weights: {job['initial_weights']}: {error}") from error
        self.model.to(self.device)
        self.parameters = sum(p.numel() for p in self.model.parameters())
        # As the worker's: the same seed must give the same initial weights.
        self.initial_parameter_l1 = sum(p.detach().double().abs().sum().item() for p in self.model.parameters())
        torch.manual_seed(job["seed"] + 1)
        self.feed = feed
        # A generation makes its own prompts, from this point of the generator as the worker does.
        self.batches = [] if feed or job["task"] == "generate" else [
            synthetic_batch(torch, job, self.model, sample_shape, self.device) for _ in range(job["data_batches"])]
        reference = start_state.reference_batch(job)
        if reference is not None:
            self.reference = tuple(torch.from_numpy(array).to(self.device) for array in reference)
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
        self.scaler = torch.amp.GradScaler("cuda", init_scale=job["loss_scale_initial"],
                                           growth_interval=job["loss_scale_growth_interval"]) \
            if job["precision"] == "fp16" and self.train else None
        # Steps skipped for inf/nan gradients, counted on the device: read once, after the timed epochs.
        self.skipped_steps = torch.zeros(1, dtype=torch.int64, device=self.device) if self.scaler else None
        self.forward = self.model
        if compiled:
            self.forward = torch.compile(self.model, **compile_options(job))

    def loss_of(self, output, targets):
        return model_loss(self.torch, self.model, output, targets)

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
                # A skipped step backs the scale off. Compared on the device: GradScaler.step already waits
                # for the host once a step (as the worker's scaler does), get_scale() would wait twice more.
                scale = self.scaler._scale.clone()
                self.scaler.update()
                self.skipped_steps += self.scaler._scale < scale
            else:
                loss.backward()
                self.optimizer.step()
            output = loss.detach()
        else:
            with torch.no_grad(), autocast:
                output = self.forward(inputs)
        return output, targets

    def evaluate(self, batch):
        """The eval-mode loss of `batch`, through the module as written (an
        eval-mode call of the compiled one would compile again)."""
        inputs, targets = batch
        self.model.eval()
        with self.torch.no_grad():
            loss = float(self.loss_of(self.model(inputs), targets))
        self.model.train(self.train)
        return loss

    def loss_value(self, output, targets):
        with self.torch.no_grad():
            return float(output if self.train else self.loss_of(output, targets))

    def synchronize(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)



# Beyond this many parameters a float64 copy of the model is not made: the
# gate then compares with eager at the job's precision alone.
FLOAT64_REFERENCE_MAX_PARAMETERS = 1_000_000_000


def accuracy_check(torch, experiment, job):
    """The accuracy gate's runs (docs/compiler.md): one step of the timed
    compiled model and one of the same module eager, both from the weights
    the timed epochs left and on one batch (the reference batch where the
    job has one), and one eager in float64 where it can be afforded; their
    outputs, and training their loss and every gradient, as
    accuracy.section measures them. Before each run the weights, buffers
    (batch-norm statistics) and the random generator are put back; the
    optimizer never steps, and the gradients are cleared afterwards."""
    import numpy
    import torch._inductor.config
    model, train = experiment.model, experiment.train
    inputs, targets = experiment.reference if experiment.reference is not None else (
        experiment.batches[0] if experiment.batches else experiment.next_batch())
    saved = copy.deepcopy(model.state_dict())

    def one_step(module, forward, inputs, autocast_dtype, seed=job["seed"]):
        module.load_state_dict(saved)
        torch.manual_seed(seed)
        autocast = torch.autocast(experiment.device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None)
        tensors = {}
        if train:
            module.zero_grad(set_to_none=True)
            with autocast:
                output = forward(inputs)
                loss = model_loss(torch, module, output, targets)
            loss.backward()
            tensors["loss"] = loss
            tensors.update((f"grad:{name}", p.grad) for name, p in module.named_parameters() if p.grad is not None)
        else:
            with torch.no_grad(), autocast:
                output = forward(inputs)
        leaves = [leaf for leaf in torch.utils._pytree.tree_leaves(output) if isinstance(leaf, torch.Tensor)]
        tensors.update(("output" if len(leaves) == 1 else f"output[{index}]", leaf) for index, leaf in
                       enumerate(leaves))
        arrays = {name: tensor.detach().to("cpu", torch.float64).numpy() for name, tensor in tensors.items()}
        module.zero_grad(set_to_none=True)
        return arrays

    compiled = one_step(model, experiment.forward, inputs, experiment.autocast_dtype)
    eager = one_step(model, model, inputs, experiment.autocast_dtype)
    compiled_again = None
    reseeded = one_step(model, model, inputs, experiment.autocast_dtype, seed=job["seed"] + 1)
    if any(not numpy.array_equal(eager[name], reseeded[name], equal_nan=True) for name in eager):
        # The step draws random numbers (dropout): Inductor's generated code draws them from its own
        # generator, never eager's. As PyTorch's accuracy harness does, compile it again drawing from
        # ATen's (fallback_random); the timed graph is not compared then, and the result says so.
        compiled_again = ("fallback_random: the step draws random numbers, which compiled code draws from its own "
                          "generator; compiled again drawing them from eager's for the comparison")
        torch._dynamo.reset()
        with torch._inductor.config.patch(fallback_random=True):
            compiled = one_step(model, torch.compile(model, **compile_options(job)), inputs, experiment.autocast_dtype)
    reference, note = None, None
    if experiment.parameters > FLOAT64_REFERENCE_MAX_PARAMETERS:
        note = f"no float64 reference: {experiment.parameters} parameters"
    else:
        try:
            wide = copy.deepcopy(model).double()
            widen = lambda x: x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x  # noqa: E731
            reference = one_step(wide, wide, torch.utils._pytree.tree_map(widen, inputs), None)
            del wide
        except torch.cuda.OutOfMemoryError as error:
            note = f"no float64 reference: {str(error).splitlines()[0]}"
    model.load_state_dict(saved)
    return dict(accuracy.section(compiled, eager, reference, note), compiled_again=compiled_again)


def check_shapes(job):
    """The job's shapes: a language model may shorten its sequences, no
    other model has a sequence length to change (InvalidJob naming the
    field)."""
    for index, shape in enumerate(job.get("shapes") or []):
        if job["task"] == "generate":
            raise InvalidJob("shapes", "a generation's shapes are its prompt_len and new_tokens; give them as axes")
        if "seq_len" not in shape:
            continue
        if not start_state.reads_tokens(job):
            raise InvalidJob(f"shapes[{index}].seq_len", f"model {job['model']} has no sequence length to vary")
        if shape["seq_len"] > job["seq_len"]:
            raise InvalidJob(f"shapes[{index}].seq_len", f"{shape['seq_len']} is longer than the job's seq_len "
                             f"{job['seq_len']}, which sized the model")


def shape_sweep(torch, experiment, job):
    """The result's shapes (docs/compiler.md): after the timed epochs, each
    of the job's shapes in turn through the same model, compiled or eager:
    its first step, where Dynamo compiles again when its guards do not
    hold for the shape (counted by the guard failures it records), then
    iters steps, each timed with the device synchronised around it."""
    from torch._dynamo.utils import guard_failures

    def failures():
        return sum(len(reasons) for reasons in guard_failures.values())
    measured = []
    for shape in job.get("shapes") or []:
        variant = dict(job, **shape)
        batch = synthetic_batch(torch, variant, experiment.model, experiment.sample_shape, experiment.device)
        before = failures()
        first, _ = timed(experiment.synchronize, lambda: experiment.step(batch))
        steps = [timed(experiment.synchronize, lambda: experiment.step(batch))[0] for _ in range(job["iters"])]
        measured.append({"batch_size": variant["batch_size"],
                         "seq_len": variant["seq_len"] if start_state.reads_tokens(job) else None,
                         "first_step_seconds": first, "median_step_seconds": sorted(steps)[len(steps) // 2],
                         "step_seconds": steps,
                         "recompilations": failures() - before if experiment.compiled else None})
    return measured


# torch.compile modes that capture CUDA graphs (torch._inductor.list_mode_options()).
CUDA_GRAPH_MODES = ("reduce-overhead", "max-autotune")


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

    def __init__(self, job):
        self.kind, self.fill_seconds = job["compile_cache"], None
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
            finished = subprocess.run([sys.executable, os.path.realpath(__file__), "--job", "-", "--out", out.name],
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


def compile_section(torch, job, cache, fallbacks, first_iteration_seconds):
    """execution.compile (docs/compiler.md): the job's torch.compile settings
    and what Dynamo did, from its counters (torch._dynamo.utils.counters,
    guard_failures; both cleared when the run starts): graphs captured,
    graph breaks with their reasons (each reason in full, and counted by its
    summary: its first line, and the explanation newer versions put on the
    second), and recompilations with the guards that failed; the operators
    Inductor left to ATen and its own counters; the compile time's phases
    and the caches it started with."""
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
            "phases": compile_phases(first_iteration_seconds), "cache": cache.section()}


def apply_math_policy(torch, job):
    """The job's tf32 and cudnn_benchmark (harness math_policy), set before
    any model; returns execution.math."""
    if job["tf32"] != "framework":
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = job["tf32"] == "on"
    if job["cudnn_benchmark"] != "framework":
        torch.backends.cudnn.benchmark = job["cudnn_benchmark"] == "on"
    return math_policy.record(job, torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
                              torch.backends.cudnn.benchmark)


def execution_section(job, experiment, ran_compiled, fallback_reason, dynamo, math):
    """The result's execution: what ran (`dynamo`: compile_section's, or None
    eager; `math`: apply_math_policy's)."""
    return {"task": job["task"], "mode": "compiled" if ran_compiled else "eager",
            "compiler": job["backend"] if ran_compiled else "none", "fallback_reason": fallback_reason,
            "capture_seconds": None, "precision": job["precision"], "autocast_dtype": AUTOCAST_DTYPES[job["precision"]],
            "device": str(experiment.device), "model_parameters": experiment.parameters,
            "initial_parameter_l1": experiment.initial_parameter_l1, **start_state.execution_fields(job),
            "compile": dynamo, "math": math}


class CudaEventClock:
    """The worker's step clock on CUDA: a device synchronisation and a host clock
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




class CudaMemoryProbe:
    """The caching allocator's peaks in phases, as the worker's memory_probe:
    the warm-up/compile phase's read and reset at the start of the timed
    phase, then the timed phase's."""

    def __init__(self, torch, device):
        self.torch, self.device = torch, torch.device(device)
        self.report = {}

    def begin_timed_phase(self):
        cuda = self.torch.cuda
        self.report["warmup_peak_allocated_bytes"] = cuda.max_memory_allocated(self.device)
        self.report["warmup_peak_reserved_bytes"] = cuda.max_memory_reserved(self.device)
        cuda.reset_peak_memory_stats(self.device)

    def end(self):
        cuda = self.torch.cuda
        return dict(self.report, source="cuda_allocator", peak_allocated_bytes=cuda.max_memory_allocated(self.device),
                    peak_reserved_bytes=cuda.max_memory_reserved(self.device))


class TorchCompile(Framework):
    TASKS = ("train", "infer", "generate")

    def __init__(self):
        import torch
        self.torch = torch

    def versions(self):
        cudnn = self.torch.backends.cudnn
        return {"torch": self.torch.__version__, "cuda": self.torch.version.cuda,
                "cudnn": str(cudnn.version()) if cudnn.is_available() else None}

    def count_flops(self, job):
        return counted_flops(self.torch, job)

    def library_models(self, library):
        return library_models(library)

    def run(self, job, result):
        torch = self.torch
        from torch._dynamo.utils import compilation_time_metrics, counters, guard_failures
        warnings = result["warnings"]
        torch.set_num_threads(job["threads"])
        if job["interop_threads"] > 0:
            try:
                torch.set_num_interop_threads(job["interop_threads"])
            except RuntimeError as error:
                warnings.append(f"interop_threads not applied: {error}")
        if job["gpus"] > 1:
            raise Unsupported(f"gpus = {job['gpus']}: this runner runs one process on one device")
        if job["mode"] == "graph":
            raise Unsupported("mode graph is the tensorflow runner's (tf.function without XLA); this runner runs "
                              "eager and compiled")
        compiled = job["mode"] == "compiled"
        check_shapes(job)
        if compiled:
            check_compile_options(torch, job)
        cache = CompileCache(job) if compiled else None  # before anything compiles
        fallbacks = InductorFallbacks() if compiled else None
        torch._dynamo.reset()
        counters.clear()
        guard_failures.clear()
        compilation_time_metrics.clear()
        # Before any model: the process's baseline.
        probe = CudaMemoryProbe(torch, job["device"]) if job["device"].startswith("cuda") else RssProbe()
        math = apply_math_policy(torch, job)
        if job["task"] == "generate":
            return self.generate(job, result, probe, cache, fallbacks, math)
        # One pipeline, whatever mode the experiment ends up in.
        feed = data.Feed(job, lambda tree, corrupt: DataLoaderPipeline(
            torch, job, torch.device(job["device"]), tree, corrupt)) if data.reads_folder(job) else None
        experiment, timing, losses, fallback_reason = prepare(
            lambda mode: Experiment(torch, job, mode == "compiled", feed), job, warnings, log, "torch.compile",
            reset=torch._dynamo.reset)
        # What compiling did, before the timed epochs.
        dynamo = compile_section(torch, job, cache, fallbacks, timing.get("first_iteration_seconds")) if compiled \
            else None

        # Timed epochs: the worker's timed region and clocks; memory in phases.
        clock = (CudaEventClock(torch, experiment.device, job["iters"]) if experiment.device.type == "cuda"
                 else HostClock())
        epoch_final, memory, data_report = measure(experiment, clock, probe, job, timing)

        ran_compiled = experiment.compiled
        result["execution"] = execution_section(job, experiment, ran_compiled, fallback_reason, dynamo, math)
        if job.get("shapes"):
            result["shapes"] = shape_sweep(torch, experiment, job)
        if compiled:  # last: a step that draws random numbers compiles again for it
            result["accuracy"] = accuracy_check(torch, experiment, job) if ran_compiled else accuracy.skipped(
                f"fell back to eager: {fallback_reason}")
        if ":" in job["model"]:  # a library's model: no formula in schemas/models.json, so counted
            try:
                result["execution"]["counted_flops"] = counted_flops(torch, job)
            except Exception as error:  # noqa: BLE001 - the run stands; only its efficiency is missing
                warnings.append(f"FLOPs not counted on the meta device: {type(error).__name__}: {error}")
        if ran_compiled and dynamo["graph_breaks"]:
            warnings.append(f"{dynamo['graph_breaks']} graph break(s): part of the model ran eagerly between graphs")
        if experiment.scaler:
            result["execution"]["loss_scaling"] = {"initial_scale": float(job["loss_scale_initial"]),
                                                   "final_scale": experiment.scaler.get_scale(),
                                                   "skipped_steps": int(experiment.skipped_steps.item())}
        record_measurements(result, timing, losses, epoch_final, memory, data_report)

    def generate(self, job, result, probe, cache, fallbacks, math):
        """Task generate: warm-up generations, then the timed ones; compiled,
        the gate after them: eager greedy decoding of the last prompt from
        the same weights must give the same tokens (docs/language-models.md)."""
        torch = self.torch
        compiled, warnings = job["mode"] == "compiled", result["warnings"]
        experiment = Experiment(torch, job, compiled=False)
        dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(job["precision"], torch.float32)
        timing, fallback_reason = {}, None
        clock = (CudaEventClock(torch, experiment.device, job["new_tokens"]) if experiment.device.type == "cuda"
                 else HostClock())
        with torch.no_grad():
            generation = experiment.model.generation(job, experiment.device, dtype, compiled)
            try:
                section, (prompt, tokens), memory = measure_generation(generation, clock, probe, job, timing)
            except (Unsupported, InvalidJob):
                raise
            except Exception as error:  # noqa: BLE001 - a compile failure is the job's outcome
                if not compiled or job["fallback"] != "eager":
                    raise
                fallback_reason = f"torch.compile failed: {type(error).__name__}: {str(error).splitlines()[0]}"
                log.warning(f"{fallback_reason}; falling back to eager as the job allows")
                warnings.append(f"compiled mode fell back to eager: {fallback_reason}")
                torch._dynamo.reset()
                timing = {}
                generation = experiment.model.generation(job, experiment.device, dtype, False)
                section, (prompt, tokens), memory = measure_generation(generation, clock, probe, job, timing)
            tokens = torch.cat(tokens, 1)
            section.update(cache=generation.cache_kind(), kv_cache_bytes=generation.kv_cache_bytes(),
                           tokens=tokens[0].tolist(), matches_eager=None, first_mismatch=None)
            if generation.compiled:
                eager = experiment.model.generation(job, experiment.device, dtype, False).generate(prompt)
                differ = (eager != tokens).any(0).nonzero()
                section["matches_eager"] = differ.numel() == 0
                if differ.numel():
                    section["first_mismatch"] = int(differ[0])
                    warnings.append(f"compiled greedy decoding differs from eager from new token {int(differ[0])} on "
                                    "(same weights and prompt): the compiled model computes something else")
        result["execution"] = execution_section(job, experiment, generation.compiled, fallback_reason,
                                                compile_section(torch, job, cache, fallbacks,
                                                                timing.get("first_iteration_seconds"))
                                                if compiled else None, math)
        result["generation"] = section
        record_measurements(result, timing, {"first_step": None, "second_step": None, "reference_eval": None},
                            [None] * job["epochs"], memory, None)

    def context(self):
        torch = self.torch
        gpus = []
        if torch.cuda.is_available():
            for index in range(torch.cuda.device_count()):
                properties = torch.cuda.get_device_properties(index)
                gpus.append({"index": index, "name": properties.name, "memory_bytes": properties.total_memory})
        return {"torch_version": torch.__version__, "cuda_version": torch.version.cuda,
                "cudnn_version": str(torch.backends.cudnn.version()) if torch.cuda.is_available() else None,
                "gpu_driver": None, "gpu_count": len(gpus), "gpus": gpus,
                "intra_op_threads": torch.get_num_threads(), "interop_threads": torch.get_num_interop_threads()}


if __name__ == "__main__":
    run_main(RUNNER_NAME, TorchCompile)
