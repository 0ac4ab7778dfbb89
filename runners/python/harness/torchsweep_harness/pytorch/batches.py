"""What a step is fed: synthetic batches, and the image layout."""


def synthetic_batch(torch, job, model, sample_shape, device):
    """One batch of random inputs and targets: the model's own kind where it
    makes them (a language model's tokens), else samples and class labels."""
    if hasattr(model, "make_batch"):
        return model.make_batch(job, device)
    return (torch.randn((job["batch_size"],) + tuple(sample_shape), device=device),
            torch.randint(job["num_classes"], (job["batch_size"],), device=device))


def memory_format(torch, job):
    """The job's memory_format as torch names it."""
    return torch.channels_last if job["memory_format"] == "channels_last" else torch.contiguous_format
