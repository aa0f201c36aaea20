//! Cache keys: what a member's verification reads, hashed (issue 13, item 4).
//!
//! A member's key is SHA3-256 over the tool's identity ([`tool_id`]: a build id that
//! changes with every edit of the sources, and the Z3 version), the configuration that
//! changes the result or its printed form ([`config_key`]), and the member's
//! *dependency items* in text order: its own text, and whatever the verification may
//! read, found by names (a conservative closure, never a resolution):
//!
//! - the member's class declaration (name, `implements`/`extends`) and, for a
//!   constructor, all the fields of its class (it starts with every field);
//! - for every identifier in an included text: every class or interface with that name
//!   (its declaration, its constructors' contracts, and if the text says `new`, its
//!   fields: `new C()` of a class without constructor gives every field), and every
//!   member with that
//!   name in any class or interface: the whole text of fields, pure methods and
//!   predicates (their bodies are unfolded), only the signature and contract of
//!   methods and constructors (a callee's body never affects its callers);
//! - the declaration of the class of every included member; for an included
//!   interface, the declarations of every class and interface that extends or
//!   implements it (dispatch, refinement and predicate families change with them),
//!   and for an included class or interface, those of its super-interfaces;
//! - transitively, for the identifiers of every included text.
//!
//! The items' relative order is part of the key (the termination check of pure
//! methods reads declaration order), their absolute positions are not: a cached
//! result's spans are stored relative to the item they fall in ([`Plan::anchors`]), so
//! an edit elsewhere in the file moves a cached diagnostic with its member.
//!
//! With `--trace` or `--counterexample` the printed result may show symbols of any
//! definition and lines of callees' bodies (a replay runs them): the key is then the
//! whole file's text, and spans are stored absolute.
//!
//! Architecture invariant: a key only over-approximates what verification reads. When
//! a new kind of program fact starts to influence verification, it must enter here
//! (or the key must fall back to the whole file).

use crate::syntax::ast::{Body, MemberKind, MemberRef, Program, Span};
use crate::verify::Config;
use sha3::{Digest, Sha3_256};
use std::collections::{BTreeMap, HashMap};

/// The tool's identity: the build id (`build.rs` hashes every source file, so it changes
/// with the code although the version stays 0.1.0), the version, and the Z3 version
/// linked at run time. Computed once per process.
pub fn tool_id() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        format!(
            "idf-verify {} build {} z3 {}",
            env!("CARGO_PKG_VERSION"),
            env!("IDF_BUILD_ID"),
            crate::decider::z3::version()
        )
    })
}

/// The configuration that changes a verdict or its printed form. Statistics are not
/// in it: entries always hold them (`--stats` shows them, or not). Nor are `--jobs`,
/// `--deadline` (a member cut by it is a timeout, never cached) or the output format
/// (entries hold data, not text).
pub fn config_key(config: &Config) -> String {
    let Config {
        infer,
        timeout,
        trace,
        counterexample,
        stats: _,
        quantifier_counts: _,
        smoke,
        merge,
        rlimit,
        interrupt: _,
        fixes,
        save: _,
    } = config;
    format!(
        "infer={infer} timeout={timeout:?} trace={trace} counterexample={counterexample} smoke={smoke} merge={merge} rlimit={rlimit:?} fixes={fixes}"
    )
}

/// Whether the key must cover the whole file (see the module doc). Suggested fixes do
/// not: a fix edits only its member and is verified against what the member's key
/// already covers.
pub fn whole_file(config: &Config) -> bool {
    config.trace || config.counterexample
}

/// A part of the program a key covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Item {
    /// A class's or interface's declaration (kind, name, supers).
    Header(usize),
    /// A member: its whole text (`true`) or its signature and contract only.
    Member(MemberRef, bool),
}

/// The keys of one program's members, with what their entries need to place spans.
pub struct Plan<'a> {
    program: &'a Program,
    text: &'a str,
    config: String,
    whole: bool,
    /// Classes and interfaces by name.
    classes: HashMap<&'a str, Vec<usize>>,
    /// Members by name (constructors by their class's name).
    members: HashMap<&'a str, Vec<MemberRef>>,
    /// For each class or interface, those that extend or implement it, directly.
    subs: Vec<Vec<usize>>,
}

/// What a key covered, for storing spans relative to it: the byte ranges of the
/// dependency items in text order (the whole file when the key is the whole file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keyed {
    pub key: String,
    pub anchors: Vec<Span>,
}

impl<'a> Plan<'a> {
    pub fn new(program: &'a Program, text: &'a str, config: &Config) -> Plan<'a> {
        let mut classes: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut members: HashMap<&str, Vec<MemberRef>> = HashMap::new();
        for (ci, c) in program.classes.iter().enumerate() {
            classes.entry(c.name.name.as_str()).or_default().push(ci);
            for (mi, m) in c.members.iter().enumerate() {
                members
                    .entry(m.name.name.as_str())
                    .or_default()
                    .push(MemberRef { class: ci, member: mi });
            }
        }
        let mut subs = vec![vec![]; program.classes.len()];
        for (ci, c) in program.classes.iter().enumerate() {
            for s in &c.supers {
                for &si in classes.get(s.name.as_str()).into_iter().flatten() {
                    subs[si].push(ci);
                }
            }
        }
        Plan {
            program,
            text,
            config: config_key(config),
            whole: whole_file(config),
            classes,
            members,
            subs,
        }
    }

    /// The byte range an item covers: a member's whole span, or its span up to its
    /// body; a declaration's name.
    fn range(&self, item: Item) -> Span {
        match item {
            Item::Header(ci) => self.program.classes[ci].name.span,
            Item::Member(r, full) => {
                let m = &self.program.classes[r.class].members[r.member];
                match (&m.body, full) {
                    (Body::Block(b), false) => Span { start: m.span.start, end: b.span.start },
                    _ => m.span,
                }
            }
        }
    }

    /// The text an item is hashed by.
    fn content(&self, item: Item) -> String {
        match item {
            Item::Header(ci) => {
                let c = &self.program.classes[ci];
                let supers: Vec<&str> = c.supers.iter().map(|s| s.name.as_str()).collect();
                format!(
                    "{} {} : {}",
                    if c.is_interface { "interface" } else { "class" },
                    c.name.name,
                    supers.join(",")
                )
            }
            Item::Member(..) => self.text.get(self.range(item).range()).unwrap_or("").to_string(),
        }
    }

    /// The fields of class `ci`, whole.
    fn fields(&self, ci: usize) -> Vec<Item> {
        let c = &self.program.classes[ci];
        (0..c.members.len())
            .filter(|&mi| c.members[mi].kind == MemberKind::Field)
            .map(|mi| Item::Member(MemberRef { class: ci, member: mi }, true))
            .collect()
    }

    /// Every item member `r`'s verification may read (see the module doc).
    fn closure(&self, r: MemberRef) -> Vec<Item> {
        // Members: whether the whole text is included.
        let mut members: BTreeMap<MemberRef, bool> = BTreeMap::new();
        let mut headers: std::collections::BTreeSet<usize> = Default::default();
        let mut todo: Vec<Item> = vec![Item::Member(r, true), Item::Header(r.class)];
        if self.program.classes[r.class].members[r.member].kind == MemberKind::Constructor {
            todo.extend(self.fields(r.class));
        }
        while let Some(item) = todo.pop() {
            match item {
                Item::Header(ci) => {
                    if !headers.insert(ci) {
                        continue;
                    }
                    let c = &self.program.classes[ci];
                    for s in &c.supers {
                        for &si in self.classes.get(s.name.as_str()).into_iter().flatten() {
                            todo.push(Item::Header(si));
                        }
                    }
                    if c.is_interface {
                        todo.extend(self.subs[ci].iter().map(|&s| Item::Header(s)));
                    }
                    continue;
                }
                Item::Member(m, full) => {
                    match members.get(&m) {
                        Some(true) => continue,
                        Some(false) if !full => continue,
                        _ => {}
                    }
                    members.insert(m, full);
                    todo.push(Item::Header(m.class));
                }
            }
            let content = self.content(item);
            let words = words(&content);
            let allocates = words.binary_search(&"new").is_ok();
            for &word in &words {
                for &ci in self.classes.get(word).into_iter().flatten() {
                    todo.push(Item::Header(ci));
                    if allocates {
                        todo.extend(self.fields(ci));
                    }
                    for (mi, m) in self.program.classes[ci].members.iter().enumerate() {
                        if m.kind == MemberKind::Constructor {
                            todo.push(Item::Member(MemberRef { class: ci, member: mi }, false));
                        }
                    }
                }
                for &m in self.members.get(word).into_iter().flatten() {
                    let kind = self.program.classes[m.class].members[m.member].kind;
                    let full = !matches!(kind, MemberKind::Method | MemberKind::Constructor);
                    todo.push(Item::Member(m, full));
                }
            }
        }
        let mut items: Vec<Item> = headers.into_iter().map(Item::Header).collect();
        items.extend(members.into_iter().map(|(m, full)| Item::Member(m, full)));
        items.sort_by_key(|&i| (self.range(i).start, i));
        items
    }

    /// The key of member `r`, and the anchors its entry's spans are stored against.
    pub fn key(&self, r: MemberRef) -> Keyed {
        let mut h = Sha3_256::new();
        let mut put = |bytes: &[u8]| {
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        put(tool_id().as_bytes());
        put(self.config.as_bytes());
        let (self_tag, anchors) = if self.whole {
            put(b"whole file");
            put(self.text.as_bytes());
            (format!("{}/{}", r.class, r.member), vec![Span::new(0, self.text.len())])
        } else {
            let items = self.closure(r);
            let mut anchors = Vec::with_capacity(items.len());
            let mut own = 0;
            for (i, &item) in items.iter().enumerate() {
                match item {
                    Item::Header(_) => put(b"H"),
                    Item::Member(m, full) => {
                        if m == r {
                            own = i;
                        }
                        let kind = self.program.classes[m.class].members[m.member].kind;
                        put(format!("M {kind:?} {full}").as_bytes());
                    }
                }
                put(self.content(item).as_bytes());
                anchors.push(self.range(item));
            }
            (format!("item {own}"), anchors)
        };
        // Which member of the covered items this key is for (two members may read the
        // same items), and its name as reported.
        put(self_tag.as_bytes());
        put(member_name(self.program, r).as_bytes());
        let key = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        Keyed { key, anchors }
    }
}

/// `Class.member`, the constructor `Class.new` (as `crate::source::select_members` names it).
fn member_name(program: &Program, r: MemberRef) -> String {
    let c = &program.classes[r.class];
    let m = &c.members[r.member];
    if m.kind == MemberKind::Constructor {
        format!("{}.new", c.name.name)
    } else {
        format!("{}.{}", c.name.name, m.name.name)
    }
}

/// The identifier-like words of a text (comments and keywords included: more words
/// only make a key cover more).
fn words(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::front_end;

    fn keys(text: &str, config: &Config) -> Vec<(String, String)> {
        let p = front_end(text).expect("checks");
        let plan = Plan::new(&p, text, config);
        crate::source::select_members(&p, &[])
            .into_iter()
            .map(|(r, name)| (name, plan.key(r).key))
            .collect()
    }

    #[test]
    fn moving_text_does_not_change_keys_and_editing_does() {
        let a = "class A { int f; void m() requires acc(f); { f = 1; } void n() { } }";
        let b =
            "\n\n// moved\nclass A { int f; void m() requires acc(f); { f = 1; } void n() { } }";
        let c = "class A { int f; void m() requires acc(f); { f = 2; } void n() { } }";
        let cfg = Config::default();
        assert_eq!(keys(a, &cfg), keys(b, &cfg));
        let (ka, kc) = (keys(a, &cfg), keys(c, &cfg));
        assert_eq!(ka[0].0, "A.m");
        assert_ne!(ka[0], kc[0], "A.m's body changed");
        assert_eq!(ka[1], kc[1], "A.n reads nothing of A.m");
        let other = Config { infer: false, ..Config::default() };
        assert_ne!(keys(a, &cfg)[1], keys(a, &other)[1]);
    }
}
