//! The `sites` command: every place in a Rust codebase that gives a message its retention
//! class, parsed with `syn`, and a lockfile so a code review sees a class change.
//!
//! A *site* is one of:
//!
//! - an invocation of a constructor macro, `strict!`, `fuzzy!` or `forgettable!`, bare or
//!   path-qualified (`favur_context::strict!`, `$crate::fuzzy!`), wherever it is: in code,
//!   or inside another macro's arguments (`vec![...]`, `assert!(...)`), which are token
//!   streams searched by path;
//! - a `#[retention(class)]` attribute on a struct or enum, a function or method, or an
//!   `impl Tool for T` block;
//! - a runtime classification, `expr.classify(arg)` or `Message::classify(expr, arg)`:
//!   its class is the variant when `arg` names one (`Retention::Strict`), otherwise it is
//!   decided at run time. Since a method name alone does not say whose `classify` it is
//!   (a rules file has one too), a call counts only if `arg` is a `Retention` variant or
//!   its text names a class (it contains `class` or `retention`, in any case, and not
//!   `classifier`).
//!
//! The lockfile keys each site by its file, its enclosing item (`main`,
//! `tests::parses`, `<Job>::request`, `<ReadFile as Tool>`) and its position among
//! that item's sites, so lines moving above it change nothing; the line is recorded for
//! people reading it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use favur_context::Retention;
use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::ToTokens;
use serde::{Deserialize, Serialize};
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Attribute, Expr, Token};

/// What kind of site it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SiteKind {
    /// `strict!`, `fuzzy!` or `forgettable!`.
    Macro,
    /// `#[retention]` on a struct or enum.
    Type,
    /// `#[retention]` on a function or method.
    Function,
    /// `#[retention]` on an `impl Tool for T` block.
    Tool,
    /// `.classify(...)` at run time.
    Classify,
}

impl fmt::Display for SiteKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SiteKind::Macro => "macro",
            SiteKind::Type => "#[retention] type",
            SiteKind::Function => "#[retention] fn",
            SiteKind::Tool => "#[retention] tool",
            SiteKind::Classify => ".classify()",
        })
    }
}

/// The class a site gives: one of the three, or decided at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum SiteClass {
    /// A fixed class.
    Class(Retention),
    /// Chosen by a value at run time.
    Runtime,
    /// An attribute whose argument is not a class (it does not compile).
    Invalid,
}

impl SiteClass {
    /// The name used in JSON and lockfiles: a class name, `runtime` or `invalid`.
    pub fn as_str(&self) -> &'static str {
        match self {
            SiteClass::Class(c) => c.as_str(),
            SiteClass::Runtime => "runtime",
            SiteClass::Invalid => "invalid",
        }
    }
}

impl From<SiteClass> for String {
    fn from(c: SiteClass) -> String {
        c.as_str().to_owned()
    }
}

impl TryFrom<String> for SiteClass {
    type Error = String;
    fn try_from(s: String) -> Result<SiteClass, String> {
        match s.as_str() {
            "runtime" => Ok(SiteClass::Runtime),
            "invalid" => Ok(SiteClass::Invalid),
            other => other
                .parse::<Retention>()
                .map(SiteClass::Class)
                .map_err(|_| {
                    format!(
                        "unknown site class `{other}`: expected a class, `runtime` or `invalid`"
                    )
                }),
        }
    }
}

impl fmt::Display for SiteClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SiteClass::Class(c) => write!(f, "{c}"),
            SiteClass::Runtime => f.write_str("decided at run time"),
            SiteClass::Invalid => f.write_str("invalid"),
        }
    }
}

/// One classification site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    /// The file, relative to the scanned root, with `/` separators.
    pub file: String,
    /// The enclosing item path (empty at the top of the file).
    pub item: String,
    /// Its position among the sites of that item, from 0.
    pub ordinal: u32,
    /// Its kind.
    pub kind: SiteKind,
    /// What it is, as written: `strict!`, `struct StackTrace`, `fn record`,
    /// `impl Tool for ReadFile`, `.classify(class)`.
    pub what: String,
    /// The class it gives.
    pub class: SiteClass,
    /// Its line (for people; not part of the key).
    pub line: u32,
    /// Its column (for people; not part of the key).
    #[serde(default)]
    pub column: u32,
}

/// Why scanning or checking failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SitesError {
    /// A file or directory could not be read or written.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A Rust file does not parse.
    #[error("{file}:{line}:{column}: not valid Rust: {message}")]
    Parse {
        /// The file.
        file: String,
        /// Where.
        line: usize,
        /// Where.
        column: usize,
        /// What `syn` said.
        message: String,
    },
    /// The lockfile is not a sites lockfile.
    #[error("lockfile {}: {message}", path.display())]
    Lockfile {
        /// The lockfile.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

const MACROS: [(&str, Retention); 3] = [
    ("strict", Retention::Strict),
    ("fuzzy", Retention::Fuzzy),
    ("forgettable", Retention::Forgettable),
];

fn macro_class(name: &str) -> Option<Retention> {
    MACROS.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
}

/// Whether a macro path is one of ours: a bare name, or qualified by `favur_context`,
/// `$crate` or `crate`.
fn our_macro(path: &syn::Path) -> Option<Retention> {
    let last = path.segments.last()?;
    let class = macro_class(&last.ident.to_string())?;
    match path.segments.len() {
        1 => Some(class),
        2 => {
            let first = path.segments.first()?.ident.to_string();
            matches!(first.as_str(), "favur_context" | "crate").then_some(class)
        }
        _ => None,
    }
}

fn variant(expr: &Expr) -> Option<Retention> {
    let Expr::Path(p) = expr else { return None };
    let last = p.path.segments.last()?.ident.to_string();
    Retention::ALL
        .into_iter()
        .find(|c| c.as_str().eq_ignore_ascii_case(&last))
        .filter(|_| p.path.segments.len() >= 2)
}

/// The class of a `classify` argument, or `None` if it does not look like a class.
fn classify_arg(expr: &Expr) -> Option<SiteClass> {
    if let Some(c) = variant(expr) {
        return Some(SiteClass::Class(c));
    }
    if matches!(expr, Expr::Reference(_) | Expr::Lit(_)) {
        return None;
    }
    let text = quote_text(expr).to_lowercase();
    let names_class = text.contains("class") || text.contains("retention");
    // A classifier (an import's, a rules file's) is not a class.
    (names_class && !text.contains("classifier")).then_some(SiteClass::Runtime)
}

fn quote_text(expr: &Expr) -> String {
    expr.to_token_stream().to_string()
}

fn retention_attr(attrs: &[Attribute]) -> Option<(Span, SiteClass)> {
    let attr = attrs.iter().find(|a| {
        let segs = &a.path().segments;
        segs.last().is_some_and(|s| s.ident == "retention")
            && (segs.len() == 1 || segs.first().is_some_and(|f| f.ident == "favur_context"))
    })?;
    let class = attr
        .parse_args::<syn::Ident>()
        .ok()
        .and_then(|i| i.to_string().parse::<Retention>().ok())
        .map_or(SiteClass::Invalid, SiteClass::Class);
    Some((attr.pound_token.span, class))
}

struct Scanner {
    file: String,
    path: Vec<String>,
    sites: Vec<Site>,
    ordinals: BTreeMap<String, u32>,
}

impl Scanner {
    fn push(&mut self, span: Span, kind: SiteKind, what: String, class: SiteClass) {
        let item = self.path.join("::");
        let ordinal = self.ordinals.entry(item.clone()).or_default();
        let start = span.start();
        self.sites.push(Site {
            file: self.file.clone(),
            item,
            ordinal: *ordinal,
            kind,
            what,
            class,
            line: u32::try_from(start.line).unwrap_or(u32::MAX),
            column: u32::try_from(start.column + 1).unwrap_or(u32::MAX),
        });
        *ordinal += 1;
    }

    /// A function's `#[retention]` site, if it has one; its name, to nest what is inside.
    fn function(&mut self, attrs: &[syn::Attribute], sig: &syn::Signature) -> String {
        let name = sig.ident.to_string();
        if let Some((span, class)) = retention_attr(attrs) {
            self.push(span, SiteKind::Function, format!("fn {name}"), class);
        }
        name
    }

    fn nested<F: FnOnce(&mut Self)>(&mut self, name: String, f: F) {
        self.path.push(name);
        f(self);
        self.path.pop();
    }

    /// Finds sites in a macro's arguments: parsed as expressions where they are (most
    /// macros take comma-separated expressions), otherwise searched token by token.
    fn tokens(&mut self, tokens: &TokenStream) {
        let parser = Punctuated::<Expr, Token![,]>::parse_terminated;
        match syn::parse::Parser::parse2(parser, tokens.clone()) {
            Ok(exprs) => exprs.iter().for_each(|e| self.visit_expr(e)),
            Err(_) => self.raw(tokens),
        }
    }

    /// Token search: `name ! (...)` with an optional `favur_context ::` / `$crate ::`
    /// prefix, at any depth.
    fn raw(&mut self, tokens: &TokenStream) {
        let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
        for (i, tree) in trees.iter().enumerate() {
            match tree {
                TokenTree::Ident(ident) => {
                    let Some(class) = macro_class(&ident.to_string()) else {
                        continue;
                    };
                    let bang =
                        matches!(trees.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '!');
                    let group = matches!(trees.get(i + 2), Some(TokenTree::Group(g)) if g.delimiter() != Delimiter::None);
                    // A qualified path other than ours (`other::strict!`) is not a site.
                    let colon = |k: usize| matches!(trees.get(k), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                    let qualified = i >= 2 && colon(i - 1) && colon(i - 2);
                    let ours = i >= 3
                        && matches!(&trees[i - 3], TokenTree::Ident(q) if q == "favur_context" || q == "crate");
                    let foreign = qualified && !ours;
                    if bang && group && !foreign {
                        self.push(
                            ident.span(),
                            SiteKind::Macro,
                            format!("{ident}!"),
                            SiteClass::Class(class),
                        );
                    }
                }
                TokenTree::Group(g) => self.raw(&g.stream()),
                _ => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for Scanner {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.nested(m.ident.to_string(), |s| visit::visit_item_mod(s, m));
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let name = self.function(&f.attrs, &f.sig);
        self.nested(name, |s| visit::visit_item_fn(s, f));
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        let name = self.function(&f.attrs, &f.sig);
        self.nested(name, |s| visit::visit_impl_item_fn(s, f));
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        let name = f.sig.ident.to_string();
        self.nested(name, |s| visit::visit_trait_item_fn(s, f));
    }

    fn visit_item_trait(&mut self, t: &'ast syn::ItemTrait) {
        self.nested(t.ident.to_string(), |s| visit::visit_item_trait(s, t));
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let ty = squash(&i.self_ty.to_token_stream().to_string());
        let (name, what) = match &i.trait_ {
            Some((_, path, _)) => {
                let t = squash(&path.to_token_stream().to_string());
                (format!("<{ty} as {t}>"), format!("impl {t} for {ty}"))
            }
            None => (format!("<{ty}>"), format!("impl {ty}")),
        };
        if let Some((span, class)) = retention_attr(&i.attrs) {
            self.push(span, SiteKind::Tool, what, class);
        }
        self.nested(name, |s| visit::visit_item_impl(s, i));
    }

    fn visit_item_struct(&mut self, t: &'ast syn::ItemStruct) {
        if let Some((span, class)) = retention_attr(&t.attrs) {
            self.push(span, SiteKind::Type, format!("struct {}", t.ident), class);
        }
        visit::visit_item_struct(self, t);
    }

    fn visit_item_enum(&mut self, t: &'ast syn::ItemEnum) {
        if let Some((span, class)) = retention_attr(&t.attrs) {
            self.push(span, SiteKind::Type, format!("enum {}", t.ident), class);
        }
        visit::visit_item_enum(self, t);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if let Some(class) = our_macro(&m.path) {
            let name = m.path.segments.last().map(|s| s.ident.span());
            let span = name.unwrap_or_else(Span::call_site);
            let what = format!("{}!", squash(&m.path.to_token_stream().to_string()));
            self.push(span, SiteKind::Macro, what, SiteClass::Class(class));
            // Another macro call among its arguments (`message: fuzzy!(...)`) is a site too.
            self.raw(&m.tokens);
        } else {
            self.tokens(&m.tokens);
        }
    }

    fn visit_expr_method_call(&mut self, c: &'ast syn::ExprMethodCall) {
        if c.method == "classify"
            && c.args.len() == 1
            && let Some(class) = c.args.first().and_then(classify_arg)
        {
            let what = format!(
                ".classify({})",
                squash(&c.args.to_token_stream().to_string())
            );
            self.push(c.method.span(), SiteKind::Classify, what, class);
        }
        visit::visit_expr_method_call(self, c);
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if let Expr::Path(p) = &*c.func {
            let segs = &p.path.segments;
            let ufcs = segs.len() >= 2
                && segs.last().is_some_and(|s| s.ident == "classify")
                && segs
                    .iter()
                    .rev()
                    .nth(1)
                    .is_some_and(|s| s.ident == "Message");
            if ufcs
                && c.args.len() == 2
                && let Some(class) = c.args.iter().nth(1).and_then(classify_arg)
            {
                let span = segs.last().map_or_else(Span::call_site, |s| s.ident.span());
                let what = format!(
                    "Message::classify(.., {})",
                    squash(&c.args[1].to_token_stream().to_string())
                );
                self.push(span, SiteKind::Classify, what, class);
            }
        }
        visit::visit_expr_call(self, c);
    }
}

/// Token text with the spaces the token printer puts around `::`, `<`, `>` and `,`
/// taken out (`favur_context :: strict` becomes `favur_context::strict`).
fn squash(text: &str) -> String {
    text.replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" ::", "::")
        .replace("< ", "<")
        .replace(" <", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
        .replace("$ crate", "$crate")
}

/// The sites of one Rust source file, in source order.
///
/// # Errors
///
/// [`SitesError::Parse`] if the file is not valid Rust.
pub fn scan_source(file: &str, source: &str) -> Result<Vec<Site>, SitesError> {
    let ast = syn::parse_file(source).map_err(|e| {
        let start = e.span().start();
        SitesError::Parse {
            file: file.to_owned(),
            line: start.line,
            column: start.column + 1,
            message: e.to_string(),
        }
    })?;
    let mut scanner = Scanner {
        file: file.to_owned(),
        path: Vec::new(),
        sites: Vec::new(),
        ordinals: BTreeMap::new(),
    };
    scanner.visit_file(&ast);
    Ok(scanner.sites)
}

/// The sites of every `.rs` file under `root` (a file or a directory; `target` and
/// hidden directories are skipped), files in path order, each file's sites in source
/// order. Paths are relative to `root` (to its parent for a single file).
///
/// # Errors
///
/// An unreadable path, or a file that is not valid Rust.
pub fn scan(root: &Path) -> Result<Vec<Site>, SitesError> {
    let io = |path: &Path, action| {
        let path = path.to_owned();
        move |source| SitesError::Io {
            path,
            action,
            source,
        }
    };
    let meta = std::fs::metadata(root).map_err(io(root, "read"))?;
    let (base, mut files) = if meta.is_file() {
        (
            root.parent().unwrap_or(Path::new("")).to_owned(),
            vec![root.to_owned()],
        )
    } else {
        let mut files = Vec::new();
        let mut stack = vec![root.to_owned()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).map_err(io(&dir, "list"))? {
                let path = entry.map_err(io(&dir, "list"))?.path();
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if path.is_dir() {
                    if name != "target" && !name.starts_with('.') {
                        stack.push(path);
                    }
                } else if name.ends_with(".rs") {
                    files.push(path);
                }
            }
        }
        (root.to_owned(), files)
    };
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).map_err(io(&path, "read"))?;
        let rel = path.strip_prefix(&base).unwrap_or(&path);
        let name = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        out.extend(scan_source(&name, &text)?);
    }
    Ok(out)
}

mod command;
mod lockfile;
pub use command::{SitesArgs, sites_command};

#[cfg(test)]
mod tests;
