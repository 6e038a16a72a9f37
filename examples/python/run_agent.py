#!/usr/bin/env python3
"""Talk to Claude with a memfs store as its memory, through the Python SDK's tool runner.

    pip install memfs-store anthropic      # the wheel: scripts/test-packages.sh builds one
    export ANTHROPIC_API_KEY=...            # ANTHROPIC_BASE_URL too, for another endpoint
    python examples/python/run_agent.py --store ~/memories --key-file ~/.memfs.key "Remember that I prefer tea."

Prints Claude's final answer (its text blocks) on stdout. A key file that does not exist yet
makes a new store with it; `--passphrase-env VAR` unlocks with a passphrase instead.
"""

from __future__ import annotations

import argparse
import os
import sys

from anthropic import Anthropic

from memfs import MemfsError, MemoryTool, Store


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prompt", nargs="?", default="Help me respond to this customer service ticket.")
    parser.add_argument("--store", required=True, help="the store: a folder, or s3://, gs://, az://, memory://")
    parser.add_argument("--key-file", help="its key file (created with the store if neither exists)")
    parser.add_argument("--passphrase-env", help="the environment variable holding its passphrase")
    parser.add_argument("--model", default="claude-sonnet-5-5", help="the model (default: %(default)s)")
    parser.add_argument("--max-tokens", type=int, default=2048, help="per reply (default: %(default)s)")
    args = parser.parse_args()
    passphrase = os.environ[args.passphrase_env] if args.passphrase_env else None

    try:
        # Opened now: a wrong key file or passphrase is said before any request. A key file
        # that does not exist yet makes a new store (and the key file).
        if args.key_file and not os.path.exists(args.key_file):
            store = Store.init(args.store, key_file=args.key_file)
        else:
            store = Store.open(args.store, key_file=args.key_file, passphrase=passphrase)
    except MemfsError as e:
        print(f"run_agent.py: {e}", file=sys.stderr)
        return 1
    client = Anthropic()  # reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL
    with store:
        runner = client.beta.messages.tool_runner(
            model=args.model,
            max_tokens=args.max_tokens,
            tools=[MemoryTool(store)],
            messages=[{"role": "user", "content": args.prompt}],
        )
        final = runner.until_done()
    print("".join(block.text for block in final.content if block.type == "text"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
