#!/usr/bin/env python3
"""docs/architecture.md's "Spelled once" table, as a test (docs/spelled-once.json):

- each rule's pattern, over the product code, matches in its home and in the
  files its `elsewhere` names (each with why that match is no copy), and
  nowhere else; its home and every file it names exist;
- docs/architecture.md's table is the one scripts/architecture-table makes
  from the rules, so the map cannot drift from what is checked.
"""

import fnmatch
import json
import pathlib
import re
import subprocess
import sys
import unittest

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "scripts"))
import architecture_table  # noqa: E402

# What is not product code: tests, benchmarks and their stand-ins, prose, example sweeps, pinned versions.
LEFT_OUT = ("tests/", "bench/", "simulation/", "docs/", "examples/", ".ci/")
LEFT_OUT_FILES = ("*.md", "*.lock", "*.png", "*.svg", "*.min.js")
# A rule's mention in a comment is no copy of it (a rule's own `ignore` replaces this).
COMMENT = r"^\s*(//|#)"


def product_files():
    listed = subprocess.run(["git", "-C", str(REPOSITORY), "ls-files", "-z"], capture_output=True, check=True)
    for name in listed.stdout.decode().split("\0"):
        if not name or name.startswith(LEFT_OUT) or any(fnmatch.fnmatch(name, glob) for glob in LEFT_OUT_FILES):
            continue
        path = REPOSITORY / name
        if path.is_file():
            yield name, path


def matches(rule, files):
    """{file: [line, ...]} of the rule's pattern in `files` (its globs; every product file without them)."""
    pattern, ignore = re.compile(rule["pattern"]), re.compile(rule.get("ignore", COMMENT))
    found = {}
    for name, path in files:
        if "files" in rule and not any(fnmatch.fnmatch(pathlib.PurePath(name).name, glob) for glob in rule["files"]):
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        lines = [line for line in text.splitlines() if pattern.search(line) and not ignore.search(line)]
        if lines:
            found[name] = lines
    return found


class SpelledOnce(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rules = architecture_table.rules()
        cls.files = list(product_files())

    def test_each_rule_is_found_in_its_home_and_nowhere_else(self):
        for rule in self.rules:
            with self.subTest(rule["what"]):
                allowed = {rule["home"], *rule.get("elsewhere", {})}
                for name in allowed:
                    self.assertTrue((REPOSITORY / name).is_file(), f"{rule['what']}: {name} does not exist")
                found = matches(rule, self.files)
                self.assertIn(rule["home"], found, f"{rule['what']}: the pattern finds nothing in its home "
                                                   f"{rule['home']}; it finds {sorted(found)}")
                copies = {name: lines for name, lines in found.items() if name not in allowed}
                self.assertEqual(copies, {}, f"{rule['what']}: spelled again outside {rule['home']}")
                unused = allowed - set(found)
                self.assertEqual(unused, set(), f"{rule['what']}: `elsewhere` names files the pattern no longer "
                                                 "finds; take them out")

    def test_the_architecture_doc_shows_these_rules(self):
        document = (REPOSITORY / "docs" / "architecture.md").read_text()
        self.assertEqual(document, architecture_table.with_table(document, self.rules),
                         "docs/architecture.md's Spelled once table is not docs/spelled-once.json's: run "
                         "scripts/architecture-table")


if __name__ == "__main__":
    unittest.main()
