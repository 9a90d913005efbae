#!/usr/bin/env python3
"""Checks the JSON on stdin against one definition of a JSON schema.

    validate-json.py SCHEMA DEFINITION < instance.json

Exit 0 when it conforms, 1 with the reason when it does not, 2 when the
schema or the instance cannot be read, 3 when python3-jsonschema is missing.
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed (scripts/install-deps installs it)", file=sys.stderr)
    sys.exit(3)

try:
    with open(sys.argv[1], encoding="utf-8") as file:
        schema = json.load(file)
    instance = json.load(sys.stdin)
except (OSError, ValueError, IndexError) as error:
    print(f"cannot read: {error}", file=sys.stderr)
    sys.exit(2)

wanted = dict(schema)
wanted["$ref"] = "#/$defs/" + sys.argv[2]
validator = jsonschema.Draft202012Validator(wanted, format_checker=jsonschema.FormatChecker())
errors = sorted(validator.iter_errors(instance), key=lambda error: list(error.path))
for error in errors:
    print("/".join(str(part) for part in error.path) + ": " + error.message, file=sys.stderr)
sys.exit(1 if errors else 0)
