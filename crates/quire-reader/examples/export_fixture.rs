//! Writes the rendered fixture site to `target/reader-site/` as static files (each page as
//! `index.html` under its path), to look at in a browser:
//!
//! ```sh
//! cargo run -p quire-reader --example export_fixture
//! cd target/reader-site && python3 -m http.server 8099
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

fn main() {
    let fixture = common::fixture();
    let site = common::render_site(&fixture);
    let target = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/reader-site");
    let _ = std::fs::remove_dir_all(&target);
    for (url, bytes) in &site {
        let path = target.join(common::export_path(url));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
    }
    println!("{} files written to {}", site.len(), target.display());
}
