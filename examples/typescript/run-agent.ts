/**
 * Talk to Claude with a memfs store as its memory, through the TypeScript SDK's tool runner.
 *
 *     npm install memfs-store @anthropic-ai/sdk   # the package: scripts/test-packages.sh packs one
 *     export ANTHROPIC_API_KEY=...                # ANTHROPIC_BASE_URL too, for another endpoint
 *     npx tsx run-agent.ts --store ~/memories --key-file ~/.memfs.key "Remember that I prefer tea."
 *
 * Prints Claude's final answer (its text blocks) on stdout. A key file that does not exist yet
 * makes a new store with it.
 */

import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';

import Anthropic from '@anthropic-ai/sdk';
import { MemfsError, Store, memfsMemoryTool } from 'memfs-store';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    store: { type: 'string' },
    'key-file': { type: 'string' },
    model: { type: 'string', default: 'claude-sonnet-5-5' },
    'max-tokens': { type: 'string', default: '2048' },
  },
});
if (!values.store) {
  process.stderr.write('run-agent.ts: --store is required\n');
  process.exit(2);
}
const prompt = positionals[0] ?? 'Help me respond to this customer service ticket.';

let store: Store;
try {
  // Opened now: a wrong key file is said before any request. A key file that does not exist
  // yet makes a new store (and the key file).
  const keyFile = values['key-file'];
  store =
    keyFile && !existsSync(keyFile)
      ? await Store.init(values.store, { keyFile })
      : await Store.open(values.store, { keyFile });
} catch (e) {
  if (!(e instanceof MemfsError)) throw e;
  process.stderr.write(`run-agent.ts: ${e.message}\n`);
  process.exit(1);
}
try {
  const client = new Anthropic(); // reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL
  const final = await client.beta.messages.toolRunner({
    model: values.model,
    max_tokens: Number(values['max-tokens']),
    tools: [memfsMemoryTool(store)],
    messages: [{ role: 'user', content: prompt }],
  });
  const text = final.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
  process.stdout.write(text + '\n');
} finally {
  await store.close();
}
