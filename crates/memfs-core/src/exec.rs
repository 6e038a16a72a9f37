//! Running one command against a tree.
//!
//! [`execute`] is pure: it reads the tree and whatever directories and contents the caller's
//! [`Resolver`] already holds. When it reaches something the resolver does not hold, it stops
//! with [`Need`]; the caller fetches that object and calls again. A mutation never touches the
//! input tree: it returns a new [`Tree`] (sharing every untouched directory) plus the
//! [`Change`]s and the new content objects, and the caller commits them or nothing.
//!
//! Checks run in the Python SDK's order, so that an input with several problems gets the
//! error the SDK would give first.

use std::sync::Arc;

use crate::access::Access;
use crate::command::{Command, InputError};
use crate::dialect::Dialect;
use crate::paginate;
use crate::path::{MemoryPath, Name, normalized};
use crate::policy::{Policy, SensitiveMode};
use crate::render::{self, ListingRow, ToolError, ToolResult};
use crate::resolver::{self, Need, Resolver};
use crate::sensitive;
use crate::text::{self, ReplaceError};
use crate::tree::{Day, Dir, DirRef, FileRef, Node, ObjectId, Tree};

/// What `view` reports as a directory's size: an ext4 directory's `st_size`.
pub const DIR_SIZE: u64 = 4096;

/// How deep a directory listing goes.
const LISTING_DEPTH: usize = 2;

/// One change a mutation made, by normalised path.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// A new file.
    Created {
        /// Where.
        path: String,
    },
    /// A file's content changed.
    Modified {
        /// Where.
        path: String,
    },
    /// A file or directory was removed.
    Deleted {
        /// What.
        path: String,
    },
    /// A file or directory moved.
    Renamed {
        /// From.
        from: String,
        /// To.
        to: String,
    },
}

/// A new content object the mutated tree refers to.
#[derive(Debug, Clone)]
pub struct NewBlob {
    /// Its id, from [`Resolver::address`].
    pub id: ObjectId,
    /// The content.
    pub content: Arc<[u8]>,
}

/// The result of a successful mutating command.
#[derive(Debug, Clone)]
pub struct Mutation {
    /// The tree after the command.
    pub tree: Tree,
    /// What changed.
    pub changes: Vec<Change>,
    /// Content objects the new tree needs that may not be stored yet.
    pub blobs: Vec<NewBlob>,
    /// The command as applied, when it differs from the one given: the sensitive-data filter
    /// redacted its text. Record this one, so no history entry keeps what was redacted.
    pub applied: Option<Command>,
}

/// What a command produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The answer for the model.
    pub result: ToolResult,
    /// The new state, for a mutation that succeeded.
    pub mutation: Option<Mutation>,
    /// A file read whose last-access day is older than today: record it (see [`touch`](crate::touch)).
    pub accessed: Option<Access>,
}

impl Outcome {
    fn ok(content: String) -> Self {
        Outcome { result: ToolResult::ok(content), mutation: None, accessed: None }
    }

    fn mutated(content: String, mutation: Mutation) -> Self {
        Outcome { result: ToolResult::ok(content), mutation: Some(mutation), accessed: None }
    }

    /// A failure, rendered in `dialect`.
    pub fn failed(error: &ToolError, dialect: Dialect) -> Self {
        Outcome { result: ToolResult::error(error.render(dialect)), mutation: None, accessed: None }
    }
}

/// Everything besides the tree that a command's answer depends on.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// Whose strings to answer with.
    pub dialect: Dialect,
    /// The store's safeguards.
    pub policy: &'a Policy,
    /// Today, for last-access days.
    pub today: Day,
}

/// Why a step stopped: an object to fetch, or a failure to report.
enum Halt {
    Need(Need),
    Fail(ToolError),
}

impl From<ToolError> for Halt {
    fn from(e: ToolError) -> Self {
        Halt::Fail(e)
    }
}

impl From<crate::path::PathError> for Halt {
    fn from(e: crate::path::PathError) -> Self {
        Halt::Fail(e.into())
    }
}

impl From<InputError> for Halt {
    fn from(e: InputError) -> Self {
        Halt::Fail(e.into())
    }
}

type Step<T> = Result<T, Halt>;

/// Runs `command` on `tree` as the reference implementations do: no limits, no pagination,
/// no sensitive-data filter, last-access days of 0. `Err(need)` asks for one more object;
/// anything else is final. A store runs [`execute_in`] with its policy.
pub fn execute(command: &Command, tree: &Tree, dialect: Dialect, resolver: &dyn Resolver) -> Result<Outcome, Need> {
    execute_in(command, tree, &Context { dialect, policy: &Policy::unlimited(), today: 0 }, resolver)
}

/// Runs `command` on `tree` under a store's policy (see [`Policy`]). `Err(need)` asks for one
/// more object; anything else is final.
pub fn execute_in(
    command: &Command,
    tree: &Tree,
    context: &Context<'_>,
    resolver: &dyn Resolver,
) -> Result<Outcome, Need> {
    let dialect = context.dialect;
    let cx = Cx { tree, dialect, policy: context.policy, today: context.today, resolver };
    let step = match command {
        Command::View { path, view_range } => cx.view(path, view_range.as_deref()),
        Command::Create { path, file_text } => cx.create(path, file_text),
        Command::StrReplace { path, old_str, new_str } => cx.str_replace(path, old_str, new_str.as_deref()),
        Command::Insert { path, insert_line, insert_text } => cx.insert(path, *insert_line, insert_text),
        Command::Delete { path } => cx.delete(path),
        Command::Rename { old_path, new_path } => cx.rename(old_path, new_path),
    };
    match step {
        Ok(outcome) => Ok(outcome),
        Err(Halt::Need(need)) => Err(need),
        Err(Halt::Fail(e)) => {
            let mut outcome = Outcome::failed(&e, dialect);
            // An error can echo input of any length (an `old_str`, a path with escapes).
            outcome.result.content = paginate::error(outcome.result.content, context.policy.view_max_chars);
            Ok(outcome)
        }
    }
}

/// A person's edit of a whole file (`memfs ui`): the file at `path` becomes `text`, under the
/// same policy as a tool's write (size limits, the sensitive-data filter, whose note ends the
/// answer). Recorded as the `str_replace` of the file's whole content (as applied, after
/// redaction); answered as a `str_replace` is, with the snippet around the first changed line.
/// The caller decides whether the file is still the one the person edited (see
/// `Memfs::edit`). `Err(need)` asks for one more object, as [`execute_in`].
pub fn rewrite_in(
    path: &str,
    text: &str,
    tree: &Tree,
    context: &Context<'_>,
    resolver: &dyn Resolver,
) -> Result<Outcome, Need> {
    let cx = Cx { tree, dialect: context.dialect, policy: context.policy, today: context.today, resolver };
    match cx.rewrite(path, text) {
        Ok(outcome) => Ok(outcome),
        Err(Halt::Need(need)) => Err(need),
        Err(Halt::Fail(e)) => {
            let mut outcome = Outcome::failed(&e, context.dialect);
            outcome.result.content = paginate::error(outcome.result.content, context.policy.view_max_chars);
            Ok(outcome)
        }
    }
}

/// Where a path leads.
enum Found {
    /// Nothing there.
    Missing,
    /// A parent component is a file.
    ParentIsFile,
    /// An entry (the root is a directory).
    Node(Node),
}

struct Cx<'a> {
    tree: &'a Tree,
    dialect: Dialect,
    policy: &'a Policy,
    today: Day,
    resolver: &'a dyn Resolver,
}

/// Text to write after the sensitive-data filter, and what to tell the model about it.
struct Screened {
    text: String,
    note: Option<String>,
    redacted: bool,
}

impl Cx<'_> {
    /// The whole directory.
    fn load(&self, dir: &DirRef) -> Step<Arc<Dir>> {
        resolver::load(dir, None, self.resolver).map_err(Halt::Need)
    }

    /// The directory, loaded far enough to answer for `name`.
    fn load_for(&self, dir: &DirRef, name: &Name) -> Step<Arc<Dir>> {
        resolver::load(dir, Some(name), self.resolver).map_err(Halt::Need)
    }

    fn content(&self, file: &FileRef, path: &str) -> Step<String> {
        let bytes = self.resolver.blob(&file.id).ok_or(Halt::Need(Need::Blob(file.id)))?;
        String::from_utf8(bytes.to_vec()).map_err(|_| Halt::Fail(ToolError::NotUtf8 { path: path.to_owned() }))
    }

    fn lookup(&self, components: &[Name]) -> Step<Found> {
        let mut dir = self.tree.root().clone();
        for (i, name) in components.iter().enumerate() {
            let last = i + 1 == components.len();
            match self.load_for(&dir, name)?.get(name) {
                None => return Ok(Found::Missing),
                Some(node) if last => return Ok(Found::Node(node.clone())),
                Some(Node::File(_)) => return Ok(Found::ParentIsFile),
                Some(Node::Dir(d)) => dir = d.clone(),
            }
        }
        Ok(Found::Node(Node::Dir(self.tree.root().clone())))
    }

    /// The first file among the parents of `components`, if any, as an error for `path`.
    fn parent_file_error(&self, components: &[Name], path: &str) -> Step<Option<ToolError>> {
        let parents = parent(components);
        for i in 0..parents.len() {
            if let Found::Node(Node::File(_)) = self.lookup(&parents[..=i])? {
                let file = normalized(&parents[..=i]);
                return Ok(Some(ToolError::ParentIsFile { path: path.to_owned(), file }));
            }
        }
        Ok(None)
    }

    /// A copy of the tree with `node` at `components` (or the entry removed, for `None`);
    /// missing parent directories are created.
    fn set(&self, tree: &Tree, components: &[Name], node: Option<Node>) -> Step<Tree> {
        Ok(Tree::from_root(self.set_in(tree.root(), components, node)?))
    }

    fn set_in(&self, dir: &DirRef, components: &[Name], node: Option<Node>) -> Step<DirRef> {
        let (first, rest) = components.split_first().expect("set below the root");
        let mut copy = Dir::clone(&*self.load_for(dir, first)?);
        if rest.is_empty() {
            match node {
                Some(node) => copy.insert(first.clone(), node),
                None => {
                    copy.remove(first);
                }
            }
        } else {
            let child = match copy.get(first) {
                Some(Node::Dir(d)) => d.clone(),
                // Callers check for files in the way first; an absent parent is created.
                _ => DirRef::new(Dir::new()),
            };
            copy.insert(first.clone(), Node::Dir(self.set_in(&child, rest, node)?));
        }
        Ok(DirRef::new(copy))
    }

    fn new_blob(&self, content: String) -> (FileRef, NewBlob) {
        let content: Arc<[u8]> = Arc::from(content.into_bytes());
        let id = self.resolver.address(&content);
        (FileRef { id, size: content.len() as u64, accessed: self.today }, NewBlob { id, content })
    }

    /// Runs the sensitive-data filter over a write to `path` that turns `old` into `new`.
    ///
    /// The whole new content is scanned, and the findings that touch the changed region count:
    /// a secret completed by an edit (half written before, half now) is caught, and one that
    /// was already there and is left alone is not reported again. Redaction replaces each such
    /// finding whole, even the part that was there before.
    fn screen(&self, path: &str, old: &str, new: String) -> Step<Screened> {
        if self.policy.sensitive == SensitiveMode::Off {
            return Ok(Screened { text: new, note: None, redacted: false });
        }
        let changed = changed_region(old, &new);
        let findings: Vec<sensitive::Finding> = sensitive::scan(&new, &self.policy.rules)
            .into_iter()
            .filter(|f| match changed.is_empty() {
                true => f.range.start < changed.start && f.range.end > changed.start,
                false => f.range.start < changed.end && f.range.end > changed.start,
            })
            .collect();
        if findings.is_empty() {
            return Ok(Screened { text: new, note: None, redacted: false });
        }
        let summary = sensitive::summary(&new, &findings);
        match self.policy.sensitive {
            SensitiveMode::Off => unreachable!("handled above"),
            SensitiveMode::Warn => {
                Ok(Screened { text: new, note: Some(render::sensitive_warning(&summary)), redacted: false })
            }
            SensitiveMode::Redact => Ok(Screened {
                text: sensitive::redact(&new, &findings),
                note: Some(render::sensitive_redacted(&summary)),
                redacted: true,
            }),
            SensitiveMode::Reject => Err(ToolError::SensitiveRejected { path: path.to_owned(), summary }.into()),
        }
    }

    /// Refuses a write to `path` that makes the tree `after` break a size limit it did not
    /// already break: a file or a store over a lowered limit may still shrink.
    fn check_limits(&self, path: &str, after: &Tree, old_size: u64, new_size: u64) -> Step<()> {
        let (before, after) = (self.tree.totals(), after.totals());
        if let Some(limit) = self.policy.max_file_bytes
            && new_size > limit
            && new_size > old_size
        {
            return Err(ToolError::FileTooLarge { path: path.to_owned(), size: new_size, limit }.into());
        }
        if let Some(limit) = self.policy.max_files
            && after.files > limit
            && after.files > before.files
        {
            return Err(ToolError::TooManyFiles { path: path.to_owned(), files: before.files, limit }.into());
        }
        if let Some(limit) = self.policy.max_store_bytes
            && after.bytes > limit
            && after.bytes > before.bytes
        {
            let (now, after) = (before.bytes, after.bytes);
            return Err(ToolError::StoreFull { path: path.to_owned(), now, after, limit }.into());
        }
        Ok(())
    }

    fn view(&self, path: &str, view_range: Option<&[i128]>) -> Step<Outcome> {
        let p = MemoryPath::parse(path)?;
        match self.lookup(p.components())? {
            Found::Missing | Found::ParentIsFile => {
                Err(ToolError::NotFound { command: "view", path: path.to_owned() }.into())
            }
            Found::Node(Node::Dir(d)) => {
                let mut rows = Vec::new();
                self.list(&*self.load(&d)?, "", 1, &mut rows)?;
                Ok(Outcome::ok(match self.policy.view_max_chars {
                    // With paging on, `view_range` selects entries as it selects a file's lines
                    // (the SDK ignores it on a directory), so a cut listing can be continued.
                    Some(max) => {
                        let (start, end) = text::select(rows.len(), view_range);
                        paginate::listing(path, DIR_SIZE, &rows[start..end], start + 1, max, self.dialect)
                    }
                    None => render::dir_view(path, DIR_SIZE, &rows, self.dialect),
                }))
            }
            Found::Node(Node::File(f)) => {
                let content = self.content(&f, path)?;
                let lines = text::view_lines(&content);
                if lines.len() > text::MAX_LINES {
                    return Err(ToolError::TooManyLines { path: path.to_owned(), lines: lines.len() }.into());
                }
                let (start, end) = text::select(lines.len(), view_range);
                let view = match self.policy.view_max_chars {
                    Some(max) => paginate::file(path, &lines[start..end], start + 1, max),
                    None => render::file_view(path, &text::numbered(&lines[start..end], start + 1)),
                };
                let mut outcome = Outcome::ok(view);
                if f.accessed < self.today {
                    outcome.accessed = Some(Access { path: p, id: f.id });
                }
                Ok(outcome)
            }
        }
    }

    /// Pre-order, name-sorted (in the dialect's order), two levels; hidden names and, except in
    /// `python-sdk`, `node_modules` are neither listed nor descended.
    fn list(&self, dir: &Dir, rel: &str, depth: usize, rows: &mut Vec<ListingRow>) -> Step<()> {
        if depth > LISTING_DEPTH {
            return Ok(());
        }
        let style = render::Listing::of(self.dialect);
        let mut entries: Vec<(&Name, &Node)> = dir.entries().collect();
        if style.utf16_order {
            entries.sort_by(|(a, _), (b, _)| a.as_str().encode_utf16().cmp(b.as_str().encode_utf16()));
        }
        for (name, node) in entries {
            if name.is_hidden() || (style.skips_node_modules && name.as_str() == "node_modules") {
                continue;
            }
            let item = if rel.is_empty() { name.to_string() } else { format!("{rel}/{name}") };
            match node {
                Node::File(f) => rows.push(ListingRow { size: f.size, rel: item }),
                Node::Dir(d) => {
                    rows.push(ListingRow { size: DIR_SIZE, rel: format!("{item}/") });
                    if depth < LISTING_DEPTH {
                        self.list(&*self.load(d)?, &item, depth + 1, rows)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn create(&self, path: &str, file_text: &str) -> Step<Outcome> {
        let p = MemoryPath::parse(path)?;
        if p.is_root() {
            return Err(ToolError::AlreadyExists { path: path.to_owned() }.into());
        }
        if let Some(e) = self.parent_file_error(p.components(), path)? {
            return Err(e.into());
        }
        if let Found::Node(_) = self.lookup(p.components())? {
            return Err(ToolError::AlreadyExists { path: path.to_owned() }.into());
        }
        let screened = self.screen(path, "", file_text.to_owned())?;
        let applied =
            screened.redacted.then(|| Command::Create { path: path.to_owned(), file_text: screened.text.clone() });
        let (file, blob) = self.new_blob(screened.text);
        let tree = self.set(self.tree, p.components(), Some(Node::File(file)))?;
        self.check_limits(path, &tree, 0, file.size)?;
        let changes = vec![Change::Created { path: p.normalized() }];
        let message = with_note(render::created(path), screened.note);
        Ok(Outcome::mutated(message, Mutation { tree, changes, blobs: vec![blob], applied }))
    }

    /// The file at `path` for an edit: its parsed path, size and content.
    fn file_for_edit(&self, command: &'static str, path: &str) -> Step<(MemoryPath, u64, String)> {
        let p = MemoryPath::parse(path)?;
        match self.lookup(p.components())? {
            Found::Missing | Found::ParentIsFile => Err(ToolError::NotFound { command, path: path.to_owned() }.into()),
            Found::Node(Node::Dir(_)) => Err(ToolError::NotAFile { command, path: path.to_owned() }.into()),
            Found::Node(Node::File(f)) => {
                let content = self.content(&f, path)?;
                Ok((p, f.size, content))
            }
        }
    }

    fn write_file(&self, p: &MemoryPath, old_size: u64, content: String, applied: Option<Command>) -> Step<Mutation> {
        let (file, blob) = self.new_blob(content);
        let tree = self.set(self.tree, p.components(), Some(Node::File(file)))?;
        self.check_limits(p.as_sent(), &tree, old_size, file.size)?;
        let changes = vec![Change::Modified { path: p.normalized() }];
        Ok(Mutation { tree, changes, blobs: vec![blob], applied })
    }

    fn str_replace(&self, path: &str, old_str: &str, new_str: Option<&str>) -> Step<Outcome> {
        // The page makes `new_str` optional (omitted = delete `old_str`); the Python SDK crashes
        // on it, the TypeScript SDK writes the text `undefined` in its place.
        let new_str = match (new_str, self.dialect) {
            (Some(s), _) => s,
            (None, Dialect::Spec) => "",
            (None, Dialect::PythonSdk | Dialect::TypescriptSdk) => {
                return Err(InputError::Missing { command: "str_replace".into(), field: "new_str" }.into());
            }
        };
        let (p, old_size, content) = self.file_for_edit("str_replace", path)?;
        let max = self.policy.view_max_chars;
        let replace = |new_str: &str| {
            text::replace_unique(&content, old_str, new_str, paginate::matches_to_keep(max), self.dialect).map_err(
                |e| match e {
                    ReplaceError::NotFound => ToolError::NoMatch { old_str: old_str.to_owned(), path: path.to_owned() },
                    ReplaceError::Multiple { lines, more } => {
                        paginate::multiple_matches(old_str, lines, more, max, self.dialect)
                    }
                },
            )
        };
        // The SDK's errors come first; the filter only sees a replacement that would happen.
        let (new_content, mut line) = replace(new_str)?;
        let screened = self.screen(path, &content, new_content)?;
        let mut applied = None;
        if screened.redacted {
            let (old_part, new_part) = applied_edit(&content, &screened.text);
            // Redaction may have joined lines (a key block becomes one marker) before the edit.
            let start = changed_region(&content, &screened.text).start;
            line = line.min(screened.text[..start].matches('\n').count());
            applied = Some(Command::StrReplace { path: path.to_owned(), old_str: old_part, new_str: Some(new_part) });
        }
        let new_content = screened.text;
        let snippet = text::snippet(&new_content, line);
        let mutation = self.write_file(&p, old_size, new_content, applied)?;
        Ok(Outcome::mutated(with_note(render::replaced(&snippet), screened.note), mutation))
    }

    fn rewrite(&self, path: &str, text: &str) -> Step<Outcome> {
        let (p, old_size, content) = self.file_for_edit("str_replace", path)?;
        let screened = self.screen(path, &content, text.to_owned())?;
        let new_content = screened.text;
        let start = changed_region(&content, &new_content).start;
        let line = new_content[..start].matches('\n').count();
        let applied =
            Command::StrReplace { path: path.to_owned(), old_str: content, new_str: Some(new_content.clone()) };
        let snippet = text::snippet(&new_content, line);
        let mutation = self.write_file(&p, old_size, new_content, Some(applied))?;
        Ok(Outcome::mutated(with_note(render::replaced(&snippet), screened.note), mutation))
    }

    fn insert(&self, path: &str, insert_line: i128, insert_text: &str) -> Step<Outcome> {
        let (p, old_size, content) = self.file_for_edit("insert", path)?;
        let insert = |text: &str| {
            text::insert(&content, insert_line, text, self.dialect)
                .map_err(|n_lines| ToolError::InsertLineOutOfRange { line: insert_line, n_lines })
        };
        let new_content = insert(insert_text)?;
        let screened = self.screen(path, &content, new_content)?;
        let applied = screened.redacted.then(|| Command::Insert {
            path: path.to_owned(),
            insert_line,
            insert_text: applied_edit(&content, &screened.text).1,
        });
        let mutation = self.write_file(&p, old_size, screened.text, applied)?;
        Ok(Outcome::mutated(with_note(render::inserted(path), screened.note), mutation))
    }

    fn delete(&self, path: &str) -> Step<Outcome> {
        let p = MemoryPath::parse(path)?;
        if p.is_root() {
            return Err(ToolError::DeleteRoot.into());
        }
        let Found::Node(_) = self.lookup(p.components())? else {
            return Err(ToolError::NotFound { command: "delete", path: path.to_owned() }.into());
        };
        let tree = self.set(self.tree, p.components(), None)?;
        let changes = vec![Change::Deleted { path: p.normalized() }];
        Ok(Outcome::mutated(render::deleted(path), Mutation { tree, changes, blobs: Vec::new(), applied: None }))
    }

    fn rename(&self, old_path: &str, new_path: &str) -> Step<Outcome> {
        let old = MemoryPath::parse(old_path)?;
        let new = MemoryPath::parse(new_path)?;
        if old.is_root() {
            return Err(ToolError::RenameRoot.into());
        }
        if let Found::Node(_) = self.lookup(new.components())? {
            return Err(ToolError::DestinationExists { path: new_path.to_owned() }.into());
        }
        if let Some(e) = self.parent_file_error(new.components(), new_path)? {
            // The SDK's order, where it answers cleanly: when the file in the way is the
            // destination's immediate parent, it makes no directory and reaches `rename(2)`,
            // which resolves the source's parent first; a missing one fails with ENOENT, which
            // the SDK reports as a missing source. (Any other file in the way, or a source
            // through a file, makes the SDK leak `NotADirectoryError`: deviation D7 applies.)
            let (new_parent, old_parent) = (parent(new.components()), parent(old.components()));
            if matches!(self.lookup(new_parent)?, Found::Node(Node::File(_)))
                && matches!(self.lookup(old_parent)?, Found::Missing)
            {
                return Err(ToolError::NotFound { command: "rename", path: old_path.to_owned() }.into());
            }
            return Err(e.into());
        }
        let Found::Node(node) = self.lookup(old.components())? else {
            return Err(ToolError::NotFound { command: "rename", path: old_path.to_owned() }.into());
        };
        if new.starts_with(&old) {
            return Err(ToolError::RenameIntoItself { old_path: old_path.into(), new_path: new_path.into() }.into());
        }
        // Renaming a file is using it: it starts its unused period again.
        let node = match node {
            Node::File(f) => Node::File(FileRef { accessed: f.accessed.max(self.today), ..f }),
            dir => dir,
        };
        let without = self.set(self.tree, old.components(), None)?;
        let tree = self.set(&without, new.components(), Some(node))?;
        let changes = vec![Change::Renamed { from: old.normalized(), to: new.normalized() }];
        let mutation = Mutation { tree, changes, blobs: Vec::new(), applied: None };
        Ok(Outcome::mutated(render::renamed(old_path, new_path), mutation))
    }
}

/// What a redacted edit is recorded as in history: the changed part of the old content and
/// what the (redacted) new content has in its place. Recording the fields as sent would keep
/// the part of a secret that the edit completed; these hold nothing the file does not.
fn applied_edit(old: &str, new: &str) -> (String, String) {
    let region = changed_region(old, new);
    let old_end = old.len() - (new.len() - region.end);
    (old[region.start..old_end].to_owned(), new[region].to_owned())
}

/// The byte range of `new` that differs from `old`: what is left after their common prefix
/// and common suffix (empty, at the point of change, for a pure deletion).
fn changed_region(old: &str, new: &str) -> std::ops::Range<usize> {
    let prefix = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
    let room = old.len().min(new.len()) - prefix;
    let suffix = old.bytes().rev().zip(new.bytes().rev()).take(room).take_while(|(a, b)| a == b).count();
    // On character boundaries, so the range can slice `new`.
    let mut start = prefix;
    while !new.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = new.len() - suffix;
    while !new.is_char_boundary(end) {
        end += 1;
    }
    start..end.max(start)
}

/// A success message with the filter's note, if any, after a blank line.
fn with_note(message: String, note: Option<String>) -> String {
    match note {
        Some(note) => format!("{message}\n\n{note}"),
        None => message,
    }
}

/// The components of a path's parent directory (the root's for a top-level name).
fn parent(components: &[Name]) -> &[Name] {
    &components[..components.len().saturating_sub(1)]
}

#[cfg(test)]
mod tests;
