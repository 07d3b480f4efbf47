//! What the generator made: the ids the load driver needs, written as JSON between the two.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Dataset {
    /// The scale it was made at (`full` or `small`).
    pub scale: String,
    /// The server it was made on.
    pub url: String,
    /// The administrator's token (owner of every organization made).
    pub admin_token: String,
    /// Tokens of the members made (editors); empty when members could not be made. All joined
    /// the first organization; the first `members_everywhere` joined every organization.
    pub member_tokens: Vec<String>,
    #[serde(default)]
    pub members_everywhere: usize,
    pub orgs: Vec<String>,
    /// The organization with the most spaces: the `list-spaces-*` families list it.
    pub list_org: String,
    /// Number of spaces in `list_org`.
    pub list_org_spaces: usize,
    /// Every space made, the big one first.
    pub spaces: Vec<String>,
    /// The space with the many pages.
    pub big_space: String,
    /// Every page of the big space, in tree order (parents before children).
    pub pages: Vec<String>,
    /// Pages of the big space that have comments (a sample).
    pub commented_pages: Vec<String>,
    /// Whether comments could be made (false when the endpoint answered "no route").
    pub comments: bool,
    /// Top-level comments on the big space: the 10,000-item list of the `list-*-p50` families.
    pub big_space_comments: usize,
    /// The page size used to compare page 1 with page 50 of that list.
    pub list_limit: usize,
    pub search: SearchWords,
    pub summary: Summary,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SearchWords {
    pub one_word: String,
    pub two_words: String,
    pub prefix: String,
}

/// What was made and how long it took.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Summary {
    pub orgs: usize,
    pub spaces: usize,
    pub pages_big_space: usize,
    /// Bytes of markdown written into the big space.
    pub markdown_bytes: usize,
    pub links: usize,
    pub change_requests: usize,
    pub change_requests_merged: usize,
    pub change_requests_open: usize,
    pub comments: usize,
    pub replies: usize,
    pub comments_resolved: usize,
    pub members: usize,
    /// Seconds per step, in order.
    pub steps: Vec<(String, f64)>,
    pub seconds: f64,
    /// Things that could not be made, and why.
    pub skipped: Vec<String>,
}

impl Dataset {
    pub fn read(path: &std::path::Path) -> Result<Dataset, String> {
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{} is not a dataset: {e}", path.display()))
    }

    pub fn write(&self, path: &std::path::Path) -> Result<(), String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Tokens to spread reads over: those of the members who may read every space (reads go to
    /// spaces of every organization), else the administrator's.
    pub fn read_tokens(&self) -> Vec<String> {
        let everywhere = &self.member_tokens[..self.members_everywhere.min(self.member_tokens.len())];
        if everywhere.is_empty() {
            vec![self.admin_token.clone()]
        } else {
            everywhere.to_vec()
        }
    }
}
