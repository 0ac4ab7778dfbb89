"""The losses the torch-compile runner trains with."""


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
