//! Links and their locations as answered: GitBook's `ContentReferenceUsage` and
//! `ContentLocation`, with ids where GitBook embeds whole objects (docs/decisions/0020-links.md).

use quire_store::links::model::{Kind, Status, Target};
use serde::Serialize;

/// Where content is: GitBook's `ContentLocation`, with ids for the organization, space and
/// revision.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[schema(as = ContentLocation)]
pub enum Location {
    #[serde(rename = "page", rename_all = "camelCase")]
    Page {
        #[serde(skip_serializing_if = "Option::is_none")]
        organization: Option<String>,
        space: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        version_context: Option<VersionContext>,
        page: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        internal_location: Option<InternalLocation>,
    },
    #[serde(rename = "file", rename_all = "camelCase")]
    File {
        #[serde(skip_serializing_if = "Option::is_none")]
        organization: Option<String>,
        space: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        version_context: Option<VersionContext>,
        file: String,
    },
    #[serde(rename = "url")]
    Url { url: String },
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(tag = "type", rename = "revision")]
pub struct VersionContext {
    pub revision: String,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(tag = "type", rename = "anchor")]
pub struct InternalLocation {
    pub anchor: String,
}

/// The revision links and backlinks are read from.
pub struct Where<'a> {
    pub org_id: &'a str,
    pub space_id: &'a str,
    pub revision: &'a str,
}

impl Where<'_> {
    /// A page of this revision.
    pub fn page(&self, page_id: &str) -> Location {
        Location::Page {
            organization: Some(self.org_id.to_string()),
            space: self.space_id.to_string(),
            version_context: Some(VersionContext {
                revision: self.revision.to_string(),
            }),
            page: page_id.to_string(),
            internal_location: None,
        }
    }

    /// Where a link leads. Targets in other spaces carry no organization or revision: quire
    /// does not look into other spaces to name them.
    pub fn target(&self, target: &Target) -> Location {
        let (organization, space, version_context) = match &target.space {
            Some(space) => (None, space.clone(), None),
            None => (
                Some(self.org_id.to_string()),
                self.space_id.to_string(),
                Some(VersionContext {
                    revision: self.revision.to_string(),
                }),
            ),
        };
        let id = target.id.clone().unwrap_or_default();
        match target.kind {
            Kind::Page | Kind::Anchor => Location::Page {
                organization,
                space,
                version_context,
                page: id,
                internal_location: target.anchor.clone().map(|anchor| InternalLocation { anchor }),
            },
            Kind::File => Location::File {
                organization,
                space,
                version_context,
                file: id,
            },
            Kind::Url => Location::Url {
                url: target.url.clone().unwrap_or_default(),
            },
        }
    }
}

/// A link and the pages it stands on.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LinkItem {
    pub status: &'static str,
    pub relation: &'static str,
    pub target_reference: Location,
    pub location_references: Vec<Location>,
}

impl LinkItem {
    pub fn new(status: Status, depends: bool, target: Location, locations: Vec<Location>) -> LinkItem {
        LinkItem {
            status: status.as_str(),
            relation: if depends { "dependsOn" } else { "reference" },
            target_reference: target,
            location_references: locations,
        }
    }
}

/// A list of links: the PAGING envelope with `stats`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct LinkList {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<quire_store::paging::Next>,
    pub count: u64,
    pub stats: Stats,
    pub items: Vec<LinkItem>,
}

impl LinkList {
    pub fn new(list: quire_store::paging::List<LinkItem>, stats: Stats) -> LinkList {
        LinkList {
            next: list.next,
            count: list.count,
            stats,
            items: list.items,
        }
    }
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = LinkStats)]
pub struct Stats {
    pub total: u64,
    pub broken: BrokenStats,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BrokenStats {
    pub total: u64,
    /// Change requests: the links broken by the change request (their target is in main).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_request: Option<u64>,
}
