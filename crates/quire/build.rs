//! Names the commit the binary is built from, for `quire --version`: `QUIRE_GIT_COMMIT` when set
//! (a build without `.git`, e.g. a container image, passes it in), else what git says about the
//! source tree, else "unknown". A missing git or a tree that is not a checkout never fails the
//! build.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=QUIRE_GIT_COMMIT");
    let commit = std::env::var("QUIRE_GIT_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=QUIRE_GIT_COMMIT={}", commit.trim());
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn git_commit() -> Option<String> {
    let commit = git(&["rev-parse", "--short=12", "HEAD"])?;
    // Build again when HEAD moves: HEAD itself (a checkout of another branch) and the ref it
    // names (a commit on the branch), loose or packed. Paths come from git, so that work trees
    // (whose `.git` is a file) are covered too.
    for name in ["HEAD", "packed-refs"] {
        if let Some(path) = git(&["rev-parse", "--git-path", name]) {
            watch(&path);
        }
    }
    if let Some(reference) = git(&["symbolic-ref", "-q", "HEAD"])
        && let Some(path) = git(&["rev-parse", "--git-path", &reference])
    {
        watch(&path);
    }
    Some(commit)
}

fn watch(path: &str) {
    if Path::new(path).exists() {
        println!("cargo:rerun-if-changed={path}");
    }
}
