"""A model's initial weights under the names its own library gives them
(docs/frameworks.md, "The same starting point"): a file of the
transformers, timm or torchvision model's own state_dict(), or of the
user's python: module's, loads into the model the runner built, and the
runner writes such a file (--write-initial-weights, `torchsweep weights`)."""

from .. import start_state


def owner(model):
    """The module whose state_dict names the weights: the library's or the
    user's own model inside the runner's wrapper; the model itself otherwise."""
    return model.library_module() if hasattr(model, "library_module") else model


def tied_groups(module):
    """{name: names sharing its storage}: the tensors a model ties (GPT-2's LM
    head is its token embedding), which a file may hold once."""
    by_storage = {}
    for name, tensor in module.state_dict(keep_vars=True).items():
        by_storage.setdefault((tensor.data_ptr(), tuple(tensor.shape)), []).append(name)
    return {name: names for names in by_storage.values() for name in names}


def load(torch, model, job):
    """The job's initial_weights into `model` (the runner's), strictly: every
    parameter and buffer, nothing left over, shapes checked; a tied tensor
    may appear once. RuntimeError naming the file otherwise."""
    weights = start_state.initial_weights(job)
    if weights is None:
        return
    module, origin = owner(model), f"initial_weights: {job['initial_weights']}"
    try:
        missing, unexpected = module.load_state_dict({name: torch.from_numpy(array) for name, array in weights.items()},
                                                     strict=False)
    except RuntimeError as error:  # a shape that does not fit
        raise RuntimeError(f"{origin}: {error}") from error
    groups = tied_groups(module)
    missing = [name for name in missing if not any(other in weights for other in groups.get(name, ()))]
    if missing or unexpected:
        raise RuntimeError(f"{origin}: does not fit {job['model']} (names as its library gives them, shapes "
                           f"checked): missing {missing[:8]}{' ...' if len(missing) > 8 else ''}, unexpected "
                           f"{unexpected[:8]}{' ...' if len(unexpected) > 8 else ''}")


def write(model, path):
    """The model's weights as its library names them, to a safetensors file;
    a tied tensor once (under its first name). Returns how many tensors."""
    from safetensors.torch import save_file
    module, state = owner(model), {}
    groups = tied_groups(module)
    for name, tensor in module.state_dict().items():
        if not any(other in state for other in groups[name]):
            state[name] = tensor.detach().to("cpu").contiguous().clone()
    save_file(state, str(path), metadata={"written_by": "torchsweep-torch-compile"})
    return len(state)
