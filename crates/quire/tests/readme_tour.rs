//! README.md's "A five-minute tour", run as printed: every command of its `sh` blocks, in order,
//! in one `bash` with `set -euo pipefail`, against a fresh `quire serve`, so that the README
//! cannot drift from what quire answers.
//!
//! What the tour says and what runs differ only where the reader's machine and the test's do:
//! - `cargo run --release -- serve` is the server this test starts (any free port, a temporary
//!   data directory, or a fresh PostgreSQL schema with `QUIRE_TEST_DATABASE_URL`);
//! - `http://127.0.0.1:8080` is that server's address;
//! - `cargo run --release -- admin ...` is this build's `quire admin ...` on the same storage
//!   (given as the server's `QUIRE_*` variables).
//!
//! Every `curl` must answer 2xx, unless its line ends with a comment naming the status it shows
//! (`# 409: ...`): then it must answer that one. A line whose comment shows a merge's `result`
//! (`# result: "merge"`) must answer it. `curl` and `python3` must be installed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use support::{Server, Storage};

const README: &str = include_str!("../../../README.md");
const SECTION: &str = "## A five-minute tour";
const SERVE: &str = "cargo run --release -- serve";
const ADMIN: &str = "cargo run --release -- admin ";
const ADDRESS: &str = "http://127.0.0.1:8080";
/// The whole tour takes a few seconds; this only bounds a hung command.
const DEADLINE: Duration = Duration::from_secs(300);

/// Runs before the tour: strict mode, and a `curl` that checks each answer's status (and the
/// `result` a line promises) while printing the body as curl would.
const PRELUDE: &str = r##"set -euo pipefail
for tool in curl python3; do
  command -v "$tool" >/dev/null || { echo "tour: the README's tour needs $tool, not installed" >&2; exit 1; }
done
curl() {
  local body status want=${QUIRE_TOUR_EXPECT:-2xx} result=${QUIRE_TOUR_RESULT:-}
  body=$(mktemp)
  if ! status=$(command curl --max-time 60 "$@" -o "$body" -w '%{http_code}'); then
    cat "$body"; rm -f "$body"
    echo "tour: curl $* failed" >&2
    return 1
  fi
  cat "$body"
  case "$want:$status" in
    2xx:2??) ;;
    "$status:$status") ;;
    *) rm -f "$body"; echo "tour: curl $* answered $status, not $want" >&2; return 1 ;;
  esac
  if [ -n "$result" ] && ! grep -q "\"result\":\"$result\"" "$body"; then
    rm -f "$body"; echo "tour: curl $* did not answer result \"$result\"" >&2; return 1
  fi
  rm -f "$body"
}
"##;

/// The tour's `sh` blocks as one script for the server at `base`, or what is wrong with them.
fn tour_script(readme: &str, base: &str) -> Result<String, String> {
    let start = readme
        .find(SECTION)
        .ok_or_else(|| format!("README.md has no section {SECTION:?}"))?;
    let rest = &readme[start + SECTION.len()..];
    let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
    let mut script = String::from(PRELUDE);
    let (mut in_block, mut blocks, mut served, mut addressed) = (false, 0, false, false);
    for line in section.lines() {
        if !in_block {
            if line.trim_end() == "```sh" {
                in_block = true;
                blocks += 1;
            }
            continue;
        }
        if line.trim_end() == "```" {
            in_block = false;
            continue;
        }
        if line.trim() == SERVE {
            served = true;
            continue;
        }
        if line.contains("cargo ") && !line.contains(ADMIN) {
            return Err(format!(
                "a tour command runs cargo other than as {SERVE:?} or {ADMIN:?}: {line}"
            ));
        }
        addressed |= line.contains(ADDRESS);
        let line = line
            .replace(ADMIN, "\"$QUIRE_BIN\" admin ")
            .replace(ADDRESS, base);
        let mut prefix = String::new();
        if let Some(status) = expected_status(&line) {
            prefix += &format!("QUIRE_TOUR_EXPECT={status} ");
        }
        if let Some(result) = expected_result(&line) {
            prefix += &format!("QUIRE_TOUR_RESULT={result} ");
        }
        script += &prefix;
        script += &line;
        script.push('\n');
    }
    if in_block {
        return Err("the tour's last sh block is not closed".into());
    }
    script += "echo\necho 'tour: done'\n";
    if blocks < 5 || !served || !addressed {
        return Err(format!(
            "the tour is not as this test expects: {blocks} sh blocks, `{SERVE}` found: {served}, \
             {ADDRESS} found: {addressed}"
        ));
    }
    Ok(script)
}

/// The comment ending a command, if any (not a line that is only a comment).
fn comment(line: &str) -> Option<&str> {
    let at = line.find(" # ")?;
    let code = line[..at].trim();
    (!code.is_empty()).then(|| line[at + 3..].trim())
}

/// The status a command's comment says it answers, when that is not a success:
/// `# 409: Bea has not approved`.
fn expected_status(line: &str) -> Option<String> {
    let text = comment(line)?;
    let status = text.get(..3)?;
    let rest = &text[3..];
    let numeric = status.bytes().all(|b| b.is_ascii_digit());
    let ends = rest.is_empty() || rest.starts_with(':') || rest.starts_with(' ');
    (numeric && ends && !status.starts_with('2')).then(|| status.to_string())
}

/// The merge `result` a command's comment says it answers: `# result: "merge"` or
/// `# {"revision": "...", "result": "merge"}`.
fn expected_result(line: &str) -> Option<String> {
    let text = comment(line)?;
    let at = text.find("result")?;
    let after = text[at + "result".len()..].trim_start_matches('"');
    let value = after.strip_prefix(':')?.trim_start().strip_prefix('"')?;
    let value = &value[..value.find('"')?];
    value
        .bytes()
        .all(|b| b.is_ascii_alphabetic())
        .then(|| value.to_string())
}

#[test]
fn the_readme_tour_runs_as_printed() {
    let storage = Storage::new();
    let server = Server::start(&storage, true, &[]);
    let script = tour_script(README, &server.base).unwrap_or_else(|e| panic!("{e}"));
    let work = tempfile::tempdir().unwrap();
    let path = work.path().join("tour.sh");
    std::fs::write(&path, &script).unwrap();

    let mut command = Command::new("bash");
    // The tour's `admin` commands see the server's storage through its variables, and nothing
    // else of this environment's QUIRE_* (QUIRE_TEST_DATABASE_URL among them).
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("QUIRE") {
            command.env_remove(name);
        }
    }
    command.env("QUIRE_DATA_DIR", storage.dir.path());
    if let Some(url) = &storage.database_url {
        command.env("QUIRE_DATABASE_URL", url);
        command.env("QUIRE_DATABASE_MAX_CONNECTIONS", "2");
    }
    let mut child = command
        .arg("-x")
        .arg(&path)
        .env("QUIRE_BIN", env!("CARGO_BIN_EXE_quire"))
        // Where the tour's `mktemp` puts things: removed with the test's directory.
        .env("TMPDIR", work.path())
        .current_dir(work.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so that a hung tour is stopped with everything it started.
        .process_group(0)
        .spawn()
        .expect("run bash (the tour needs bash, curl and python3)");
    let pid = child.id();
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let errors = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            text
        });
        let mut stdout = String::new();
        let _ = out.read_to_string(&mut stdout);
        let stderr = errors.join().unwrap_or_default();
        let status = child.wait();
        let _ = done_tx.send((status, stdout, stderr));
    });
    let (status, stdout, stderr) = match done_rx.recv_timeout(DEADLINE) {
        Ok(done) => done,
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status();
            panic!(
                "the tour did not finish within {DEADLINE:?}; server log:\n{}",
                server.log.lock().unwrap().join("\n")
            );
        }
    };
    let status = status.expect("wait for the tour");
    assert!(
        status.success(),
        "the README's tour failed ({status}).\n--- trace and errors (the last command is the one that failed):\n{stderr}\n--- answers:\n{stdout}\n--- server log (last lines):\n{}",
        server.log.lock().unwrap().join("\n")
    );
    // It ran to its end (an `exit 0` in the README would not).
    assert!(stdout.ends_with("tour: done\n"), "{stdout}");
}

#[test]
fn tour_comments_name_what_is_checked() {
    assert_eq!(
        expected_status("curl -s -X POST $QUIRE/merge   # 409: Bea has not approved").as_deref(),
        Some("409")
    );
    assert_eq!(
        expected_status("curl -s $QUIRE/x   # 404").as_deref(),
        Some("404")
    );
    assert_eq!(expected_status("curl -s $QUIRE/x   # 200: fine"), None);
    assert_eq!(expected_status("# 409: a comment line runs nothing"), None);
    assert_eq!(
        expected_status("curl -d '{\"markdown\":\"# 404 things\"}' $QUIRE/x"),
        None
    );
    assert_eq!(
        expected_result(r#"curl -X POST $QUIRE/m   # {"revision": "...", "result": "merge"}"#).as_deref(),
        Some("merge")
    );
    assert_eq!(
        expected_result(r#"curl -X POST $QUIRE/u   # result: "conflicts""#).as_deref(),
        Some("conflicts")
    );
    assert_eq!(expected_result("curl $QUIRE/x   # the results page"), None);

    let readme = "intro\n## A five-minute tour\n\n```sh\ncargo run --release -- serve\n```\n\n\
                  ```sh\nexport QUIRE=http://127.0.0.1:8080\nX=$(cargo run --release -- admin token create --email a@b.c)\n```\n\
                  ```sh\ncurl -s $QUIRE/v1/x   # 404: no\n```\n```sh\ntrue\n```\n```sh\ntrue\n```\n\
                  ## Next\n```sh\nnot in the tour\n```\n";
    let script = tour_script(readme, "http://127.0.0.1:1234").unwrap();
    let body = script.strip_prefix(PRELUDE).unwrap();
    assert_eq!(
        body,
        "export QUIRE=http://127.0.0.1:1234\n\
         X=$(\"$QUIRE_BIN\" admin token create --email a@b.c)\n\
         QUIRE_TOUR_EXPECT=404 curl -s $QUIRE/v1/x   # 404: no\n\
         true\ntrue\necho\necho 'tour: done'\n"
    );
    let building = readme.replace("true\n```\n## Next", "cargo build\n```\n## Next");
    assert!(tour_script(&building, "http://x").is_err());
}
