"""Peer benchmark: streamed text-delta events/s through the openai-agents SDK runtime.

Pairs with the "events" figure of CodexKit's `codexctl bench runtime` (N deltas from a fixture
backend through AgentRuntime.stream to the consumer).

Method (per run):
  * A local fake `agents.Model` (no network) streams one plain-text reply as Responses API events:
    response.created, output_item.added, content_part.added, N x output_text.delta (one character
    each), output_text.done, content_part.done, output_item.done, response.completed (carrying a
    full `Response` with the final `ResponseOutputMessage`). All event objects, including the N
    delta events, are built before the clock starts; the model only yields them.
  * Runner: time from `Runner.run_streamed(agent, "bench")` until `stream_events()` is exhausted,
    counting `RawResponsesStreamEvent`s whose `data` is a `ResponseTextDeltaEvent` (must equal N).
  * Baseline: the same N pre-built delta objects pass through a bare unbounded `asyncio.Queue`
    (producer task `await q.put(...)`, consumer `await q.get()`), timed the same way.
  Tracing is disabled. The JSON line reports medians over the runs.

Run:
  /tmp/agents-venv/bin/python Benchmarks/runtime/peer/openai_agents_stream_bench.py [--deltas N] [--runs R]
"""
import argparse, asyncio, json, platform, statistics, time
from collections import Counter
from importlib.metadata import version

from agents import Agent, Model, ModelResponse, RawResponsesStreamEvent, RunConfig, Runner, Usage
from agents import set_tracing_disabled
from openai.types.responses import (
    Response, ResponseCompletedEvent, ResponseContentPartAddedEvent, ResponseContentPartDoneEvent,
    ResponseCreatedEvent, ResponseOutputItemAddedEvent, ResponseOutputItemDoneEvent,
    ResponseOutputMessage, ResponseOutputText, ResponseTextDeltaEvent, ResponseTextDoneEvent,
)

ITEM_ID, RESP_ID = "msg_bench", "resp_bench"


def message(status, content):
    return ResponseOutputMessage(id=ITEM_ID, type="message", role="assistant", status=status, content=content)


def response(status, output):
    return Response(id=RESP_ID, created_at=0, model="fake", object="response", output=output, tool_choice="none",
                    tools=[], top_p=None, parallel_tool_calls=False, status=status)


def build_events(n):
    """All stream events for one reply of n one-character deltas (built outside the timed region)."""
    text = "x" * n
    part0 = ResponseOutputText(type="output_text", text="", annotations=[])
    part = ResponseOutputText(type="output_text", text=text, annotations=[])
    msg = message("completed", [part])
    final = response("completed", [msg])
    loc = dict(item_id=ITEM_ID, output_index=0, content_index=0)
    deltas = [ResponseTextDeltaEvent(type="response.output_text.delta", delta="x", logprobs=[],
                                     sequence_number=3 + i, **loc) for i in range(n)]
    s = 3 + n
    head = [ResponseCreatedEvent(type="response.created", response=response("in_progress", []), sequence_number=0),
            ResponseOutputItemAddedEvent(type="response.output_item.added", item=message("in_progress", []),
                                         output_index=0, sequence_number=1),
            ResponseContentPartAddedEvent(type="response.content_part.added", part=part0, sequence_number=2, **loc)]
    tail = [ResponseTextDoneEvent(type="response.output_text.done", text=text, logprobs=[], sequence_number=s, **loc),
            ResponseContentPartDoneEvent(type="response.content_part.done", part=part, sequence_number=s + 1, **loc),
            ResponseOutputItemDoneEvent(type="response.output_item.done", item=msg, output_index=0,
                                        sequence_number=s + 2),
            ResponseCompletedEvent(type="response.completed", response=final, sequence_number=s + 3)]
    return head + deltas + tail, deltas, final


class FakeStreamingModel(Model):
    """Yields pre-built events; no I/O and no awaits between events (like a fully buffered socket)."""

    def __init__(self, events, final):
        self.events, self.final = events, final

    async def get_response(self, *args, **kwargs):
        return ModelResponse(output=self.final.output, usage=Usage(), response_id=RESP_ID)

    async def stream_response(self, *args, **kwargs):
        for ev in self.events:
            yield ev


async def run_sdk(n):
    events, _, final = build_events(n)
    agent = Agent(name="bench", instructions="bench", model=FakeStreamingModel(events, final))
    kinds, count, backlog = Counter(), 0, None
    t0 = time.perf_counter()
    result = Runner.run_streamed(agent, "bench", run_config=RunConfig(tracing_disabled=True))
    async for ev in result.stream_events():
        if isinstance(ev, RawResponsesStreamEvent) and isinstance(ev.data, ResponseTextDeltaEvent):
            count += 1
            if backlog is None:  # how many events were already queued when the first delta arrived
                backlog = result._event_queue.qsize()
        else:
            kinds[ev.type if not isinstance(ev, RawResponsesStreamEvent) else ev.data.type] += 1
    dt = time.perf_counter() - t0
    assert count == n, (count, n)
    assert result.final_output == "x" * n
    return n / dt, kinds, backlog


async def run_queue(n):
    _, deltas, _ = build_events(n)
    q, done, count = asyncio.Queue(), object(), 0

    async def producer():
        for ev in deltas:
            await q.put(ev)
        await q.put(done)

    t0 = time.perf_counter()
    task = asyncio.create_task(producer())
    while (ev := await q.get()) is not done:
        count += isinstance(ev, ResponseTextDeltaEvent)
    await task
    dt = time.perf_counter() - t0
    assert count == n, (count, n)
    return n / dt


async def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deltas", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    set_tracing_disabled(True)
    sdk, base = [], []
    for i in range(a.runs):
        rate, kinds, backlog = await run_sdk(a.deltas)
        sdk.append(rate)
        base.append(await run_queue(a.deltas))
        print(f"# run {i + 1}: runner {rate:,.0f} ev/s, queue {base[-1]:,.0f} ev/s, "
              f"queued-at-first-delta {backlog}, other events {dict(kinds)}", flush=True)
    s, b = statistics.median(sdk), statistics.median(base)
    print(json.dumps({"bench": "openai-agents-runner-stream", "sdk": "openai-agents", "sdk_version":
                      version("openai-agents"), "openai_version": version("openai"),
                      "python": platform.python_version(), "deltas": a.deltas, "runs": a.runs,
                      "runner_events_per_s": round(s), "queue_events_per_s": round(b),
                      "runner_over_queue": round(s / b, 4),
                      "runner_runs": [round(x) for x in sdk], "queue_runs": [round(x) for x in base]}))
    print(f"openai-agents {version('openai-agents')} (Python {platform.python_version()}): "
          f"{s:,.0f} text-delta events/s through Runner.run_streamed vs {b:,.0f}/s through a bare "
          f"asyncio.Queue ({s / b:.1%}), median of {a.runs} x {a.deltas:,} deltas")


if __name__ == "__main__":
    asyncio.run(main())
