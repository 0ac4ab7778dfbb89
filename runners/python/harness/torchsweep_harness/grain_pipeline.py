"""The JAX runner's imagefolder pipeline, as JAX's users read images: Grain
(Google's data loader for JAX, the one Flax's examples use) over the tree
as a random-access data source decoded with Pillow, the ImageNet training
transforms (data.train_transform) as a seeded random map, loader_workers
worker processes. Its own module: Grain's worker processes import these
classes by name, and only the JAX venv has Grain."""
import grain.python as grain
from absl import flags

from . import data

# Grain reads absl flags, which only an absl app parses: the runner is not one.
if not flags.FLAGS.is_parsed():
    flags.FLAGS.mark_as_parsed()


class Decode:
    """Sample i of the tree: (RGB image, label)."""

    def __init__(self, samples):
        self.samples = samples

    def __call__(self, index):
        path, label = self.samples[index]
        return data.decode_jpeg(path), label


class Transform(grain.RandomMapTransform):
    def __init__(self, side):
        self.side = side

    def random_map(self, element, rng):
        image, label, skipped = element
        return data.train_transform(image, self.side, rng), label, skipped


class GrainPipeline:
    name = "grain.DataLoader (Pillow decoding)"

    def __init__(self, to_device, job, tree, corrupt):
        self.to_device, self.job, self.corrupt = to_device, job, corrupt
        self.workers, self.prefetch = job["loader_workers"], job["prefetch"]
        self.source = data.SkippingSource(Decode(tree.samples), [path for path, _ in tree.samples], corrupt.fail)

    def batches(self):
        job = self.job
        loader = grain.DataLoader(
            data_source=self.source,
            sampler=grain.IndexSampler(len(self.source), shard_options=grain.NoSharding(), shuffle=True,
                                       num_epochs=None, seed=job["seed"]),
            operations=[Transform(job["input_size"]), grain.Batch(job["batch_size"], drop_remainder=True)],
            worker_count=self.workers, worker_buffer_size=-(-self.prefetch // self.workers))
        for images, labels, skipped in loader:
            data.count_skipped(self.corrupt, skipped)
            yield self.to_device(images), self.to_device(labels.astype("int32"))
