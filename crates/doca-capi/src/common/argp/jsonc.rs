//! The JSON that DOCA's argp takes from `-j FILE`: json-c's non-strict dialect, which
//! configuration files written for DOCA programs use. On top of RFC 8259 it takes:
//!
//! - comments, `/* ... */` and `// ...` up to the end of the line, wherever white space
//!   may be;
//! - a trailing comma in an object or an array (`[1, 2,]`, `{"a": 1,}`), but no empty
//!   element (`[,]`, `[1,,2]`);
//! - strings in single quotes (`'text'`, where `\'` is not an escape), and raw control
//!   characters inside strings;
//! - `true`, `false` and `null` in any case, `NaN` and `Infinity` / `-Infinity` (also
//!   in any case);
//! - numbers with leading zeros (`007`) and with nothing after the point (`5.`);
//! - anything after the top-level value, which is ignored, unless the input ends inside
//!   a comment (an unterminated `/* ...` or a `// ...` with no end of line).
//!
//! It does not take: a byte-order mark, unquoted keys, `+1`, `.5`, hexadecimal numbers,
//! `#` comments, or nesting deeper than 32 levels. Duplicate keys: the last one wins.
//! (Each of these was checked against json-c 0.16's `json_object_from_file`; the test
//! suite compares the two on a corpus when json-c is installed.)
//!
//! `NaN` and the infinities, which `serde_json` cannot hold, parse to `null`: no argp
//! parameter type takes them.

use serde_json::{Map, Number, Value};

/// The deepest nesting json-c takes.
pub const MAX_DEPTH: usize = 32;

/// A parse error: what was wrong, and the byte offset where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// What was wrong.
    pub what: &'static str,
    /// Byte offset into the text.
    pub at: usize,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.what, self.at)
    }
}

/// Parses `text` as json-c does (see the module's documentation).
pub fn parse(text: &str) -> Result<Value, ParseError> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    p.skip_ws()?;
    let v = p.value(0)?;
    // What follows the value is ignored, but an input that ends inside a comment is
    // incomplete.
    p.skip_ws()?;
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

impl Parser<'_> {
    fn err<T>(&self, what: &'static str) -> Result<T, ParseError> {
        Err(ParseError { what, at: self.i })
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// Skips white space and comments. A `/` that starts no comment ends the skip
    /// (where a value or a separator is expected, it is then refused).
    fn skip_ws(&mut self) -> Result<(), ParseError> {
        loop {
            match self.peek() {
                Some(c) if is_space(c) => self.i += 1,
                Some(b'/') => match self.s.get(self.i + 1) {
                    Some(b'*') => {
                        let start = self.i;
                        self.i += 2;
                        loop {
                            match self.peek() {
                                None => {
                                    self.i = start;
                                    return self.err("unterminated /* comment");
                                }
                                Some(b'*') if self.s.get(self.i + 1) == Some(&b'/') => {
                                    self.i += 2;
                                    break;
                                }
                                Some(_) => self.i += 1,
                            }
                        }
                    }
                    Some(b'/') => {
                        let start = self.i;
                        match self.s[self.i..].iter().position(|&c| c == b'\n') {
                            Some(n) => self.i += n + 1,
                            None => {
                                self.i = start;
                                return self.err("a // comment with no end of line ends the file");
                            }
                        }
                    }
                    _ => return self.err("'/' that starts no comment"),
                },
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        match self.peek() {
            None => self.err("the file ends where a value was expected"),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(q @ (b'"' | b'\'')) => self.string(q).map(Value::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => self.literal(),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return self.err("nested deeper than 32 levels");
        }
        self.i += 1;
        let mut m = Map::new();
        self.skip_ws()?;
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(Value::Object(m));
        }
        loop {
            let key = match self.peek() {
                Some(q @ (b'"' | b'\'')) => self.string(q)?,
                None => return self.err("the file ends inside an object"),
                Some(_) => return self.err("an object key that is not a quoted string"),
            };
            self.skip_ws()?;
            if self.peek() != Some(b':') {
                return self.err("':' expected after an object key");
            }
            self.i += 1;
            self.skip_ws()?;
            let v = self.value(depth)?;
            m.insert(key, v);
            self.skip_ws()?;
            match self.peek() {
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Object(m));
                }
                Some(b',') => {
                    self.i += 1;
                    self.skip_ws()?;
                    if self.peek() == Some(b'}') {
                        self.i += 1;
                        return Ok(Value::Object(m));
                    }
                }
                None => return self.err("the file ends inside an object"),
                Some(_) => return self.err("',' or '}' expected in an object"),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, ParseError> {
        if depth > MAX_DEPTH {
            return self.err("nested deeper than 32 levels");
        }
        self.i += 1;
        let mut v = Vec::new();
        self.skip_ws()?;
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(Value::Array(v));
        }
        loop {
            v.push(self.value(depth)?);
            self.skip_ws()?;
            match self.peek() {
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::Array(v));
                }
                Some(b',') => {
                    self.i += 1;
                    self.skip_ws()?;
                    if self.peek() == Some(b']') {
                        self.i += 1;
                        return Ok(Value::Array(v));
                    }
                }
                None => return self.err("the file ends inside an array"),
                Some(_) => return self.err("',' or ']' expected in an array"),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let Some(h) = self.s.get(self.i..self.i + 4) else {
            return self.err("a \\u escape needs four hex digits");
        };
        let t = std::str::from_utf8(h).map_err(|_| ParseError {
            what: "a \\u escape needs four hex digits",
            at: self.i,
        })?;
        let n = u32::from_str_radix(t, 16).map_err(|_| ParseError {
            what: "a \\u escape needs four hex digits",
            at: self.i,
        })?;
        self.i += 4;
        Ok(n)
    }

    fn string(&mut self, quote: u8) -> Result<String, ParseError> {
        let start = self.i;
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                self.i = start;
                return self.err("unterminated string");
            };
            self.i += 1;
            if c == quote {
                break;
            }
            if c != b'\\' {
                out.push(c);
                continue;
            }
            let Some(e) = self.peek() else {
                self.i = start;
                return self.err("unterminated string");
            };
            self.i += 1;
            let ch = match e {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => {
                    let hi = self.hex4()?;
                    let cp = if (0xd800..0xdc00).contains(&hi)
                        && self.s.get(self.i..self.i + 2) == Some(b"\\u")
                    {
                        let save = self.i;
                        self.i += 2;
                        let lo = self.hex4()?;
                        if (0xdc00..0xe000).contains(&lo) {
                            0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                        } else {
                            self.i = save;
                            0xfffd
                        }
                    } else {
                        hi
                    };
                    char::from_u32(cp).unwrap_or('\u{fffd}')
                }
                _ => {
                    self.i -= 1;
                    return self.err("unknown escape in a string");
                }
            };
            let mut b = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
        }
        // The text is UTF-8 and escapes add whole characters: `out` is UTF-8.
        String::from_utf8(out).map_err(|_| ParseError {
            what: "a string that is not UTF-8",
            at: start,
        })
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
            // -Infinity (in any case).
            if self.s[self.i..].len() >= 8
                && self.s[self.i..self.i + 8].eq_ignore_ascii_case(b"infinity")
            {
                self.i += 8;
                return Ok(Value::Null);
            }
        }
        let digits = |p: &mut Self| {
            let from = p.i;
            while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                p.i += 1;
            }
            p.i - from
        };
        if digits(self) == 0 {
            return self.err("a number needs digits");
        }
        let mut float = false;
        if self.peek() == Some(b'.') {
            float = true;
            self.i += 1;
            digits(self);
        }
        let mut end = self.i;
        if matches!(self.peek(), Some(b'e' | b'E')) {
            float = true;
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            // json-c takes an exponent with no digits as none.
            if digits(self) > 0 {
                end = self.i;
            }
        }
        let text = std::str::from_utf8(&self.s[start..end]).unwrap_or("0");
        if !float {
            if let Ok(n) = text.parse::<i64>() {
                return Ok(Value::Number(n.into()));
            }
            if let Ok(n) = text.parse::<u64>() {
                return Ok(Value::Number(n.into()));
            }
            // Beyond 64 bits: json-c keeps the nearest end of the range.
            return Ok(Value::Number(if text.starts_with('-') {
                i64::MIN.into()
            } else {
                u64::MAX.into()
            }));
        }
        let f: f64 = text.parse().map_err(|_| ParseError {
            what: "not a number",
            at: start,
        })?;
        Ok(Number::from_f64(f).map_or(Value::Null, Value::Number))
    }

    fn literal(&mut self) -> Result<Value, ParseError> {
        let rest = &self.s[self.i..];
        for (word, v) in [
            (&b"true"[..], Value::Bool(true)),
            (b"false", Value::Bool(false)),
            (b"null", Value::Null),
            (b"nan", Value::Null),
            (b"infinity", Value::Null),
        ] {
            if rest.len() >= word.len() && rest[..word.len()].eq_ignore_ascii_case(word) {
                self.i += word.len();
                return Ok(v);
            }
        }
        self.err("not a JSON value")
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use serde_json::json;

    #[test]
    fn takes_json_c_s_dialect() {
        let ok = [
            (r#"{"a":1}"#, json!({"a": 1})),
            (r#"{"a":1,}"#, json!({"a": 1})),
            (r#"{"a":[1,2,],}"#, json!({"a": [1, 2]})),
            ("{'a':'x'}", json!({"a": "x"})),
            (r#"{"a":1 /* c */}"#, json!({"a": 1})),
            ("// x\n{\"a\":1}", json!({"a": 1})),
            ("{\"a\":1} // c\n", json!({"a": 1})),
            (
                r#"{"a":TRUE,"b":NuLL,"c":False}"#,
                json!({"a": true, "b": null, "c": false}),
            ),
            (r#"{"a":NaN,"b":-Infinity}"#, json!({"a": null, "b": null})),
            (
                r#"{"a":01,"b":5.,"c":1E+2}"#,
                json!({"a": 1, "b": 5.0, "c": 100.0}),
            ),
            (r#"{"a":1}garbage"#, json!({"a": 1})),
            (r#"{"a":1,"a":2}"#, json!({"a": 2})),
            ("{\"a\":\"x\ny\"}", json!({"a": "x\ny"})),
            (r#"{"a":"\ud83d\ude00\/"}"#, json!({"a": "😀/"})),
            (r#"{"a":/*x*/1}"#, json!({"a": 1})),
        ];
        for (t, want) in ok {
            assert_eq!(parse(t), Ok(want), "{t}");
        }
        let bad = [
            "",
            "  ",
            "{\"a\":1}\n// c",
            "{\"a\":1}/",
            "{\"a\":1}/* open",
            r#"{"a":+1}"#,
            r#"{"a":.5}"#,
            r#"{"a":0x10}"#,
            "{a:1}",
            r#"{"a":1 "b":2}"#,
            r#"{"a":1,,"b":2}"#,
            r#"{"a":[,]}"#,
            "{,}",
            r#"{"a":"\x41"}"#,
            "{'a':'x\\'y'}",
            "{\"a\":1 # c}",
            "\u{feff}{\"a\":1}",
            r#"{"a":tru}"#,
            r#"{"a":-inf}"#,
            r#"{"a":1]"#,
        ];
        for t in bad {
            assert!(parse(t).is_err(), "{t:?} should be refused");
        }
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(parse(&deep(32)).is_ok());
        assert!(parse(&deep(33)).is_err());
    }
}
