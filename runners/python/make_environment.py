#!/usr/bin/env python3
"""torchsweep-make-environment: PyTorch environments made on demand (docs/bisect.md).

    torchsweep-make-environment released PACKAGE --from A --to B [INDEX]
        the final releases of PACKAGE strictly between A and B that this
        interpreter can install, as a JSON list, in ascending order
    torchsweep-make-environment make NAME --pin torch==V [--with "PKG ..."] --root DIR --wheels DIR
                                [--budget-gib G] [INDEX]
        a venv ROOT/NAME with the pins and their companions, locked with
        hashes (ROOT/NAME.lock) before anything is installed, wheels kept in
        WHEELS; prints the venv's python. A make that fails leaves no venv and
        a ROOT/NAME.failed with the reason, which later makes report until it
        is deleted. Past --budget-gib (made venvs and the wheel cache
        together), the environments used least recently go, then cached
        wheels no lock names.
    INDEX: --index-url URL (default the package index) or --find-links DIR (a
    folder of wheels, no index).

pip does the resolving, downloading and installing, as scripts/framework-venvs
does for the set-up's locks: resolved once, at make time, into a lock of
exact versions and sha256 digests, then installed with --no-deps from it.
Exit: 0 done, 2 bad arguments or nothing to make (no such version), 3 the
make failed (the reason on stderr and in NAME.failed)."""
import argparse
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

EXIT_INVALID, EXIT_FAILED = 2, 3
# What the harness and the library models need beside PyTorch (runners/python/requirements/torch-2.6.lock's
# choices: the 4.x transformers runs on older PyTorch too).
COMPANIONS = "torchvision timm==1.0.31 transformers==4.57.6 safetensors jsonschema numpy pillow"
MARKER = ".torchsweep-lock"  # in a made venv: its lock's digest, touched at each use


class Failed(Exception):
    pass


def numbers(version):
    return tuple(int(part) for part in re.findall(r"\d+", version.split("+")[0])[:3])


def index_options(arguments):
    if arguments.find_links:
        return ["--no-index", "--find-links", arguments.find_links]
    return ["--index-url", arguments.index_url] if arguments.index_url else []


def pip(scratch):
    """A throwaway venv's pip: the system's python3 has none (Debian), and nothing is installed into it."""
    venv = scratch / "pip-venv"
    if not venv.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    return [str(venv / "bin" / "pip"), "--disable-pip-version-check"]


def run(command, what):
    finished = subprocess.run(command, capture_output=True, text=True)
    if finished.returncode != 0:
        lines = (finished.stderr or finished.stdout).strip().splitlines()
        raise Failed(f"{what}: {lines[-1] if lines else 'failed'}"[:2000])
    return finished.stdout


def released(arguments):
    with tempfile.TemporaryDirectory() as scratch:
        out = run(pip(pathlib.Path(scratch)) + ["index", "versions", arguments.package, *index_options(arguments)],
                  f"listing {arguments.package}'s versions")
    listed = re.search(r"Available versions: (.*)", out)
    versions = [v.strip() for v in listed.group(1).split(",")] if listed else []
    low, high = sorted((numbers(arguments.from_version), numbers(arguments.to_version)))
    between = sorted({v for v in versions if re.fullmatch(r"\d+\.\d+\.\d+", v) and low < numbers(v) < high},
                     key=numbers)
    print(json.dumps(between))
    return 0


def digest_of(item):
    info = item["download_info"]
    hashes = info.get("archive_info", {}).get("hashes", {})
    if "sha256" in hashes:
        return hashes["sha256"]
    url = urllib.parse.urlparse(info["url"])
    if url.scheme == "file":  # a local wheel (--find-links): its digest, computed here
        return hashlib.sha256(pathlib.Path(urllib.parse.unquote(url.path)).read_bytes()).hexdigest()
    raise Failed(f"the index gave no sha256 for {item['metadata']['name']}")


def lock(arguments, scratch):
    report = scratch / "report.json"
    requested = [arguments.pin, *arguments.with_packages.split()]
    run(pip(scratch) + ["install", "--quiet", "--dry-run", "--ignore-installed", "--only-binary=:all:",
                        *index_options(arguments), "--report", str(report), *requested],
        f"resolving {' '.join(requested)}")
    lines = [f"# {arguments.name}: torchsweep-make-environment make {arguments.name} --pin {arguments.pin} "
             f"--with '{arguments.with_packages}' on Python {sys.version.split()[0]}"]
    for item in sorted(json.loads(report.read_text())["install"], key=lambda item: item["metadata"]["name"].lower()):
        lines.append(f'{item["metadata"]["name"]}=={item["metadata"]["version"]} --hash=sha256:{digest_of(item)}')
    return "\n".join(lines) + "\n"


def size_of(path):
    return sum(entry.stat().st_size for entry in path.rglob("*") if entry.is_file() and not entry.is_symlink())


def honour_budget(root, wheels, budget_gib, keep):
    """Least recently used made environments go first (never `keep`), then wheels no lock in `root` names."""
    budget = budget_gib * (1 << 30)
    used = size_of(root) + (size_of(wheels) if wheels.exists() else 0)
    made = sorted((venv for venv in root.iterdir() if (venv / MARKER).exists() and venv.name != keep),
                  key=lambda venv: (venv / MARKER).stat().st_mtime)
    for venv in made:
        if used <= budget:
            return
        freed = size_of(venv)
        shutil.rmtree(venv)
        (root / f"{venv.name}.lock").unlink(missing_ok=True)
        used -= freed
        print(f"disk budget: removed environment {venv.name} ({freed >> 20} MiB)", file=sys.stderr)
    named = set()
    for lock_file in root.glob("*.lock"):
        named |= {line.split("==")[0].lower().replace("-", "_") for line in lock_file.read_text().splitlines()
                  if line and not line.startswith("#")}
    for wheel in sorted(wheels.glob("*.whl"), key=lambda wheel: wheel.stat().st_atime) if wheels.exists() else []:
        if used <= budget:
            return
        if wheel.name.split("-")[0].lower() in named:
            continue
        used -= wheel.stat().st_size
        wheel.unlink()
        print(f"disk budget: removed cached wheel {wheel.name}", file=sys.stderr)


def make(arguments):
    root, wheels = pathlib.Path(arguments.root), pathlib.Path(arguments.wheels)
    venv, failed = root / arguments.name, root / f"{arguments.name}.failed"
    if failed.exists():
        print(f"environment {arguments.name} could not be made before: {failed.read_text().strip()} "
              f"(delete {failed} to try again)", file=sys.stderr)
        return EXIT_FAILED
    if (venv / MARKER).exists():
        (venv / MARKER).touch()
        print(venv / "bin" / "python3")
        return 0
    root.mkdir(parents=True, exist_ok=True)
    partial = root / f"{arguments.name}.partial-{os.getpid()}"
    try:
        with tempfile.TemporaryDirectory() as scratch:
            text = lock(arguments, pathlib.Path(scratch))
        lock_file = root / f"{arguments.name}.lock"
        lock_file.write_text(text)
        wheels.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(partial)], check=True, capture_output=True)
        own_pip = [str(partial / "bin" / "pip"), "--disable-pip-version-check", "--quiet"]
        run(own_pip + ["download", "--no-deps", "--only-binary=:all:", *index_options(arguments), "-d", str(wheels),
                       "-r", str(lock_file)], "downloading the locked wheels")
        run(own_pip + ["install", "--no-deps", "--only-binary=:all:", "--no-index", "--find-links", str(wheels),
                       "-r", str(lock_file)], "installing the locked wheels")
        package, _, version = arguments.pin.partition("==")
        found = run([str(partial / "bin" / "python3"), "-c",
                     f"import importlib.metadata as m; print(m.version({package!r}))"], "checking the install").strip()
        if version and found != version:
            raise Failed(f"{package} {found} was installed, not {version}")
        (partial / MARKER).write_text(hashlib.sha256(text.encode()).hexdigest() + "\n")
        partial.rename(venv)
    except (Failed, subprocess.CalledProcessError, OSError) as error:
        shutil.rmtree(partial, ignore_errors=True)
        (root / f"{arguments.name}.lock").unlink(missing_ok=True)
        failed.write_text(f"{error}\n")
        print(f"environment {arguments.name} could not be made: {error}", file=sys.stderr)
        return EXIT_FAILED
    honour_budget(root, wheels, arguments.budget_gib, keep=arguments.name)
    print(venv / "bin" / "python3")
    return 0


def main(argv):
    parser = argparse.ArgumentParser(prog="torchsweep-make-environment", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("released")
    listing.add_argument("package")
    listing.add_argument("--from", dest="from_version", required=True)
    listing.add_argument("--to", dest="to_version", required=True)
    making = commands.add_parser("make")
    making.add_argument("name")
    making.add_argument("--pin", required=True, help="PACKAGE==VERSION, e.g. torch==2.8.0")
    making.add_argument("--with", dest="with_packages", default=COMPANIONS,
                        help=f"companions, resolved to versions compatible with the pin (default: {COMPANIONS})")
    making.add_argument("--root", required=True)
    making.add_argument("--wheels", required=True)
    making.add_argument("--budget-gib", type=float, default=40.0)
    for command in (listing, making):
        command.add_argument("--index-url")
        command.add_argument("--find-links")
    try:
        arguments = parser.parse_args(argv)
    except SystemExit as exit_request:
        return 0 if exit_request.code == 0 else EXIT_INVALID
    if arguments.command == "make" and not re.fullmatch(r"[A-Za-z0-9_.+-]{1,64}", arguments.name):
        print(f"name: '{arguments.name}' is not an environment name (letters, digits, _ . + -)", file=sys.stderr)
        return EXIT_INVALID
    try:
        return released(arguments) if arguments.command == "released" else make(arguments)
    except Failed as error:
        print(error, file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
