/**
 * Talk to Claude with a memfs store as its memory, through the TypeScript SDK's tool runner.
 *
 *     npm ci
 *     export ANTHROPIC_API_KEY=...         # ANTHROPIC_BASE_URL too, for another endpoint
 *     npx tsx run-agent.ts [--store URL] [--key-file PATH] [--dialect spec|python-sdk] [--memfs BIN] ["prompt"]
 *
 * Prints Claude's final answer (its text blocks) on stdout.
 */

import { parseArgs } from 'node:util';

import Anthropic from '@anthropic-ai/sdk';

import { MemfsError, memfsMemoryTool } from './memfs-memory-tool.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    store: { type: 'string' },
    'key-file': { type: 'string' },
    dialect: { type: 'string', default: 'spec' },
    memfs: { type: 'string', default: 'memfs' },
    model: { type: 'string', default: 'claude-sonnet-5-5' },
    'max-tokens': { type: 'string', default: '2048' },
    'max-iterations': { type: 'string', default: '50' },
  },
});
if (values.dialect !== 'spec' && values.dialect !== 'python-sdk') {
  throw new Error(`--dialect must be spec or python-sdk, not ${values.dialect}`);
}
const prompt = positionals[0] ?? 'Help me respond to this customer service ticket.';

const client = new Anthropic(); // reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL
const memory = memfsMemoryTool({
  store: values.store,
  keyFile: values['key-file'],
  dialect: values.dialect,
  memfs: values.memfs,
});
try {
  // The store is opened now: a missing key file or a wrong passphrase is said before any request.
  await memory.ready();
  const final = await client.beta.messages.toolRunner({
    model: values.model,
    max_tokens: Number(values['max-tokens']),
    max_iterations: Number(values['max-iterations']),
    tools: [memory],
    messages: [{ role: 'user', content: prompt }],
    betas: ['context-management-2025-06-27'],
  });
  const text = final.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
  process.stdout.write(text + '\n');
} catch (e) {
  if (!(e instanceof MemfsError)) throw e;
  process.stderr.write(`run-agent.ts: ${e.message}\n`);
  process.exitCode = 1;
} finally {
  await memory.close();
}
