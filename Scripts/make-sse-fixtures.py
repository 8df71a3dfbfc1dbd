#!/usr/bin/env python3
"""Turns the recorded Responses traffic in Tests/CodexTransportTests/Fixtures/responses into plain
SSE byte streams plus an independent expectation per stream, following the conversion rules of that
folder's README.md.

Writes Tests/CodexTransportTests/Fixtures/streams/<name>.sse and <name>.expected.json, where the
expectation lists, for every event, its `event:` field, the `type` inside its data JSON and its
`sequence_number` (computed here with Python's own SSE split and json module, so the Swift framer and
decoder are checked against a second implementation), plus a manifest.json with each stream's HTTP
status and content type. Run it again after changing the recorded files; the outputs are committed.
"""
import json
import pathlib
import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCE = ROOT / "Tests/CodexTransportTests/Fixtures/responses"
OUT = ROOT / "Tests/CodexTransportTests/Fixtures/streams"


def from_chunks(path):
    """vercel *.chunks.txt: one event JSON per line; split after each response.completed."""
    streams, current = [], []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            continue
        event_type = json.loads(line)["type"]
        current.append(f"event: {event_type}\ndata: {line}\n\n")
        if event_type in ("response.completed", "response.failed", "response.incomplete"):
            streams.append("".join(current))
            current = []
    if current:
        streams.append("".join(current))
    return streams


def expectation(text):
    """Independent split: blank-line separated blocks of `field: value` lines (the fixtures use LF)."""
    events = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        fields, data = {}, []
        for line in block.split("\n"):
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data":
                data.append(value)
            else:
                fields[name] = value
        if not data:
            continue
        payload = json.loads("\n".join(data))
        events.append({
            "event": fields.get("event", "message"),
            "type": payload.get("type"),
            "sequence_number": payload.get("sequence_number"),
        })
    return events


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    streams = {}
    streams["codex-cli-minimal"] = ((SOURCE / "codex-cli_responses_fixture.sse").read_text(encoding="utf-8") + "\n\n", 200)
    for name in ["StreamingResponses", "FunctionCallStreamingWorks", "WebSearchCallStreaming"]:
        record = json.loads((SOURCE / f"dotnet-{name}.json").read_text(encoding="utf-8"))
        for entry in record["Entries"]:
            if isinstance(entry["ResponseBody"], list):
                streams[f"dotnet-{name}"] = ("".join(entry["ResponseBody"]), entry["StatusCode"])
    for name in ["error", "image-generation-tool", "phase", "reasoning-encrypted-content"]:
        parts = from_chunks(SOURCE / f"vercel-openai-{name}.1.chunks.txt")
        for index, part in enumerate(parts):
            suffix = f"-{index + 1}" if len(parts) > 1 else ""
            streams[f"vercel-{name}{suffix}"] = (part, 200)
    cassette = yaml.safe_load((SOURCE / "pydantic-ai-streaming-function-call-gpt5.yaml").read_text(encoding="utf-8"))
    for interaction in cassette["interactions"]:
        body = interaction["response"].get("body", {}).get("string")
        if body:
            streams["pydantic-streaming-function-call"] = (body, interaction["response"]["status"]["code"])

    manifest = []
    for name, (text, status) in sorted(streams.items()):
        (OUT / f"{name}.sse").write_bytes(text.encode("utf-8"))
        events = expectation(text.replace("\r\n", "\n"))
        (OUT / f"{name}.expected.json").write_text(json.dumps(events, indent=1) + "\n", encoding="utf-8")
        manifest.append({"name": name, "status": status, "content_type": "text/event-stream; charset=utf-8", "events": len(events)})
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    for entry in manifest:
        print(f"{entry['name']}: {entry['events']} events")


if __name__ == "__main__":
    main()
