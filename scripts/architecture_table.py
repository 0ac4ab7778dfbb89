"""docs/architecture.md's "Spelled once" table, made from docs/spelled-once.json
(scripts/architecture-table writes it; tests/architecture/spelled_once_test.py
checks the rules against the code and the table against the rules)."""

import json
import pathlib

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
RULES = REPOSITORY / "docs" / "spelled-once.json"
BEGIN = "<!-- spelled-once table: made by scripts/architecture-table from docs/spelled-once.json -->"
END = "<!-- end of the spelled-once table -->"


def rules():
    return json.loads(RULES.read_text())["rules"]


def table(rules):
    lines = ["| what | its one place | read by | checked by the pattern |", "|---|---|---|---|"]
    for rule in rules:
        pattern = rule["pattern"].replace("|", "\\|")
        also = "".join(f"; also in `{name}`: {why}" for name, why in rule.get("elsewhere", {}).items())
        lines.append(f"| {rule['what']} | `{rule['home']}` | {rule['read_by']} | `{pattern}`{also} |")
    return "\n".join(lines)


def with_table(document, rules):
    """`document` with the text between the markers replaced by the table."""
    start, end = document.index(BEGIN) + len(BEGIN), document.index(END)
    return document[:start] + "\n" + table(rules) + "\n" + document[end:]
