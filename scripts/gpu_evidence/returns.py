"""What a GPU visit sends back (scripts/gpu-visit, docs/gpu.md): the summary
and the evidence tarball, within what a lease returns."""
import json
import tarfile
from pathlib import Path

RETURNED_FILES = ("evidence.tar.gz", "summary.txt", "preflight.json", "console.log")
RETURN_LIMIT_BYTES = 16 << 20  # each returned file (a lease returns at most 8 files of 16 MiB)


def summary(evidence, code):
    """summary.txt: the verdicts, each planned job's fate and estimate, and the steps."""
    lines = [f"exit {code}: " + {0: "all passed", 1: "failed", 2: "unusable", 3: "incomplete"}[code], ""]
    if (evidence / "checks.json").exists():
        lines += [f"{c['verdict'].upper():7} {c['check']:<18} {c['detail']}"
                  for c in json.loads((evidence / "checks.json").read_text())]
    results = {r["job"]["job_id"]: r for r in json.loads((evidence / "results.json").read_text())} \
        if (evidence / "results.json").exists() else {}
    lines.append("")
    for planned in json.loads((evidence / "jobs.json").read_text()) if (evidence / "jobs.json").exists() else []:
        job, result = planned["job"], results.get(planned.get("job_id"))
        figure = ""
        if result and result["status"] == "ok":
            timing, efficiency = result["timing"], result.get("efficiency") or {}
            figure = f"median epoch {timing['median_epoch_seconds']:.4f} s" + \
                (f", MFU {efficiency['mfu']:.3f}" if efficiency.get("mfu") else "")
        elif result:
            figure = (result.get("error") or "")[:160]
        lines.append(f"{planned['class']:<7} {planned.get('job_id') or '-':<12} "
                     f"{(result or {}).get('status') or planned['state']:<11} {job.get('runner', 'libtorch'):<13} "
                     f"{job['model']:<8} {job.get('task', 'train'):<8} {job.get('precision', 'fp32'):<5} "
                     f"{job.get('mode', 'eager'):<8} {figure or planned.get('why') or ''}")
    if (evidence / "steps.json").exists():
        lines.append("")
        lines += [f"{s['seconds']:6.1f} s  {s['step']}: {s['status']} {s['detail']}"[:300]
                  for s in json.loads((evidence / "steps.json").read_text())]
    return "\n".join(lines) + "\n"


def pack_returns(evidence, out, say):
    """evidence.tar.gz within the limit (the largest logs left out first, and said), beside the summary."""
    members = sorted(p for p in evidence.rglob("*") if p.is_file())
    logs = sorted((p for p in members if p.suffix == ".log"), key=lambda p: p.stat().st_size)
    dropped = []
    while True:
        with tarfile.open(out / "evidence.tar.gz", "w:gz") as archive:
            for path in members:
                if path not in dropped:
                    archive.add(path, arcname=str(Path("evidence") / path.relative_to(evidence)))
        if (out / "evidence.tar.gz").stat().st_size <= RETURN_LIMIT_BYTES or not logs:
            break
        dropped.append(logs.pop())
    if dropped:
        say("left out of evidence.tar.gz for its size: " + ", ".join(p.name for p in dropped))
    for path in out.iterdir():
        if path.name not in RETURNED_FILES or path.stat().st_size > RETURN_LIMIT_BYTES:
            say(f"warning: {path} is not what a lease returns ({', '.join(RETURNED_FILES)}, 16 MiB each)")
