//! Every string the tool answers with, success and error, for every dialect.
//!
//! Rules (see `docs/COMPAT.md` for the tables):
//! - `python-sdk`: the exact strings of `anthropic==2.10.0`'s `BetaLocalFilesystemMemoryTool`
//!   (its `ToolError` contents, no `Error: ` prefix).
//! - `typescript-sdk`: the exact strings of `@anthropic-ai/sdk@1.12.0`'s
//!   `BetaLocalFilesystemMemoryTool` as its tool runner sends them: every error is a thrown
//!   `Error` whose message the runner prefixes with `Error: `.
//! - `spec`: the documentation page's strings where it gives one (several with `Error: `);
//!   where it is silent, the Python SDK's.
//! - Where an SDK would leak a `repr` or a host path, or act unsafely, every dialect answers
//!   with the same clear message of our own (the safety deviations), with the dialect's
//!   `Error: ` convention.

use thiserror::Error;

use crate::command::InputError;
use crate::dialect::Dialect;
use crate::path::{MAX_NAME_BYTES, MAX_PATH_BYTES, PathError};
use crate::size;

/// What a command answers: the text and whether it is an error.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ToolResult {
    /// The text the model reads.
    pub content: String,
    /// Whether the tool result carries `is_error: true`.
    pub is_error: bool,
}

impl ToolResult {
    /// A successful answer.
    pub fn ok(content: String) -> Self {
        ToolResult { content, is_error: false }
    }

    /// An error answer.
    pub fn error(content: String) -> Self {
        ToolResult { content, is_error: true }
    }
}

/// A command that failed. Nothing was changed. Rendered per dialect by [`ToolError::render`];
/// `Display` gives the `spec` rendering.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The input object is malformed.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A path was refused.
    #[error("{}", render_path(.0))]
    Path(#[from] PathError),
    /// The target does not exist (or, for `spec`, is a directory where a file is needed).
    #[error("{}", self.render(Dialect::Spec))]
    NotFound {
        /// Which command, since the wording differs per command.
        command: &'static str,
        /// The path as sent.
        path: String,
    },
    /// `str_replace` or `insert` on a directory.
    #[error("{}", self.render(Dialect::Spec))]
    NotAFile {
        /// Which command.
        command: &'static str,
        /// The path as sent.
        path: String,
    },
    /// `create` over an existing file or directory.
    #[error("{}", self.render(Dialect::Spec))]
    AlreadyExists {
        /// The path as sent.
        path: String,
    },
    /// `rename` onto an existing path.
    #[error("{}", self.render(Dialect::Spec))]
    DestinationExists {
        /// The destination as sent.
        path: String,
    },
    /// A component of the path's parent is a file.
    #[error("{}", self.render(Dialect::Spec))]
    ParentIsFile {
        /// The path as sent.
        path: String,
        /// The file in the way, normalised.
        file: String,
    },
    /// `view` of a file with more than 999,999 lines.
    #[error("{}", self.render(Dialect::Spec))]
    TooManyLines {
        /// The path as sent.
        path: String,
        /// The file's line count (`split("\n")`), which `typescript-sdk` names.
        lines: usize,
    },
    /// `old_str` does not occur.
    #[error("{}", self.render(Dialect::Spec))]
    NoMatch {
        /// The text looked for.
        old_str: String,
        /// The path as sent.
        path: String,
    },
    /// `old_str` occurs more than once.
    #[error("{}", self.render(Dialect::Spec))]
    MultipleMatches {
        /// The text looked for.
        old_str: String,
        /// Line of each occurrence listed.
        lines: Vec<usize>,
        /// Occurrences not listed (the list is cut to fit `view-max-chars`); 0 for the SDK's
        /// answer.
        more: usize,
    },
    /// `insert_line` outside `[0, n_lines]`.
    #[error("{}", self.render(Dialect::Spec))]
    InsertLineOutOfRange {
        /// The line as sent.
        line: i128,
        /// The file's line count.
        n_lines: usize,
    },
    /// `delete` of `/memories` in any spelling.
    #[error("{}", self.render(Dialect::Spec))]
    DeleteRoot,
    /// `rename` of `/memories` in any spelling.
    #[error("{}", self.render(Dialect::Spec))]
    RenameRoot,
    /// `rename` of a directory into itself or its own subtree.
    #[error("{}", self.render(Dialect::Spec))]
    RenameIntoItself {
        /// Source as sent.
        old_path: String,
        /// Destination as sent.
        new_path: String,
    },
    /// The file's content is not UTF-8 text (only possible for imported files).
    #[error("{}", self.render(Dialect::Spec))]
    NotUtf8 {
        /// The path as sent.
        path: String,
    },
    /// The sensitive-data filter refused the text (policy `sensitive = reject`).
    #[error("{}", self.render(Dialect::Spec))]
    SensitiveRejected {
        /// The file.
        path: String,
        /// The findings by detector and line ([`crate::sensitive::summary`]), never content.
        summary: String,
    },
    /// The write would make a file larger than `max-file-bytes`.
    #[error("{}", self.render(Dialect::Spec))]
    FileTooLarge {
        /// The file.
        path: String,
        /// Its size after the write.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The write would add a file beyond `max-files`.
    #[error("{}", self.render(Dialect::Spec))]
    TooManyFiles {
        /// The file.
        path: String,
        /// Files in the store now.
        files: u64,
        /// The limit.
        limit: u64,
    },
    /// The write would make the store larger than `max-store-bytes`.
    #[error("{}", self.render(Dialect::Spec))]
    StoreFull {
        /// The file.
        path: String,
        /// Bytes of files in the store now.
        now: u64,
        /// Bytes after the write.
        after: u64,
        /// The limit.
        limit: u64,
    },
}

impl ToolError {
    /// The text the model reads, in `dialect`.
    pub fn render(&self, dialect: Dialect) -> String {
        let text = self.text(dialect);
        if self.prefixed(dialect) { format!("Error: {text}") } else { text }
    }

    /// Whether the answer starts with `Error: `: every error in `typescript-sdk` (its tool
    /// runner's `Error: {message}`), the page's few in `spec`, none in `python-sdk`.
    fn prefixed(&self, dialect: Dialect) -> bool {
        match dialect {
            Dialect::TypescriptSdk => true,
            Dialect::PythonSdk => false,
            Dialect::Spec => match self {
                ToolError::NotFound { command, .. } | ToolError::NotAFile { command, .. } => *command != "view",
                ToolError::AlreadyExists { .. }
                | ToolError::DestinationExists { .. }
                | ToolError::InsertLineOutOfRange { .. } => true,
                _ => false,
            },
        }
    }

    /// The text without the `Error: ` prefix.
    fn text(&self, dialect: Dialect) -> String {
        let spec = dialect == Dialect::Spec;
        let ts = dialect == Dialect::TypescriptSdk;
        match self {
            // `betaMemoryTool` looks the command up among its handlers.
            ToolError::Input(InputError::UnknownCommand { command }) if ts => format!("{command} not implemented"),
            ToolError::Input(e) => e.to_string(),
            ToolError::Path(e) => render_path(e),
            ToolError::NotFound { command, path } => not_found(command, path, dialect),
            // The page says a directory gets the "does not exist" error; the SDKs say "not a file".
            ToolError::NotAFile { command, path } if spec => not_found(command, path, dialect),
            ToolError::NotAFile { path, .. } => format!("The path {path} is not a file."),
            ToolError::AlreadyExists { path } => format!("File {path} already exists"),
            ToolError::DestinationExists { path } => format!("The destination {path} already exists"),
            ToolError::ParentIsFile { path, file } => {
                format!("The path {path} is not valid: {file} is a file, not a directory")
            }
            ToolError::TooManyLines { path, lines } if ts => {
                format!("File {path} has too many lines ({lines}). Maximum is 999,999 lines.")
            }
            ToolError::TooManyLines { path, .. } => {
                format!("File {path} exceeds maximum line limit of 999,999 lines.")
            }
            ToolError::NoMatch { old_str, path } => {
                format!("No replacement was performed, old_str `{old_str}` did not appear verbatim in {path}.")
            }
            ToolError::MultipleMatches { old_str, lines, more } => {
                let mut list: Vec<String> = lines.iter().map(ToString::to_string).collect();
                if *more > 0 {
                    list.push(format!("… and {more} more"));
                }
                format!(
                    "No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines: {}. Please ensure it is unique",
                    list.join(", ")
                )
            }
            ToolError::InsertLineOutOfRange { line, n_lines } if dialect == Dialect::PythonSdk => {
                format!("Invalid `insert_line` parameter: {line}. It should be within the range [0, {n_lines}].")
            }
            ToolError::InsertLineOutOfRange { line, n_lines } => {
                // The TypeScript SDK echoes the number `JSON.parse` made of it.
                let line = if ts { js_number(*line) } else { line.to_string() };
                format!(
                    "Invalid `insert_line` parameter: {line}. It should be within the range of lines of the file: [0, {n_lines}]"
                )
            }
            ToolError::DeleteRoot => "Cannot delete the /memories directory itself".to_owned(),
            ToolError::RenameRoot => "Cannot rename the /memories directory itself".to_owned(),
            ToolError::RenameIntoItself { old_path, new_path } => {
                format!("Cannot rename {old_path} to {new_path}: a directory cannot be moved into itself")
            }
            ToolError::NotUtf8 { path } => format!("The file {path} is not valid UTF-8 text"),
            ToolError::SensitiveRejected { path, summary } => format!(
                "Cannot write {path}: the text looks like it contains sensitive data ({summary}). This store's \
                 policy rejects it (sensitive = reject), so nothing was written. Remove it and try again."
            ),
            ToolError::FileTooLarge { path, size, limit } => format!(
                "Cannot write {path}: the file would be {size} bytes, over this store's limit of {limit} bytes per \
                 file (max-file-bytes). Nothing was written."
            ),
            ToolError::TooManyFiles { path, files, limit } => format!(
                "Cannot create {path}: the store holds {} and its limit is {} (max-files). Nothing was written.",
                files_count(*files),
                files_count(*limit)
            ),
            ToolError::StoreFull { path, now, after, limit } => format!(
                "Cannot write {path}: the store would hold {after} bytes of files (it holds {now}), over its limit \
                 of {limit} bytes (max-store-bytes). Nothing was written."
            ),
        }
    }
}

fn files_count(n: u64) -> String {
    if n == 1 { "1 file".to_owned() } else { format!("{n} files") }
}

/// An integer as JavaScript prints the number `JSON.parse` reads it as: the nearest double, in
/// its shortest round-trip digits (`4611686018427388000` for 2^62). Rust's `Display` of an
/// `f64` prints the same for every magnitude below 10^21, which covers the `i64` and `u64`
/// ranges commands accept.
fn js_number(n: i128) -> String {
    (n as f64).to_string()
}

/// "Does not exist", worded per command as each reference words it: `view` and `str_replace`
/// ask for a valid path in every dialect, `insert` in the SDKs'.
fn not_found(command: &str, path: &str, dialect: Dialect) -> String {
    match (dialect, command) {
        (_, "view" | "str_replace") | (Dialect::PythonSdk | Dialect::TypescriptSdk, "insert") => {
            format!("The path {path} does not exist. Please provide a valid path.")
        }
        _ => format!("The path {path} does not exist"),
    }
}

fn render_path(e: &PathError) -> String {
    match e {
        PathError::NotUnderRoot { path } => format!("Path must start with /memories, got: {path}"),
        PathError::Escapes { path } => format!("Path {path} would escape /memories directory"),
        PathError::SiblingOfRoot { path } => {
            format!("Path {path} is outside the /memories directory: it must be /memories or start with /memories/")
        }
        PathError::ControlCharacter { path } => {
            format!("Invalid path {}: control characters are not allowed in memory paths", path.escape_debug())
        }
        PathError::FormatCharacter { path } => format!(
            "Invalid path {}: invisible format characters (such as bidi controls and zero-width spaces) are not \
             allowed in memory paths",
            path.escape_debug()
        ),
        PathError::Backslash { path } => {
            format!("Invalid path {path}: backslashes are not allowed in memory paths")
        }
        PathError::EncodedTraversal { path } => {
            format!("Invalid path {path}: percent-encoded traversal sequences are not allowed")
        }
        PathError::NameTooLong { path } => {
            format!("Invalid path {path}: a file or directory name is longer than {MAX_NAME_BYTES} bytes")
        }
        PathError::PathTooLong { len } => {
            format!("Invalid path: it is {len} bytes long, the limit is {MAX_PATH_BYTES} bytes")
        }
    }
}

/// What `warn` adds to a write's answer.
pub fn sensitive_warning(summary: &str) -> String {
    format!(
        "Warning: the text written looks like it contains sensitive data ({summary}). It was stored as given; \
         memory files should not hold secrets."
    )
}

/// What `redact` adds to a write's answer.
pub fn sensitive_redacted(summary: &str) -> String {
    format!(
        "Note: the text looked like it contained sensitive data ({summary}). Each finding was replaced with a \
         [REDACTED:<detector>] marker before it was written."
    )
}

/// `File created successfully at: {path}`.
pub fn created(path: &str) -> String {
    format!("File created successfully at: {path}")
}

/// The `str_replace` success line followed by the snippet.
pub fn replaced(snippet: &str) -> String {
    format!("The memory file has been edited. Here is the snippet showing the change (with line numbers):\n{snippet}")
}

/// `The file {path} has been edited.`
pub fn inserted(path: &str) -> String {
    format!("The file {path} has been edited.")
}

/// `Successfully deleted {path}`.
pub fn deleted(path: &str) -> String {
    format!("Successfully deleted {path}")
}

/// `Successfully renamed {old} to {new}`.
pub fn renamed(old_path: &str, new_path: &str) -> String {
    format!("Successfully renamed {old_path} to {new_path}")
}

/// The file view: header, then numbered lines.
pub fn file_view(path: &str, numbered: &str) -> String {
    format!("Here's the content of {path} with line numbers:\n{numbered}")
}

/// One row of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingRow {
    /// Size in bytes (4096 for a directory, as ext4 reports it).
    pub size: u64,
    /// Path relative to the listed directory; directories end with `/`.
    pub rel: String,
}

/// The directory view: header, the directory's own row, then a row per item.
pub fn dir_view(path: &str, dir_size: u64, rows: &[ListingRow], dialect: Dialect) -> String {
    let style = Listing::of(dialect);
    let mut out = format!(
        "Here're the files and directories up to 2 levels deep in {path}, excluding {}:\n{}\t{path}",
        style.excluding,
        (style.size)(dir_size)
    );
    for row in rows {
        out.push('\n');
        out.push_str(&listing_row(path, row, dialect));
    }
    out
}

/// One item's line of a directory view.
pub fn listing_row(path: &str, row: &ListingRow, dialect: Dialect) -> String {
    format!("{}\t{path}/{}", (Listing::of(dialect).size)(row.size), row.rel)
}

/// How a dialect lists a directory: what it leaves out and says it leaves out, how it writes
/// sizes, and in which order it lists names.
#[derive(Debug, Clone, Copy)]
pub struct Listing {
    /// What the header says is left out.
    pub excluding: &'static str,
    /// Whether `node_modules` entries are left out (and not descended), at any depth. Hidden
    /// names (a leading `.`) always are.
    pub skips_node_modules: bool,
    /// Whether siblings are ordered by UTF-16 code units (JavaScript's `Array.prototype.sort`)
    /// rather than by code points (Python's `sorted`, and the tree's own order). The two differ
    /// when one name has a character above U+FFFF where another has one from U+E000 to U+FFFF.
    pub utf16_order: bool,
    /// How sizes are written.
    pub size: fn(u64) -> String,
}

impl Listing {
    /// The rules of `dialect`.
    pub fn of(dialect: Dialect) -> Listing {
        match dialect {
            Dialect::Spec => Listing {
                excluding: "hidden items and node_modules",
                skips_node_modules: true,
                utf16_order: false,
                size: size::spec,
            },
            Dialect::PythonSdk => Listing {
                excluding: "hidden items",
                skips_node_modules: false,
                utf16_order: false,
                size: size::python_sdk,
            },
            Dialect::TypescriptSdk => Listing {
                excluding: "hidden items and node_modules",
                skips_node_modules: true,
                utf16_order: true,
                size: size::typescript_sdk,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// memfs's own messages (safety deviations, input and policy errors) carry the dialect's
    /// `Error: ` convention; the SDKs' own strings keep their wording.
    #[test]
    fn typescript_prefixes_every_error() {
        let ts = Dialect::TypescriptSdk;
        let sibling = ToolError::Path(PathError::SiblingOfRoot { path: "/memoriesfoo/x".into() });
        assert_eq!(
            sibling.render(ts),
            "Error: Path /memoriesfoo/x is outside the /memories directory: it must be /memories or start with /memories/"
        );
        assert_eq!(
            sibling.render(Dialect::PythonSdk),
            "Path /memoriesfoo/x is outside the /memories directory: it must be /memories or start with /memories/"
        );
        let missing = ToolError::Input(InputError::Missing { command: "str_replace".into(), field: "new_str" });
        assert_eq!(
            missing.render(ts),
            "Error: Invalid input for command `str_replace`: missing required field `new_str`"
        );
        // `betaMemoryTool`'s own answer to a command it has no handler for.
        let unknown = ToolError::Input(InputError::UnknownCommand { command: "undo".into() });
        assert_eq!(unknown.render(ts), "Error: undo not implemented");
        assert_eq!(
            unknown.render(Dialect::Spec),
            "Unknown command: undo. Valid commands are: view, create, str_replace, insert, delete, rename"
        );
        let full = ToolError::TooManyFiles { path: "/memories/a".into(), files: 1, limit: 1 };
        assert_eq!(
            full.render(ts),
            "Error: Cannot create /memories/a: the store holds 1 file and its limit is 1 file (max-files). Nothing was written."
        );
        // The not-found wordings: "Please provide a valid path." for view, str_replace, insert.
        let nf = |command| ToolError::NotFound { command, path: "/memories/x".into() }.render(ts);
        assert_eq!(nf("insert"), "Error: The path /memories/x does not exist. Please provide a valid path.");
        assert_eq!(nf("delete"), "Error: The path /memories/x does not exist");
        let spec_nf = |command| ToolError::NotFound { command, path: "/memories/x".into() }.render(Dialect::Spec);
        assert_eq!(spec_nf("view"), "The path /memories/x does not exist. Please provide a valid path.");
        assert_eq!(spec_nf("str_replace"), "Error: The path /memories/x does not exist. Please provide a valid path.");
        assert_eq!(spec_nf("insert"), "Error: The path /memories/x does not exist");
    }

    /// The line as `JSON.parse` reads it and JavaScript prints it (Node.js 20).
    #[test]
    fn typescript_echoes_insert_line_as_a_javascript_number() {
        let range = |line| ToolError::InsertLineOutOfRange { line, n_lines: 4 }.render(Dialect::TypescriptSdk);
        let want = |n: &str| {
            format!(
                "Error: Invalid `insert_line` parameter: {n}. It should be within the range of lines of the file: [0, 4]"
            )
        };
        assert_eq!(range(99), want("99"));
        assert_eq!(range(-1), want("-1"));
        assert_eq!(range(1 << 62), want("4611686018427388000"));
        assert_eq!(range(i128::from(i64::MIN)), want("-9223372036854776000"));
        assert_eq!(range(i128::from(u64::MAX)), want("18446744073709552000"));
        assert_eq!(range(9_007_199_254_740_993), want("9007199254740992"));
        assert_eq!(
            ToolError::InsertLineOutOfRange { line: 1 << 62, n_lines: 4 }.render(Dialect::PythonSdk),
            "Invalid `insert_line` parameter: 4611686018427387904. It should be within the range [0, 4]."
        );
    }
}
