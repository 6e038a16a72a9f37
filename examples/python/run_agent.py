#!/usr/bin/env python3
"""Talk to Claude with a memfs store as its memory, through the Python SDK's tool runner.

    pip install anthropic==2.10.0
    export ANTHROPIC_API_KEY=...            # ANTHROPIC_BASE_URL too, for another endpoint
    python examples/python/run_agent.py "Help me respond to this customer service ticket."

Prints Claude's final answer (its text blocks) on stdout. `--store`, `--key-file` and `--dialect`
are passed to `memfs exec` (without them: memfs's default store, created with its key file on
first use); `--memfs` is the binary to run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from anthropic import Anthropic

sys.path.insert(0, str(Path(__file__).resolve().parent))
from memfs_memory_tool import MemfsError, MemfsMemoryTool  # noqa: E402 - next to this script


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prompt", nargs="?", default="Help me respond to this customer service ticket.")
    parser.add_argument("--model", default="claude-sonnet-5-5", help="the model (default: %(default)s)")
    parser.add_argument("--max-tokens", type=int, default=2048, help="per reply (default: %(default)s)")
    parser.add_argument("--store", help="the memfs store URL (default: memfs's default store)")
    parser.add_argument("--key-file", help="the store's key file")
    parser.add_argument(
        "--dialect",
        default="python-sdk",
        choices=["python-sdk", "spec"],
        help="whose strings memfs answers with (default: %(default)s, those of the SDK's own local tool)",
    )
    parser.add_argument("--memfs", default="memfs", help="the memfs binary (default: %(default)s)")
    parser.add_argument(
        "--max-iterations", type=int, default=50, help="most requests the tool runner makes (default: %(default)s)"
    )
    args = parser.parse_args()

    client = Anthropic()  # reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL
    try:
        # Opens the store now: a missing key file or a wrong passphrase is said before any request.
        memory = MemfsMemoryTool(store=args.store, key_file=args.key_file, dialect=args.dialect, memfs=args.memfs)
    except MemfsError as e:
        print(f"run_agent.py: {e}", file=sys.stderr)
        return 1
    with memory:
        runner = client.beta.messages.tool_runner(
            model=args.model,
            max_tokens=args.max_tokens,
            tools=[memory],
            messages=[{"role": "user", "content": args.prompt}],
            betas=["context-management-2025-06-27"],
            max_iterations=args.max_iterations,
        )
        final = runner.until_done()
    print("".join(block.text for block in final.content if block.type == "text"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
