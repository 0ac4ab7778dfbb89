"""imagefolder data (docs/data.md), what every Python runner shares: the
tree read as torchvision's ImageFolder reads it, with errors that name the
path; decoding that skips (and counts) a corrupt file or fails on it, as the
job's on_corrupt says; the loader pass; the result's data section. A
framework adds its pipeline (an object with `name`, `workers`, `prefetch`
and `batches()`, an endless iterator of batches on the device), built the
way its users build one."""
import os
import time

from .contract import schema

JPEG_SUFFIXES = (".jpg", ".jpeg")


class DataError(Exception):
    """The data cannot be read; the message names the path."""


def reads_folder(job):
    return isinstance(job["data"], dict)


def transforms():
    """schemas/transforms.json: the training transforms' figures."""
    return schema("transforms.json")


def is_jpeg_name(path):
    return path.lower().endswith(JPEG_SUFFIXES)


class ImageTree:
    """FOLDER/CLASS/.../IMAGE.jpg: classes sorted by name and numbered from
    0, files sorted within each (torchvision's order, so that every runner
    sees the same labels)."""

    def __init__(self, job):
        self.folder = job["data"].get("path", job["data"]["folder"])
        if not os.path.isdir(self.folder):
            raise DataError(f"data.folder: {self.folder}: no such directory")
        self.classes = sorted(entry.name for entry in os.scandir(self.folder) if entry.is_dir())
        if not self.classes:
            raise DataError(f"data.folder: {self.folder}: no class folders (expected FOLDER/CLASS/IMAGE.jpg)")
        if len(self.classes) > job["num_classes"]:
            raise DataError(f"data.folder: {self.folder} has {len(self.classes)} classes, more than the model's "
                            f"num_classes ({job['num_classes']})")
        self.samples = []
        for label, name in enumerate(self.classes):
            found = [os.path.join(directory, file) for directory, _, files in sorted(os.walk(
                os.path.join(self.folder, name), followlinks=True)) for file in sorted(files) if is_jpeg_name(file)]
            if not found:
                raise DataError(f"data.folder: {os.path.join(self.folder, name)}: class '{name}' has no JPEG files")
            self.samples += [(path, label) for path in found]


class CorruptFiles:
    """Files that did not decode: counted and skipped, or the job fails
    naming the first (job.on_corrupt)."""

    def __init__(self, job):
        self.fail = job["on_corrupt"] == "fail"
        self.paths = set()

    def found(self, path, error):
        if self.fail:
            raise DataError(f"{path}: does not decode as a JPEG image ({error}); on_corrupt is fail")
        self.paths.add(path)


def decode_jpeg(path):
    """The file as an RGB PIL image; a file that is not a complete JPEG raises."""
    from PIL import Image
    with Image.open(path) as image:
        if image.format != "JPEG":
            raise ValueError(f"a {image.format} image, not JPEG")
        return image.convert("RGB")  # decodes the whole file: a truncated one raises here


def train_transform(image, side, rng):
    """torchvision's RandomResizedCrop, RandomHorizontalFlip and Normalize
    on a PIL image with numpy's generator `rng`, for pipelines without a
    transform library of their own (Grain): float32 HWC. PIL's bilinear
    resize of the crop box is antialiased, as torchvision's on PIL images."""
    import math

    import numpy as np
    from PIL import Image
    figures = transforms()
    crop, normalize = figures["random_resized_crop"], figures["normalize"]
    width, height = image.size
    box = None
    for _ in range(crop["attempts"]):
        target = width * height * rng.uniform(*crop["scale"])
        aspect = math.exp(rng.uniform(math.log(crop["ratio"][0]), math.log(crop["ratio"][1])))
        w, h = round(math.sqrt(target * aspect)), round(math.sqrt(target / aspect))
        if 0 < w <= width and 0 < h <= height:
            y, x = int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1))
            box = (x, y, x + w, y + h)
            break
    if box is None:  # the largest centred crop within the ratio range
        w, h = width, height
        if width / height < crop["ratio"][0]:
            h = round(w / crop["ratio"][0])
        elif width / height > crop["ratio"][1]:
            w = round(h * crop["ratio"][1])
        box = ((width - w) // 2, (height - h) // 2, (width - w) // 2 + w, (height - h) // 2 + h)
    resized = image.resize((side, side), Image.BILINEAR, box=box)
    if rng.random() < figures["horizontal_flip"]:
        resized = resized.transpose(Image.FLIP_LEFT_RIGHT)
    pixels = np.asarray(resized, dtype=np.float32) / 255.0
    return (pixels - np.asarray(normalize["mean"], np.float32)) / np.asarray(normalize["std"], np.float32)


class SkippingSource:
    """Random access to decoded samples for a loader's worker processes
    (torch's DataLoader, Grain): sample i, or when its file does not decode
    the next that does, with the skipped paths joined by newlines as a third
    field, for the main process to count (CorruptFiles.found)."""

    def __init__(self, fetch, paths, fail):
        self.fetch, self.paths, self.fail = fetch, paths, fail

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        skipped = []
        for offset in range(len(self.paths)):
            at = (index + offset) % len(self.paths)
            try:
                image, label = self.fetch(at)
                return image, label, "\n".join(skipped)
            except Exception as error:  # noqa: BLE001 - whatever the decoder raises, the file is corrupt
                if self.fail:
                    raise DataError(f"{self.paths[at]}: does not decode as a JPEG image ({error}); "
                                    "on_corrupt is fail") from None
                skipped.append(f"{self.paths[at]}\t{error}")
        raise DataError("no file of the tree decodes as a JPEG image")


def count_skipped(corrupt, joined):
    """A batch's third field (SkippingSource) into `corrupt`."""
    for text in joined:
        for line in filter(None, text.split("\n")):
            path, _, error = line.partition("\t")
            corrupt.found(path, error)


def loader_pass(pipeline, batches, batch_size):
    """(images per second, images) of the pipeline alone, a fresh iterator
    of it without training: its first batch (worker start-up, the prefetch
    filling) is not timed."""
    iterator = pipeline.batches()
    next(iterator)
    start = time.perf_counter()
    for _ in range(batches):
        next(iterator)
    return batches * batch_size / (time.perf_counter() - start), batches * batch_size


class Feed:
    """A job's imagefolder data through a framework's pipeline:
    make_pipeline(tree, corrupt) is called once the tree is read."""

    def __init__(self, job, make_pipeline):
        self.job, self.tree, self.corrupt = job, ImageTree(job), CorruptFiles(job)
        self.pipeline = make_pipeline(self.tree, self.corrupt)
        self.iterator = self.pipeline.batches()

    def next_batch(self):
        return next(self.iterator)

    def section(self, stall_seconds):
        """The result's data section (schemas/result.schema.json), its
        loader pass run now, after the timed epochs; whether the stalls made
        the job input-bound is the agent's judgement (agent/judge/input_stalls)."""
        job, tree, pipeline = self.job, self.tree, self.pipeline
        throughput, images = loader_pass(pipeline, max(2, job["iters"]), job["batch_size"])
        return {"format": "imagefolder", "folder": tree.folder, "images": len(tree.samples),
                "classes": len(tree.classes), "loader": pipeline.name, "workers": pipeline.workers,
                "prefetch": pipeline.prefetch, "corrupt_files": len(self.corrupt.paths),
                "corrupt_examples": sorted(self.corrupt.paths)[:10], "epoch_input_stall_seconds": list(stall_seconds),
                "loader_images_per_second": throughput, "loader_pass_images": images}
