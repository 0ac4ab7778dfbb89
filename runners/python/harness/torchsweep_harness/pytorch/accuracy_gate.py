"""The accuracy gate's runs on a compiled PyTorch model (docs/compiler.md)."""

import copy

from .. import accuracy
from .compile_diagnostics import compile_options
from .losses import model_loss


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
