import type { BetaRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool'
import type { BetaMemoryTool20250818, BetaMemoryTool20250818Command } from '@anthropic-ai/sdk/resources/beta'
import type { Answer, InitOptions, OpenOptions } from './index'

export type { Answer, InitOptions, OpenOptions }

/** One commit of a store's history. */
export interface Commit {
  /** Its position: the first commit is 1. */
  generation: number
  /** Its id, 64 hex digits. */
  id: string
  /** The previous commit's id (`null` for the first). */
  parent: string | null
  /** When it was made, in milliseconds since the Unix epoch. */
  time_ms: number
  /** Who made it (`actor` of `Store.open`; may be empty). */
  actor: string
  /** What it did: the memory-tool command, or a history or key command. */
  command: Record<string, unknown>
  /** The files it added, modified, deleted or renamed. */
  changes: Array<Record<string, unknown>>
}

/** An error of memfs; `code` says which kind. */
export declare class MemfsError extends Error {
  readonly code: string
}
/** No store at this location (`code` `MEMFS_NO_STORE`). */
export declare class NoStoreError extends MemfsError {}
/** The credential given does not open the store (`code` `MEMFS_CREDENTIAL`). */
export declare class CredentialError extends MemfsError {}
/** The store could not be read or written (`code` `MEMFS_STORE`). */
export declare class StoreError extends MemfsError {}
/**
 * A change whose answer was lost may have landed, and the store could not be read long enough
 * to know: do not make it again blindly (`code` `MEMFS_OUTCOME_UNKNOWN`).
 */
export declare class OutcomeUnknownError extends StoreError {}

/** An open store, shared by any number of tools and calls at once. */
export declare class Store {
  /** Opens the store at `url` (`/absolute/path`, `file:///…`, `s3://…`, `gs://…`, `az://…`, `memory://`). */
  static open(url: string, options?: OpenOptions): Promise<Store>
  /** Creates a new store at `url` and opens it. */
  static init(url: string, options?: InitOptions & Pick<OpenOptions, 'dialect' | 'actor'>): Promise<Store>
  /** The answers' dialect. */
  readonly dialect: string
  /** Runs one memory-tool call; a refused command is an answer with `isError: true`. */
  call(input: object, dialect?: 'typescript-sdk' | 'python-sdk' | 'spec'): Promise<Answer>
  /** The history, newest first. */
  log(limit?: number, path?: string): Promise<Commit[]>
  /** Undoes the newest commit: the new commit's generation, or `null` if nothing changed. */
  undo(): Promise<number | null>
  /** Puts the tree (or `path`) back as it was at `at` (a revision or a time). */
  restore(at: string, path?: string): Promise<number | null>
  /** Records the last-access days of the files read. */
  close(): Promise<void>
}

/** The TypeScript SDK's memory tool with its files in `store`, for `toolRunner`. */
export declare function memfsMemoryTool(
  store: Store,
  extraProps?: Omit<BetaMemoryTool20250818, 'type' | 'name'>,
): BetaRunnableTool<BetaMemoryTool20250818Command>
