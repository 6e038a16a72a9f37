use super::*;
use crate::MapResolver;

fn run(tree: &mut Tree, blobs: &mut MapResolver, input: serde_json::Value) -> ToolResult {
    let command = Command::from_input(&input).unwrap();
    let out = execute(&command, tree, Dialect::PythonSdk, blobs).unwrap();
    if let Some(m) = out.mutation {
        *tree = m.tree;
        blobs.keep(m.blobs);
    }
    out.result
}

/// `rename` onto a path whose parent is a file: the SDK reaches `rename(2)`, which reports
/// a missing source parent (ENOENT) before the file in the way (ENOTDIR).
#[test]
fn rename_missing_source_parent_before_file_in_the_way() {
    let (mut tree, mut blobs) = (Tree::empty(), MapResolver::new());
    let create = serde_json::json!({"command": "create", "path": "/memories/d/f.txt", "file_text": "x"});
    assert!(!run(&mut tree, &mut blobs, create).is_error);
    let rename = |old: &str, new: &str| serde_json::json!({"command": "rename", "old_path": old, "new_path": new});

    // Source parent missing, the file is the destination's parent: the SDK's clean answer.
    let r = run(&mut tree, &mut blobs, rename("/memories/gone/x", "/memories/d/f.txt/y"));
    assert_eq!(r, ToolResult::error("The path /memories/gone/x does not exist".into()));
    // Source parent present (leaf missing): the SDK leaks NotADirectoryError, memfs says D7.
    let r = run(&mut tree, &mut blobs, rename("/memories/d/x", "/memories/d/f.txt/y"));
    assert_eq!(r.content, "The path /memories/d/f.txt/y is not valid: /memories/d/f.txt is a file, not a directory");
    // The file further up: the SDK's mkdir of the parents fails first (D7 again).
    let r = run(&mut tree, &mut blobs, rename("/memories/gone/x", "/memories/d/f.txt/y/z"));
    assert_eq!(r.content, "The path /memories/d/f.txt/y/z is not valid: /memories/d/f.txt is a file, not a directory");
    // Source through a file: NotADirectoryError in the SDK too (D7).
    let r = run(&mut tree, &mut blobs, rename("/memories/d/f.txt/x", "/memories/d/f.txt/y"));
    assert!(r.content.ends_with("is a file, not a directory"), "{}", r.content);
}

/// A person's whole-file edit (`memfs ui`) goes through the policy as a tool's write does,
/// and is recorded as the `str_replace` of the whole content, as applied.
#[test]
fn a_rewrite_is_screened_limited_and_recorded_as_applied() {
    let (mut tree, mut blobs) = (Tree::empty(), MapResolver::new());
    let create = serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "one\ntwo\n"});
    assert!(!run(&mut tree, &mut blobs, create).is_error);
    let mut policy = Policy::default();
    let rewrite = |policy: &Policy, text: &str| {
        let context = Context { dialect: Dialect::Spec, policy, today: 0 };
        rewrite_in("/memories/a.md", text, &tree, &context, &blobs).unwrap()
    };
    let out = rewrite(&policy, "one\n2\n");
    assert_eq!(
        out.result.content,
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tone\n     2\t2\n     3\t"
    );
    let m = out.mutation.unwrap();
    assert_eq!(m.changes, [Change::Modified { path: "/memories/a.md".into() }]);
    assert_eq!(
        m.applied,
        Some(Command::StrReplace {
            path: "/memories/a.md".into(),
            old_str: "one\ntwo\n".into(),
            new_str: Some("one\n2\n".into())
        })
    );
    let key = "AKIA2E3MPLZQ7WX4KT5N";
    policy.set("sensitive", "reject").unwrap();
    let out = rewrite(&policy, &format!("one\n{key}\n"));
    assert!(out.result.is_error && out.mutation.is_none(), "{:?}", out.result);
    policy.set("sensitive", "redact").unwrap();
    let out = rewrite(&policy, &format!("one\n{key}\n"));
    let Some(Command::StrReplace { new_str: Some(applied), .. }) = out.mutation.unwrap().applied else { panic!() };
    assert!(!applied.contains(key), "{applied}");
    policy.set("max-file-bytes", "4").unwrap();
    let out = rewrite(&policy, "too long\n");
    assert!(out.result.is_error && out.mutation.is_none(), "{:?}", out.result);
    // Not a file.
    let context = Context { dialect: Dialect::Spec, policy: &Policy::default(), today: 0 };
    let out = rewrite_in("/memories/none.md", "x", &tree, &context, &blobs).unwrap();
    assert_eq!(
        out.result,
        ToolResult::error("Error: The path /memories/none.md does not exist. Please provide a valid path.".into())
    );
}

/// A session through `typescript-sdk`: every answer exactly as `@anthropic-ai/sdk@1.12.0`'s
/// `BetaLocalFilesystemMemoryTool` gave it through its tool runner (`runRunnableTool`, Node.js
/// 20, a temp directory on ext4), the same inputs in the same order. `X1280` stands for 1,280
/// `x`s (a size the SDKs round differently: `1.3K` here, `1.2K` in Python).
#[test]
fn typescript_sdk_session() {
    const SESSION: &[(&str, &str, bool)] = &[
        (
            r#"{"command":"view","path":"/memories"}"#,
            "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories",
            false,
        ),
        (
            r#"{"command":"create","path":"/memories/a.txt","file_text":"dup dup\nx dup\nline3\n"}"#,
            "File created successfully at: /memories/a.txt",
            false,
        ),
        (
            r#"{"command":"create","path":"/memories/a.txt","file_text":"x"}"#,
            "Error: File /memories/a.txt already exists",
            true,
        ),
        (
            r#"{"command":"str_replace","path":"/memories/a.txt","old_str":"dup","new_str":"Q"}"#,
            "Error: No replacement was performed. Multiple occurrences of old_str `dup` in lines: 1, 2. Please ensure it is unique",
            true,
        ),
        (
            r#"{"command":"str_replace","path":"/memories/a.txt","old_str":"x dup\nline3","new_str":"Z"}"#,
            "Error: No replacement was performed, old_str `x dup\nline3` did not appear verbatim in /memories/a.txt.",
            true,
        ),
        (
            r#"{"command":"str_replace","path":"/memories/a.txt","old_str":"","new_str":"Z"}"#,
            "Error: No replacement was performed. Multiple occurrences of old_str `` in lines: 1, 2, 3, 4. Please ensure it is unique",
            true,
        ),
        (
            r#"{"command":"str_replace","path":"/memories/a.txt","old_str":"line3","new_str":"L3"}"#,
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tdup dup\n     2\tx dup\n     3\tL3\n     4\t",
            false,
        ),
        (
            r#"{"command":"insert","path":"/memories/a.txt","insert_line":99,"insert_text":"x"}"#,
            "Error: Invalid `insert_line` parameter: 99. It should be within the range of lines of the file: [0, 4]",
            true,
        ),
        (
            r#"{"command":"insert","path":"/memories/a.txt","insert_line":4611686018427387904,"insert_text":"x"}"#,
            "Error: Invalid `insert_line` parameter: 4611686018427388000. It should be within the range of lines of the file: [0, 4]",
            true,
        ),
        (
            r#"{"command":"insert","path":"/memories/a.txt","insert_line":4,"insert_text":"end\n\n"}"#,
            "The file /memories/a.txt has been edited.",
            false,
        ),
        (
            r#"{"command":"view","path":"/memories/a.txt"}"#,
            "Here's the content of /memories/a.txt with line numbers:\n     1\tdup dup\n     2\tx dup\n     3\tL3\n     4\t\n     5\tend\n     6\t",
            false,
        ),
        (
            r#"{"command":"view","path":"/memories/a.txt","view_range":[2,-2]}"#,
            "Here's the content of /memories/a.txt with line numbers:\n     2\tx dup\n     3\tL3\n     4\t",
            false,
        ),
        (
            r#"{"command":"view","path":"/memories/nope"}"#,
            "Error: The path /memories/nope does not exist. Please provide a valid path.",
            true,
        ),
        (
            r#"{"command":"create","path":"/memories/d/node_modules/x","file_text":"x"}"#,
            "File created successfully at: /memories/d/node_modules/x",
            false,
        ),
        (
            r#"{"command":"create","path":"/memories/d/.h","file_text":"x"}"#,
            "File created successfully at: /memories/d/.h",
            false,
        ),
        (
            r#"{"command":"create","path":"/memories/d/sub/deeper/x","file_text":"x"}"#,
            "File created successfully at: /memories/d/sub/deeper/x",
            false,
        ),
        (
            r#"{"command":"create","path":"/memories/big","file_text":"X1280"}"#,
            "File created successfully at: /memories/big",
            false,
        ),
        (
            r#"{"command":"create","path":"/memories/emojiﬁ","file_text":"1"}"#,
            "File created successfully at: /memories/emojiﬁ",
            false,
        ),
        (
            r#"{"command":"create","path":"/memories/emoji😀","file_text":"12"}"#,
            "File created successfully at: /memories/emoji😀",
            false,
        ),
        (
            r#"{"command":"create","path":"/memories/node_modules/y","file_text":"12"}"#,
            "File created successfully at: /memories/node_modules/y",
            false,
        ),
        (
            r#"{"command":"view","path":"/memories"}"#,
            "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories\n22B\t/memories/a.txt\n1.3K\t/memories/big\n4K\t/memories/d/\n4K\t/memories/d/sub/\n2B\t/memories/emoji😀\n1B\t/memories/emojiﬁ",
            false,
        ),
        (
            r#"{"command":"view","path":"/memories/node_modules"}"#,
            "Here're the files and directories up to 2 levels deep in /memories/node_modules, excluding hidden items and node_modules:\n4K\t/memories/node_modules\n2B\t/memories/node_modules/y",
            false,
        ),
        (
            r#"{"command":"str_replace","path":"/memories/d","old_str":"a","new_str":"b"}"#,
            "Error: The path /memories/d is not a file.",
            true,
        ),
        (
            r#"{"command":"insert","path":"/memories/d","insert_line":0,"insert_text":"b"}"#,
            "Error: The path /memories/d is not a file.",
            true,
        ),
        (
            r#"{"command":"insert","path":"/memories/nope","insert_line":0,"insert_text":"b"}"#,
            "Error: The path /memories/nope does not exist. Please provide a valid path.",
            true,
        ),
        (r#"{"command":"delete","path":"/memories/nope"}"#, "Error: The path /memories/nope does not exist", true),
        (r#"{"command":"delete","path":"/memories/"}"#, "Error: Cannot delete the /memories directory itself", true),
        (
            r#"{"command":"rename","old_path":"/memories/.","new_path":"/memories/x"}"#,
            "Error: Cannot rename the /memories directory itself",
            true,
        ),
        (
            r#"{"command":"rename","old_path":"/memories/nope","new_path":"/memories/x"}"#,
            "Error: The path /memories/nope does not exist",
            true,
        ),
        (
            r#"{"command":"rename","old_path":"/memories/a.txt","new_path":"/memories/big"}"#,
            "Error: The destination /memories/big already exists",
            true,
        ),
        (r#"{"command":"view","path":"/etc"}"#, "Error: Path must start with /memories, got: /etc", true),
        (
            r#"{"command":"view","path":"/memories/../x"}"#,
            "Error: Path /memories/../x would escape /memories directory",
            true,
        ),
        (r#"{"command":"undo"}"#, "Error: undo not implemented", true),
        (
            r#"{"command":"create","path":"/memories/g","file_text":"single line dup dup"}"#,
            "File created successfully at: /memories/g",
            false,
        ),
        (
            r#"{"command":"str_replace","path":"/memories/g","old_str":"dup","new_str":"$& $1"}"#,
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tsingle line $& $1 dup",
            false,
        ),
        (
            r#"{"command":"rename","old_path":"/memories/g","new_path":"/memories/h/g"}"#,
            "Successfully renamed /memories/g to /memories/h/g",
            false,
        ),
        (r#"{"command":"delete","path":"/memories/d"}"#, "Successfully deleted /memories/d", false),
        (
            r#"{"command":"view","path":"/memories"}"#,
            "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories\n22B\t/memories/a.txt\n1.3K\t/memories/big\n2B\t/memories/emoji😀\n1B\t/memories/emojiﬁ\n4K\t/memories/h/\n21B\t/memories/h/g",
            false,
        ),
    ];
    let (mut tree, mut blobs) = (Tree::empty(), MapResolver::new());
    for (input, content, is_error) in SESSION {
        let input: serde_json::Value = serde_json::from_str(&input.replace("X1280", &"x".repeat(1280))).unwrap();
        let result = match Command::from_input(&input) {
            Ok(command) => {
                let out = execute(&command, &tree, Dialect::TypescriptSdk, &blobs).unwrap();
                if let Some(m) = out.mutation {
                    tree = m.tree;
                    blobs.keep(m.blobs);
                }
                out.result
            }
            Err(e) => ToolResult::error(ToolError::from(e).render(Dialect::TypescriptSdk)),
        };
        assert_eq!(result, ToolResult { content: (*content).to_owned(), is_error: *is_error }, "{input}");
    }
    // A million lines (999,999 newlines), as the SDK words it.
    let many = Command::Create { path: "/memories/many".into(), file_text: "\n".repeat(999_999) };
    let m = execute(&many, &tree, Dialect::TypescriptSdk, &blobs).unwrap().mutation.unwrap();
    blobs.keep(m.blobs);
    let view = Command::View { path: "/memories/many".into(), view_range: None };
    let out = execute(&view, &m.tree, Dialect::TypescriptSdk, &blobs).unwrap().result;
    assert_eq!(
        out,
        ToolResult::error("Error: File /memories/many has too many lines (1000000). Maximum is 999,999 lines.".into())
    );
}
