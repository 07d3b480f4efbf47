//! A docs site as stored, its structure (section groups, sections, site spaces), and the site
//! as loaded for a caller.

use crate::db::{Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::permissions::{Action, Authorized, SiteAction, Standing, role_forbidden, site_allows};

crate::wire_enum! {
    /// Who may read a published site.
    pub enum SiteVisibility {
        Public = "public",
        Unlisted = "unlisted",
        ShareLink = "share-link",
        VisitorAuth = "visitor-auth",
        InCollection = "in-collection",
    }
}

crate::wire_enum! {
    /// GitBook's site types (`basic` is the creation default).
    pub enum SiteType {
        Basic = "basic",
        Premium = "premium",
        Ultimate = "ultimate",
        Sponsored = "sponsored",
        LegacyBasic = "legacy-basic",
        LegacyPremium = "legacy-premium",
    }
}

crate::wire_enum! {
    /// Whether the site is in the agent's context.
    pub enum AgentsContext {
        Included = "included",
        Excluded = "excluded",
    }
}

#[derive(Clone, Debug)]
pub struct Site {
    pub id: String,
    pub org_id: String,
    pub title: String,
    pub kind: SiteType,
    pub visibility: SiteVisibility,
    pub published: bool,
    pub hostname: Option<String>,
    pub basename: Option<String>,
    pub proxy: Option<String>,
    pub adaptive_enabled: bool,
    pub agents_context: AgentsContext,
    pub default_section: Option<String>,
    pub default_site_space: Option<String>,
    pub adaptive_schema: Option<String>,
    pub adaptive_schema_updated_at: Option<i64>,
    pub visitor_key: String,
    /// Where a visitor-auth site sends a visitor without a valid token.
    pub visitor_fallback_url: Option<String>,
    /// Where a visitor-auth site sends a visitor who signs out (GitBook's `logoutURL`).
    pub visitor_logout_url: Option<String>,
    pub customization: Option<String>,
    pub customization_updated_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// How many site spaces the site has.
    pub site_spaces: i64,
}

crate::columns! {
    /// The columns [`Site::from_row`] reads, with the table aliased `t`.
    pub struct SiteCols of "sites" {
        id: "t.id",
        org_id: "t.organization_id",
        title: "t.title",
        kind: "t.type",
        visibility: "t.visibility",
        published: "t.published",
        hostname: "t.hostname",
        basename: "t.basename",
        proxy: "t.proxy",
        adaptive_enabled: "t.adaptive_enabled",
        agents_context: "t.agents_context",
        default_section: "t.default_section_id",
        default_site_space: "t.default_site_space_id",
        adaptive_schema: "t.adaptive_schema",
        adaptive_schema_updated_at: "t.adaptive_schema_updated_at",
        visitor_key: "t.visitor_key",
        visitor_fallback_url: "t.visitor_fallback_url",
        visitor_logout_url: "t.visitor_logout_url",
        customization: "t.customization",
        customization_updated_at: "t.customization_updated_at",
        created_at: "t.created_at",
        updated_at: "t.updated_at",
        site_spaces: "(SELECT count(*) FROM site_spaces k WHERE k.site_id = t.id)",
    }
}

crate::columns! {
    /// The caller's membership of the site's organization, after its [`SiteCols`].
    struct SiteCallerCols of "members" {
        member: "m.user_id",
        role: "m.role",
        disabled: "m.disabled",
    }
}

pub const COLUMNS: &str = SiteCols::SQL;
const SITE: SiteCols = SiteCols::AT;
const CALLER: SiteCallerCols = SiteCallerCols::at(SiteCols::COUNT);

impl Site {
    pub fn from_row(row: &Row) -> Result<Site, DbError> {
        Ok(Site {
            id: row.col(SITE.id)?,
            org_id: row.col(SITE.org_id)?,
            title: row.col(SITE.title)?,
            kind: row.col(SITE.kind)?,
            visibility: row.col(SITE.visibility)?,
            published: row.col(SITE.published)?,
            hostname: row.col(SITE.hostname)?,
            basename: row.col(SITE.basename)?,
            proxy: row.col(SITE.proxy)?,
            adaptive_enabled: row.col(SITE.adaptive_enabled)?,
            agents_context: row.col(SITE.agents_context)?,
            default_section: row.col(SITE.default_section)?,
            default_site_space: row.col(SITE.default_site_space)?,
            adaptive_schema: row.col(SITE.adaptive_schema)?,
            adaptive_schema_updated_at: row.col(SITE.adaptive_schema_updated_at)?,
            visitor_key: row.col(SITE.visitor_key)?,
            visitor_fallback_url: row.col(SITE.visitor_fallback_url)?,
            visitor_logout_url: row.col(SITE.visitor_logout_url)?,
            customization: row.col(SITE.customization)?,
            customization_updated_at: row.col(SITE.customization_updated_at)?,
            created_at: row.col(SITE.created_at)?,
            updated_at: row.col(SITE.updated_at)?,
            site_spaces: row.col(SITE.site_spaces)?,
        })
    }

    /// The adaptive schema conditions are checked against: the stored one, or none (no claims).
    pub fn schema(&self) -> StoreResult<quire_adaptive::AdaptiveSchema> {
        match &self.adaptive_schema {
            None => Ok(quire_adaptive::AdaptiveSchema::default()),
            Some(text) => {
                let json: serde_json::Value = serde_json::from_str(text).map_err(|e| {
                    StoreError::internal(format!("stored adaptive schema of site {:?}: {e}", self.id))
                })?;
                quire_adaptive::AdaptiveSchema::parse(&json).map_err(|e| {
                    StoreError::internal(format!("stored adaptive schema of site {:?}: {e}", self.id))
                })
            }
        }
    }
}

/// What names a site: its organization and its id (both are in every site path).
#[derive(Clone, Debug)]
pub struct SiteKey {
    pub org_id: String,
    pub site_id: String,
}

/// A site with the caller's standing in its organization. Only this crate's loaders make one.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SiteFor {
    pub site: Site,
    pub standing: Standing,
}

impl SiteFor {
    pub fn allows(&self, action: SiteAction) -> bool {
        site_allows(self.standing, action)
    }

    /// 404 when the caller cannot see the site, 403 when the action is not allowed.
    pub fn require(&self, action: SiteAction) -> StoreResult<()> {
        if !self.allows(SiteAction::View) {
            return Err(not_found(&self.site.id));
        }
        if !self.allows(action) {
            return Err(role_forbidden(
                action.describe(),
                action.needed(),
                &format!("in the organization of site {:?}", self.site.id),
                self.standing.role(),
            ));
        }
        Ok(())
    }

    /// Proof that the caller may do `A` (`permissions::site::Manage`, ...).
    pub fn authorize<A: Action<SiteAction>>(self) -> StoreResult<Authorized<SiteFor, A>> {
        self.require(A::ACTION)?;
        Ok(Authorized::granted(self))
    }

    pub(crate) fn listed(site: Site, standing: Standing) -> SiteFor {
        SiteFor { site, standing }
    }
}

pub fn not_found(site_id: &str) -> StoreError {
    StoreError::not_found(format!("site {site_id:?} not found"))
}

/// Loads a site of `org_id` with the caller's standing; None when there is no such site in that
/// organization.
pub fn load_for(
    c: &mut dyn Conn,
    org_id: &str,
    site_id: &str,
    user_id: &str,
) -> Result<Option<SiteFor>, DbError> {
    let sql = format!(
        "SELECT {}, {} FROM sites t
         LEFT JOIN members m ON m.organization_id = t.organization_id AND m.user_id = ?3
         WHERE t.id = ?1 AND t.organization_id = ?2",
        SiteCols::SQL,
        SiteCallerCols::SQL
    );
    let Some(row) = c.query_opt(&sql, crate::params![site_id, org_id, user_id])? else {
        return Ok(None);
    };
    let site = Site::from_row(&row)?;
    let member: Option<String> = row.col(CALLER.member)?;
    let standing = Standing::from_member_columns(
        member.as_deref(),
        row.col(CALLER.disabled)?,
        row.col(CALLER.role)?,
    );
    Ok(Some(SiteFor { site, standing }))
}

/// Loads a site the caller may see, or 404.
pub fn load_visible(c: &mut dyn Conn, org_id: &str, site_id: &str, user_id: &str) -> StoreResult<SiteFor> {
    match load_for(c, org_id, site_id, user_id)? {
        Some(site) if site.allows(SiteAction::View) => Ok(site),
        _ => Err(not_found(site_id)),
    }
}

/// Loads a site by id alone (the published view, which is not about the caller's standing).
pub fn load_site(c: &mut dyn Conn, org_id: &str, site_id: &str) -> Result<Option<Site>, DbError> {
    let sql = format!(
        "SELECT {} FROM sites t WHERE t.id = ?1 AND t.organization_id = ?2",
        SiteCols::SQL
    );
    c.query_opt(&sql, crate::params![site_id, org_id])?
        .map(|row| Site::from_row(&row))
        .transpose()
}

/// A section group.
#[derive(Clone, Debug)]
pub struct Group {
    pub id: String,
    pub parent: Option<String>,
    pub title: String,
    pub icon: Option<String>,
    pub position: String,
    /// Not live: absent from the published site until made live.
    pub draft: bool,
}

crate::columns! {
    /// The columns [`Group::from_row`] reads.
    pub struct GroupCols of "site_section_groups" {
        id: "id",
        parent: "parent_id",
        title: "title",
        icon: "icon",
        position: "position",
        draft: "draft",
    }
}

impl Group {
    fn from_row(row: &Row) -> Result<Group, DbError> {
        const G: GroupCols = GroupCols::AT;
        Ok(Group {
            id: row.col(G.id)?,
            parent: row.col(G.parent)?,
            title: row.col(G.title)?,
            icon: row.col(G.icon)?,
            position: row.col(G.position)?,
            draft: row.col(G.draft)?,
        })
    }
}

/// A site section.
#[derive(Clone, Debug)]
pub struct Section {
    pub id: String,
    pub group: Option<String>,
    pub title: String,
    pub description: Option<String>,
    pub path: String,
    pub icon: Option<String>,
    pub condition: Option<String>,
    pub default_site_space: Option<String>,
    pub position: String,
    /// Not live: absent from the published site until made live.
    pub draft: bool,
}

crate::columns! {
    /// The columns [`Section::from_row`] reads.
    pub struct SectionCols of "site_sections" {
        id: "id",
        group: "group_id",
        title: "title",
        description: "description",
        path: "path",
        icon: "icon",
        condition: "condition",
        default_site_space: "default_site_space_id",
        draft: "draft",
        position: "position",
    }
}

impl Section {
    fn from_row(row: &Row) -> Result<Section, DbError> {
        const S: SectionCols = SectionCols::AT;
        Ok(Section {
            id: row.col(S.id)?,
            group: row.col(S.group)?,
            title: row.col(S.title)?,
            description: row.col(S.description)?,
            path: row.col(S.path)?,
            icon: row.col(S.icon)?,
            condition: row.col(S.condition)?,
            default_site_space: row.col(S.default_site_space)?,
            position: row.col(S.position)?,
            draft: row.col(S.draft)?,
        })
    }
}

/// A space shown by a site, in a section or at the root.
#[derive(Clone, Debug)]
pub struct SiteSpace {
    pub id: String,
    pub section: Option<String>,
    pub space_id: String,
    pub path: String,
    pub condition: Option<String>,
    pub customization: Option<String>,
    pub customization_updated_at: Option<i64>,
    pub position: String,
    /// The variant's own name (None: the space's title).
    pub title: Option<String>,
    /// Live but left out of the site's navigation.
    pub hidden: bool,
    /// Not live: absent from the published site until made live.
    pub draft: bool,
}

crate::columns! {
    /// The columns [`SiteSpace::from_row`] reads.
    pub struct SiteSpaceCols of "site_spaces" {
        id: "id",
        section: "section_id",
        space_id: "space_id",
        path: "path",
        condition: "condition",
        customization: "customization",
        customization_updated_at: "customization_updated_at",
        position: "position",
        title: "title",
        hidden: "hidden",
        draft: "draft",
    }
}

impl SiteSpace {
    fn from_row(row: &Row) -> Result<SiteSpace, DbError> {
        const S: SiteSpaceCols = SiteSpaceCols::AT;
        Ok(SiteSpace {
            id: row.col(S.id)?,
            section: row.col(S.section)?,
            space_id: row.col(S.space_id)?,
            path: row.col(S.path)?,
            condition: row.col(S.condition)?,
            customization: row.col(S.customization)?,
            customization_updated_at: row.col(S.customization_updated_at)?,
            position: row.col(S.position)?,
            title: row.col(S.title)?,
            hidden: row.col(S.hidden)?,
            draft: row.col(S.draft)?,
        })
    }
}

/// A link out of the site, beside sections and groups (GitBook's external links).
#[derive(Clone, Debug)]
pub struct ExternalLink {
    pub id: String,
    pub group: Option<String>,
    pub title: String,
    pub description: Option<String>,
    pub icon: Option<String>,
    pub url: String,
    pub condition: Option<String>,
    pub position: String,
    /// Not live: absent from the published site until made live.
    pub draft: bool,
}

crate::columns! {
    /// The columns [`ExternalLink::from_row`] reads.
    pub struct ExternalLinkCols of "site_external_links" {
        id: "id",
        group: "group_id",
        title: "title",
        description: "description",
        icon: "icon",
        url: "url",
        condition: "condition",
        position: "position",
        draft: "draft",
    }
}

impl ExternalLink {
    fn from_row(row: &Row) -> Result<ExternalLink, DbError> {
        const L: ExternalLinkCols = ExternalLinkCols::AT;
        Ok(ExternalLink {
            id: row.col(L.id)?,
            group: row.col(L.group)?,
            title: row.col(L.title)?,
            description: row.col(L.description)?,
            icon: row.col(L.icon)?,
            url: row.col(L.url)?,
            condition: row.col(L.condition)?,
            position: row.col(L.position)?,
            draft: row.col(L.draft)?,
        })
    }
}

/// Everything a site is made of, each kind in order (order keys compare by bytes, which
/// PostgreSQL collations do not, so the order is made here).
#[derive(Clone, Debug, Default)]
pub struct Structure {
    pub groups: Vec<Group>,
    pub sections: Vec<Section>,
    pub site_spaces: Vec<SiteSpace>,
    pub links: Vec<ExternalLink>,
}

/// Loads a site's structure: four statements whatever its size.
pub fn load_structure(c: &mut dyn Conn, site_id: &str) -> Result<Structure, DbError> {
    let mut groups = c
        .query(
            &format!(
                "SELECT {} FROM site_section_groups WHERE site_id = ?1",
                GroupCols::SQL
            ),
            crate::params![site_id],
        )?
        .iter()
        .map(Group::from_row)
        .collect::<Result<Vec<_>, _>>()?;
    groups.sort_by(|a, b| a.position.cmp(&b.position).then_with(|| a.id.cmp(&b.id)));
    let mut sections = c
        .query(
            &format!(
                "SELECT {} FROM site_sections WHERE site_id = ?1",
                SectionCols::SQL
            ),
            crate::params![site_id],
        )?
        .iter()
        .map(Section::from_row)
        .collect::<Result<Vec<_>, _>>()?;
    sections.sort_by(|a, b| a.position.cmp(&b.position).then_with(|| a.id.cmp(&b.id)));
    let mut site_spaces = c
        .query(
            &format!(
                "SELECT {} FROM site_spaces WHERE site_id = ?1",
                SiteSpaceCols::SQL
            ),
            crate::params![site_id],
        )?
        .iter()
        .map(SiteSpace::from_row)
        .collect::<Result<Vec<_>, _>>()?;
    site_spaces.sort_by(|a, b| a.position.cmp(&b.position).then_with(|| a.id.cmp(&b.id)));
    let mut links = c
        .query(
            &format!(
                "SELECT {} FROM site_external_links WHERE site_id = ?1",
                ExternalLinkCols::SQL
            ),
            crate::params![site_id],
        )?
        .iter()
        .map(ExternalLink::from_row)
        .collect::<Result<Vec<_>, _>>()?;
    links.sort_by(|a, b| a.position.cmp(&b.position).then_with(|| a.id.cmp(&b.id)));
    Ok(Structure {
        groups,
        sections,
        site_spaces,
        links,
    })
}

/// An item of a level of the structure: a section, a section group or an external link.
#[derive(Clone, Copy, Debug)]
pub enum Item<'a> {
    Section(&'a Section),
    Group(&'a Group),
    Link(&'a ExternalLink),
}

impl<'a> Item<'a> {
    pub fn id(&self) -> &'a str {
        match self {
            Item::Section(s) => &s.id,
            Item::Group(g) => &g.id,
            Item::Link(l) => &l.id,
        }
    }

    pub fn position(&self) -> &'a str {
        match self {
            Item::Section(s) => &s.position,
            Item::Group(g) => &g.position,
            Item::Link(l) => &l.position,
        }
    }
}

impl Structure {
    /// The sections, groups and external links directly under `parent` (a group; the root when
    /// None), in order.
    pub fn level(&self, parent: Option<&str>) -> Vec<Item<'_>> {
        let mut items: Vec<Item<'_>> = self
            .sections
            .iter()
            .filter(|s| s.group.as_deref() == parent)
            .map(Item::Section)
            .chain(
                self.groups
                    .iter()
                    .filter(|g| g.parent.as_deref() == parent)
                    .map(Item::Group),
            )
            .chain(
                self.links
                    .iter()
                    .filter(|l| l.group.as_deref() == parent)
                    .map(Item::Link),
            )
            .collect();
        items.sort_by(|a, b| a.position().cmp(b.position()).then_with(|| a.id().cmp(b.id())));
        items
    }

    /// The sections in the order a reader meets them: depth first through the groups.
    pub fn sections_in_order(&self) -> Vec<&Section> {
        let mut out = Vec::new();
        let mut stack: Vec<Item<'_>> = self.level(None).into_iter().rev().collect();
        let mut seen = 0usize;
        while let Some(item) = stack.pop() {
            seen += 1;
            if seen > self.sections.len() + self.groups.len() + self.links.len() {
                break;
            }
            match item {
                Item::Section(s) => out.push(s),
                Item::Group(g) => stack.extend(self.level(Some(&g.id)).into_iter().rev()),
                Item::Link(_) => {}
            }
        }
        out
    }

    /// The site spaces of a section (the root when None), in order.
    pub fn site_spaces_in(&self, section: Option<&str>) -> Vec<&SiteSpace> {
        self.site_spaces
            .iter()
            .filter(|s| s.section.as_deref() == section)
            .collect()
    }

    /// The site spaces in the order a reader meets them: the root's, then each section's.
    pub fn site_spaces_in_order(&self) -> Vec<&SiteSpace> {
        let mut out = self.site_spaces_in(None);
        for section in self.sections_in_order() {
            out.extend(self.site_spaces_in(Some(&section.id)));
        }
        out
    }

    pub fn section(&self, id: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.id == id)
    }

    pub fn group(&self, id: &str) -> Option<&Group> {
        self.groups.iter().find(|g| g.id == id)
    }

    pub fn site_space(&self, id: &str) -> Option<&SiteSpace> {
        self.site_spaces.iter().find(|s| s.id == id)
    }

    pub fn link(&self, id: &str) -> Option<&ExternalLink> {
        self.links.iter().find(|l| l.id == id)
    }

    /// Whether `ss` is the default site space of its section (of `site`'s root when it is in
    /// none).
    pub fn is_default_site_space(&self, site: &Site, ss: &SiteSpace) -> bool {
        let default = match &ss.section {
            None => site.default_site_space.as_deref(),
            Some(s) => self.section(s).and_then(|s| s.default_site_space.as_deref()),
        };
        default == Some(ss.id.as_str())
    }

    /// Whether `group` is `ancestor` or lies below it.
    pub fn group_within(&self, group: &str, ancestor: &str) -> bool {
        let mut current = Some(group.to_string());
        let mut steps = 0;
        while let Some(id) = current {
            if id == ancestor {
                return true;
            }
            steps += 1;
            if steps > self.groups.len() {
                return false;
            }
            current = self.group(&id).and_then(|g| g.parent.clone());
        }
        false
    }
}
