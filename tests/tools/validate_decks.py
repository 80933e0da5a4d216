#!/usr/bin/python3
"""Validates decks against schemas/deck.schema.json with an independent validator.

usage: validate_decks.py SCHEMA DECK...   Prints one line per deck; exit 0 when all are valid,
1 when one is not, 77 when the jsonschema module is missing (Debian: python3-jsonschema).
"""
import json
import sys
import tomllib

try:
    import jsonschema
except ImportError:
    print("jsonschema is not installed (apt-get install python3-jsonschema)")
    sys.exit(77)

schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
bad = 0
for path in sys.argv[2:]:
    with open(path, "rb") as f:
        deck = tomllib.load(f)
    errors = sorted(validator.iter_errors(deck), key=lambda e: list(e.path))
    for e in errors:
        print(f"{path}: {'/'.join(map(str, e.path))}: {e.message}")
    if not errors:
        print(f"{path}: valid")
    bad += bool(errors)
sys.exit(1 if bad else 0)
