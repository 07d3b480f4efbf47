//! Rows read by column name: a model declares the columns it selects once, and both its SELECT
//! list and its reads derive from that declaration, so no one counts positions by hand.
//!
//! ```ignore
//! crate::columns! {
//!     /// A user, with the table aliased `u`.
//!     pub struct UserCols of "users" {
//!         id: "u.id",
//!         email: "u.email",
//!     }
//! }
//! const C: UserCols = UserCols::AT;
//! let sql = format!("SELECT {} FROM users u WHERE u.id = ?1", UserCols::SQL);
//! let email: String = row.col(C.email)?;
//! ```
//!
//! Positions are constants computed at compile time: reading a column costs what `row.get(3)`
//! costs, and only a decode error spends anything on the name.

/// Declares a column set: a struct with one [`Col`](crate::db::Col) per column, `SQL` (the
/// SELECT list, in declaration order), `COUNT`, `AT` (the set at the start of a row) and
/// `at(offset)` (the set selected after `offset` other columns, to join several sets in one
/// SELECT).
#[macro_export]
macro_rules! columns {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident of $table:literal {
            $($field:ident: $sql:literal),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug)]
        $vis struct $name {
            $(pub $field: $crate::db::Col),+
        }

        #[allow(dead_code)]
        impl $name {
            const NAMES: &'static [&'static str] = &[$(stringify!($field)),+];
            /// The SELECT list, in declaration order.
            pub const SQL: &'static str = $crate::columns!(@join $($sql),+);
            /// How many columns the set selects.
            pub const COUNT: usize = $name::NAMES.len();
            /// The set selected first in a row.
            pub const AT: $name = $name::at(0);

            /// The set selected after `offset` other columns.
            pub const fn at(offset: usize) -> $name {
                $name {
                    $($field: $crate::db::Col {
                        index: offset + $crate::columns::index_of($name::NAMES, stringify!($field)),
                        name: stringify!($field),
                        table: $table,
                    }),+
                }
            }

            /// The position just after the set, where columns selected after it start.
            pub const fn end(&self) -> usize {
                let first = [$(self.$field.index),+][0];
                first + $name::COUNT
            }
        }
    };
    (@join $first:literal $(, $rest:literal)*) => {
        concat!($first $(, ", ", $rest)*)
    };
}

/// The position of `name` in `names`, at compile time.
pub const fn index_of(names: &[&str], name: &str) -> usize {
    let mut i = 0;
    while i < names.len() {
        if str_eq(names[i], name) {
            return i;
        }
        i += 1;
    }
    panic!("no such column")
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A single column selected after column sets, by an expression built at run time (a
/// dialect-specific aggregate, say): its position is where the sets before it end.
pub const fn extra(table: &'static str, name: &'static str, index: usize) -> crate::db::Col {
    crate::db::Col { index, name, table }
}

#[cfg(test)]
mod tests {
    crate::columns! {
        struct Pair of "pairs" {
            left: "p.left",
            right: "p.right",
        }
    }

    #[test]
    fn positions_follow_the_declaration() {
        assert_eq!(Pair::SQL, "p.left, p.right");
        assert_eq!(Pair::COUNT, 2);
        const LATER: Pair = Pair::at(3);
        assert_eq!((LATER.left.index, LATER.right.index, LATER.end()), (3, 4, 5));
        assert_eq!((Pair::AT.right.name, Pair::AT.right.table), ("right", "pairs"));
    }
}
