"""imagefolder data through torchvision and torch.utils.data (docs/data.md)."""

from .. import data
from .batches import memory_format


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
        self.layout = memory_format(torch, job)  # made by the copy to the device, on the clock
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
                yield (inputs.to(self.device, non_blocking=True).contiguous(memory_format=self.layout),
                       targets.to(self.device, non_blocking=True))
