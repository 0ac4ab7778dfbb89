"""Task generate's greedy decoding (docs/language-models.md): the prompts,
a prefill and a decode step, compiled each on its own when the job is."""

from .compile_diagnostics import CUDA_GRAPH_MODES, compile_options


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
        # CUDA graphs (compile_mode reduce-overhead, max-autotune) replay into the same output memory: each
        # token is copied out before the next replay overwrites it, as gpt-fast does (docs/compiler.md).
        self.copies_outputs = compiled and job["compile_mode"] in CUDA_GRAPH_MODES
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
        return self.kept(self.prefill_step, prompt, self.prompt_positions)

    def decode(self, token, index):
        return self.kept(self.decode_step, token, self.decode_positions[index])

    def kept(self, step, ids, positions):
        """A step's token, still there after later steps: under CUDA graphs
        a new step of the graph tree begins (a generation's steps are not a
        training iteration's forward and backward) and the token is cloned
        out of the graph's static output."""
        if not self.copies_outputs:
            return step(ids, positions)
        self.torch.compiler.cudagraph_mark_step_begin()
        return step(ids, positions).clone()

    def generate(self, prompt):
        """All new_tokens greedy tokens of `prompt` [batch, new_tokens], off the clock."""
        tokens = [self.prefill(prompt)]
        for index in range(len(self.decode_positions)):
            tokens.append(self.decode(tokens[-1], index))
        return self.torch.cat(tokens, 1)

    def synchronize(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)


class WholeGenerations:
    """A generation job as profile.profile_steps takes an experiment: each
    step one whole generation of the next prompt, its prefill and its
    decode steps (docs/explain.md)."""

    def __init__(self, generation):
        self.generation, self.device = generation, generation.device

    def step(self):
        self.generation.generate(self.generation.next_prompt())

    def synchronize(self):
        self.generation.synchronize()


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
