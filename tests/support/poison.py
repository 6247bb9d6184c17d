"""Lines and frontmatter that break naive readers of peer content, shared by the reader fuzz and the CLI
tests: nesting 10^5 deep, huge and non-finite numbers, lone surrogates, duplicate keys, NaN/Infinity,
bad timestamps, a BOM, conflict markers, NUL and CR, a 2 MiB line; YAML alias bombs, deep flow nesting,
unsafe and odd tags, unhashable keys."""

from __future__ import annotations

from memsync.formats.jsonl.canonical import canonical_json

GOOD = canonical_json(
    {"id": "a1b2c3d4e5f6", "kind": "fact", "text": "ok", "created_at": "2026-11-01T00:00:00Z"}
)
HEADER = b'{"format":"agent-memory/0.1","created_at":"2026-11-01T00:00:00Z"}'

POISON_LINES = [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"id":"d","text":' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"id":"n","kind":"fact","text":"x","confidence":1e400,"created_at":"2026-11-01T00:00:00Z"}',
    b'{"id":"n","kind":"fact","text":"x","confidence":'
    + b"9" * 5000
    + b',"created_at":"2026-11-01T00:00:00Z"}',
    b'{"id":"s","kind":"fact","text":"\\ud800","created_at":"2026-11-01T00:00:00Z"}',
    b'{"id":"s","kind":"fact","text":"\\udc00\\ud83d","created_at":"2026-11-01T00:00:00Z"}',
    b'{"id":"k","kind":"fact","text":"a","text":"b","created_at":"2026-11-01T00:00:00Z"}',
    b'{"id":"c","kind":"fact","text":"x","confidence":NaN,"created_at":"2026-11-01T00:00:00Z"}',
    b'{"id":"c","kind":"fact","text":"x","confidence":-Infinity,"created_at":"2026-11-01T00:00:00Z"}',
    b'{"id":"t","kind":"fact","text":"x","created_at":"99999-01-01T00:00:00Z"}',
    b'{"id":"t","kind":"fact","text":"x","created_at":"2026-11-01T00:00:00+99:00"}',
    b'{"id":{"nested":1},"kind":"fact","text":"x","created_at":"2026-11-01T00:00:00Z"}',
    b'{"id":"e","deleted":true,"created_at":[1]}',
    b"\xff\xfe\x00{",
    b"\xef\xbb\xbf" + GOOD,
    b"<<<<<<< ours",
    b"=======",
    b"a\x00b\rc",
    b'"' + b"\\" * 1000,
    b"x" * ((1 << 20) + 1),
]
YAML_POISON = [
    "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
    "name: " + "[" * 50_000 + "]" * 50_000 + "\n",
    "name: {a: {b: {c: {d: {e: {f: {g: {h: {i: {j: {k: {l: {m: {n: {o: {p: {q: {r: 1}}}}}}}}}}}}}}}}}}\n",
    "name: !!python/object/apply:os.system ['true']\n",
    "name: !!binary aGVsbG8=\ndescription: !!set {a, b}\ntype: !!timestamp 2026-13-45\n",
    "? [unhashable, key]\n: value\n",
    'name: x\nname: y\ndescription: "\\ud800"\n',
    "metadata:\n  type: [1, 2]\n  node_type: {a: 1}\ntags: {x: [1, {y: 2}]}\ncreated: 99999-99-99\n",
    "description: " + "x" * 70_000 + "\n",
    "\t- tab\n  : odd\n",
]
