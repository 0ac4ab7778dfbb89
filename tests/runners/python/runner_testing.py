"""What the runner tests share: an independent validator (python3-jsonschema)
of result documents against schemas/result.schema.json, and the agent's
judgement of a runner's raw result (`torchsweep judge`)."""
import json
import subprocess

import jsonschema
from referencing import Registry, Resource


def result_validator(schemas):
    resources = []
    for path in schemas.glob("*.schema.json"):
        contents = json.loads(path.read_text())
        resource = Resource.from_contents(contents)
        resources += [(contents["$id"], resource), (path.name, resource)]
    schema = json.loads((schemas / "result.schema.json").read_text())
    return jsonschema.Draft7Validator(schema, registry=Registry().with_resources(resources))


def judged(torchsweep, result):
    """`result` judged as an agent judges it before it leaves the node
    (agent/judge/: the timing summary, latency, noise, efficiency)."""
    finished = subprocess.run([torchsweep, "judge", "-"], input=json.dumps(result), capture_output=True, text=True)
    if finished.returncode != 0:
        raise AssertionError(f"torchsweep judge failed ({finished.returncode}): {finished.stderr}")
    return json.loads(finished.stdout)
