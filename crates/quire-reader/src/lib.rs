//! The reader site of quire: published content turned into HTML pages and the files machines
//! read, with no database and no HTTP. A server loads a revision, builds the inputs below and
//! serves what these functions return; `docs/reader.md` describes the wiring.
//!
//! Inputs:
//! - [`Site`]: title, absolute URL, customization ([`Customization`], GitBook's
//!   `SiteCustomizationSettings` deserialized as stored), and where assets, search and sidebar
//!   levels are served.
//! - [`Navigation`]: the site's sections and section groups, and the site spaces (variants) of
//!   the current section.
//! - [`NavTree`]: the page tree of a site space's revision, built once per revision.
//! - a [`Resolver`]: where page, anchor and file references lead ([`SpaceResolver`] over a
//!   revision's tree is ready to use).
//!
//! Outputs: [`render_page`], [`render_not_found`], [`render_login_required`],
//! [`render_navigation_fragment`], [`render_search_page`] and [`SearchResults::to_json`] (HTML
//! and JSON); [`sitemap_xml`], [`robots_txt`], [`llms_txt`], [`atom_feed`], [`page_markdown`]
//! (text); [`assets`] (the stylesheet, the script and the icon, with content-hashed names).
//!
//! Modules: [`content`] renders documents (every block and mark), [`highlight`] code,
//! [`nav`] the page tree, [`render`] whole pages from the templates of `templates/`,
//! [`machine`] the machine-readable files.

pub mod assets;
pub mod content;
mod escape;
pub mod highlight;
pub mod machine;
mod math;
pub mod nav;
pub mod render;
pub mod resolve;
pub mod site;

pub use assets::{Asset, asset, assets};
pub use content::{OutlineEntry, RenderedDocument, render_document};
pub use machine::{
    SitemapEntry, atom_feed, llms_txt, llms_txt_of_spaces, markdown_url, page_for_markdown_url,
    page_markdown, robots_txt, sitemap_entries, sitemap_xml,
};
pub use nav::{NavKind, NavNode, NavTree, PageLink, SidebarItem};
pub use render::{
    Context, SearchHit, SearchResults, SearchSection, render_login_required, render_navigation_fragment,
    render_not_found, render_page, render_search_page,
};
pub use resolve::{
    FileTarget, MAX_INCLUDE_DEPTH, OtherSpace, PageTarget, Resolver, SpaceResolver, reusable_contents_used,
    safe_url,
};
pub use site::{
    Announcement, ContentLink, Customization, FooterGroup, HeaderLink, NavLink, Navigation, SectionItem,
    Site, ThemedColor, ThemedUrl,
};
