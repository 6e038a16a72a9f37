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
 * `await memory.ready()` waits until memfs has opened the store: a store that cannot open (a
 * missing key file, a wrong passphrase) rejects it with a `MemfsError` carrying memfs's own
 * message. Without it, the first call gets that error (a `ToolError`: the runner gives the model
 * its text), and so does every later one. memfs's stderr is passed on to this process's.
 *
 * `close()` ends the session: memfs records the last-access days of the files read, then exits.
 * It may be called any number of times, and does not throw a failure already thrown.
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

/**
 * `memfs exec` could not be started, could not open the store, stopped, or answered outside its
 * protocol. Its message carries memfs's own (what memfs printed on stderr); it is a `ToolError`,
 * so the tool runner gives the model exactly that text. A refused command is a plain `ToolError`.
 */
export class MemfsError extends ToolError {
  override name = 'MemfsError';
  constructor(message: string) {
    super(message);
  }
}

/** At most this much of memfs's stderr is kept for an error message (its end: the last words). */
const STDERR_KEPT = 4000;

/** One `memfs exec` process: each `send` writes one line and resolves with the answer line. */
class MemfsSession {
  private readonly process: ChildProcessWithoutNullStreams;
  private readonly waiting: Array<{ resolve: (line: string) => void; reject: (e: Error) => void }> = [];
  private ended: MemfsError | undefined;
  /** Whether `ended` was thrown to a caller already (then `close` does not throw it again). */
  private told = false;
  private closed = false;
  private stderr = '';
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
    this.process = spawn(memfs, args, { env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    // memfs's stderr is passed on to this process's (its diagnostics reach the user, never the
    // model) and kept, to say why if memfs stops.
    this.process.stderr.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_KEPT);
    });
    this.exited = new Promise((resolve) => {
      // 'close', not 'exit': memfs's stdout and stderr have been read to their end.
      this.process.on('close', (code) => {
        const said = this.stderr.trim();
        this.fail(
          new MemfsError(
            said ? `memfs exec stopped (exit status ${code}): ${said}` : `memfs exec stopped (exit status ${code}) without a message`,
          ),
        );
        resolve(code);
      });
      this.process.on('error', (e) => {
        this.fail(new MemfsError(`cannot run ${memfs}: ${e.message}`));
        resolve(null);
      });
    });
    // Writing to a process that died fails with EPIPE: the answer is then 'close', with memfs's words.
    this.process.stdin.on('error', () => {});
    createInterface({ input: this.process.stdout }).on('line', (line) => this.waiting.shift()?.resolve(line));
  }

  private fail(e: MemfsError): void {
    this.ended ??= e;
    for (const w of this.waiting.splice(0)) w.reject(this.ended);
  }

  /** Throws why memfs stopped, and remembers that the caller was told. */
  private throwEnded(e: unknown): never {
    if (e === this.ended) this.told = true;
    throw e;
  }

  /** Writes one line; resolves with memfs's answer line, or rejects with why memfs stopped. */
  private async exchange(line: string): Promise<string> {
    if (this.ended) this.throwEnded(this.ended);
    if (this.closed) throw new MemfsError('this memfs memory tool is closed');
    try {
      return await new Promise<string>((resolve, reject) => {
        // Answers come in order, one per line, so the queue pairs them with their commands.
        this.waiting.push({ resolve, reject });
        this.process.stdin.write(line);
      });
    } catch (e) {
      this.throwEnded(e);
    }
  }

  /**
   * Resolves once memfs has opened the store; rejects with memfs's message if it cannot.
   * (`memfs exec` opens the store before it reads a line, and answers `{}` with an error without
   * touching the store.)
   */
  async ready(): Promise<void> {
    await this.exchange('{}\n');
  }

  /** Sends one tool input; resolves with its content, or throws `ToolError` with memfs's message. */
  async send(command: BetaMemoryTool20250818Command): Promise<string> {
    const line = await this.exchange(JSON.stringify(command) + '\n');
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

  /**
   * Closes memfs's input and waits for it to exit. Idempotent, and quiet about a failure already
   * thrown to the caller; rejects (once) if memfs exited with an error the caller has not seen.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!this.process.stdin.writableEnded) this.process.stdin.end();
    const code = await this.exited;
    if (code !== 0 && this.ended && !this.told) this.throwEnded(this.ended);
  }
}

/**
 * A runnable memory tool backed by memfs, plus `ready()` (resolves once the store is open, or
 * rejects with memfs's message) and `close()` to end its `memfs exec` session.
 */
export type MemfsMemoryTool = BetaRunnableTool<BetaMemoryTool20250818Command> & {
  ready(): Promise<void>;
  close(): Promise<void>;
};

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
  return Object.assign(tool, { ready: () => session.ready(), close: () => session.close() });
}
