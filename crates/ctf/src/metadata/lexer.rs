//! Tokenizer for TSDL, the CTF 1.8 metadata language.

use crate::error::MetadataError;

/// One token of TSDL text.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok<'a> {
    /// An identifier or keyword, as in the text.
    Ident(&'a str),
    /// An integer literal (decimal, hex or octal), already parsed.
    Int(u64),
    /// A string literal, unescaped.
    Str(String),
    /// Punctuation: `{ } ( ) [ ] ; : , = < > . - +` as a char, `:=` as '≔', `...` as '…', `->` as '→'.
    Punct(char),
}

/// A token and the byte offset in the metadata text where it starts.
#[derive(Debug, Clone)]
pub struct Token<'a> {
    /// The token.
    pub tok: Tok<'a>,
    /// Byte offset into the metadata text.
    pub offset: usize,
}

/// Splits TSDL text into tokens, skipping whitespace and comments.
pub fn tokenize(text: &str) -> Result<Vec<Token<'_>>, MetadataError> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(text.len() / 4);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() || c == 0 {
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let start = i;
            i += 2;
            loop {
                if i + 1 >= b.len() {
                    return Err(MetadataError::at(start, "unterminated comment"));
                }
                if b[i] == b'*' && b[i + 1] == b'/' {
                    i += 2;
                    break;
                }
                i += 1;
            }
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Token { tok: Tok::Ident(&text[start..i]), offset: start });
            continue;
        }
        if c.is_ascii_digit() {
            let (v, n) = parse_int(&b[i..]).ok_or_else(|| MetadataError::at(start, "invalid integer literal"))?;
            i += n;
            out.push(Token { tok: Tok::Int(v), offset: start });
            continue;
        }
        if c == b'"' {
            i += 1;
            let mut s = Vec::new();
            loop {
                match b.get(i) {
                    None => return Err(MetadataError::at(start, "unterminated string literal")),
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(b'\\') => {
                        let e = *b.get(i + 1).ok_or_else(|| MetadataError::at(start, "unterminated string literal"))?;
                        i += 2;
                        match e {
                            b'n' => s.push(b'\n'),
                            b't' => s.push(b'\t'),
                            b'r' => s.push(b'\r'),
                            b'a' => s.push(7),
                            b'b' => s.push(8),
                            b'f' => s.push(12),
                            b'v' => s.push(11),
                            b'\\' | b'\'' | b'"' | b'?' => s.push(e),
                            b'x' => {
                                let mut v = 0u32;
                                let mut n = 0;
                                while n < 2 && i < b.len() && b[i].is_ascii_hexdigit() {
                                    v = v * 16 + (b[i] as char).to_digit(16).unwrap_or(0);
                                    i += 1;
                                    n += 1;
                                }
                                if n == 0 {
                                    return Err(MetadataError::at(i - 2, "invalid \\x escape in string literal"));
                                }
                                s.push(v as u8);
                            }
                            b'0'..=b'7' => {
                                let mut v = (e - b'0') as u32;
                                let mut n = 1;
                                while n < 3 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                                    v = v * 8 + (b[i] - b'0') as u32;
                                    i += 1;
                                    n += 1;
                                }
                                s.push(v as u8);
                            }
                            other => {
                                return Err(MetadataError::at(
                                    i - 2,
                                    format!("invalid escape sequence `\\{}` in string literal", other as char),
                                ))
                            }
                        }
                    }
                    Some(0) => return Err(MetadataError::at(i, "NUL byte in string literal")),
                    Some(&ch) => {
                        s.push(ch);
                        i += 1;
                    }
                }
            }
            out.push(Token { tok: Tok::Str(String::from_utf8_lossy(&s).into_owned()), offset: start });
            continue;
        }
        if c == b'\'' {
            // Character literal: its code as an integer.
            let (v, n) = match (b.get(i + 1), b.get(i + 2), b.get(i + 3)) {
                (Some(b'\\'), Some(&e), Some(b'\'')) => (e as u64, 4),
                (Some(&ch), Some(b'\''), _) => (ch as u64, 3),
                _ => return Err(MetadataError::at(start, "invalid character literal")),
            };
            i += n;
            out.push(Token { tok: Tok::Int(v), offset: start });
            continue;
        }
        let p = match c {
            b':' if b.get(i + 1) == Some(&b'=') => {
                i += 2;
                '≔'
            }
            b'.' if b.get(i + 1) == Some(&b'.') && b.get(i + 2) == Some(&b'.') => {
                i += 3;
                '…'
            }
            b'-' if b.get(i + 1) == Some(&b'>') => {
                i += 2;
                '→'
            }
            b'{' | b'}' | b'(' | b')' | b'[' | b']' | b';' | b':' | b',' | b'=' | b'<' | b'>' | b'.' | b'-' | b'+'
            | b'*' => {
                i += 1;
                c as char
            }
            _ => {
                return Err(MetadataError::at(
                    start,
                    format!("unexpected character {:?}", text[start..].chars().next().unwrap_or('?')),
                ))
            }
        };
        out.push(Token { tok: Tok::Punct(p), offset: start });
    }
    Ok(out)
}

/// Parses a C integer literal at the start of `b` (with optional U/L suffixes); returns value and length.
fn parse_int(b: &[u8]) -> Option<(u64, usize)> {
    let mut i = 0;
    let (radix, digits_start) = if b.len() > 1 && b[0] == b'0' && (b[1] == b'x' || b[1] == b'X') {
        (16, 2)
    } else if b.len() > 1 && b[0] == b'0' && b[1].is_ascii_digit() {
        (8, 1)
    } else {
        (10, 0)
    };
    i += digits_start;
    let mut v: u64 = 0;
    let mut any = radix == 8 || digits_start == 0;
    while i < b.len() {
        let d = match (b[i] as char).to_digit(radix) {
            Some(d) => d,
            None => break,
        };
        v = v.checked_mul(radix as u64)?.checked_add(d as u64)?;
        any = true;
        i += 1;
    }
    if !any {
        return None;
    }
    while i < b.len() && matches!(b[i], b'u' | b'U' | b'l' | b'L') {
        i += 1;
    }
    if i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
        return None;
    }
    Some((v, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        let t =
            tokenize("typealias integer { size = 0x1F; } := uint8_t; /* c */ x[3] ... \"a\\\"b\" // e\n 017 -> 5UL")
                .unwrap();
        let toks: Vec<Tok> = t.into_iter().map(|t| t.tok).collect();
        assert_eq!(toks[0], Tok::Ident("typealias"));
        assert_eq!(toks[5], Tok::Int(31));
        assert_eq!(toks[8], Tok::Punct('≔'));
        assert!(toks.contains(&Tok::Punct('…')));
        assert!(toks.contains(&Tok::Str("a\"b".into())));
        assert!(toks.contains(&Tok::Int(15)));
        assert!(toks.contains(&Tok::Punct('→')));
        assert_eq!(*toks.last().unwrap(), Tok::Int(5));
    }

    #[test]
    fn errors_name_offsets() {
        let e = tokenize("abc /* never closed").unwrap_err();
        assert_eq!(e.offset, 4);
        assert!(tokenize("a @ b").is_err());
        assert!(tokenize("12abc").is_err());
    }
}
