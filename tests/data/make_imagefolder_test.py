#!/usr/bin/env python3
"""scripts/make-imagefolder writes a tree torchvision's ImageFolder reads,
the same bytes for the same seed, and the bad files it is asked for."""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

from PIL import Image


def make(script, directory, *extra):
    finished = subprocess.run([sys.executable, script, directory, "--classes", "3", "--per-class", "6",
                               "--min-side", "40", "--max-side", "120", *extra], capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    return json.loads(finished.stdout)


def digest(directory):
    hashes = hashlib.sha256()
    for root, folders, files in os.walk(directory):
        folders.sort()
        for name in sorted(files):
            with open(os.path.join(root, name), "rb") as data:
                hashes.update(name.encode() + data.read())
    return hashes.hexdigest()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        good = os.path.join(work, "good")
        counts = make(args.script, good)
        assert counts["classes"] == 3 and counts["images"] == 18, counts
        assert sorted(os.listdir(good)) == ["class_000", "class_001", "class_002"]
        sizes = set()
        for folder in os.listdir(good):
            names = sorted(os.listdir(os.path.join(good, folder)))
            assert len(names) == 6, names
            for name in names:
                with Image.open(os.path.join(good, folder, name)) as image:
                    image.load()
                    assert image.format == "JPEG" and image.mode == "RGB", (name, image.format, image.mode)
                    assert all(40 <= side <= 120 for side in image.size), image.size
                    sizes.add(image.size)
        assert len(sizes) > 1, "every image has the same size"

        # The layout is torchvision's: ImageFolder finds every class and image.
        from torchvision.datasets import ImageFolder
        dataset = ImageFolder(good)
        assert dataset.classes == ["class_000", "class_001", "class_002"] and len(dataset) == 18, dataset

        # The same seed writes the same bytes; another seed does not.
        make(args.script, os.path.join(work, "again"))
        assert digest(good) == digest(os.path.join(work, "again"))
        make(args.script, os.path.join(work, "other"), "--seed", "1")
        assert digest(good) != digest(os.path.join(work, "other"))

        # The bad files asked for, in the first class.
        bad = os.path.join(work, "bad")
        counts = make(args.script, bad, "--corrupt", "2", "--not-jpeg", "1", "--empty-class")
        assert (counts["corrupt"], counts["not_jpeg"], counts["empty_classes"]) == (2, 1, 1), counts
        assert os.listdir(os.path.join(bad, "class_003_empty")) == []
        for index in range(2):
            try:
                with Image.open(os.path.join(bad, "class_000", f"corrupt_{index:03d}.jpg")) as image:
                    image.load()
                raise AssertionError("a corrupt file decoded")
            except OSError:
                pass
        with Image.open(os.path.join(bad, "class_000", "not_jpeg_000.jpg")) as image:
            assert image.format == "PNG", image.format

        # A folder with files in it is refused, untouched.
        refused = subprocess.run([sys.executable, args.script, good], capture_output=True, text=True)
        assert refused.returncode != 0 and "not empty" in refused.stderr, refused.stderr
        assert digest(good) == digest(os.path.join(work, "again"))
    print("make-imagefolder: layout, determinism and bad files as asked")


if __name__ == "__main__":
    main()
