/**
 * Runs memory-tool inputs through `memfsMemoryTool` as the SDK's tool runner does
 * (`runRunnableTool`: parse, run, and a thrown error turned into the result content), for
 * scripts/test-sdk-adapters.sh: one JSON input per stdin line, one `{"content", "is_error"}` line
 * out. Flags as run-agent.ts: --store, --key-file, --dialect, --memfs.
 */

import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

import { runRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';

import { memfsMemoryTool } from '../memfs-memory-tool.ts';

const { values } = parseArgs({
  options: {
    store: { type: 'string' },
    'key-file': { type: 'string' },
    dialect: { type: 'string', default: 'spec' },
    memfs: { type: 'string', default: 'memfs' },
  },
});
const memory = memfsMemoryTool({
  store: values.store,
  keyFile: values['key-file'],
  dialect: values.dialect as 'spec' | 'python-sdk',
  memfs: values.memfs,
});
let n = 0;
for await (const line of createInterface({ input: process.stdin })) {
  const input = JSON.parse(line);
  const toolUse = { type: 'tool_use' as const, id: `toolu_test_${++n}`, name: 'memory', input };
  const { content, isError } = await runRunnableTool(memory, input, { toolUse, toolUseBlock: toolUse });
  process.stdout.write(JSON.stringify({ content, is_error: isError }) + '\n');
}
await memory.close();
