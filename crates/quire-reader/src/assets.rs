//! The stylesheet, script and icon of the reader, embedded in the binary from `assets/`.
//!
//! Each is served under a name carrying a hash of its bytes (`reader.3f9a0c1d2e.css`), so a
//! server answers them with `Cache-Control: public, max-age=31536000, immutable` and a new
//! build changes the names of what changed.

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// An embedded asset.
#[derive(Debug)]
pub struct Asset {
    /// The file's name in `assets/` (`reader.css`).
    pub name: &'static str,
    /// The name it is served under, with its content hash (`reader.3f9a0c1d2e.css`).
    pub path: String,
    pub content_type: &'static str,
    pub bytes: &'static [u8],
}

const FILES: &[(&str, &str, &[u8])] = &[
    (
        "reader.css",
        "text/css; charset=utf-8",
        include_bytes!("../assets/reader.css"),
    ),
    (
        "reader.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../assets/reader.js"),
    ),
    (
        "favicon.svg",
        "image/svg+xml",
        include_bytes!("../assets/favicon.svg"),
    ),
];

/// Every asset.
pub fn assets() -> &'static [Asset] {
    static ASSETS: OnceLock<Vec<Asset>> = OnceLock::new();
    ASSETS.get_or_init(|| {
        FILES
            .iter()
            .map(|(name, content_type, bytes)| {
                let digest = Sha256::digest(bytes);
                let hash: String = digest.iter().take(5).map(|byte| format!("{byte:02x}")).collect();
                let path = match name.rsplit_once('.') {
                    Some((stem, extension)) => format!("{stem}.{hash}.{extension}"),
                    None => format!("{name}.{hash}"),
                };
                Asset {
                    name,
                    path,
                    content_type,
                    bytes,
                }
            })
            .collect()
    })
}

/// The asset served as `path` (its hashed name).
pub fn asset(path: &str) -> Option<&'static Asset> {
    assets().iter().find(|asset| asset.path == path)
}

/// The hashed name of the asset `name`.
pub(crate) fn path_of(name: &str) -> &'static str {
    assets()
        .iter()
        .find(|asset| asset.name == name)
        .map_or("", |asset| asset.path.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assets_are_found_by_their_hashed_names() {
        let css = path_of("reader.css");
        assert!(css.starts_with("reader.") && css.ends_with(".css") && css.len() == "reader..css".len() + 10);
        assert_eq!(asset(css).unwrap().name, "reader.css");
        assert!(asset("reader.css").is_none());
    }
}
