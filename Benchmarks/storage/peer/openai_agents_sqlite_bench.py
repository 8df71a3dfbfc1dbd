#!/usr/bin/env python3
"""The peer for `codexctl bench storage`: openai-agents' SQLiteSession (WAL; Python's sqlite3 keeps
SQLite's default synchronous=FULL) appending the same kinds of ~300-byte items one per add_items call
and 10 per call, then restoring a 10,000-item session with get_items().

    python3 -m venv /tmp/agents-venv && /tmp/agents-venv/bin/pip install openai-agents
    /tmp/agents-venv/bin/python openai_agents_sqlite_bench.py [--items 20000] [--restore 10000]
"""
import argparse, asyncio, os, statistics, tempfile, time
from agents import SQLiteSession


def item(i):
    kind = i % 4
    if kind == 0:
        return {"role": "user", "content": f"Where is my order A-{i}? It was due yesterday."}
    if kind == 1:
        return {"type": "function_call", "call_id": f"call_{i}", "name": "lookup_order",
                "arguments": f'{{"order_id":"A-{i}","include":"tracking"}}'}
    if kind == 2:
        return {"type": "function_call_output", "call_id": f"call_{i}",
                "output": f"Order A-{i}: shipped, carrier DHL, arriving Tuesday."}
    return {"type": "message", "role": "assistant", "id": f"msg_{i}", "status": "completed",
            "content": [{"type": "output_text", "text": f"Your order A-{i} shipped and arrives Tuesday.", "annotations": []}]}


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=20000)
    parser.add_argument("--restore", type=int, default=10000)
    args = parser.parse_args()
    items = [item(i) for i in range(args.items)]
    directory = tempfile.mkdtemp(prefix="agents-sqlite-bench-")
    for per in (1, 10):
        session = SQLiteSession(f"bench-{per}", os.path.join(directory, f"peer-{per}.db"))
        start = time.perf_counter()
        for i in range(0, len(items), per):
            await session.add_items(items[i:i + per])
        elapsed = time.perf_counter() - start
        print(f"append [{per} item(s) per call]: {len(items) / elapsed:,.0f} items/s")
        if per == 10:
            times = []
            for _ in range(5):
                start = time.perf_counter()
                restored = await session.get_items(limit=args.restore)
                times.append(time.perf_counter() - start)
                assert len(restored) == min(args.restore, len(items))
            print(f"restore [{args.restore}-item session]: {statistics.median(times) * 1000:.1f} ms")
        session.close()


asyncio.run(main())
