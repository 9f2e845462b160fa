//! How the mirror stores an enum: as its strum name, the same snake_case name serde sends to
//! the UI. strum's `serialize_all` is then the one owner of the stored name; a derive per enum
//! with its own `rename_all` could drift from it and write a name the mirror cannot read back.

use sqlx::error::BoxDynError;
use sqlx::sqlite::{SqliteArgumentValue, SqliteTypeInfo, SqliteValueRef};
use sqlx::{Decode, Encode, Sqlite, Type};

use super::{RefusalKind, SecretStorage, ShownPart};
use crate::domain::{DecisionKind, DecisionState, ItemState, RouteState, Source};

/// Implements sqlx's `Type`, `Decode` and `Encode` for enums that strum names.
macro_rules! stored_by_name {
    ($($name:ident),+ $(,)?) => {$(
        impl Type<Sqlite> for $name {
            fn type_info() -> SqliteTypeInfo {
                <str as Type<Sqlite>>::type_info()
            }

            fn compatible(ty: &SqliteTypeInfo) -> bool {
                <str as Type<Sqlite>>::compatible(ty)
            }
        }

        impl<'r> Decode<'r, Sqlite> for $name {
            fn decode(value: SqliteValueRef<'r>) -> Result<Self, BoxDynError> {
                let name = <&str as Decode<Sqlite>>::decode(value)?;
                name.parse().map_err(|_| {
                    format!(concat!("invalid value {:?} for enum ", stringify!($name)), name).into()
                })
            }
        }

        impl<'q> Encode<'q, Sqlite> for $name {
            fn encode_by_ref(
                &self,
                buf: &mut Vec<SqliteArgumentValue<'q>>,
            ) -> Result<sqlx::encode::IsNull, BoxDynError> {
                let name: &'static str = self.into();
                <&str as Encode<Sqlite>>::encode(name, buf)
            }
        }
    )+};
}

stored_by_name!(
    Source,
    ItemState,
    DecisionKind,
    DecisionState,
    RouteState,
    RefusalKind,
    SecretStorage,
    ShownPart,
);
