//! The parser of `doca_argp`, apart from its C face: the standard flags, the usage text,
//! the command line and the JSON configuration file, turned into values per registered
//! parameter. The program's callbacks are called by the C face (`run`), not here.

use super::{Parser, TYPE_BOOLEAN, TYPE_INT, TYPE_JSON_OBJ, TYPE_STRING, doca_argp_param};
use crate::common::{Result, invalid};
use std::ffi::c_int;
use std::fmt::Write as _;

pub(super) const STANDARD: [(&str, &str, &str, &str); 4] = [
    ("h", "help", "", "Print a help synopsis"),
    ("v", "version", "", "Print program version information"),
    (
        "l",
        "log-level",
        "<level>",
        "Set the (numeric) log level for the program <10=DISABLE, 20=CRITICAL, 30=ERROR, 40=WARNING, 50=INFO, 60=DEBUG, 70=TRACE>",
    ),
    (
        "j",
        "json",
        "<path>",
        "Parse all command flags from an input json file",
    ),
];

/// The 3.x face's standard flag for the SDK's log level (long name only).
pub(super) const SDK_LOG_LEVEL: &str = "sdk-log-level";
const SDK_LOG_LEVEL_DESC: &str = "Set the SDK (numeric) log level for the program <10=DISABLE, 20=CRITICAL, 30=ERROR, 40=WARNING, 50=INFO, 60=DEBUG, 70=TRACE>";

pub(super) fn usage_text(p: &Parser) -> String {
    let mut s = format!(
        "Usage: {} [DOCA Flags] [Program Flags]\n\nDOCA Flags:\n",
        p.program
    );
    let line = |s: &mut String, names: String, args: &str, desc: &str| {
        let left = if args.is_empty() {
            names
        } else {
            format!("{names} {args}")
        };
        let _ = writeln!(s, "  {left:<40}{desc}");
    };
    for (sh, lo, args, desc) in STANDARD {
        line(&mut s, format!("-{sh}, --{lo}"), args, desc);
        if lo == "log-level" && p.sdk_flag {
            line(
                &mut s,
                format!("--{SDK_LOG_LEVEL}"),
                args,
                SDK_LOG_LEVEL_DESC,
            );
        }
    }
    if p.grpc {
        line(
            &mut s,
            "--grpc-address".into(),
            "<address>",
            "Set the IP address for the gRPC server",
        );
    }
    if !p.params.is_empty() {
        s.push_str("\nProgram Flags:\n");
        for prm in &p.params {
            let mut desc = prm.description.clone().unwrap_or_default();
            if prm.mandatory {
                desc.push_str(" (mandatory)");
            }
            if prm.multiplicity {
                desc.push_str(" (may be repeated)");
            }
            line(
                &mut s,
                prm.names(),
                prm.arguments.as_deref().unwrap_or(""),
                &desc,
            );
        }
    }
    s
}

pub(super) fn taken(p: &Parser, short: Option<&str>, long: Option<&str>) -> bool {
    let std_hit = STANDARD
        .iter()
        .any(|(s, l, _, _)| short == Some(*s) || long == Some(*l))
        || (p.grpc && long == Some("grpc-address"))
        || (p.sdk_flag && long == Some(SDK_LOG_LEVEL));
    std_hit
        || p.params.iter().any(|q| {
            (short.is_some() && q.short.as_deref() == short)
                || (long.is_some() && q.long.as_deref() == long)
        })
}

/// One value found for a parameter.
pub(super) enum Value {
    Text(String),
    Int(c_int),
    Bool(bool),
}

pub(super) fn parse_value(prm: &doca_argp_param, raw: Option<&str>) -> Result<Value> {
    fn need<'a>(prm: &doca_argp_param, raw: Option<&'a str>) -> Result<&'a str> {
        raw.ok_or_else(|| invalid(format!("{} needs a value", prm.names())))
    }
    match prm.kind {
        TYPE_BOOLEAN => match raw {
            None | Some("true") | Some("1") => Ok(Value::Bool(true)),
            Some("false") | Some("0") => Ok(Value::Bool(false)),
            Some(v) => Err(invalid(format!("{}: '{v}' is not a boolean", prm.names()))),
        },
        TYPE_INT => {
            let v = need(prm, raw)?;
            let n = if let Some(h) = v.strip_prefix("0x") {
                i64::from_str_radix(h, 16).ok()
            } else {
                v.parse::<i64>().ok()
            };
            n.and_then(|n| c_int::try_from(n).ok())
                .map(Value::Int)
                .ok_or_else(|| invalid(format!("{}: '{v}' is not an integer", prm.names())))
        }
        TYPE_JSON_OBJ => {
            let v = need(prm, raw)?;
            super::jsonc::parse(v)
                .map_err(|e| invalid(format!("{}: not JSON: {e}", prm.names())))?;
            Ok(Value::Text(v.to_owned()))
        }
        _ => Ok(Value::Text(need(prm, raw)?.to_owned())),
    }
}

pub(super) fn json_value(prm: &doca_argp_param, v: &serde_json::Value) -> Result<Value> {
    use serde_json::Value as J;
    match (prm.kind, v) {
        (TYPE_BOOLEAN, J::Bool(b)) => Ok(Value::Bool(*b)),
        (TYPE_INT, J::Number(n)) => n
            .as_i64()
            .and_then(|n| c_int::try_from(n).ok())
            .map(Value::Int)
            .ok_or_else(|| invalid(format!("JSON {}: {n} is not an int", prm.names()))),
        (TYPE_STRING, J::String(s)) => Ok(Value::Text(s.clone())),
        (TYPE_JSON_OBJ, o) => Ok(Value::Text(o.to_string())),
        (_, other) => Err(invalid(format!(
            "JSON {}: {other} has the wrong type",
            prm.names()
        ))),
    }
}

/// What the command line asked for.
#[derive(Default)]
pub(super) struct Parsed {
    pub(super) values: Vec<(usize, Value)>,
    pub(super) json: Option<String>,
    pub(super) log_level: Option<c_int>,
    pub(super) sdk_log_level: Option<c_int>,
    pub(super) grpc: Option<String>,
    pub(super) help: bool,
    pub(super) version: bool,
    pub(super) rest: Vec<String>,
}

pub(super) fn parse_cli(p: &Parser, args: &[String]) -> Result<Parsed> {
    let mut out = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            out.rest = args[i..].to_vec();
            break;
        }
        let (name, inline, is_long) = if let Some(l) = a.strip_prefix("--") {
            match l.split_once('=') {
                Some((n, v)) => (n.to_owned(), Some(v.to_owned()), true),
                None => (l.to_owned(), None, true),
            }
        } else if let Some(s) = a.strip_prefix('-').filter(|s| !s.is_empty()) {
            // A short name may have several letters (`-ld`, `-lp`): the whole word (up
            // to an '=') names a flag when one has that short name; otherwise the first
            // letter is the flag and the rest its value (`-l60`).
            let (word, eq) = match s.split_once('=') {
                Some((w, v)) => (w, Some(v.to_owned())),
                None => (s, None),
            };
            let builtin = ["h", "v", "l", "j"].contains(&word);
            let registered = p.params.iter().any(|q| q.short.as_deref() == Some(word));
            if builtin || registered {
                (word.to_owned(), eq, false)
            } else {
                let mut ch = s.chars();
                let first = ch.next().map(String::from).unwrap_or_default();
                let tail: String = ch.collect();
                (first, (!tail.is_empty()).then_some(tail), false)
            }
        } else {
            return Err(invalid(format!(
                "unexpected argument '{a}' (flags start with - or --)"
            )));
        };
        let matches = |s: &str, l: &str| if is_long { name == l } else { name == s };
        let mut take_value = |inline: Option<String>| -> Result<String> {
            if let Some(v) = inline {
                return Ok(v);
            }
            let v = args
                .get(i)
                .cloned()
                .ok_or_else(|| invalid(format!("{a} needs a value")))?;
            i += 1;
            Ok(v)
        };
        if matches("h", "help") {
            out.help = true;
        } else if matches("v", "version") {
            out.version = true;
        } else if matches("l", "log-level") {
            let v = take_value(inline)?;
            out.log_level = Some(
                v.parse()
                    .map_err(|_| invalid(format!("log level '{v}' is not a number")))?,
            );
        } else if p.sdk_flag && is_long && name == SDK_LOG_LEVEL {
            let v = take_value(inline)?;
            out.sdk_log_level = Some(
                v.parse()
                    .map_err(|_| invalid(format!("SDK log level '{v}' is not a number")))?,
            );
        } else if matches("j", "json") {
            out.json = Some(take_value(inline)?);
        } else if p.grpc && is_long && name == "grpc-address" {
            out.grpc = Some(take_value(inline)?);
        } else {
            let idx = p
                .params
                .iter()
                .position(|q| {
                    if is_long {
                        q.long.as_deref() == Some(&name)
                    } else {
                        q.short.as_deref() == Some(&name)
                    }
                })
                .ok_or_else(|| invalid(format!("unknown flag '{a}'")))?;
            let prm = &p.params[idx];
            let raw = if prm.kind == TYPE_BOOLEAN {
                inline
            } else {
                Some(take_value(inline)?)
            };
            out.values.push((idx, parse_value(prm, raw.as_deref())?));
        }
    }
    Ok(out)
}

pub(super) fn apply_json(p: &Parser, path: &str, parsed: &mut Parsed) -> Result<()> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| invalid(format!("cannot read JSON file {path}: {e}")))?;
    let root = super::jsonc::parse(&text).map_err(|e| invalid(format!("JSON file {path}: {e}")))?;
    let obj = root
        .as_object()
        .ok_or_else(|| invalid(format!("JSON file {path}: the top level is not an object")))?;
    let mut entries: Vec<(&String, &serde_json::Value)> = Vec::new();
    for (k, v) in obj {
        match (k.as_str(), v.as_object()) {
            ("doca_general_flags" | "doca_program_flags", Some(inner)) => {
                entries.extend(inner.iter())
            }
            _ => entries.push((k, v)),
        }
    }
    for (k, v) in entries {
        match k.as_str() {
            "log-level" | "l" => {
                if parsed.log_level.is_none() {
                    parsed.log_level = v.as_i64().and_then(|n| c_int::try_from(n).ok());
                }
                continue;
            }
            SDK_LOG_LEVEL if p.sdk_flag => {
                if parsed.sdk_log_level.is_none() {
                    parsed.sdk_log_level = v.as_i64().and_then(|n| c_int::try_from(n).ok());
                }
                continue;
            }
            "grpc-address" if p.grpc => {
                if parsed.grpc.is_none() {
                    parsed.grpc = v.as_str().map(str::to_owned);
                }
                continue;
            }
            _ => {}
        }
        let idx = p
            .params
            .iter()
            .position(|q| {
                q.long.as_deref() == Some(k.as_str()) || q.short.as_deref() == Some(k.as_str())
            })
            .ok_or_else(|| invalid(format!("JSON file {path}: unknown parameter '{k}'")))?;
        let prm = &p.params[idx];
        if prm.cli_only {
            return Err(invalid(format!(
                "JSON file {path}: {} is accepted on the command line only",
                prm.names()
            )));
        }
        if parsed.values.iter().any(|(i, _)| *i == idx) {
            continue; // the command line wins
        }
        match (prm.multiplicity, v) {
            (true, serde_json::Value::Array(items)) => {
                for it in items {
                    parsed.values.push((idx, json_value(prm, it)?));
                }
            }
            _ => parsed.values.push((idx, json_value(prm, v)?)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(short: &str, long: &str, kind: c_int) -> doca_argp_param {
        doca_argp_param {
            short: (!short.is_empty()).then(|| short.to_owned()),
            long: (!long.is_empty()).then(|| long.to_owned()),
            kind,
            ..Default::default()
        }
    }

    fn parser(params: Vec<doca_argp_param>, grpc: bool) -> Parser {
        Parser {
            program: "prog".into(),
            config: std::ptr::null_mut(),
            params: params.into_iter().map(Box::new).collect(),
            version_cb: None,
            validation_cb: None,
            dpdk_cb: None,
            grpc,
            grpc_addr: None,
            log_level: 0,
            sdk_flag: false,
            sdk_log_level: 0,
        }
    }

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn text(v: &Value) -> String {
        match v {
            Value::Text(s) => s.clone(),
            Value::Int(n) => format!("int {n}"),
            Value::Bool(b) => format!("bool {b}"),
        }
    }

    fn values(p: &Parser, a: &[&str]) -> Vec<(usize, String)> {
        parse_cli(p, &args(a))
            .unwrap()
            .values
            .iter()
            .map(|(i, v)| (*i, text(v)))
            .collect()
    }

    fn error(p: &Parser, a: &[&str]) -> String {
        match parse_cli(p, &args(a)) {
            Ok(_) => panic!("{a:?} was accepted"),
            Err(e) => e.context_str().unwrap_or_default().to_owned(),
        }
    }

    fn sample() -> Parser {
        parser(
            vec![
                param("p", "pci-addr", TYPE_STRING),
                param("n", "count", TYPE_INT),
                param("f", "fast", TYPE_BOOLEAN),
                param("", "conf", TYPE_JSON_OBJ),
            ],
            false,
        )
    }

    #[test]
    fn short_names_of_several_letters() {
        let p = parser(
            vec![
                param("ld", "local-descriptor-path", TYPE_STRING),
                param("lp", "listen-port", TYPE_INT),
                param("d", "device", TYPE_STRING),
            ],
            false,
        );
        let got = values(&p, &["-ld", "/tmp/x", "-lp=7", "-d", "mlx5_0"]);
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].0, 0);
        assert_eq!(got[1].0, 1);
        let r = parse_cli(&p, &args(&["-l60", "-ld=/y"])).unwrap();
        assert_eq!(r.log_level, Some(60));
        assert_eq!(r.values.len(), 1);
        assert!(error(&p, &["-lx"]).contains("log level"));
    }

    #[test]
    fn short_long_and_inline_forms() {
        let p = sample();
        let want = vec![
            (0, "03:00.0".to_string()),
            (1, "int 16".to_string()),
            (2, "bool true".to_string()),
        ];
        assert_eq!(values(&p, &["-p", "03:00.0", "-n", "16", "-f"]), want);
        assert_eq!(
            values(&p, &["--pci-addr=03:00.0", "--count", "0x10", "--fast"]),
            want
        );
        assert_eq!(values(&p, &["-p03:00.0", "-n16", "-f"]), want);
        assert_eq!(
            values(&p, &["--fast=false"]),
            vec![(2, "bool false".to_string())]
        );
        assert_eq!(
            values(&p, &["--conf", r#"{"a": 1}"#]),
            vec![(3, r#"{"a": 1}"#.to_string())]
        );
    }

    #[test]
    fn bad_command_lines_are_refused_with_words() {
        let p = sample();
        assert!(error(&p, &["--nope"]).contains("unknown flag '--nope'"));
        assert!(error(&p, &["stray"]).contains("unexpected argument 'stray'"));
        assert!(error(&p, &["-p"]).contains("needs a value"));
        assert!(error(&p, &["-n", "ten"]).contains("not an integer"));
        assert!(error(&p, &["-n", "4294967296"]).contains("not an integer"));
        assert!(error(&p, &["--fast=maybe"]).contains("not a boolean"));
        assert!(error(&p, &["--conf", "{"]).contains("not JSON"));
        assert!(error(&p, &["-l", "high"]).contains("not a number"));
        // Without gRPC, its flag is not a flag.
        assert!(error(&p, &["--grpc-address", "x"]).contains("unknown flag"));
    }

    #[test]
    fn standard_flags_and_the_rest() {
        let p = parser(vec![param("p", "pci-addr", TYPE_STRING)], true);
        let r = parse_cli(
            &p,
            &args(&[
                "-h",
                "-v",
                "-l",
                "60",
                "-j",
                "f.json",
                "--grpc-address",
                "1.2.3.4",
                "--",
                "-a",
                "x",
            ]),
        )
        .unwrap();
        assert!(r.help && r.version);
        assert_eq!(r.log_level, Some(60));
        assert_eq!(r.json.as_deref(), Some("f.json"));
        assert_eq!(r.grpc.as_deref(), Some("1.2.3.4"));
        assert_eq!(r.rest, args(&["-a", "x"]));
        assert!(r.values.is_empty());
    }

    #[test]
    fn json_files_fill_what_the_command_line_left() {
        let mut list = param("a", "addr", TYPE_STRING);
        list.multiplicity = true;
        let mut cli = param("c", "cli", TYPE_INT);
        cli.cli_only = true;
        let p = parser(vec![list, param("n", "count", TYPE_INT), cli], false);
        let dir = std::env::temp_dir().join(format!("argp-parse-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, body: &str| {
            let f = dir.join(name);
            std::fs::write(&f, body).unwrap();
            f.to_str().unwrap().to_owned()
        };
        let good = file(
            "good.json",
            r#"{"doca_general_flags": {"log-level": 50},
                "doca_program_flags": {"addr": ["x", "y"], "count": 7}}"#,
        );
        let mut parsed = parse_cli(&p, &args(&["-n", "3"])).unwrap();
        apply_json(&p, &good, &mut parsed).unwrap();
        let got: Vec<(usize, String)> = parsed.values.iter().map(|(i, v)| (*i, text(v))).collect();
        // The command line's count wins over the file's.
        assert_eq!(
            got,
            vec![(1, "int 3".into()), (0, "x".into()), (0, "y".into())]
        );
        assert_eq!(parsed.log_level, Some(50));
        for (name, body, words) in [
            ("cli.json", r#"{"cli": 1}"#, "command line only"),
            ("unknown.json", r#"{"what": 1}"#, "unknown parameter 'what'"),
            ("type.json", r#"{"count": "seven"}"#, "wrong type"),
            ("top.json", "[1, 2]", "not an object"),
            ("broken.json", "{", "JSON file"),
        ] {
            let f = file(name, body);
            let mut parsed = Parsed::default();
            let e = apply_json(&p, &f, &mut parsed).unwrap_err();
            assert!(
                e.context_str().unwrap_or_default().contains(words),
                "{name}: {e:?}"
            );
        }
        let e = apply_json(&p, "/nonexistent/x.json", &mut Parsed::default()).unwrap_err();
        assert!(e.context_str().unwrap_or_default().contains("cannot read"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn usage_and_taken_names() {
        let mut must = param("p", "pci-addr", TYPE_STRING);
        must.mandatory = true;
        must.arguments = Some("<addr>".into());
        must.description = Some("The device".into());
        let mut many = param("", "addr", TYPE_STRING);
        many.multiplicity = true;
        let p = parser(vec![must, many], true);
        let u = usage_text(&p);
        assert!(u.starts_with("Usage: prog [DOCA Flags] [Program Flags]"));
        assert!(u.contains("-p, --pci-addr <addr>"));
        assert!(u.contains("The device (mandatory)"));
        assert!(u.contains("(may be repeated)"));
        assert!(u.contains("--grpc-address"));
        assert!(taken(&p, Some("h"), None));
        assert!(taken(&p, None, Some("json")));
        assert!(taken(&p, None, Some("grpc-address")));
        assert!(taken(&p, Some("p"), None));
        assert!(taken(&p, None, Some("addr")));
        assert!(!taken(&p, Some("q"), Some("queue")));
    }
}
