//! Expiration by last use, in both dialects: reads, writes and renames count as uses, recorded
//! as last-access days; `expire` (manual) and `expire-unused-after` (before a day's first
//! command) remove what has gone unused, as one commit, and history keeps it.

use memfs::history::{Operation, Record, Shown};
use memfs::{Change, Command, Dialect};
use serde_json::json;

use crate::safeguards::{DAY, DIALECTS, Store, create, created, fresh_repo, view, view_range};
use crate::support::{check_text, listing_header};

/// The listing of `/memories` with `rows` (size, relative path) in `dialect`.
fn listing(dialect: Dialect, rows: &[(&str, &str)]) -> String {
    let root = match dialect {
        Dialect::Spec => "4.0K",
        Dialect::PythonSdk | Dialect::TypescriptSdk => "4K",
    };
    let mut out = format!("{}\n{root}\t/memories", listing_header("/memories", dialect));
    for (size, rel) in rows {
        let size = if *size == "dir" { root } else { size };
        out.push_str(&format!("\n{size}\t/memories/{rel}"));
    }
    out
}

#[tokio::test]
async fn expire_counts_days_from_the_last_view() {
    for dialect in DIALECTS {
        let repo = fresh_repo();
        let day = |d: u32| Store::on(&repo, dialect, DAY + d);
        let d0 = day(0);
        d0.ok(create("/memories/a.md", "alpha"), &created("/memories/a.md")).await;
        d0.ok(create("/memories/old/b.md", "beta"), &created("/memories/old/b.md")).await;
        // A view on the day a file was written records nothing new.
        d0.call(&view("/memories/a.md")).await;
        assert_eq!(d0.fs.flush().await.unwrap(), 0);
        assert_eq!(d0.generation().await, 2);

        // Day 10: a is read; flushing records it in one commit of its own.
        let d10 = day(10);
        d10.ok(view("/memories/a.md"), "Here's the content of /memories/a.md with line numbers:\n     1\talpha").await;
        d10.call(&view("/memories")).await; // a listing is not a use of the files in it
        assert_eq!(d10.generation().await, 2, "a read commits nothing by itself");
        assert_eq!(d10.fs.flush().await.unwrap(), 1);
        assert_eq!(d10.generation().await, 3);
        assert_eq!(d10.fs.flush().await.unwrap(), 0);
        let head = d10.fs.resolve("HEAD").await.unwrap();
        assert_eq!(head.record(), Record::from(Operation::RecordAccess { files: 1 }));
        assert_eq!(head.changes, []);
        let stored = "/memories/\n/memories/a.md 5B day+10 = \"alpha\"\n/memories/old/\n/memories/old/b.md 4B day+0 = \"beta\"\n";
        check_text("last-access days", &d10.dump().await, stored);

        // Day 29: nothing is 30 days unused.
        let d29 = day(29);
        let none = d29.fs.expire(30, false).await.unwrap();
        assert_eq!((none.files, none.generation), (vec![], None));
        // Day 30: b is; a dry run lists it and changes nothing.
        let d30 = day(30);
        let before = d30.state().await;
        let dry = d30.fs.expire(30, true).await.unwrap();
        assert_eq!((dry.files, dry.generation), (vec![("/memories/old/b.md".to_owned(), DAY)], None));
        check_text("state after a dry run", &d30.state().await, &before);
        let done = d30.fs.expire(30, false).await.unwrap();
        assert_eq!((done.files, done.generation), (vec![("/memories/old/b.md".to_owned(), DAY)], Some(4)));
        let head = d30.fs.resolve("HEAD").await.unwrap();
        assert_eq!(head.record(), Record::from(Operation::Expire { files: 1, unused_for_days: 30 }));
        assert_eq!(head.changes, [Change::Deleted { path: "/memories/old/b.md".into() }]);
        // The directory it leaves empty stays.
        d30.ok(view("/memories"), &listing(dialect, &[("5B", "a.md"), ("dir", "old/")])).await;

        // a: 30 days after its last view, not after its creation.
        let d39 = day(39);
        assert_eq!(d39.fs.expire(30, false).await.unwrap().files, []);
        let d40 = day(40);
        let done = d40.fs.expire(30, false).await.unwrap();
        assert_eq!((done.files, done.generation), (vec![("/memories/a.md".to_owned(), DAY + 10)], Some(5)));
        check_text("after expiring everything", &d40.dump().await, "/memories/\n/memories/old/\n");

        // Expired files stay in history, and come back by restore, counted as used that day.
        match d40.fs.show("@3:/memories/old/b.md").await.unwrap() {
            Shown::File(bytes) => assert_eq!(&*bytes, b"beta"),
            other => panic!("{other:?}"),
        }
        let restored = d40.fs.restore("@4", Some("/memories/a.md"), false).await.unwrap();
        assert_eq!(restored.generation, Some(6));
        assert_eq!(restored.changes, [memfs_core::Change::Created { path: "/memories/a.md".to_owned() }]);
        check_text(
            "after restore",
            &d40.dump().await,
            "/memories/\n/memories/a.md 5B day+40 = \"alpha\"\n/memories/old/\n",
        );
        assert_eq!(d40.fs.expire(30, false).await.unwrap().files, []);
        assert_eq!(d40.fs.expire(1, true).await.unwrap().files, []);
        assert_eq!(day(41).fs.expire(1, true).await.unwrap().files, [("/memories/a.md".to_owned(), DAY + 40)]);
    }
}

#[tokio::test]
async fn expire_reads_ride_along_with_the_next_commit_or_the_expiry_itself() {
    for dialect in DIALECTS {
        let repo = fresh_repo();
        let day = |d: u32| Store::on(&repo, dialect, DAY + d);
        let d0 = day(0);
        for name in ["a", "b", "c"] {
            let path = format!("/memories/{name}.md");
            d0.ok(create(&path, name), &created(&path)).await;
        }
        // Day 10: a is read, then a write commits its last-access day with it, in one commit.
        let d10 = day(10);
        d10.call(&view("/memories/a.md")).await;
        d10.ok(create("/memories/d.md", "d"), &created("/memories/d.md")).await;
        assert_eq!(d10.generation().await, 4);
        let head = d10.fs.resolve("HEAD").await.unwrap();
        assert_eq!(
            head.record(),
            Record::Tool(Command::Create { path: "/memories/d.md".into(), file_text: "d".into() })
        );
        assert_eq!(d10.fs.flush().await.unwrap(), 0);
        // Day 20: b is read and not flushed; expire counts it as used (it flushes first).
        let d20 = day(20);
        d20.call(&view_range("/memories/b.md", 1, 1)).await;
        let done = d20.fs.expire(20, false).await.unwrap();
        assert_eq!(done.files, [("/memories/c.md".to_owned(), DAY)]);
        assert_eq!(done.generation, Some(6), "one commit for the read, one for the expiry");
        check_text(
            "days",
            &d20.dump().await,
            "/memories/\n/memories/a.md 1B day+10 = \"a\"\n/memories/b.md 1B day+20 = \"b\"\n\
             /memories/d.md 1B day+10 = \"d\"\n",
        );
    }
}

#[tokio::test]
async fn expire_automatically_before_the_first_command_of_a_day() {
    for dialect in DIALECTS {
        let repo = fresh_repo();
        let day = |d: u32| Store::on(&repo, dialect, DAY + d);
        let d0 = day(0);
        d0.ok(create("/memories/a.md", "alpha"), &created("/memories/a.md")).await;
        d0.ok(create("/memories/b.md", "beta"), &created("/memories/b.md")).await;
        d0.set("expire-unused-after", "30d").await;
        let d10 = day(10);
        d10.call(&view("/memories/a.md")).await;
        assert_eq!(d10.fs.flush().await.unwrap(), 1);
        assert_eq!(d10.generation().await, 4);

        // Day 29: the first command finds nothing due.
        let d29 = day(29);
        d29.ok(view("/memories"), &listing(dialect, &[("5B", "a.md"), ("4B", "b.md")])).await;
        assert_eq!(d29.generation().await, 4);
        // Day 30: b goes before the first command answers, in a commit of its own.
        let d30 = day(30);
        d30.ok(view("/memories"), &listing(dialect, &[("5B", "a.md")])).await;
        assert_eq!(d30.generation().await, 5);
        let head = d30.fs.resolve("HEAD").await.unwrap();
        assert_eq!(head.record(), Record::from(Operation::Expire { files: 1, unused_for_days: 30 }));
        // Once a day: a later command that day commits only itself.
        d30.ok(create("/memories/c.md", "c"), &created("/memories/c.md")).await;
        assert_eq!(d30.generation().await, 6);
        // Day 40: a is due; the day's first command is a write: expiry first, then the write.
        let d40 = day(40);
        d40.ok(create("/memories/e.md", "e"), &created("/memories/e.md")).await;
        let log = d40.fs.log(Some(2), None).await.unwrap();
        let records: Vec<Record> = log.iter().map(|c| c.record()).collect();
        let create_e = Record::Tool(Command::Create { path: "/memories/e.md".into(), file_text: "e".into() });
        assert_eq!(records, [create_e, Record::from(Operation::Expire { files: 1, unused_for_days: 30 })]);
        assert_eq!(log[1].changes, [Change::Deleted { path: "/memories/a.md".into() }]);
        d40.ok(view("/memories"), &listing(dialect, &[("1B", "c.md"), ("1B", "e.md")])).await;
        // Readable in history after its expiry.
        match d40.fs.show("@6:/memories/a.md").await.unwrap() {
            Shown::File(bytes) => assert_eq!(&*bytes, b"alpha"),
            other => panic!("{other:?}"),
        }
        // Turned off, nothing expires on its own.
        d40.set("expire-unused-after", "off").await;
        let d99 = day(99);
        d99.ok(view("/memories"), &listing(dialect, &[("1B", "c.md"), ("1B", "e.md")])).await;
    }
}

/// Renaming a file is using it: its unused period starts again on the day of the rename.
#[tokio::test]
async fn expire_counts_a_rename_as_a_use() {
    for dialect in DIALECTS {
        let repo = fresh_repo();
        let day = |d: u32| Store::on(&repo, dialect, DAY + d);
        let d0 = day(0);
        d0.ok(create("/memories/a.md", "alpha"), &created("/memories/a.md")).await;
        d0.ok(create("/memories/b.md", "beta"), &created("/memories/b.md")).await;
        // Day 50: a is renamed (into a new directory); the rename commits its new day with it.
        let d50 = day(50);
        d50.ok(
            json!({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/notes/a.md"}),
            "Successfully renamed /memories/a.md to /memories/notes/a.md",
        )
        .await;
        assert_eq!(d50.generation().await, 3);
        assert_eq!(d50.fs.flush().await.unwrap(), 0);
        check_text(
            "after the rename",
            &d50.dump().await,
            "/memories/\n/memories/b.md 4B day+0 = \"beta\"\n/memories/notes/\n\
             /memories/notes/a.md 5B day+50 = \"alpha\"\n",
        );
        // Day 90: b has gone 90 days unused; a only 40, since its rename.
        let d90 = day(90);
        let done = d90.fs.expire(90, false).await.unwrap();
        assert_eq!((done.files, done.generation), (vec![("/memories/b.md".to_owned(), DAY)], Some(4)));
        check_text(
            "on day 90",
            &d90.dump().await,
            "/memories/\n/memories/notes/\n/memories/notes/a.md 5B day+50 = \"alpha\"\n",
        );
        // a expires 90 days after the rename, not before.
        assert_eq!(day(139).fs.expire(90, true).await.unwrap().files, []);
        let d140 = day(140);
        let done = d140.fs.expire(90, false).await.unwrap();
        assert_eq!((done.files, done.generation), (vec![("/memories/notes/a.md".to_owned(), DAY + 50)], Some(5)));
    }
}
