#!/usr/bin/env python3
"""Writes the admin API records' field tables and codecs from records.json.

usage: generate-records.py records.json OUTPUT_DIR

OUTPUT_DIR/common/api/recordtables.h holds every table (inline constexpr, for
the code that reads a record by hand); OUTPUT_DIR/common/api/recordcodecs.cpp
holds the functions each record's `codec` and each enum's `functions` list.
A file is rewritten only when its text changes, so a build that regenerates
them recompiles nothing it need not.
"""

import json
import pathlib
import re
import sys

EMPTY = {"written": "Written", "null": "Null", "left out": "LeftOut"}
CODECS = {"fromJson", "toJson"}


class SchemaError(Exception):
    pass


def camel(key):
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def table_name(type_name, suffix):
    parts = type_name.split("::")
    joined = "".join(part[:1].upper() + part[1:] for part in parts)
    return joined[:1].lower() + joined[1:] + suffix


def latin1(text):
    if not re.fullmatch(r"[ -~]*", text) or '"' in text or "\\" in text:
        raise SchemaError(f"{text!r}: keys and names are printable ASCII without quotes")
    return f'QLatin1StringView("{text}")'


def enum_table(type_name, enum):
    names = enum.get("names") or {}
    if not names:
        raise SchemaError(f"enum {type_name} names no values")
    if len(set(names.values())) != len(names):
        raise SchemaError(f"enum {type_name} gives two values one name")
    rows = "".join(
        f"    {{ {type_name}::{value}, {latin1(name)} }},\n" for value, name in names.items()
    )
    return (
        f"inline constexpr std::array<NamedValue<{type_name}>, {len(names)}> "
        f"{enum['table']} {{ {{\n{rows}}} }};\n"
    )


def field_row(record, key, field, schema):
    unknown = set(field) - {"member", "empty", "names", "required", "entries", "object"}
    if unknown:
        raise SchemaError(f"{record}.{key}: unknown {sorted(unknown)}")
    member = f"&{record}::{field.get('member', camel(key))}"
    if "names" in field:
        enum = schema["enums"].get(field["names"])
        if enum is None:
            raise SchemaError(f"{record}.{key}: no enum {field['names']}")
        presence = ", Presence::Required" if field.get("required") else ""
        return f"ChoiceField {{ {latin1(key)}, {member}, &{enum['table']}{presence} }}"
    for kind, row in (("entries", "ListField"), ("object", "ObjectField")):
        if kind in field:
            if field[kind] not in schema["records"]:
                raise SchemaError(f"{record}.{key}: no record {field[kind]}")
            return f"{row} {{ {latin1(key)}, {member}, &{table_name(field[kind], 'Fields')} }}"
    empty = field.get("empty", "written")
    if empty not in EMPTY:
        raise SchemaError(f"{record}.{key}: empty is one of {sorted(EMPTY)}")
    when = "" if empty == "written" else f", WhenEmpty::{EMPTY[empty]}"
    return f"Field {{ {latin1(key)}, {member}{when} }}"


def record_table(type_name, record, schema):
    fields = record.get("fields") or {}
    if not fields:
        raise SchemaError(f"record {type_name} has no fields")
    rows = "".join(
        f"    {field_row(type_name, key, field, schema)},\n" for key, field in fields.items()
    )
    about = f"// {record['about']}\n" if "about" in record else ""
    return f"{about}inline constexpr std::tuple {table_name(type_name, 'Fields')} {{\n{rows}}};\n"


def enum_functions(type_name, enum):
    table = f"tables::{enum['table']}"
    functions = enum.get("functions", [])
    out = f"QLatin1StringView {functions[0]}({type_name} value)\n{{\n"
    out += f"    return nameIn({table}, value);\n}}\n"
    if len(functions) > 1:
        out += f"\nstd::optional<{type_name}> {functions[1]}(QStringView name)\n{{\n"
        out += f"    return valueIn({table}, name);\n}}\n"
    return out


def record_functions(type_name, record):
    codec = record.get("codec", ["fromJson", "toJson"])
    if set(codec) - CODECS:
        raise SchemaError(f"record {type_name}: codec is some of {sorted(CODECS)}")
    if codec and "name" not in record:
        raise SchemaError(f"record {type_name}: a record with a codec has a name for errors")
    table = f"tables::{table_name(type_name, 'Fields')}"
    out = []
    if "fromJson" in codec:
        out.append(
            f"Result<{type_name}> {type_name}::fromJson(const QJsonObject &object)\n{{\n"
            f"    return readRecord<{type_name}>(object, {latin1(record['name'])}, {table});\n}}\n"
        )
    if "toJson" in codec:
        out.append(
            f"QJsonObject {type_name}::toJson() const\n{{\n"
            f"    return writeRecord(*this, {table});\n}}\n"
        )
    return out


def generate(schema):
    notice = "// Written by common/api/generate-records.py from common/api/records.json.\n"
    includes = "".join(f'#include "{header}"\n' for header in schema["headers"])
    tables = [enum_table(name, enum) for name, enum in schema["enums"].items()]
    tables += [record_table(name, record, schema) for name, record in schema["records"].items()]
    header = (
        f"#pragma once\n\n{notice}\n"
        f'#include "common/api/recordschema.h"\n\n{includes}\n'
        "namespace cloop::api::tables {\n\n" + "\n".join(tables) + "\n} // namespace cloop::api::tables\n"
    )
    functions = [enum_functions(name, enum) for name, enum in schema["enums"].items()]
    for name, record in schema["records"].items():
        functions += record_functions(name, record)
    source = (
        f"{notice}\n"
        '#include "common/api/recordtables.h"\n\n'
        "namespace cloop::api {\n\n" + "\n".join(functions) + "\n} // namespace cloop::api\n"
    )
    return header, source


def write_if_changed(path, text):
    if path.exists() and path.read_text() == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        schema = json.loads(pathlib.Path(argv[1]).read_text())
        header, source = generate(schema)
    except (OSError, ValueError, KeyError, SchemaError) as problem:
        print(f"generate-records: {argv[1]}: {problem}", file=sys.stderr)
        return 1
    out = pathlib.Path(argv[2]) / "common" / "api"
    write_if_changed(out / "recordtables.h", header)
    write_if_changed(out / "recordcodecs.cpp", source)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
