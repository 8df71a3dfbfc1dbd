#!/usr/bin/env python3
"""Regenerates the seed corpora under Fuzz/corpus/ from the repository's test fixtures.

json       : the JSON Schema Test Suite files and expected-event JSON of Tests/*/Fixtures, plus every
             distinct `data:` payload of the SSE fixtures (small ones only).
schema     : one seed per (schema, instance) pair of the JSON Schema Test Suite files:
             <schema JSON> NUL <instance JSON>.
sse        : the SSE fixtures whole (streams, malformed), each prefixed by 8 chunking bytes.
events     : the SSE fixtures whole (decoded event by event by the harness).
structured : text framed like a structured turn, built from the test suite's valid instances.
Run from the repository root: python3 Fuzz/make-corpus.py
"""
import hashlib, json, os, glob

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(root)
LIMIT = 16 * 1024

def put(target, data):
    if len(data) > LIMIT:
        return
    folder = os.path.join("Fuzz", "corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)

suite = sorted(glob.glob("Tests/CodexSchemaTests/Fixtures/jsonschema/supported/*.json"))
sse = sorted(glob.glob("Tests/CodexTransportTests/Fixtures/streams/*.sse") + glob.glob("Tests/CodexTransportTests/Fixtures/malformed/*.sse"))

for path in suite:
    put("json", open(path, "rb").read())
    for group in json.load(open(path)):
        schema = json.dumps(group["schema"]).encode()
        put("json", schema)
        for test in group["tests"]:
            instance = json.dumps(test["data"]).encode()
            put("schema", schema + b"\0" + instance)
            if test.get("valid"):
                text = b"Here you go.\n<codexkit_structured_output>\n" + instance + b"\n</codexkit_structured_output>\nDone."
                put("structured", schema + b"\0" + text)
for path in sorted(glob.glob("Tests/CodexTransportTests/Fixtures/streams/*.expected.json")):
    put("json", open(path, "rb").read())
payloads = set()
for path in sse:
    raw = open(path, "rb").read()
    put("sse", bytes([3, 17, 1, 250, 64, 9, 2, 128]) + raw)
    put("events", raw)
    for line in raw.split(b"\n"):
        if line.startswith(b"data:"):
            payloads.add(line[5:].strip())
for payload in sorted(payloads)[:200]:
    put("json", payload)
