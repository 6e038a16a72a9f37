//! Property tests of memfs-core's public API:
//!
//! - paths: whatever [`MemoryPath::parse`] accepts stays inside `/memories`, lexically resolved
//!   on a real-looking root too, and is made of safe components;
//! - text: `view` (python-sdk dialect) gives back exactly what `create`, `str_replace` and
//!   `insert` wrote;
//! - trees: after any sequence of `create`/`delete`/`rename`, every entry has a path that
//!   parses back to itself, and a failed command carries no mutation.
//!
//! `PROPTEST_CASES` overrides the case count (default 256 here).

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use memfs_core::{Change, Command, Dialect, Dir, MapResolver, MemoryPath, Name, Node, Outcome, Tree, execute};
use proptest::prelude::*;
use proptest::sample::select;

/// An in-memory store: a tree and its contents, mutated only through `execute`.
#[derive(Default, Clone)]
struct Store {
    tree: Tree,
    blobs: MapResolver,
}

impl Store {
    /// Runs a command; applies its mutation, if any. Checks the failure contract on the way.
    fn run(&mut self, command: &Command, dialect: Dialect) -> Outcome {
        let out = execute(command, &self.tree, dialect, &self.blobs).expect("an in-memory tree needs nothing");
        if out.result.is_error {
            assert!(out.mutation.is_none(), "{command:?} failed with a mutation: {}", out.result.content);
        } else if command.is_mutation() {
            assert!(out.mutation.is_some(), "{command:?} succeeded without a mutation");
        } else {
            assert!(out.mutation.is_none(), "view returned a mutation");
        }
        if let Some(m) = &out.mutation {
            for b in &m.blobs {
                self.blobs.blobs.insert(b.id, b.content.clone());
            }
            self.tree = m.tree.clone();
        }
        out
    }

    /// Every entry below `/memories`: normalised path -> whether it is a directory.
    fn entries(&self) -> BTreeMap<String, bool> {
        fn walk(dir: &Dir, prefix: &mut Vec<Name>, out: &mut BTreeMap<String, bool>) {
            for (name, node) in dir.entries() {
                prefix.push(name.clone());
                let path = memfs_core::normalized(prefix);
                match node {
                    Node::File(_) => {
                        out.insert(path, false);
                    }
                    Node::Dir(d) => {
                        out.insert(path, true);
                        walk(d.dir().expect("in-memory trees stay loaded"), prefix, out);
                    }
                }
                prefix.pop();
            }
        }
        let mut out = BTreeMap::new();
        walk(self.tree.root().dir().expect("loaded root"), &mut Vec::new(), &mut out);
        out
    }
}

fn view(path: &str, view_range: Option<Vec<i128>>) -> Command {
    Command::View { path: path.into(), view_range }
}

/// The lines of a python-sdk file view, with the numbers checked to run from `first` on.
fn viewed_lines(out: &Outcome, path: &str, first: usize) -> Vec<String> {
    assert!(!out.result.is_error, "{}", out.result.content);
    let header = format!("Here's the content of {path} with line numbers:\n");
    let body = out.result.content.strip_prefix(&header).unwrap_or_else(|| panic!("header: {:?}", out.result.content));
    body.split('\n')
        .enumerate()
        .map(|(i, row)| {
            let (number, line) = row.split_once('\t').unwrap_or_else(|| panic!("row {row:?}"));
            assert_eq!(number.trim_start().parse::<usize>().ok(), Some(first + i), "row {row:?}");
            assert!(number.len() >= 6, "numbers are right-aligned on 6 columns: {row:?}");
            line.to_owned()
        })
        .collect()
}

/// 256 cases, unless `PROPTEST_CASES` says otherwise.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

// ---------------------------------------------------------------------------------------------
// (a) paths

/// Path-ish pieces: separators, dots, encodings, the root's name, letters, unicode, NUL, spaces.
#[rustfmt::skip]
const PIECES: &[&str] = &[
    "/", "/", "/", ".", "..", "...", "%2e", "%2E", "%2f", "%2F", "%5c", "%25", "%", "%00", "\\", "memories",
    "/memories", "a", "b", "Z", "x.md", "é", "日本", "🦀", "\u{0}", "\u{85}", "\n", " ", "\u{202e}",
];

/// Paths mostly shaped like paths (`/memories` then `/`-separated components, some of them
/// traversal or odd), sometimes any concatenation of [`PIECES`].
fn pathish() -> impl Strategy<Value = String> {
    let component = prop_oneof![
        10 => select(vec![
            "a", "b", "x.md", ".", "", "...", "é", "日本", "🦀", " ", ".hidden", "100%.md", "memories", "%25",
        ])
        .prop_map(str::to_owned),
        2 => Just("..".to_owned()),
        1 => select(vec!["%2e", "%2E%2e", "%2f", "%252e%252e", "a%2fb", "a%5cb", "a\\b", "\u{0}", "\t"])
            .prop_map(str::to_owned),
        1 => prop::collection::vec(select(PIECES), 1..4).prop_map(|v| v.concat()),
    ];
    let separator = select(vec!["/", "/", "/", "//"]);
    let structured = (
        prop_oneof![
            8 => select(vec!["/memories", "/memories/"]),
            1 => select(vec!["", "/memoriesfoo", "memories", "/Memories", "/memories.."]),
        ],
        prop::collection::vec((separator, component), 0..8),
        select(vec!["", "", "/"]),
    )
        .prop_map(|(root, parts, tail)| {
            let mut s = root.to_owned();
            for (sep, c) in parts {
                s.push_str(sep);
                s.push_str(&c);
            }
            s + tail
        });
    let prefix = select(vec!["/memories/", "/memories", "/memories//", ""]);
    let pieces =
        (prefix, prop::collection::vec(select(PIECES), 0..16)).prop_map(|(p, parts)| format!("{p}{}", parts.concat()));
    prop_oneof![3 => structured, 1 => pieces]
}

/// Lexical resolution as a store on a real file system would do it: the part after
/// `/memories`, pushed onto `root` component by component, `..` popping.
fn resolve_under(root: &Path, sent: &str) -> PathBuf {
    let rel = sent.strip_prefix("/memories").expect("accepted paths start with /memories");
    let mut out = root.to_path_buf();
    for c in Path::new(rel).components() {
        match c {
            Component::RootDir | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            Component::Prefix(_) => unreachable!("no prefixes on unix"),
        }
    }
    out
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn accepted_paths_stay_inside_the_root(sent in pathish()) {
        let Ok(path) = MemoryPath::parse(&sent) else { return Ok(()) };
        let normalized = path.normalized();
        prop_assert!(normalized == "/memories" || normalized.starts_with("/memories/"), "{sent:?} -> {normalized:?}");
        for c in path.components() {
            let s = c.as_str();
            prop_assert!(!s.is_empty() && s != "." && s != "..", "{sent:?}: component {s:?}");
            prop_assert!(!s.contains(['/', '\\']), "{sent:?}: component {s:?}");
            prop_assert!(!s.chars().any(char::is_control), "{sent:?}: component {s:?}");
        }
        // Idempotent: the canonical spelling parses to the same components.
        let again = MemoryPath::parse(&normalized).expect("the normalised path parses");
        prop_assert_eq!(again.components(), path.components());

        let root = Path::new("/srv/root/memories");
        let resolved = resolve_under(root, &sent);
        prop_assert!(resolved.starts_with(root), "{sent:?} resolves to {resolved:?}");
        let expected: PathBuf = path.components().iter().fold(root.to_path_buf(), |p, c| p.join(c.as_str()));
        prop_assert_eq!(resolved, expected);
    }

    #[test]
    fn refused_paths_are_refused_as_components_too(sent in pathish()) {
        // Parsing `/memories/<x>` accepts exactly the `x` that `Name::parse` accepts (for `x`
        // without `/`, which a path would split).
        let name: String = sent.replace('/', "");
        let as_path = MemoryPath::parse(&format!("/memories/{name}"));
        match Name::parse(&name) {
            Ok(n) => {
                let p = as_path.expect("a valid name is a valid path");
                prop_assert_eq!(p.components(), std::slice::from_ref(&n));
            }
            // Empty and `.` are dropped by the path parser rather than refused.
            Err(_) if name.is_empty() || name == "." => prop_assert!(as_path.expect("root").is_root()),
            Err(_) => prop_assert!(as_path.is_err(), "{name:?} refused as a name, accepted in a path"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// (b) text round-trips

/// Any text, biased towards line structure: `\n`, `\r\n`, a lone `\r`, tabs, unicode.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        prop::collection::vec(
            select(vec!["\n", "\r\n", "\r", "\t", "a", "line", " ", "é", "🦀", "%", "$1", ""]),
            0..40
        )
        .prop_map(|v| v.concat()),
    ]
}

const FILE: &str = "/memories/notes/f.txt";

fn created(content: &str) -> Store {
    let mut store = Store::default();
    let out = store.run(&Command::Create { path: FILE.into(), file_text: content.into() }, Dialect::PythonSdk);
    assert!(!out.result.is_error, "{}", out.result.content);
    store
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn view_reproduces_created_content(content in text()) {
        let mut store = created(&content);
        let out = store.run(&view(FILE, None), Dialect::PythonSdk);
        prop_assert_eq!(viewed_lines(&out, FILE, 1).join("\n"), content);
    }

    #[test]
    fn view_range_is_a_slice_of_the_lines(content in text(), start in -3i64..50, end in -3i64..50) {
        let mut store = created(&content);
        let lines: Vec<&str> = content.split('\n').collect();
        let out = store.run(&view(FILE, Some(vec![i128::from(start), i128::from(end)])), Dialect::PythonSdk);
        // Python: lines[max(1, start) - 1 : (len if end == -1 else end)], empty body allowed.
        let n = lines.len() as i64;
        let s = (start.max(1) - 1).min(n);
        let e = if end == -1 { n } else if end < 0 { (end + n).max(0) } else { end.min(n) };
        let want: Vec<&str> = if e > s { lines[s as usize..e as usize].to_vec() } else { Vec::new() };
        if want.is_empty() {
            let header = format!("Here's the content of {FILE} with line numbers:\n");
            prop_assert_eq!(&out.result.content, &header);
        } else {
            prop_assert_eq!(viewed_lines(&out, FILE, s as usize + 1), want);
        }
    }

    #[test]
    fn str_replace_then_view(before in text(), after in text(), new_str in text()) {
        // The marker cannot occur in the generated text, so it is unique.
        const MARK: &str = "«MARK»";
        let content = format!("{before}{MARK}{after}");
        let mut store = created(&content);
        let cmd = Command::StrReplace { path: FILE.into(), old_str: MARK.into(), new_str: Some(new_str.clone()) };
        let out = store.run(&cmd, Dialect::PythonSdk);
        prop_assert!(!out.result.is_error, "{}", out.result.content);
        let out = store.run(&view(FILE, None), Dialect::PythonSdk);
        prop_assert_eq!(viewed_lines(&out, FILE, 1).join("\n"), format!("{before}{new_str}{after}"));
    }

    #[test]
    fn insert_then_view(content in text(), at in 0usize..60, line in "[^\n]{0,20}", trailing in 0usize..3) {
        let mut store = created(&content);
        // The lines insert counts: split on `\n`, without the empty tail of a final newline.
        let mut lines: Vec<&str> = content.split('\n').collect();
        if lines.last() == Some(&"") {
            lines.pop();
        }
        let insert_text = format!("{line}{}", "\n".repeat(trailing));
        let cmd = Command::Insert { path: FILE.into(), insert_line: at as i128, insert_text };
        let out = store.run(&cmd, Dialect::PythonSdk);
        if at > lines.len() {
            prop_assert!(out.result.is_error, "insert at {at} of {} lines succeeded", lines.len());
            return Ok(());
        }
        prop_assert!(!out.result.is_error, "{}", out.result.content);
        let viewed = viewed_lines(&store.run(&view(FILE, None), Dialect::PythonSdk), FILE, 1);
        // Lines before are untouched, the new line sits at index `at`, the rest follow, joined
        // with `\n` and ended with one unless the join already ends with one (so, as in the
        // SDK, an empty line inserted after a final empty line leaves no trace of its own).
        let mut want: Vec<&str> = lines.clone();
        want.insert(at, &line);
        let mut file = want.join("\n");
        if !file.ends_with('\n') {
            file.push('\n');
        }
        prop_assert_eq!(viewed.join("\n"), file);
        prop_assert_eq!(&viewed[..at], &lines[..at]);
        prop_assert_eq!(&viewed[at], &line);
        prop_assert_eq!(viewed.last().map(String::as_str), Some(""), "ends with a newline");
    }
}

// ---------------------------------------------------------------------------------------------
// (c) random command sequences

/// Paths from a small universe so that commands collide (four names, depth 0 to 2), now and
/// then with traversal, an invalid component or a bad prefix.
fn tree_path() -> impl Strategy<Value = String> {
    let seg = prop_oneof![
        12 => select(vec!["a", "b", "c.md", "d"]),
        1 => select(vec!["..", ".", "", "%2e%2e", "x\\y", ".hidden", "node_modules"]),
    ];
    let prefix = prop_oneof![
        12 => Just("/memories/"),
        1 => select(vec!["/memories", "/memories//", "/memoriesX/", "/tmp/"]),
    ];
    (prefix, prop::collection::vec(seg, 0..3)).prop_map(|(p, segs)| format!("{p}{}", segs.join("/")))
}

fn tree_command() -> impl Strategy<Value = Command> {
    prop_oneof![
        3 => (tree_path(), select(vec!["", "x\n", "hello\nworld"]))
            .prop_map(|(path, t)| Command::Create { path, file_text: t.into() }),
        1 => tree_path().prop_map(|path| Command::Delete { path }),
        3 => (tree_path(), tree_path()).prop_map(|(old_path, new_path)| Command::Rename { old_path, new_path }),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn command_sequences_keep_the_tree_valid(
        commands in prop::collection::vec(tree_command(), 1..40),
        dialect in select(Dialect::ALL.to_vec()),
    ) {
        let mut store = Store::default();
        for cmd in &commands {
            let before = store.entries();
            let out = store.run(cmd, dialect);
            let after = store.entries();
            if out.result.is_error {
                // `run` already checked there is no mutation; the tree is the old one.
                prop_assert_eq!(&before, &after);
                continue;
            }
            for path in after.keys() {
                let parsed = MemoryPath::parse(path).unwrap_or_else(|e| panic!("{path:?} in the tree: {e}"));
                prop_assert_eq!(&parsed.normalized(), path);
                prop_assert!(!parsed.is_root());
            }
            // Every ancestor of an entry is a directory in the tree.
            for path in after.keys() {
                let mut p = path.as_str();
                while let Some((parent, _)) = p.rsplit_once('/') {
                    if parent == "/memories" {
                        break;
                    }
                    prop_assert_eq!(after.get(parent), Some(&true), "{} has no directory parent", path);
                    p = parent;
                }
            }
            // The change the command reports is what happened to the tree.
            let mut changes = Vec::new();
            match cmd {
                Command::Create { path, .. } => {
                    let p = MemoryPath::parse(path).unwrap().normalized();
                    prop_assert_eq!(after.get(&p), Some(&false));
                    prop_assert!(!before.contains_key(&p));
                    changes.push(Change::Created { path: p });
                }
                Command::Delete { path } => {
                    let p = MemoryPath::parse(path).unwrap().normalized();
                    prop_assert!(before.contains_key(&p));
                    let below = format!("{p}/");
                    prop_assert!(after.keys().all(|k| k != &p && !k.starts_with(&below)), "{} still there", p);
                    changes.push(Change::Deleted { path: p });
                }
                Command::Rename { old_path, new_path } => {
                    let from = MemoryPath::parse(old_path).unwrap().normalized();
                    let to = MemoryPath::parse(new_path).unwrap().normalized();
                    prop_assert!(!after.contains_key(&from) && after.contains_key(&to));
                    prop_assert_eq!(before.get(&from), after.get(&to));
                    // The subtree moved whole.
                    let moved = |m: &BTreeMap<String, bool>, root: &str| -> Vec<(String, bool)> {
                        m.iter()
                            .filter_map(|(k, v)| k.strip_prefix(&format!("{root}/")).map(|r| (r.to_owned(), *v)))
                            .collect()
                    };
                    prop_assert_eq!(moved(&before, &from), moved(&after, &to));
                    changes.push(Change::Renamed { from, to });
                }
                Command::View { .. } | Command::StrReplace { .. } | Command::Insert { .. } => unreachable!(),
            }
            prop_assert_eq!(out.mutation.expect("a mutation").changes, changes);
        }
        // Listing the final tree works in both dialects.
        for d in Dialect::ALL {
            let out = store.run(&view("/memories", None), d);
            prop_assert!(!out.result.is_error);
        }
    }
}
