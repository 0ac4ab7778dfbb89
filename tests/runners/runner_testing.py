"""What the runner tests share: an independent validator (python3-jsonschema)
of result documents against schemas/result.schema.json."""
import json

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
