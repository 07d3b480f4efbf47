//! Merge rules of organizations and spaces: which conditions a change request must meet before
//! it merges. Shapes follow GitBook (`{type: "rules", rules: [...]}`, `{type: "none"}`, and for
//! spaces `{type: "inherit"}`).

use serde::{Deserialize, Serialize};

use crate::error::StoreError;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum MergeRules {
    Rules { rules: Vec<MergeRule> },
    None,
    Inherit,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "rule", rename_all = "snake_case", deny_unknown_fields)]
pub enum MergeRule {
    RequireSpecificReviewers { users: Vec<String> },
    RequireOneOfSpecificReviewers { users: Vec<String> },
    AllowBypass { users: Vec<String> },
    RequireAtLeastOneReview,
    RequireAtLeastOneApprovedReview,
    RequireAllReviewsApproved,
    RequireUpToDateChangeRequest,
    RequireChangeRequestSubject,
    RequireChangeRequestDescription,
    RequireAuthorToMerge,
}

impl MergeRules {
    /// Parses merge rules from a client. `allow_inherit` is true for spaces, whose rules may
    /// defer to their organization's.
    pub fn parse(value: serde_json::Value, allow_inherit: bool) -> Result<MergeRules, StoreError> {
        let rules: MergeRules = serde_json::from_value(value).map_err(|e| {
            StoreError::invalid(format!(
                "invalid `mergeRules`: {e} (quire supports type rules, none{} with the rules \
                 require_specific_reviewers, require_one_of_specific_reviewers, allow_bypass, \
                 require_at_least_one_review, require_at_least_one_approved_review, \
                 require_all_reviews_approved, require_up_to_date_change_request, \
                 require_change_request_subject, require_change_request_description, \
                 require_author_to_merge)",
                if allow_inherit { ", inherit" } else { "" }
            ))
        })?;
        if rules == MergeRules::Inherit && !allow_inherit {
            return Err(StoreError::invalid(
                "invalid `mergeRules`: an organization cannot inherit merge rules",
            ));
        }
        Ok(rules)
    }

    /// Every user named by a rule, to check they belong to the organization.
    pub fn users(&self) -> Vec<&str> {
        match self {
            MergeRules::Rules { rules } => rules
                .iter()
                .flat_map(|r| match r {
                    MergeRule::RequireSpecificReviewers { users }
                    | MergeRule::RequireOneOfSpecificReviewers { users }
                    | MergeRule::AllowBypass { users } => users.iter().map(String::as_str).collect(),
                    _ => Vec::new(),
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    pub fn to_json_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{\"type\":\"none\"}".into())
    }

    /// Reads stored rules; an error when they do not decode, never "no rules": rules that
    /// cannot be read must not let every change request merge.
    pub fn from_json_text(text: &str) -> Result<MergeRules, serde_json::Error> {
        serde_json::from_str(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_gitbook_shapes() {
        let rules = MergeRules::parse(
            json!({"type": "rules", "rules": [{"rule": "require_specific_reviewers", "users": ["u1"]},
                                               {"rule": "require_change_request_subject"}]}),
            false,
        )
        .unwrap();
        assert_eq!(rules.users(), vec!["u1"]);
        assert_eq!(
            MergeRules::parse(json!({"type": "none"}), false).unwrap(),
            MergeRules::None
        );
        assert!(MergeRules::parse(json!({"type": "inherit"}), false).is_err());
        assert!(MergeRules::parse(json!({"type": "inherit"}), true).is_ok());
        assert!(
            MergeRules::parse(
                json!({"type": "rules", "rules": [{"rule": "custom", "expression": "x"}]}),
                false
            )
            .is_err()
        );
        let text = rules.to_json_text();
        assert_eq!(MergeRules::from_json_text(&text).unwrap(), rules);
    }
}
