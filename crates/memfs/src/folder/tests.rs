use std::os::unix::fs::{PermissionsExt, symlink};

use super::*;

fn file(path: &str, text: &str) -> Entry {
    Entry::File { path: path.to_owned(), text: text.to_owned() }
}

/// A folder with a file, and a secret outside it.
fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("in");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("a.md"), "a\n").unwrap();
    let secret = tmp.path().join("secret");
    fs::write(&secret, "outside\n").unwrap();
    (tmp, root, secret)
}

#[test]
fn reads_a_folder_in_export_order() {
    let (_tmp, root, _) = setup();
    fs::create_dir_all(root.join("d/e")).unwrap();
    fs::write(root.join("d/b.md"), "b").unwrap();
    let entries = read_folder(&root, &()).unwrap();
    assert_eq!(
        entries,
        [
            file("/memories/a.md", "a\n"),
            Entry::Dir { path: "/memories/d".into() },
            file("/memories/d/b.md", "b"),
            Entry::Dir { path: "/memories/d/e".into() },
        ]
    );
}

#[test]
fn a_symbolic_link_is_refused_never_followed() {
    let (tmp, root, secret) = setup();
    symlink(&secret, root.join("link.md")).unwrap();
    let e = read_folder(&root, &()).unwrap_err();
    assert!(matches!(&e, FolderError::LinkInSource { path } if path == &root.join("link.md")), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!(
            "refusing {}: it is a symbolic link, and memfs import never follows one",
            root.join("link.md").display()
        )
    );

    // The folder itself too: a link to the real folder is refused, naming the fix.
    let link = tmp.path().join("via-link");
    symlink(&root, &link).unwrap();
    fs::remove_file(root.join("link.md")).unwrap();
    let e = read_folder(&link, &()).unwrap_err();
    assert!(matches!(e, FolderError::RootIsLink { .. }), "{e:?}");
}

#[test]
fn a_file_swapped_between_stat_and_open_is_refused() {
    let (tmp, root, secret) = setup();
    let path = root.join("a.md");
    let examined = fs::symlink_metadata(&path).unwrap();
    // After the walk examined a.md, an attacker puts a link to the secret in its place.
    fs::remove_file(&path).unwrap();
    symlink(&secret, &path).unwrap();
    let e = read_text(&path, &examined).unwrap_err();
    assert!(matches!(&e, FolderError::Changed { path: p } if p == &path), "{e:?}");
    assert_eq!(e.to_string(), format!("refusing {}: it changed while the folder was being read", path.display()));

    // Or another regular file, moved over it.
    let other = tmp.path().join("other");
    fs::write(&other, "other\n").unwrap();
    fs::remove_file(&path).unwrap();
    fs::write(&path, "a\n").unwrap();
    let examined = fs::symlink_metadata(&path).unwrap();
    fs::rename(&other, &path).unwrap();
    assert!(matches!(read_text(&path, &examined), Err(FolderError::Changed { .. })));
    // The file examined is read.
    let examined = fs::symlink_metadata(&path).unwrap();
    assert_eq!(read_text(&path, &examined).unwrap(), "other\n");
}

#[test]
fn files_are_created_exclusively_never_through_a_link() {
    let (tmp, _root, _) = setup();
    let target = tmp.path().join("out.md");
    let planted = tmp.path().join("planted");
    // A link to nowhere appears where the file goes, after the check: O_EXCL refuses it and
    // nothing is created where it points.
    symlink(&planted, &target).unwrap();
    let e = create_exclusive(&target, "text").unwrap_err();
    assert!(matches!(&e, FolderError::Create { source, .. } if source.kind() == ErrorKind::AlreadyExists), "{e:?}");
    assert!(!planted.exists());
    // A link already there when the file is written: refused, and not followed.
    let e = write_file(&target, "text").unwrap_err();
    assert!(matches!(e, FolderError::LinkInTarget { .. }), "{e:?}");
    assert!(!planted.exists());
}

#[test]
fn writes_private_files_and_refuses_what_is_in_the_way() {
    let (tmp, _root, secret) = setup();
    let out = tmp.path().join("out");
    let entries = [Entry::Dir { path: "/memories/d".into() }, file("/memories/d/x.md", "x\n")];
    FolderTarget::check(&out, false).unwrap().write(&entries, &()).unwrap();
    let mode = |p: &Path| fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode(&out), mode(&out.join("d")), mode(&out.join("d/x.md"))), (0o700, 0o700, 0o600));

    // Not empty: refused without force; with it, a file at the same path is replaced.
    assert!(matches!(FolderTarget::check(&out, false), Err(FolderError::NotEmpty { .. })));
    let again = [Entry::Dir { path: "/memories/d".into() }, file("/memories/d/x.md", "new\n")];
    FolderTarget::check(&out, true).unwrap().write(&again, &()).unwrap();
    assert_eq!(fs::read_to_string(out.join("d/x.md")).unwrap(), "new\n");

    // A link in the way of a file or a folder is refused, and the secret is left alone.
    fs::remove_file(out.join("d/x.md")).unwrap();
    symlink(&secret, out.join("d/x.md")).unwrap();
    let e = FolderTarget::check(&out, true).unwrap().write(&again, &()).unwrap_err();
    assert!(matches!(e, FolderError::LinkInTarget { .. }), "{e:?}");
    fs::remove_file(out.join("d/x.md")).unwrap();
    fs::remove_dir(out.join("d")).unwrap();
    symlink(tmp.path(), out.join("d")).unwrap();
    let e = FolderTarget::check(&out, true).unwrap().write(&again, &()).unwrap_err();
    assert!(matches!(e, FolderError::LinkInTarget { .. }), "{e:?}");
    assert_eq!(fs::read_to_string(&secret).unwrap(), "outside\n");
    assert!(!tmp.path().join("x.md").exists());

    // The target itself: a link, or a file.
    let link = tmp.path().join("link-out");
    symlink(&out, &link).unwrap();
    assert!(matches!(FolderTarget::check(&link, true), Err(FolderError::LinkInTarget { .. })));
    assert!(matches!(FolderTarget::check(&secret, true), Err(FolderError::TargetNotAFolder { .. })));
}

/// Every refused entry is reported, reading on past each; the message lists 20 and counts the
/// rest.
#[test]
fn every_refusal_is_reported_and_the_list_is_bounded() {
    let (_tmp, root, secret) = setup();
    for i in 0..25 {
        symlink(&secret, root.join(format!("link{i:02}.md"))).unwrap();
    }
    let e = read_folder(&root, &()).unwrap_err();
    let FolderError::Refused { refusals } = &e else { panic!("{e:?}") };
    assert_eq!(refusals.len(), 25);
    let message = e.to_string();
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines.len(), 22, "{message}");
    assert_eq!(lines[0], "refusing 25 entries of the folder:");
    assert_eq!(
        lines[1],
        format!(
            "  refusing {}: it is a symbolic link, and memfs import never follows one",
            root.join("link00.md").display()
        )
    );
    assert_eq!(lines[21], "  … and 5 more");
}
