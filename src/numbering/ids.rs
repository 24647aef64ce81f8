//! The ids of what a number is made of: a project, a correspondence type, the parts a counter key names and the
//! counter itself. Each is a type of its own, so that a project's id can never be passed where an organization's is
//! meant. On the wire and in the database each is its plain integer (serde and sqlx see through it).

/// Declares id types: each a copyable newtype of `i64`, transparent to serde and sqlx, shown as its number.
macro_rules! id_types {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        #[cfg_attr(feature = "ssr", derive(sqlx::Type, utoipa::ToSchema), sqlx(transparent))]
        pub struct $name(pub i64);

        impl $name {
            /// No such id: 0, never a row's id. A counter key's part the template does not show, a project's
            /// default template (no type).
            pub const NONE: $name = $name(0);
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }

        impl std::str::FromStr for $name {
            type Err = std::num::ParseIntError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                s.parse().map($name)
            }
        }

        impl From<i64> for $name {
            fn from(id: i64) -> Self {
                $name(id)
            }
        }

        impl From<$name> for i64 {
            fn from(id: $name) -> i64 {
                id.0
            }
        }
    )*};
}
pub(crate) use id_types;

id_types! {
    /// A project (`projects.id`).
    ProjectId;
    /// A correspondence type (`correspondence_types.id`).
    CorrespondenceTypeId;
    /// An organization (`organizations.id`): an originator, a recipient, an addressee, a project's member.
    OrganizationId;
    /// A correspondence sub-type (`sub_types.id`).
    SubTypeId;
    /// An RFA type (`rfa_types.id`).
    RfaTypeId;
    /// A discipline (`disciplines.id`).
    DisciplineId;
    /// A contract of a project (`contracts.id`).
    ContractId;
    /// A counter (`counters.id`): one running sequence, the row a counter key names.
    CounterId;
    /// An issued number's row (`document_numbers.id`): one revision of one number of a counter.
    NumberId;
}
