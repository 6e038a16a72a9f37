/**
 * A store that cannot open, through `memfsMemoryTool`, for scripts/test-sdk-adapters.sh: prints
 * one JSON line per step: what `ready()` rejects with, then (on a new tool that skipped it) what
 * the SDK's `runRunnableTool` gives the model for two calls, then `close()` twice. Flags as
 * run-commands.ts: --store, --key-file, --memfs.
 */

import { parseArgs } from 'node:util';

import { runRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';

import { memfsMemoryTool } from '../memfs-memory-tool.ts';

const { values } = parseArgs({
  options: {
    store: { type: 'string' },
    'key-file': { type: 'string' },
    memfs: { type: 'string', default: 'memfs' },
  },
});
const options = { store: values.store, keyFile: values['key-file'], memfs: values.memfs };
const out = (value: unknown) => process.stdout.write(JSON.stringify(value) + '\n');

const first = memfsMemoryTool(options);
try {
  await first.ready();
  out({ ready: 'resolved' });
} catch (e) {
  out({ ready: `${(e as Error).name}: ${(e as Error).message}` });
}
await first.close();

const second = memfsMemoryTool(options);
for (const n of [1, 2]) {
  const input = { command: 'view', path: '/memories' };
  const toolUse = { type: 'tool_use' as const, id: `toolu_test_${n}`, name: 'memory', input };
  const { content, isError } = await runRunnableTool(second, input, { toolUse, toolUseBlock: toolUse });
  out({ content, is_error: isError });
}
await second.close();
await second.close();
out({ closed: 2 });
