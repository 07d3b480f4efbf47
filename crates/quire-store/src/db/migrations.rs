//! Embedded schema migrations, applied in order at start. A migration is one SQL script per
//! engine; most are the same text, since the schema sticks to types both engines share
//! (TEXT, BIGINT, integers for booleans).

use super::{Conn, DbError, Dialect, Value};

struct Migration {
    version: i64,
    name: &'static str,
    sqlite: &'static str,
    postgres: &'static str,
}

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "foundation",
        sqlite: include_str!("../../migrations/0001_foundation.sql"),
        postgres: include_str!("../../migrations/0001_foundation.sql"),
    },
    Migration {
        version: 2,
        name: "content structure",
        sqlite: include_str!("../../migrations/0002_content_structure.sql"),
        postgres: include_str!("../../migrations/0002_content_structure.sql"),
    },
    Migration {
        version: 3,
        name: "content",
        sqlite: include_str!("../../migrations/0003_content.sql"),
        postgres: include_str!("../../migrations/0003_content.sql"),
    },
    Migration {
        version: 4,
        name: "reviews",
        sqlite: include_str!("../../migrations/0004_reviews.sql"),
        postgres: include_str!("../../migrations/0004_reviews.sql"),
    },
    Migration {
        version: 5,
        name: "comments",
        sqlite: include_str!("../../migrations/0005_comments.sql"),
        postgres: include_str!("../../migrations/0005_comments.sql"),
    },
    Migration {
        version: 6,
        name: "space counters",
        sqlite: include_str!("../../migrations/0006_space_counters_sqlite.sql"),
        postgres: include_str!("../../migrations/0006_space_counters_postgres.sql"),
    },
    Migration {
        version: 7,
        name: "search and links",
        sqlite: include_str!("../../migrations/0007_search_sqlite.sql"),
        postgres: include_str!("../../migrations/0007_search_postgres.sql"),
    },
    Migration {
        version: 8,
        name: "live row indexes",
        sqlite: include_str!("../../migrations/0008_live_row_indexes_sqlite.sql"),
        postgres: include_str!("../../migrations/0008_live_row_indexes_postgres.sql"),
    },
    Migration {
        version: 9,
        name: "file blobs",
        sqlite: include_str!("../../migrations/0009_file_blobs.sql"),
        postgres: include_str!("../../migrations/0009_file_blobs.sql"),
    },
    Migration {
        version: 10,
        name: "object compression",
        sqlite: include_str!("../../migrations/0010_object_compression_sqlite.sql"),
        postgres: include_str!("../../migrations/0010_object_compression_postgres.sql"),
    },
    Migration {
        version: 11,
        name: "relative url links are broken",
        sqlite: include_str!("../../migrations/0011_relative_url_links.sql"),
        postgres: include_str!("../../migrations/0011_relative_url_links.sql"),
    },
    Migration {
        version: 12,
        name: "event outbox",
        sqlite: include_str!("../../migrations/0012_events_sqlite.sql"),
        postgres: include_str!("../../migrations/0012_events_postgres.sql"),
    },
    Migration {
        version: 13,
        name: "space counts off the space row",
        sqlite: include_str!("../../migrations/0013_space_counts_sqlite.sql"),
        postgres: include_str!("../../migrations/0013_space_counts_postgres.sql"),
    },
    Migration {
        version: 14,
        name: "space count shards by pooled connection",
        sqlite: include_str!("../../migrations/0014_space_count_shards_sqlite.sql"),
        postgres: include_str!("../../migrations/0014_space_count_shards_postgres.sql"),
    },
    Migration {
        version: 15,
        name: "docs sites",
        sqlite: include_str!("../../migrations/0015_sites.sql"),
        postgres: include_str!("../../migrations/0015_sites.sql"),
    },
    Migration {
        version: 16,
        name: "visitor-auth sign-in URL of sites",
        sqlite: include_str!("../../migrations/0016_site_fallback_url.sql"),
        postgres: include_str!("../../migrations/0016_site_fallback_url.sql"),
    },
    Migration {
        version: 17,
        name: "draft structure items, hidden and titled site spaces, visitor sign-out URL",
        sqlite: include_str!("../../migrations/0017_site_drafts_and_variants.sql"),
        postgres: include_str!("../../migrations/0017_site_drafts_and_variants.sql"),
    },
    Migration {
        version: 18,
        name: "external links in the structure of sites",
        sqlite: include_str!("../../migrations/0018_site_external_links.sql"),
        postgres: include_str!("../../migrations/0018_site_external_links.sql"),
    },
    Migration {
        version: 19,
        name: "redirects of imported spaces",
        sqlite: include_str!("../../migrations/0019_space_import_redirects.sql"),
        postgres: include_str!("../../migrations/0019_space_import_redirects.sql"),
    },
    Migration {
        version: 20,
        name: "OpenAPI specifications and their versions",
        sqlite: include_str!("../../migrations/0020_openapi_specs.sql"),
        postgres: include_str!("../../migrations/0020_openapi_specs.sql"),
    },
    Migration {
        version: 21,
        name: "integrations, installations and their events",
        sqlite: include_str!("../../migrations/0021_integrations.sql"),
        postgres: include_str!("../../migrations/0021_integrations.sql"),
    },
    Migration {
        version: 22,
        name: "retention of dispatched outbox rows and settled integration events",
        sqlite: include_str!("../../migrations/0022_event_retention.sql"),
        postgres: include_str!("../../migrations/0022_event_retention.sql"),
    },
    Migration {
        version: 23,
        name: "PDF exports",
        sqlite: include_str!("../../migrations/0023_pdf_exports.sql"),
        postgres: include_str!("../../migrations/0023_pdf_exports.sql"),
    },
    Migration {
        version: 24,
        name: "SAML single sign-on providers and the sign-ins they started",
        sqlite: include_str!("../../migrations/0024_saml_providers.sql"),
        postgres: include_str!("../../migrations/0024_saml_providers.sql"),
    },
    Migration {
        version: 25,
        name: "SAML assertions used, and the sessions sign-ins open",
        sqlite: include_str!("../../migrations/0025_sessions.sql"),
        postgres: include_str!("../../migrations/0025_sessions.sql"),
    },
    Migration {
        version: 26,
        name: "translations of spaces, the pages they wrote and their translation memory",
        sqlite: include_str!("../../migrations/0026_translations.sql"),
        postgres: include_str!("../../migrations/0026_translations.sql"),
    },
    Migration {
        version: 27,
        name: "conversations, the issues found in them and their clusters",
        sqlite: include_str!("../../migrations/0027_conversations.sql"),
        postgres: include_str!("../../migrations/0027_conversations.sql"),
    },
];

/// An arbitrary constant that names quire's migration lock among PostgreSQL advisory locks.
const PG_MIGRATION_LOCK: i64 = 0x7175_6972_6500;

pub fn run(conn: &mut dyn Conn) -> Result<(), DbError> {
    conn.batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
            version BIGINT PRIMARY KEY,
            name TEXT NOT NULL,
            applied_at BIGINT NOT NULL
        )",
    )?;
    let dialect = conn.dialect();
    if dialect == Dialect::Postgres {
        // Several processes may start at once; one migrates, the others wait and find it done.
        conn.query("SELECT pg_advisory_lock(?1)", &[Value::Int(PG_MIGRATION_LOCK)])?;
    }
    let result = apply_pending(conn, dialect);
    if dialect == Dialect::Postgres {
        conn.query("SELECT pg_advisory_unlock(?1)", &[Value::Int(PG_MIGRATION_LOCK)])?;
    }
    result
}

fn apply_pending(conn: &mut dyn Conn, dialect: Dialect) -> Result<(), DbError> {
    for m in MIGRATIONS {
        let begin = if dialect == Dialect::Sqlite {
            "BEGIN IMMEDIATE"
        } else {
            "BEGIN"
        };
        conn.batch(begin)?;
        let applied = conn
            .query(
                "SELECT 1 FROM schema_migrations WHERE version = ?1",
                &[Value::Int(m.version)],
            )?
            .into_iter()
            .next()
            .is_some();
        let outcome = if applied {
            Ok(())
        } else {
            let sql = if dialect == Dialect::Sqlite {
                m.sqlite
            } else {
                m.postgres
            };
            conn.batch(sql).and_then(|()| {
                conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?1, ?2, ?3)",
                    &[
                        Value::Int(m.version),
                        Value::from(m.name),
                        Value::Int(crate::clock::now_ms()),
                    ],
                )
                .map(drop)
            })
        };
        match outcome {
            Ok(()) => conn.batch("COMMIT")?,
            Err(e) => {
                let _ = conn.batch("ROLLBACK");
                return Err(DbError::Other(format!(
                    "migration {} ({}) failed: {e}",
                    m.version, m.name
                )));
            }
        }
    }
    Ok(())
}
