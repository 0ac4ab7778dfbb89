"""Models the torch-compile runner does not spell: LIBRARY:NAME built by
the environment's torchvision, timm or transformers (schemas/model_libraries.json),
and the user's own (python:MODULE:FACTORY, torchscript:FILE; harness user_models)."""

import math
import sys

from .. import user_models
from ..contract import check_positions, schema
from ..errors import InvalidJob, Unsupported
from .generation import HfGeneration
from .losses import class_loss


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


# The modules that drop at random in training: torch's Dropout*, timm's DropPath, torchvision's StochasticDepth.
RANDOM_DROPS = ("Dropout", "DropPath", "StochasticDepth")


def set_dropout(model, job):
    """The job's dropout (schemas/job.schema.json): off zeroes the
    probability of every module of `model` that drops at random (p, or
    timm's drop_prob); model, or none given, keeps them. Returns
    execution.dropout: what was asked and how many such modules the model
    has. Dropout a user's forward calls functionally is out of reach."""
    asked, layers = job.get("dropout", "model"), 0
    for module in model.modules():
        if not any(kind in type(module).__name__ for kind in RANDOM_DROPS):
            continue
        attribute = next((name for name in ("p", "drop_prob") if isinstance(getattr(module, name, None), float)), None)
        if attribute is None:
            continue
        layers += 1
        if asked == "off":
            setattr(module, attribute, 0.0)
    return {"asked": asked, "layers": layers}


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

        def library_module(self):
            """The user's own module: initial weights carry its names."""
            return self.module

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
    if "vocab" in job:
        sizes["vocab_size"] = job["vocab"]
        # Special tokens beyond a smaller vocabulary (GPT-2's 50256) become its last id, as the mask token does.
        sizes.update((name, job["vocab"] - 1) for name in ("bos_token_id", "eos_token_id", "pad_token_id")
                     if isinstance(getattr(default, name, None), int) and getattr(default, name) >= job["vocab"])
    if job.get("dropout") == "off":
        # Attention dropout is often functional, read from the configuration (Llama's, BERT's under SDPA).
        sizes.update((key, 0.0) for key, value in default.to_dict().items()
                     if isinstance(value, float) and ("dropout" in key or "pdrop" in key))
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

        def library_module(self):
            """transformers' own model: initial weights carry its names."""
            return self.model

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
