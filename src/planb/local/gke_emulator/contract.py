"""A JSON body against a discovery document's schema, as Google's JSON front end reads it.

``conform(api, schema_id, body)`` walks the body along the schema (``$ref`` resolved through
``planb.local.gke_emulator.discovery``) and returns the body in Google's canonical JSON form with every violation found:

* a field the schema does not list: ``Invalid JSON payload received. Unknown name "fooBar" at 'node_pool':
  Cannot find field.`` (no `` at '...'`` at the top level);
* a list for a field that is not repeated: ``... Unknown name "x" at 'node_pool': Proto field is not repeating,
  cannot start list.``; an object for a scalar: ``Invalid value at 'node_pool' (name), Starting an object on a
  scalar field``;
* a value of the wrong type: ``Invalid value at 'node_pool.initial_node_count' (TYPE_INT32), "abc"``, the value
  as JSON; an enum value the document does not list: ``Invalid value at '...' (TYPE_ENUM), "FOO"``.

Field paths are the proto field names (snake_case) with list indices, as Google writes them; a map entry is
``labels[0].value``; several violations are one message, a line each, with a ``google.rpc.BadRequest``
detail naming each field. The wording is protobuf's JSON-to-proto converter, which Google's JSON front end
runs: protocolbuffers/protobuf ``src/google/protobuf/util/internal/proto_writer.cc`` (``ProtoWriter::Lookup``
"Cannot find field.", ``ProtoWriter::BeginNamed`` "Proto field is not repeating, cannot start list.") and
``protostream_objectwriter.cc`` (``StartObject`` on a scalar field). Google answers recorded in public:
github.com/danny-avila/LibreChat/issues/11761 (unknown names, with ``fieldViolations``); a Fitness API answer
"Invalid value at 'aggregate_by[0]' (data_type_name), Starting an object on a scalar field\nInvalid value at
'end_time_millis' (TYPE_INT64), ..."; and for GKE itself GoogleCloudPlatform/k8s-config-connector
``mockgcp/mockcontainer/utils.go:checkInvalidOSVersion`` ("Invalid value at
'node_pool.config.windows_node_config.os_version' (type.googleapis.com/...), ...", which it says "is rejected
with 400 Bad Request by real GKE"). Google names an enum's or message's proto type in that parenthesis; the
discovery documents do not carry it, so the emulator writes ``TYPE_ENUM`` / ``TYPE_MESSAGE`` there
(docs/local-mode.md lists it).

What is accepted is protobuf's JSON reading (``src/google/protobuf/util/internal/datapiece.cc``): an integer as
a JSON number (a float only when it is whole) or a string of decimal digits, within the range of its
``format`` (int32, uint32, int64, uint64); a boolean as true/false or the strings safe_strtob reads
(``DataPiece::ToBool``: true/t/yes/y/1, false/f/no/n/0, any case); a number as a JSON number or a numeric
string; a string only as a JSON string (``DataPiece::ToString``); ``null`` as the field left unset; a field
by its JSON name or its proto name (proto3's JSON mapping has parsers accept both). An enum given as its number
is refused: the documents do not carry the numbers (Google accepts it). A ``google-duration`` or
``google-datetime`` string must be a Duration ("86400s") or a Timestamp (RFC 3339), the JSON forms of those
well-known types, named in the error by their type URL as k8s-config-connector's recorded answer names a type.
The canonical form (what the emulator stores and answers) is proto3's JSON mapping
(https://protobuf.dev/programming-guides/json/): int64/uint64 as JSON strings, int32/uint32 as numbers.

An output-only property (``"readOnly": true`` in the document: a pool's ``status``, ``statusMessage``,
``etag``, ``conditions``, a cluster's ``endpoint``) in a request body (``request=True``) is read (a wrong type
is still a violation, as protobuf parses it) and then left out of the canonical body, so the emulator stores and
answers its own: AIP-203 has the server clear such a field of a request and raise no error for it
(https://google.aip.dev/203, "Output only"). That is Google's design rule for its APIs, and the documents mark the
fields; no Google page or report shows what GKE itself answers. The emulator writes no ``etag`` of its own and
checks none (GKE answers an update whose etag is stale with ABORTED): docs/local-mode.md lists it.

With ``output=True`` nothing is converted: a value not already in canonical form is a violation too (what the
emulator stores and answers must be; ``planb.local.gke_emulator.conformance`` walks them).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from planb.local.gke_emulator import discovery

Body = dict[str, Any]

_INT_RANGES = {
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint64": (0, 2**64 - 1),
}
_TYPE_NAMES = {
    "int32": "TYPE_INT32",
    "uint32": "TYPE_UINT32",
    "int64": "TYPE_INT64",
    "uint64": "TYPE_UINT64",
    "double": "TYPE_DOUBLE",
    "float": "TYPE_FLOAT",
}
#: datapiece.cc DataPiece::ToBool reads a string with safe_strtob: these spellings, in any case.
_TRUE, _FALSE = {"true", "t", "yes", "y", "1"}, {"false", "f", "no", "n", "0"}
_DIGITS = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|NaN|-?Infinity")
#: The well-known types behind the documents' string formats, and their JSON forms (proto3's JSON mapping,
#: https://protobuf.dev/programming-guides/json/: Duration "1.000340012s", Timestamp RFC 3339 "Z" or an offset).
_WELL_KNOWN = {
    "google-duration": ("type.googleapis.com/google.protobuf.Duration", re.compile(r"-?[0-9]+(\.[0-9]{1,9})?s")),
    "google-datetime": (
        "type.googleapis.com/google.protobuf.Timestamp",
        re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})"),
    ),
}


@dataclass(frozen=True)
class Violation:
    """One field a body gets wrong: where (Google's field path, "" for the top level) and Google's message."""

    field: str
    description: str


def snake(name: str) -> str:
    """A JSON (lowerCamel) field name as its proto field name: diskSizeGb -> disk_size_gb."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _at(path: str) -> str:
    return f" at '{path}'" if path else ""


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


class _Walk:
    def __init__(self, api: str, output: bool, request: bool = False) -> None:
        self.api = api
        self.output = output
        self.request = request
        self.found: list[Violation] = []

    def fail(self, field: str, description: str) -> None:
        self.found.append(Violation(field, description))

    def invalid(self, path: str, type_name: str, value: Any, why: str = "") -> None:
        self.fail(path, f"Invalid value at '{path}' ({type_name}), {json.dumps(value)}{why}")

    def message(self, value: Body, spec: Body, path: str) -> Body:
        properties: Body = spec.get("properties") or {}
        out: Body = {}
        for key, item in value.items():
            name = key if key in properties or self.output else _camel(key)
            field = properties.get(name)
            if field is None:
                self.fail(path, f'Invalid JSON payload received. Unknown name "{key}"{_at(path)}: Cannot find field.')
            elif item is not None:
                converted = self.value(item, field, path, name)
                if not (self.request and field.get("readOnly")):
                    out[name] = converted
            elif self.output:
                self.invalid(_join(path, snake(name)), "null", item, ": Google leaves an unset field out")
        return out

    def value(self, item: Any, field: Body, parent: str, name: str, path: str | None = None) -> Any:
        path = path if path is not None else _join(parent, snake(name))
        ref = field.get("$ref")
        kind = "message" if ref else field.get("type")
        if kind == "any":
            return item
        if isinstance(item, list) and kind != "array":
            self.fail(
                parent,
                f'Invalid JSON payload received. Unknown name "{name}"{_at(parent)}: Proto field is not repeating, '
                "cannot start list.",
            )
            return item
        if kind == "message":
            if isinstance(item, dict):
                return self.message(item, discovery.schema(self.api, str(ref)), path)
            self.invalid(path, "TYPE_MESSAGE", item)
            return item
        if kind == "array":
            if not isinstance(item, list):
                self.invalid(path, "TYPE_REPEATED", item)
                return item
            items = field.get("items") or {}
            return [self.value(x, items, parent, name, f"{path}[{i}]") for i, x in enumerate(item)]
        if kind == "object":
            if not isinstance(item, dict):
                self.invalid(path, "TYPE_MESSAGE", item)
                return item
            if "additionalProperties" not in field:
                return self.message(item, field, path)
            entries = field["additionalProperties"]
            return {
                k: self.value(v, entries, parent, name, f"{path}[{i}].value") for i, (k, v) in enumerate(item.items())
            }
        if isinstance(item, dict):
            self.fail(parent, f"Invalid value at '{parent}' ({snake(name)}), Starting an object on a scalar field")
            return item
        return self.scalar(item, field, str(kind), path)

    def scalar(self, item: Any, field: Body, kind: str, path: str) -> Any:
        fmt = str(field.get("format") or ("int32" if kind == "integer" else "double" if kind == "number" else ""))
        if fmt in _INT_RANGES and kind in ("string", "integer"):
            return self.integer(item, fmt, path)
        if kind == "boolean":
            if isinstance(item, bool):
                return item
            if not self.output and isinstance(item, str) and item.lower() in _TRUE | _FALSE:
                return item.lower() in _TRUE
            self.invalid(path, "TYPE_BOOL", item)
            return item
        if kind == "number":
            if isinstance(item, (int, float)) and not isinstance(item, bool):
                return item
            if not self.output and isinstance(item, str) and _NUMBER.fullmatch(item):
                return float(item)
            self.invalid(path, _TYPE_NAMES.get(fmt, "TYPE_DOUBLE"), item)
            return item
        if "enum" in field:
            if not isinstance(item, str) or item not in field["enum"]:
                self.invalid(path, "TYPE_ENUM", item)
            return item
        if not isinstance(item, str):
            self.invalid(path, "TYPE_STRING", item)
        elif fmt in _WELL_KNOWN and not _WELL_KNOWN[fmt][1].fullmatch(item):
            self.invalid(path, _WELL_KNOWN[fmt][0], item)
        return item

    def integer(self, item: Any, fmt: str, path: str) -> Any:
        as_string = fmt in ("int64", "uint64")
        low, high = _INT_RANGES[fmt]
        whole = isinstance(item, float) and item.is_integer()
        digits = isinstance(item, str) and _DIGITS.fullmatch(item) is not None
        readable = (isinstance(item, int) and not isinstance(item, bool)) or whole or digits
        number = int(item) if readable else None
        if number is None or not low <= number <= high:
            self.invalid(path, _TYPE_NAMES[fmt], item)
            return item
        if self.output and (isinstance(item, str) != as_string or isinstance(item, float)):
            kind = "a JSON string" if as_string else "a JSON number"
            self.invalid(path, _TYPE_NAMES[fmt], item, f": Google answers {fmt} fields as {kind}")
        return str(number) if as_string else number


def conform(
    api: str, schema_id: str, body: Any, root: str = "", output: bool = False, request: bool = False
) -> tuple[Any, list[Violation]]:
    """(the body in canonical JSON form, its violations) against the API's schema ``schema_id``.

    ``root`` is the field path of the body itself ("" when the body is the request message; Compute Engine's
    body is the request's ``resource``). With ``output``, nothing is converted and non-canonical values count.
    With ``request``, output-only properties are left out of the canonical body (a client's request).
    """
    walk = _Walk(api, output, request)
    spec = discovery.schema(api, schema_id)
    if not isinstance(body, dict):
        walk.invalid(root, "TYPE_MESSAGE", body)
        return body, walk.found
    canonical = walk.message(body, spec, root)
    return canonical, walk.found


def body_root(api: str) -> str:
    """The field path Google gives a request body of the API: Compute Engine names it ``resource`` (its own
    messages say "Invalid value for field 'resource.name'"); GKE's and Service Usage's body is the request."""
    return "resource" if api == "compute" else ""


def bad_request(violations: list[Violation]) -> Body:
    """Google's ``google.rpc.BadRequest`` error detail for the violations."""
    return {
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        "fieldViolations": [
            {"field": v.field, "description": v.description} if v.field else {"description": v.description}
            for v in violations
        ],
    }
