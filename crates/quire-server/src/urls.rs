//! Absolute URLs of resources, built on the configured public base URL.

/// `location` URLs point into the API (`{base}/v1/...`); `app` URLs point at the web view
/// paths (`{base}/o/...`), which follow GitBook's app layout.
#[derive(Clone, Debug)]
pub struct Urls {
    base: String,
}

impl Urls {
    pub fn new(base: &str) -> Urls {
        Urls {
            base: base.trim_end_matches('/').to_string(),
        }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// `{base}/v1{path}`.
    pub fn api(&self, path: &str) -> String {
        format!("{}/v1{path}", self.base)
    }

    /// Whether `url` is on quire's own public origin (where `/s/...`, `/o/...` and `/v1/...` are
    /// quire's).
    pub fn is_own_origin(&self, url: &url::Url) -> bool {
        url.origin().ascii_serialization() == self.base
    }

    /// `{base}{path}`, a web view URL.
    pub fn app(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}
