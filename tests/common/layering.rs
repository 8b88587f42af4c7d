//! The layering check each library crate runs on its own sources (the habit of rust-analyzer's
//! tidy tests): every `crate::` path in the library's non-test code, and every `super::` path
//! that leaves its top-level module, is mapped to the top-level module it names; an edge from
//! a module to one of a later layer fails the test unless it is on the crate's allow-list,
//! each entry with its reason.
//!
//! What is read: each `.rs` file under `src/`, without comments, string and character
//! literals, and `#[cfg(test)]` items (tests may use anything); `use` trees are expanded
//! (`use crate::{a, b::c}` names `a` and `b`); inline modules (`mod avx2 { … }`) are tracked so
//! that `super::` resolves from where it is written. The crate root (`lib.rs`) only declares
//! and re-exports, so its edges are not checked.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// One upward edge: the file, the line, the path, and the two modules.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    pub file: String,
    pub line: usize,
    pub from: String,
    pub to: String,
    pub path: String,
}

/// A crate's layer order: each entry a layer's top-level modules, lowest first.
pub struct Layers<'a> {
    pub layers: &'a [&'a [&'a str]],
    /// Allowed edges against the order: `(from, to, why)`.
    pub allowed: &'a [(&'a str, &'a str, &'a str)],
}

impl Layers<'_> {
    fn layer_of(&self, module: &str) -> Option<usize> {
        self.layers.iter().position(|l| l.contains(&module))
    }

    /// Every edge of `src` against the order (allowed ones included), and the top-level
    /// modules no layer names.
    pub fn check(&self, src: &Path) -> (Vec<Edge>, BTreeSet<String>) {
        let mut edges = Vec::new();
        let mut unknown = BTreeSet::new();
        for file in rust_files(src) {
            let rel = file
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if rel == "lib.rs" {
                continue;
            }
            let module = module_path(&rel);
            let Some(top) = module.first().cloned() else {
                continue;
            };
            if self.layer_of(&top).is_none() {
                unknown.insert(top.clone());
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            for (line, path) in paths(&text, &module) {
                let Some(target) = path.first() else { continue };
                if target == &top || target == "self" {
                    continue;
                }
                match (self.layer_of(&top), self.layer_of(target)) {
                    (Some(a), Some(b)) if b > a => edges.push(Edge {
                        file: rel.clone(),
                        line,
                        from: top.clone(),
                        to: target.clone(),
                        path: path.join("::"),
                    }),
                    (_, None) if is_module_name(target) => {
                        // An item of the crate root (a re-export): the root is above every
                        // layer, so naming it from a layer is an upward edge too.
                        edges.push(Edge {
                            file: rel.clone(),
                            line,
                            from: top.clone(),
                            to: format!("(crate root) {target}"),
                            path: path.join("::"),
                        });
                    }
                    _ => {}
                }
            }
        }
        edges.sort();
        (edges, unknown)
    }

    /// Fails, listing them, if `src` has edges against the order the allow-list does not
    /// name.
    pub fn assert_layered(&self, src: &Path) {
        let bad = self.violations(src);
        let lines: Vec<String> = bad
            .iter()
            .map(|e| format!("{}:{}: {} -> {} ({})", e.file, e.line, e.from, e.to, e.path))
            .collect();
        assert!(
            bad.is_empty(),
            "{} edges against the layer order:\n{}",
            bad.len(),
            lines.join("\n")
        );
    }

    /// The edges against the order that the allow-list does not name.
    pub fn violations(&self, src: &Path) -> Vec<Edge> {
        let (edges, unknown) = self.check(src);
        assert!(
            unknown.is_empty(),
            "top-level modules in no layer: {unknown:?} (add them to the layer table)"
        );
        edges
            .into_iter()
            .filter(|e| {
                !self
                    .allowed
                    .iter()
                    .any(|(from, to, _)| *from == e.from && *to == e.to)
            })
            .collect()
    }
}

/// Whether a path's first segment can be a module or item of the crate root (not a keyword
/// or a primitive type).
fn is_module_name(s: &str) -> bool {
    !matches!(s, "crate" | "super" | "self" | "Self") && !s.is_empty()
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `lax/elementwise.rs` → `[lax, elementwise]`; `lax/mod.rs` → `[lax]`; `config.rs` →
/// `[config]`.
fn module_path(rel: &str) -> Vec<String> {
    let rel = rel.trim_end_matches(".rs");
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The text without comments and string and character literals (replaced by spaces, lines
/// kept), so that only code is scanned.
fn strip(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !prev_ident(&b, i) {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                if b[j] == '\n' {
                    out.push('\n');
                }
                j += 1;
            }
            out.push(' ');
            i = j;
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                if i < b.len() && b[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i += 1;
            out.push(' ');
        } else if c == '\'' {
            // A character literal ('a', '\n', '\u{..}'), or a lifetime ('a).
            let close = if next == Some('\\') {
                (i + 2..b.len().min(i + 12)).find(|&k| b[k] == '\'')
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match close {
                Some(k) => {
                    out.push(' ');
                    i = k + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn prev_ident(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

/// The code without `#[cfg(test)]` items: the attribute and the item after it (to its `;`
/// or its balanced braces) become spaces, lines kept.
fn without_tests(code: &str) -> String {
    let mut s: Vec<char> = code.chars().collect();
    let pat: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut i = 0;
    while i + pat.len() <= s.len() {
        if s[i..i + pat.len()] != pat[..] {
            i += 1;
            continue;
        }
        let start = i;
        let mut j = i + pat.len();
        let mut depth = 0i32;
        while j < s.len() {
            match s[j] {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        j += 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    j += 1;
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        let end = j.min(s.len());
        for c in &mut s[start..end] {
            if *c != '\n' {
                *c = ' ';
            }
        }
        i = j;
    }
    s.into_iter().collect()
}

/// Every path the file's code names, resolved to a path from the crate root (`crate::a::b`
/// → `[a, b]`; `super::x` from `lax::elementwise` → `[lax, x]`), with its line. `use` trees
/// are expanded.
fn paths(text: &str, module: &[String]) -> Vec<(usize, Vec<String>)> {
    let code = without_tests(&strip(text));
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    // Inline modules: (name, brace depth at which it was opened).
    let mut inline: Vec<(String, i32)> = Vec::new();
    let mut depth = 0i32;
    let mut line = 1;
    let mut i = 0;
    let ident_at = |k: usize| -> Option<(String, usize)> {
        let mut e = k;
        while e < chars.len() && (chars[e].is_alphanumeric() || chars[e] == '_') {
            e += 1;
        }
        (e > k).then(|| (chars[k..e].iter().collect(), e))
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
            continue;
        }
        if c == '{' {
            depth += 1;
            i += 1;
            continue;
        }
        if c == '}' {
            if inline.last().is_some_and(|(_, d)| *d == depth) {
                inline.pop();
            }
            depth -= 1;
            i += 1;
            continue;
        }
        let at_word = i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if !at_word || !(c.is_alphabetic() || c == '_') {
            i += 1;
            continue;
        }
        let (word, end) = ident_at(i).unwrap();
        // `mod name {`: an inline module.
        if word == "mod" {
            let mut k = end;
            while k < chars.len() && chars[k].is_whitespace() {
                k += 1;
            }
            if let Some((name, e2)) = ident_at(k) {
                let mut k2 = e2;
                while k2 < chars.len() && chars[k2].is_whitespace() {
                    k2 += 1;
                }
                if chars.get(k2) == Some(&'{') {
                    inline.push((name, depth + 1));
                }
            }
            i = end;
            continue;
        }
        let here: Vec<String> = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(n, _)| n.clone()))
            .collect();
        if word == "use" {
            // The whole use tree up to its `;`.
            let semi = (end..chars.len())
                .find(|&k| chars[k] == ';')
                .unwrap_or(chars.len());
            let tree: String = chars[end..semi].iter().collect();
            let lines_in = tree.matches('\n').count();
            for p in expand(tree.trim()) {
                if let Some(r) = resolve(&p, &here) {
                    out.push((line, r));
                }
            }
            line += lines_in;
            i = semi;
            continue;
        }
        if word == "crate" || word == "super" {
            // A path in code: read `seg::seg::…`.
            let mut segs = vec![word.clone()];
            let mut k = end;
            while k + 1 < chars.len() && chars[k] == ':' && chars[k + 1] == ':' {
                match ident_at(k + 2) {
                    Some((s, e)) => {
                        segs.push(s);
                        k = e;
                    }
                    None => break,
                }
            }
            if segs.len() > 1
                && let Some(r) = resolve(&segs, &here)
            {
                out.push((line, r));
            }
            i = k;
            continue;
        }
        i = end;
    }
    out
}

/// A use tree's paths: `crate::{a, b::{c, d}}` → `[crate, a]`, `[crate, b, c]`, `[crate, b,
/// d]`.
fn expand(tree: &str) -> Vec<Vec<String>> {
    // `x as y` names `x`: the alias (a word after the keyword `as`) goes first.
    let words: Vec<&str> = tree.split_whitespace().collect();
    let mut kept = Vec::new();
    let mut k = 0;
    while k < words.len() {
        if words[k] == "as" && k + 1 < words.len() {
            // The alias, and whatever punctuation follows it (`,` `}`).
            let rest: String = words[k + 1]
                .chars()
                .skip_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            kept.push(rest);
            k += 2;
            continue;
        }
        kept.push(words[k].to_string());
        k += 1;
    }
    let tree: String = kept.concat();
    fn go(t: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
        if let Some(open) = t.find('{') {
            let head = &t[..open];
            let inner = &t[open + 1..t.rfind('}').unwrap_or(t.len())];
            let mut p: Vec<String> = prefix.to_vec();
            p.extend(
                head.split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            );
            let mut depth = 0;
            let mut cur = String::new();
            for ch in inner.chars() {
                match ch {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        go(&cur, &p, out);
                        cur.clear();
                        continue;
                    }
                    _ => {}
                }
                cur.push(ch);
            }
            if !cur.is_empty() {
                go(&cur, &p, out);
            }
        } else {
            let mut p: Vec<String> = prefix.to_vec();
            p.extend(t.split("::").filter(|s| !s.is_empty()).map(str::to_string));
            if !p.is_empty() {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    go(&tree, &[], &mut out);
    out
}

/// A path from where it is written (`here`: the module path, inline modules included) as a
/// path from the crate root, if it starts with `crate` or `super`.
fn resolve(p: &[String], here: &[String]) -> Option<Vec<String>> {
    match p.first().map(String::as_str) {
        Some("crate") => Some(p[1..].to_vec()),
        Some("super") => {
            let mut base = here.to_vec();
            let mut k = 0;
            while p.get(k).map(String::as_str) == Some("super") {
                base.pop();
                k += 1;
            }
            base.extend(p[k..].iter().cloned());
            Some(base)
        }
        _ => None,
    }
}
