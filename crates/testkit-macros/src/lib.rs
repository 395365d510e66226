//! `#[needs(...)]`: a test whose requirements this machine lacks is compiled as ignored, with
//! the reason, so that `cargo test`'s summary counts it among the tests not run
//! (`test foo ... ignored, needs LTTng (lttng-tools): lttng not found`) instead of as passed.
//!
//! The build script probes the requirements once per build (see build.rs: what each name
//! checks, and when the probe reruns). Written without syn or quote: the attribute's arguments
//! are a list of names, and its output one attribute before the item.

#![deny(missing_docs)]

use proc_macro::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

include!(concat!(env!("OUT_DIR"), "/probed.rs"));

/// `#[needs(lttng, test_data)]` above `#[test]`: the test as it is when every requirement is
/// there, else the same test with `#[ignore = "needs ..."]` naming each one missing and why.
/// An unknown name is a compile error. The test keeps its own checks at run time: they skip it
/// when it is run anyway (`--include-ignored`) and fail it under `ROSTRACE_REQUIRE_TOOLS=1`.
#[proc_macro_attribute]
pub fn needs(attr: TokenStream, item: TokenStream) -> TokenStream {
    let names = match names(attr) {
        Ok(n) => n,
        Err((span, msg)) => return error(span, &msg, item),
    };
    let list: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
    match ignore_reason(&list, PROBED) {
        Ok(None) => item,
        Ok(Some(reason)) => {
            let mut out = ignore(&reason);
            out.extend(item);
            out
        }
        Err((k, msg)) => error(names[k].1, &msg, item),
    }
}

/// The probe's findings, `&[(name, why it is missing or None)]`: for the tests that check the
/// probe against the tests' own checks.
#[proc_macro]
pub fn probed(_: TokenStream) -> TokenStream {
    format!("&{PROBED:?}").parse().expect("a slice of tuples")
}

/// The names of `needs(a, b, ...)`, each with its place in the source.
fn names(attr: TokenStream) -> Result<Vec<(String, Span)>, (Span, String)> {
    let mut names = Vec::new();
    let mut comma = true;
    for tt in attr {
        match tt {
            TokenTree::Ident(i) if comma => {
                names.push((i.to_string(), i.span()));
                comma = false;
            }
            TokenTree::Punct(p) if p.as_char() == ',' && !comma => comma = true,
            t => return Err((t.span(), format!("expected requirement names separated by commas, found `{t}`"))),
        }
    }
    if names.is_empty() {
        return Err((Span::call_site(), format!("name what the test needs: one or more of {}", known(PROBED))));
    }
    Ok(names)
}

/// The ignore message for a test needing `names` (`None`: all there), or the index of an
/// unknown name and the error.
fn ignore_reason(names: &[&str], probed: &[(&str, Option<&str>)]) -> Result<Option<String>, (usize, String)> {
    let mut missing: Vec<String> = Vec::new();
    for (k, name) in names.iter().enumerate() {
        match probed.iter().find(|(n, _)| n == name) {
            None => return Err((k, format!("unknown requirement `{name}`; known: {}", known(probed)))),
            Some((_, Some(why))) => {
                let m = format!("needs {why}");
                if !missing.contains(&m) {
                    missing.push(m);
                }
            }
            Some((_, None)) => {}
        }
    }
    Ok((!missing.is_empty()).then(|| missing.join("; ")))
}

fn known(probed: &[(&str, Option<&str>)]) -> String {
    probed.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// `#[ignore = "reason"]`.
fn ignore(reason: &str) -> TokenStream {
    let inner: TokenStream = [
        TokenTree::Ident(Ident::new("ignore", Span::call_site())),
        TokenTree::Punct(Punct::new('=', Spacing::Alone)),
        TokenTree::Literal(Literal::string(reason)),
    ]
    .into_iter()
    .collect();
    [TokenTree::Punct(Punct::new('#', Spacing::Alone)), TokenTree::Group(Group::new(Delimiter::Bracket, inner))]
        .into_iter()
        .collect()
}

/// `compile_error!("msg");` pointing at `span`, then the item unchanged (its own errors, if any,
/// still show).
fn error(span: Span, msg: &str, item: TokenStream) -> TokenStream {
    let mut lit = Literal::string(msg);
    lit.set_span(span);
    let mut tokens = vec![
        TokenTree::Ident(Ident::new("compile_error", span)),
        TokenTree::Punct(Punct::new('!', Spacing::Alone)),
        TokenTree::Group(Group::new(Delimiter::Parenthesis, TokenTree::Literal(lit).into())),
        TokenTree::Punct(Punct::new(';', Spacing::Alone)),
    ];
    for t in &mut tokens {
        t.set_span(span);
    }
    let mut out: TokenStream = tokens.into_iter().collect();
    out.extend(item);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &[(&str, Option<&str>)] =
        &[("lttng", Some("LTTng (lttng-tools): lttng not found")), ("cc", None), ("test_data", Some("data: gone"))];

    #[test]
    fn present_requirements_leave_the_test_as_it_is() {
        assert_eq!(ignore_reason(&["cc"], P), Ok(None));
    }

    #[test]
    fn each_missing_requirement_is_named_once_with_its_reason() {
        assert_eq!(
            ignore_reason(&["lttng", "cc", "test_data", "lttng"], P),
            Ok(Some("needs LTTng (lttng-tools): lttng not found; needs data: gone".into()))
        );
    }

    #[test]
    fn an_unknown_name_is_an_error_listing_the_known_ones() {
        assert_eq!(
            ignore_reason(&["cc", "lttgn"], P),
            Err((1, "unknown requirement `lttgn`; known: lttng, cc, test_data".into()))
        );
    }

    #[test]
    fn the_probe_knows_every_requirement_once() {
        let mut names: Vec<&str> = PROBED.iter().map(|(n, _)| *n).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "{names:?}");
        assert!(names.contains(&"test_data") && names.contains(&"lttng"), "{names:?}");
    }
}
