//! Which store and how to unlock it, as a new user gives them (issue 16): a store that does not
//! exist yet, the first `memfs exec`s racing to create the default store, empty environment
//! variables, plain paths as stores, plain dates as times.

use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::json;

use crate::support::{Store, assert_text, fails, memfs, ok, run, text};

/// The default store's folder and key file under a test home.
fn default_store(home: &Path) -> std::path::PathBuf {
    home.join("data/memfs/default")
}

fn create(name: &str) -> String {
    format!("{}\n", json!({"command": "create", "path": format!("/memories/{name}"), "file_text": "x"}))
}

const CREATED_KEY: &str =
    "memfs: warning: no OS keychain here: the store's key goes to a key file on this disk, beside the store
memfs: created the key file {KEY} (mode 0600): keep it safe, the store cannot be read without it\n";
const CREATED_STORE: &str = "memfs: created a new encrypted store at file://{STORE}\n";

/// Bug 4: before the first `memfs exec`, the commands that read the default store said it is
/// encrypted and asked for a passphrase; they say there is no store yet, and what makes one.
/// An explicit `--store` that does not exist says so too. Nothing is created.
#[test]
fn a_store_that_does_not_exist_yet_is_named_not_asked_for_a_passphrase() {
    let home = tempfile::tempdir().expect("temp dir");
    let export = home.path().join("out");
    let export = export.to_str().expect("UTF-8");
    let store = default_store(home.path());
    let commands: [&[&str]; 7] =
        [&["log"], &["check"], &["gc"], &["show", "HEAD"], &["policy", "show"], &["export", export], &["undo"]];
    for args in commands {
        let out = memfs(home.path()).args(args).stdin(Stdio::null()).output().expect("run memfs");
        assert_text(
            &format!("{args:?}"),
            &fails(&format!("{args:?}"), 1, &out),
            &format!(
                "memfs: no memfs store at file://{} yet: the first `memfs exec` creates this default store (or run `memfs init`)\n",
                store.display()
            ),
        );
    }
    let missing = home.path().join("nowhere");
    for given in [missing.display().to_string(), format!("file://{}", missing.display())] {
        let out = memfs(home.path()).args(["--store", &given, "log"]).stdin(Stdio::null()).output().expect("run");
        assert_text(
            &given,
            &fails(&given, 1, &out),
            &format!("memfs: no memfs store at {given} yet: create one with `memfs init`\n"),
        );
    }
    assert!(!home.path().join("data").exists() && !home.path().join("config").exists(), "nothing was created");
    assert!(!Path::new(export).exists(), "nothing was exported");
}

/// Bug 4 on the cloud stores of the emulators: a prefix with no store, opened without a
/// credential, is named as no store, not as an encrypted one.
#[test]
fn a_cloud_store_that_does_not_exist_yet_is_named_not_asked_for_a_passphrase() {
    for (name, url, env) in crate::cloud::cloud_stores() {
        let home = tempfile::tempdir().expect("temp dir");
        let mut cmd = memfs(home.path());
        cmd.envs(env.iter().map(|(k, v)| (*k, v.as_str()))).args(["--store", &url, "log"]);
        assert_text(
            name,
            &fails(name, 1, &run(cmd, "")),
            &format!("memfs: no memfs store at {url} yet: create one with `memfs init`\n"),
        );
    }
}

/// Bug 5: `memfs exec`s started at once on a fresh machine each tried to create the default
/// store; the losers failed ("File exists", "a memfs store already exists here") and their call
/// was lost. Now every call is answered, in one store with one key file, and the store and key
/// file are announced once.
#[test]
fn first_execs_started_at_once_share_one_new_default_store() {
    const N: usize = 4;
    for round in 0..3 {
        let home = tempfile::tempdir().expect("temp dir");
        let children: Vec<_> = (0..N)
            .map(|i| {
                let mut cmd = memfs(home.path());
                cmd.arg("exec");
                std::thread::spawn(move || run(cmd, create(&format!("f{i}"))))
            })
            .collect();
        let outs: Vec<Output> = children.into_iter().map(|c| c.join().expect("a run")).collect();
        let mut stderr = String::new();
        for (i, out) in outs.iter().enumerate() {
            assert!(out.status.success(), "round {round}, exec {i}: {}", text(&out.stderr));
            assert_text(
                &format!("round {round}, exec {i}"),
                &text(&out.stdout),
                &format!(
                    "{}\n",
                    json!({"content": format!("File created successfully at: /memories/f{i}"), "is_error": false})
                ),
            );
            stderr.push_str(&text(&out.stderr));
        }
        let key = home.path().join("config/memfs/default.key");
        let store = default_store(home.path());
        let mut lines: Vec<&str> = stderr.lines().collect();
        lines.sort_unstable();
        let expected = format!(
            "{}{}",
            CREATED_KEY.replace("{KEY}", &key.display().to_string()),
            CREATED_STORE.replace("{STORE}", &store.display().to_string())
        );
        let mut expected_lines: Vec<&str> = expected.lines().collect();
        expected_lines.sort_unstable();
        assert_eq!(lines, expected_lines, "round {round}: created once");
        let keys: Vec<_> = std::fs::read_dir(home.path().join("config/memfs")).expect("key folder").flatten().collect();
        assert_eq!(keys.len(), 1, "one key file");
        assert_eq!(std::fs::metadata(&key).expect("key file").len(), 32);
        let out = memfs(home.path()).args(["exec"]).stdin(Stdio::piped()).output().expect("run");
        ok("a later exec", &out);
        let view =
            run(memfs(home.path()).arg("exec"), format!("{}\n", json!({"command": "view", "path": "/memories"})));
        let listing = ok("view", &view);
        for i in 0..N {
            assert!(listing.contains(&format!("/memories/f{i}")), "round {round}: f{i} in {listing}");
        }
        let log = ok("log", &memfs(home.path()).args(["log", "--json"]).stdin(Stdio::null()).output().expect("log"));
        assert_eq!(log.lines().count(), N, "round {round}: one commit per call");
    }
}

/// An empty `MEMFS_…` variable counts as unset: `MEMFS_KEY_FILE=` was "invalid value for
/// '--key-file <PATH>'", `MEMFS_TODAY=` "is not a date", `MEMFS_STORE=` an unsupported URL. And
/// `memfs exec` on a pipe prints no hint on stderr (that is for a terminal).
#[test]
fn empty_environment_variables_count_as_unset() {
    let home = tempfile::tempdir().expect("temp dir");
    let empty = [
        "MEMFS_STORE",
        "MEMFS_NAMESPACE",
        "MEMFS_MAX_STALENESS",
        "MEMFS_CACHE_DIR",
        "MEMFS_KEY_FILE",
        "MEMFS_TRUST_HEAD",
        "MEMFS_ACTOR",
        "MEMFS_PASSPHRASE",
        "MEMFS_TODAY",
        "MEMFS_DIALECT",
    ];
    let with_empty = || {
        let mut cmd = memfs(home.path());
        for name in empty {
            cmd.env(name, "");
        }
        cmd
    };
    let out = run(with_empty().arg("exec"), create("a"));
    assert_eq!(
        succeeds_quietly(&out),
        format!("{}\n", json!({"content": "File created successfully at: /memories/a", "is_error": false}))
    );
    let out = run(with_empty().arg("exec"), format!("{}\n", json!({"command": "view", "path": "/memories/a"})));
    assert_eq!(
        ok("exec", &out),
        format!(
            "{}\n",
            json!({"content": "Here's the content of /memories/a with line numbers:\n     1\tx", "is_error": false})
        )
    );
    let log = ok("log", &with_empty().args(["log", "--json"]).stdin(Stdio::null()).output().expect("log"));
    assert_eq!(log.lines().count(), 1);
}

/// The first exec creates the store: its stderr holds the "created" lines only (and the
/// warning that no OS keychain is here: the tests' homes have none).
fn succeeds_quietly(out: &Output) -> String {
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr).lines().count(), 3, "only the created lines: {}", text(&out.stderr));
    text(&out.stdout)
}

/// `--store /absolute/path` is the folder store `file:///absolute/path`; `./path` and
/// `../path` are from the current folder; a bare word keeps its refusal.
#[test]
fn a_plain_path_is_a_local_store() {
    let s = Store::new("pass");
    let dir = s.dir();
    let plain = dir.display().to_string();
    s.exec_ok(&["--store", &plain], &[json!({"command": "create", "path": "/memories/a", "file_text": "x"})]);
    let cwd = s.root();
    let rel = s.memfs().current_dir(cwd).args(["--store", "./store", "log", "--json"]).output().expect("log");
    assert_eq!(ok("./store", &rel).lines().count(), 1);
    let up =
        s.memfs().current_dir(dir.join("log")).args(["--store", "../../store", "log", "--json"]).output().expect("log");
    assert_eq!(ok("../../store", &up).lines().count(), 1);
    let out = s.memfs().args(["--store", "store", "log"]).output().expect("log");
    // A bare word is a store's name (`[stores.NAME]` in the config file, which is not there).
    assert_text(
        "a bare word",
        &fails("a bare word", 1, &out),
        &format!(
            "memfs: no store named store: {}/config/memfs/config.toml does not exist; a store is a URL \
             (file:///path/to/store, s3://bucket/prefix, memory://), a path (/path/to/store, ./store) or the name of a \
             [stores.NAME] table in that file\n",
            s.root().display()
        ),
    );
    assert_text("the same store", &s.ok(&["--store", &plain, "show", "HEAD:/memories/a"]), "x");
}

/// `restore --at` takes plain dates and times (UTC): a date names its whole day, a time
/// without seconds its whole minute. A date before the first commit is the usual error.
#[test]
fn restore_takes_plain_dates_and_times() {
    let s = Store::new("pass");
    s.exec("a", &[json!({"command": "create", "path": "/memories/a", "file_text": "one"})]);
    s.exec("a", &[json!({"command": "create", "path": "/memories/b", "file_text": "two"})]);
    for at in ["2020-01-01", "2020-01-01T12:00", "2020-01-01 12:00:00"] {
        assert_text(at, &s.fails(&["restore", "--at", at]), &format!("memfs: no commit was made at or before {at}\n"));
    }
    let head = s.commits()[0]["id"].as_str().expect("id").to_owned();
    for at in ["2999-12-31", "2999-12-31T23:59", "2999-12-31 23:59:59", "2999-12-31 23:59+02:00"] {
        assert_text(
            at,
            &s.ok(&["restore", "--at", at]),
            &format!("nothing to restore: /memories is already as at @2 ({})\n", &head[..12]),
        );
    }
}

/// `memfs exec` on a terminal says once what it waits for; on a pipe it says nothing (the
/// other tests here read its stderr whole). The terminal is a real pseudo-terminal, made by
/// util-linux's `script`; Ctrl-D ends the input.
#[test]
fn exec_on_a_terminal_says_it_waits_for_json_lines() {
    let home = tempfile::tempdir().expect("temp dir");
    let cmd = memfs(home.path());
    let line = format!("{} exec", env!("CARGO_BIN_EXE_memfs"));
    let mut script = std::process::Command::new("script");
    script.args(["-qec", &line, "/dev/null"]);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => script.env(k, v),
            None => script.env_remove(k),
        };
    }
    script.env("MEMFS_STORE", "memory://");
    let input = format!("{}\n\u{4}", json!({"command": "view", "path": "/memories"}));
    let out = run(script, input);
    let screen = text(&out.stdout).replace("\r\n", "\n");
    assert!(out.status.success(), "{screen}");
    let hint = "memfs: waiting for memory-tool calls as JSON lines on stdin, one per line (Ctrl-D to end)\n";
    // The terminal echoes the typed line too, before or after the hint: look for the lines.
    assert_eq!(screen.matches(hint).count(), 1, "{screen}");
    let answer = json!({"content": "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories", "is_error": false});
    assert!(screen.ends_with(&format!("{answer}\n")), "{screen}");
}

/// A key file that group or others may read is refused, as a tokens file is (and as `ssh`
/// refuses such a private key), naming the fix; `chmod 600` lets it unlock again.
#[test]
fn a_key_file_others_can_read_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().expect("temp dir");
    let key = home.path().join("memfs.key");
    let url = format!("file://{}", home.path().join("store").display());
    let with_key = |args: &[&str]| {
        let mut cmd = memfs(home.path());
        cmd.args(["--store", &url, "--key-file", key.to_str().unwrap()]).args(args).stdin(Stdio::null());
        cmd.output().expect("run memfs")
    };
    assert!(with_key(&["init"]).status.success());
    for mode in [0o644, 0o640, 0o604, 0o660] {
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(mode)).unwrap();
        let k = key.display();
        assert_text(
            &format!("mode {mode:o}"),
            &fails("log", 1, &with_key(&["log"])),
            &format!(
                "memfs: reading key file {k}: key file {k} can be read or written by others (mode {mode:04o}): it holds a key; run chmod 600 {k}\n"
            ),
        );
    }
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(ok("log", &with_key(&["log"])), "");
}

/// An encrypted store opened with no passphrase given: on a terminal, memfs asks for it (as
/// `init` does), without echo; a wrong one gets the coarse error. Without a terminal the error
/// says where a passphrase comes from, as before.
#[test]
fn a_command_asks_for_the_passphrase_on_a_terminal() {
    let s = Store::new("terminal passphrase");
    s.exec("tester", &[json!({"command": "create", "path": "/memories/a.md", "file_text": "x"})]);
    let mut cmd = s.memfs();
    cmd.env_remove("MEMFS_PASSPHRASE");
    let url = s.url();

    // The answer is typed before the prompt shows, so the terminal echoes it once, before memfs
    // turns echo off; after the prompt nothing of it shows.
    let (code, shown) = crate::support::on_terminal(&cmd, &["cat", "/memories/a.md"], "terminal passphrase\n");
    assert_eq!((code, shown.as_str()), (Some(0), format!("terminal passphrase\nPassphrase for {url}: \nx").as_str()));

    let (code, shown) = crate::support::on_terminal(&cmd, &["cat", "/memories/a.md"], "wrong\n");
    assert_eq!(
        (code, shown.as_str()),
        (
            Some(1),
            format!("wrong\nPassphrase for {url}: \nmemfs: store {url}: wrong passphrase or key file\n").as_str()
        )
    );

    let out = cmd.args(["cat", "/memories/a.md"]).stdin(Stdio::null()).output().expect("run memfs");
    assert_text(
        "no terminal",
        &fails("cat without a terminal", 1, &out),
        &format!(
            "memfs: store {url} is encrypted: give a passphrase (MEMFS_PASSPHRASE, --passphrase-file) or a key file (--key-file)\n"
        ),
    );
}

/// `memfs init` with no passphrase given and no terminal to ask on (a service: `setsid` drops
/// the controlling terminal) says where a passphrase comes from, not "No such device or
/// address (os error 6)", and creates nothing.
#[test]
fn init_without_a_terminal_says_where_a_passphrase_comes_from() {
    let home = tempfile::tempdir().expect("temp dir");
    let folder = home.path().join("store");
    let url = format!("file://{}", folder.display());
    let base = memfs(home.path());
    let mut cmd = std::process::Command::new("setsid");
    cmd.arg(env!("CARGO_BIN_EXE_memfs")).args(["--store", &url, "init"]);
    for (k, v) in base.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let out = cmd.stdin(Stdio::null()).output().expect("run setsid memfs");
    assert_text(
        "init without a terminal",
        &fails("init", 1, &out),
        "memfs: no terminal to ask for the passphrase on: give it with --passphrase-file or MEMFS_PASSPHRASE, or use a key file (--key-file)\n",
    );
    assert!(!folder.exists(), "nothing created");
}

/// `--passphrase-command` (or `MEMFS_PASSPHRASE_COMMAND`) runs a password manager and uses the
/// first line it prints; before MEMFS_PASSPHRASE; a command that fails or prints nothing
/// unlocks nothing, and the error names neither the command nor what it printed.
#[test]
fn a_passphrase_command_unlocks_like_a_passphrase() {
    let s = Store::new("from a manager");
    s.exec("tester", &[json!({"command": "create", "path": "/memories/a.md", "file_text": "x"})]);
    let cat = |setup: &dyn Fn(&mut std::process::Command)| {
        let mut cmd = s.memfs();
        cmd.env_remove("MEMFS_PASSPHRASE");
        setup(&mut cmd);
        cmd.args(["cat", "/memories/a.md"]).output().expect("run memfs")
    };
    let out = cat(&|c| {
        c.args(["--passphrase-command", "printf 'from a manager\\nsecond line\\n'"]);
    });
    assert_eq!(ok("command", &out), "x");
    let out = cat(&|c| {
        c.env("MEMFS_PASSPHRASE_COMMAND", "echo from a manager").env("MEMFS_PASSPHRASE", "wrong");
    });
    assert_eq!(ok("the variable, before MEMFS_PASSPHRASE", &out), "x");
    let out = cat(&|c| {
        c.args(["--passphrase-command", "echo secret-ish; exit 3"]);
    });
    assert_text(
        "failing",
        &fails("failing", 1, &out),
        "memfs: the --passphrase-command failed (exit status: 3); nothing was unlocked\n",
    );
    let out = cat(&|c| {
        c.args(["--passphrase-command", "true"]);
    });
    assert_text("silent", &fails("silent", 1, &out), "memfs: the --passphrase-command printed no passphrase\n");
    let out = cat(&|c| {
        c.args(["--passphrase-command", "echo not it"]);
    });
    assert_text(
        "wrong",
        &fails("wrong", 1, &out),
        &format!("memfs: store {}: wrong passphrase or key file\n", s.url()),
    );
}

/// `--store NAME` takes the URL, key source, actor and dialect of `[stores.NAME]` in the config
/// file; the command line wins; an unknown name, a file others can write, or a malformed file
/// is refused with where to look.
#[test]
fn a_named_store_comes_from_the_config_file() {
    use std::os::unix::fs::PermissionsExt;
    let s = Store::new("named passphrase");
    let config_dir = s.root().join("config/memfs");
    std::fs::create_dir_all(&config_dir).unwrap();
    let config = config_dir.join("config.toml");
    let pass = s.root().join("pass");
    std::fs::write(&pass, "named passphrase\n").unwrap();
    std::fs::write(
        &config,
        format!(
            "[stores.work]\nurl = \"{}\"\npassphrase_file = \"{}\"\nactor = \"named\"\ndialect = \"python-sdk\"\n\n[stores.other]\nurl = \"memory://\"\n",
            s.dir().display(),
            pass.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    let named = |args: &[&str], input: &str| {
        let mut cmd = memfs(s.root());
        cmd.args(["--store", "work"]).args(args);
        run(cmd, input)
    };
    // The dialects word a second create of one file differently.
    let twice = format!("{}{}", create("a.md"), create("a.md"));
    let by_config = ok("exec by name", &named(&["exec"], &twice));
    assert_eq!(by_config.lines().nth(1), Some(r#"{"content":"File /memories/a.md already exists","is_error":true}"#));
    let spec = ok("--dialect wins", &named(&["exec", "--dialect", "spec"], &create("a.md")));
    assert_eq!(spec, "{\"content\":\"Error: File /memories/a.md already exists\",\"is_error\":true}\n");
    let log = ok("log", &named(&["log", "--json"], ""));
    let newest: serde_json::Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(newest["actor"], "named");
    let log = ok("--actor wins", &named(&["--actor", "me", "exec"], &create("b.md")));
    assert!(log.contains("File created successfully"), "{log}");

    let mut cmd = memfs(s.root());
    cmd.args(["--store", "nope", "log"]);
    let out = run(cmd, "");
    assert_text(
        "unknown name",
        &fails("unknown", 1, &out),
        &format!("memfs: no store named nope in {} (it names: other, work)\n", config.display()),
    );
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o620)).unwrap();
    assert_text(
        "writable by others",
        &fails("0620", 1, &named(&["log"], "")),
        &format!(
            "memfs: {} can be written by others (mode 0620): it names the commands and keys memfs uses; run chmod go-w {}\n",
            config.display(),
            config.display()
        ),
    );
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(&config, "[stores.work]\nurl = \"x\"\nsecret_thing = \"hunter2\"\n").unwrap();
    let err = fails("malformed", 1, &named(&["log"], ""));
    assert_text("malformed", &err, &format!("memfs: {}: not a valid memfs config near line 3\n", config.display()));
    assert!(!err.contains("hunter2"));
}

/// `exec`'s line bound from `max_line_bytes` of `[stores.NAME]`; `--max-line-bytes` and
/// MEMFS_MAX_LINE_BYTES win over it; a value that is not a size is refused naming the store.
#[test]
fn exec_takes_its_line_bound_from_a_named_store() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let config_dir = home.path().join("config/memfs");
    std::fs::create_dir_all(&config_dir).unwrap();
    let config = config_dir.join("config.toml");
    std::fs::write(
        &config,
        "[stores.small]\nurl = \"memory://\"\nmax_line_bytes = \"64\"\n\n[stores.bad]\nurl = \"memory://\"\nmax_line_bytes = \"lots\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    // A view padded with spaces to 65 bytes.
    let line = format!("{{\"command\":\"view\",\"path\":\"/memories\"{}}}\n", " ".repeat(28));
    assert_eq!(line.len(), 66);
    let exec = |store: &str, args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = memfs(home.path());
        cmd.envs(env.iter().copied()).args(["--store", store, "exec", "--dialect", "python-sdk"]).args(args);
        run(cmd, &line)
    };
    let refused = r#"{"content":"Invalid JSON input line: longer than 64 bytes; raise the bound with --max-line-bytes SIZE or MEMFS_MAX_LINE_BYTES","is_error":true}"#;
    assert_text("by the table", &ok("exec", &exec("small", &[], &[])), &format!("{refused}\n"));
    let view = r#"{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories","is_error":false}"#;
    assert_text("the flag wins", &ok("exec", &exec("small", &["--max-line-bytes", "65"], &[])), &format!("{view}\n"));
    assert_text(
        "the variable wins",
        &ok("exec", &exec("small", &[], &[("MEMFS_MAX_LINE_BYTES", "1KiB")])),
        &format!("{view}\n"),
    );
    assert_text(
        "not a size",
        &fails("bad", 1, &exec("bad", &[], &[])),
        "memfs: store bad: max_line_bytes \"lots\": expected a size such as 64MiB, 512MiB or 4096 (bytes)\n",
    );
}
