//! The message model: what a message is, its retention class and the call site that gave
//! it, the entry a history records, the ways a message gets its class, and the tool
//! traits (a tool carries the class of its results).

/// `as_str` (documented by the attributes given) and `Display` for a field-less enum: each
/// variant's name as the string given.
macro_rules! named_variants {
    ($(#[$doc:meta])* $enum:ident { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $enum {
            $(#[$doc])*
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($enum::$variant => $name,)+
                }
            }
        }

        impl std::fmt::Display for $enum {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

/// `Debug`, `Serialize` and `Deserialize` for a compact holder that derefs to the `$value`
/// it holds: shown and serialized as that value, read back through `From<$value>`.
macro_rules! as_held_value {
    ($holder:ident => $value:ident) => {
        impl std::fmt::Debug for $holder {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(&**self, f)
            }
        }

        impl serde::Serialize for $holder {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                serde::Serialize::serialize(&**self, s)
            }
        }

        impl<'de> serde::Deserialize<'de> for $holder {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <$value as serde::Deserialize>::deserialize(d).map($holder::from)
            }
        }
    };
}

pub(crate) mod classify;
pub(crate) mod entry;
mod entry_id;
mod entry_kind;
pub(crate) mod extensions;
pub mod kinds;
pub(crate) mod message;
pub(crate) mod part_check;
pub(crate) mod parts;
pub(crate) mod retention;
pub(crate) mod site;
pub(crate) mod tool;
