/**
 * The TypeScript SDK's memory tool backed by memfs, an encrypted store.
 *
 * `memfsMemoryTool()` returns a runnable memory tool (`betaMemoryTool` from `@anthropic-ai/sdk`)
 * whose six handlers send each command to one long-lived `memfs exec` process: one JSON line in
 * (the memory tool's input, as the model sent it), one JSON line out,
 * `{"content": ..., "is_error": ...}`. A success returns the content; an error throws the SDK's
 * `ToolError` with memfs's message, so the tool runner gives the model exactly that text (a plain
 * `Error` would get an `Error: ` prefix).
 *
 *     const memory = memfsMemoryTool({ store: 'file:///home/me/.memfs', keyFile: '/home/me/.memfs.key' });
 *     const runner = client.beta.messages.toolRunner({ model, max_tokens: 2048, tools: [memory], messages });
 *     const final = await runner;
 *     await memory.close();
 *
 * The store and its key: `store` (`--store`), `keyFile` (`--key-file`), or the environment memfs
 * reads (`MEMFS_STORE`, `MEMFS_PASSPHRASE`, `MEMFS_KEY_FILE`); without them, memfs's default store,
 * created with its key file on first use. Other global flags go in `memfsArgs`.
 *
 * The dialect (`--dialect`) is `spec` by default: the strings of the memory tool's documentation
 * page, whose errors start with `Error: ` as the SDK's own `BetaLocalFilesystemMemoryTool`'s do
 * through this runner. `python-sdk` gives the Python SDK's strings.
 *
 * `close()` ends the session: memfs records the last-access days of the files read, then exits.
 */

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

import { betaMemoryTool } from '@anthropic-ai/sdk/helpers/beta/memory';
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import type { BetaRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';
import type { BetaMemoryTool20250818Command } from '@anthropic-ai/sdk/resources/beta';

/** How to run `memfs exec`. */
export interface MemfsOptions {
  /** The store URL (`--store`), for example `file:///path/to/store`. */
  store?: string;
  /** The store's key file (`--key-file`). */
  keyFile?: string;
  /** Whose strings memfs answers with (`--dialect`); default `spec`. */
  dialect?: 'spec' | 'python-sdk';
  /** The memfs binary; default `memfs` on the PATH. */
  memfs?: string;
  /** More global flags, before `exec` (for example `['--namespace', 'alice']`). */
  memfsArgs?: string[];
  /** The environment of the process; default this process's. */
  env?: NodeJS.ProcessEnv;
}

/** `memfs exec` could not be started, stopped answering, or answered outside its protocol. */
export class MemfsError extends Error {
  override name = 'MemfsError';
}

/** One `memfs exec` process: each `send` writes one line and resolves with the answer line. */
class MemfsSession {
  private readonly process: ChildProcessWithoutNullStreams;
  private readonly waiting: Array<{ resolve: (line: string) => void; reject: (e: Error) => void }> = [];
  private ended: Error | undefined;
  private readonly exited: Promise<number | null>;

  constructor(options: MemfsOptions) {
    const memfs = options.memfs ?? 'memfs';
    const args = [
      ...(options.store === undefined ? [] : ['--store', options.store]),
      ...(options.keyFile === undefined ? [] : ['--key-file', options.keyFile]),
      ...(options.memfsArgs ?? []),
      'exec',
      '--dialect',
      options.dialect ?? 'spec',
    ];
    // stderr is inherited: memfs's own diagnostics reach the user, never the model.
    this.process = spawn(memfs, args, {
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'inherit'],
    }) as unknown as ChildProcessWithoutNullStreams;
    this.exited = new Promise((resolve) => {
      this.process.on('exit', (code) => resolve(code));
      this.process.on('error', (e) => {
        this.fail(new MemfsError(`cannot run ${memfs}: ${e.message}`));
        resolve(null);
      });
    });
    this.process.on('exit', (code) => this.fail(new MemfsError(`memfs exec exited (status ${code}); see its message above`)));
    // Writing to a process that died fails here, not in `send`'s caller.
    this.process.stdin.on('error', (e) => this.fail(new MemfsError(`memfs exec stopped: ${e.message}`)));
    createInterface({ input: this.process.stdout }).on('line', (line) => this.waiting.shift()?.resolve(line));
  }

  private fail(e: Error): void {
    this.ended ??= e;
    for (const w of this.waiting.splice(0)) w.reject(this.ended);
  }

  /** Sends one tool input; resolves with its content, or throws `ToolError` with memfs's message. */
  async send(command: BetaMemoryTool20250818Command): Promise<string> {
    if (this.ended) throw this.ended;
    const line = await new Promise<string>((resolve, reject) => {
      // Answers come in order, one per line, so the queue pairs them with their commands.
      this.waiting.push({ resolve, reject });
      this.process.stdin.write(JSON.stringify(command) + '\n');
    });
    let answer: { content: unknown; is_error: unknown };
    try {
      answer = JSON.parse(line);
    } catch {
      throw new MemfsError(`memfs exec answered ${JSON.stringify(line.slice(0, 200))}, not a result line`);
    }
    if (typeof answer.content !== 'string' || typeof answer.is_error !== 'boolean') {
      throw new MemfsError(`memfs exec answered ${JSON.stringify(line.slice(0, 200))}, not a result line`);
    }
    if (answer.is_error) throw new ToolError(answer.content);
    return answer.content;
  }

  /** Closes memfs's input and waits for it to exit; rejects if it exited with an error. */
  async close(): Promise<void> {
    if (!this.process.stdin.writableEnded) this.process.stdin.end();
    const code = await this.exited;
    if (code !== 0) throw new MemfsError(`memfs exec exited with status ${code}; see its message above`);
  }
}

/** A runnable memory tool backed by memfs, plus `close()` to end its `memfs exec` session. */
export type MemfsMemoryTool = BetaRunnableTool<BetaMemoryTool20250818Command> & { close(): Promise<void> };

/** A memory tool for `client.beta.messages.toolRunner` whose files live in a memfs store. */
export function memfsMemoryTool(options: MemfsOptions = {}): MemfsMemoryTool {
  const session = new MemfsSession(options);
  const tool = betaMemoryTool({
    view: (command) => session.send(command),
    create: (command) => session.send(command),
    str_replace: (command) => session.send(command),
    insert: (command) => session.send(command),
    delete: (command) => session.send(command),
    rename: (command) => session.send(command),
  });
  return Object.assign(tool, { close: () => session.close() });
}
