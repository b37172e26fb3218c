//! Builder methods that each set one field: the pattern of every options type here
//! (`Policy::builder()`, `OpenOptions`, `SessionOptions`, `LlmSummarizer`'s builder).

/// Builder methods, one per line: `name(arg: Type) => field;` sets `self.field = arg`,
/// `name(arg: Type) => field = expr;` stores `expr` (a conversion of `arg`). A nested
/// field is a path: `=> policy.keep_recent;`. Each takes its own doc comment.
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident($arg:ident: $ty:ty) => $($field:ident).+ $(= $value:expr)?;)*) => {$(
        $(#[$doc])*
        pub fn $name(mut self, $arg: $ty) -> Self {
            self.$($field).+ = setters!(@value $arg $(, $value)?);
            self
        }
    )*};
    (@value $arg:ident) => { $arg };
    (@value $arg:ident, $value:expr) => { $value };
}
