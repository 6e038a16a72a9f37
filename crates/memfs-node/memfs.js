'use strict'
/**
 * memfs for Node.js: the encrypted, content-addressed store behind Claude's memory tool.
 *
 * `Store.open(url, options)` opens a store (a local folder, `s3://`, `gs://`, `az://` or
 * `memory://`, encrypted on the client); `memfsMemoryTool(store)` is the TypeScript SDK's
 * memory tool (`betaMemoryTool`) backed by it, for `client.beta.messages.toolRunner`:
 *
 *     const { Store, memfsMemoryTool } = require('memfs-store')
 *     const store = await Store.open('/home/me/memories', { keyFile: '/home/me/.memfs.key' })
 *     const runner = client.beta.messages.toolRunner({ model, max_tokens: 2048,
 *       tools: [memfsMemoryTool(store)], messages })
 *
 * Answers are in the `typescript-sdk` dialect by default: byte for byte what the SDK's own
 * `BetaLocalFilesystemMemoryTool` gives the model through the runner. Every method returns a
 * promise; the store's work runs off the event loop, in the native addon.
 */

const native = require('./index.js')

/** An error of memfs; `code` says which kind. */
class MemfsError extends Error {
  constructor(message, code = 'MEMFS') {
    super(message)
    this.name = this.constructor.name
    this.code = code
  }
}
/** No store at this location (create one with `Store.init`). */
class NoStoreError extends MemfsError {}
/** The credential given does not open the store (none given, a wrong passphrase or key file). */
class CredentialError extends MemfsError {}
/** The store could not be read or written (unreachable, damaged, refused). */
class StoreError extends MemfsError {}
/**
 * A change whose answer was lost may have landed, and the store could not be read long enough
 * to know: do not make it again blindly (the message says how to find out).
 */
class OutcomeUnknownError extends StoreError {}

const KINDS = {
  NoStore: [NoStoreError, 'MEMFS_NO_STORE'],
  Credential: [CredentialError, 'MEMFS_CREDENTIAL'],
  Store: [StoreError, 'MEMFS_STORE'],
  OutcomeUnknown: [OutcomeUnknownError, 'MEMFS_OUTCOME_UNKNOWN'],
  Memfs: [MemfsError, 'MEMFS'],
  Input: [TypeError, undefined],
}

/** The native rejection `[Kind] message` as the error of its kind. */
function typed(error) {
  const match = /^\[(\w+)\] ([\s\S]*)$/.exec(error && error.message)
  if (!match || !KINDS[match[1]]) return error
  const [Kind, code] = KINDS[match[1]]
  return Kind === TypeError ? new TypeError(match[2]) : new Kind(match[2], code)
}

async function wrapped(promise) {
  try {
    return await promise
  } catch (error) {
    throw typed(error)
  }
}

/** An open store, shared by any number of tools and calls at once. */
class Store {
  constructor(inner) {
    this._inner = inner
    this._closed = false
  }

  /**
   * Opens the store at `url`. It is unlocked with `keyFile` or `passphrase`; with neither, by
   * its key slots kept outside memfs (the OS keychain, a cloud KMS, the age identity file
   * `ageIdentity`).
   */
  static async open(url, options) {
    return new Store(await wrapped(native.Store.open(String(url), options)))
  }

  /** Creates a new store at `url` (its key slot opened by `keyFile`, written unless it exists,
   * or `passphrase`) and opens it. */
  static async init(url, options = {}) {
    await wrapped(native.Store.init(String(url), options))
    const { keyFile, passphrase, namespace, options: cloud, dialect, actor } = options
    return Store.open(url, { keyFile, passphrase, namespace, options: cloud, dialect, actor })
  }

  /** The answers' dialect. */
  get dialect() {
    return this._inner.dialect
  }

  /** Runs one memory-tool call (its input as the model sent it): `{ content, isError }`. A
   * refused command is an answer, not an exception. */
  call(input, dialect) {
    return wrapped(this._inner.call(input, dialect))
  }

  /** The history, newest first: at most `limit` commits, those that changed `path` if given. */
  async log(limit, path) {
    const commits = await wrapped(this._inner.log(limit, path))
    return commits.map((c) => ({ ...c, command: typeof c.command === 'string' ? JSON.parse(c.command) : c.command }))
  }

  /** Undoes the newest commit: the new commit's generation, or `null` if nothing changed. */
  undo() {
    return wrapped(this._inner.undo())
  }

  /** Puts the tree (or `path`) back as it was at `at` (a revision or a time). */
  restore(at, path) {
    return wrapped(this._inner.restore(at, path))
  }

  /** Records the last-access days of the files read. Safe to call more than once. */
  async close() {
    if (this._closed) return
    this._closed = true
    await wrapped(this._inner.close())
  }
}

/**
 * The TypeScript SDK's memory tool (`betaMemoryTool`, `memory_20250818`) with its files in
 * `store`. A refused command throws the SDK's `ToolError` with memfs's message, which the tool
 * runner passes to the model as it is (in the `typescript-sdk` dialect that message already
 * starts with `Error: `, as the SDK's own tool's do through the runner).
 */
function memfsMemoryTool(store, extraProps) {
  const { betaMemoryTool } = require('@anthropic-ai/sdk/helpers/beta/memory')
  const { ToolError } = require('@anthropic-ai/sdk/lib/tools/ToolError')
  const run = async (command) => {
    const answer = await store.call(command)
    if (answer.isError) throw new ToolError(answer.content)
    return answer.content
  }
  const handlers = { view: run, create: run, str_replace: run, insert: run, delete: run, rename: run }
  return betaMemoryTool(handlers, extraProps)
}

module.exports = { Store, memfsMemoryTool, MemfsError, NoStoreError, CredentialError, StoreError, OutcomeUnknownError }
