//! argp's JSON files (`-j FILE`) are read as json-c reads them (DOCA's argp parses them
//! with json-c): the same inputs are taken and refused, with the same values. The
//! corpus covers json-c's non-strict dialect (comments, trailing commas, single quotes,
//! literals in any case, NaN, leading zeros, what follows the value) and its limits.

mod common;

use common::{check, scratch};
use doca_capi::argp::jsonc;
use std::process::Command;

const CORPUS: &[&str] = &[
    r#"{"a":1}"#,
    r#"{"a":1,}"#,
    r#"{"a":[1,2,],}"#,
    "{'a':'x'}",
    r#"{"a":1 /* c */}"#,
    "{\"a\":1} // c",
    "{\"a\":1} // c\n",
    "// x\n{\"a\":1}",
    "{\"a\":1}\n// c",
    r#"{"a":TRUE}"#,
    r#"{"a":True,"b":NULL,"c":fAlSe}"#,
    r#"{"a":NaN,"b":Infinity,"c":-Infinity,"d":nan,"e":infinity}"#,
    r#"{"a":-inf}"#,
    r#"{"a":01,"b":-01,"c":00,"d":-0}"#,
    r#"{"a":+1}"#,
    r#"{"a":0x10}"#,
    r#"{"a":.5}"#,
    r#"{"a":5.,"b":1.5e3,"c":1E+2,"d":2e-2}"#,
    r#"{"a":1.2.3}"#,
    r#"{"a":-}"#,
    r#"{"a":12345678901234567890}"#,
    r#"{"a":1}garbage"#,
    r#"{"a":1}{"b":2}"#,
    r#"{"a":1}}"#,
    r#"{"a":1]"#,
    "{a:1}",
    r#"{"a":1 "b":2}"#,
    r#"{"a":1,,"b":2}"#,
    r#"{"a": [,]}"#,
    "{,}",
    "[1,2]",
    r#""str""#,
    r#"{"a":"\x41"}"#,
    r#"{"a":"\u0041\ud83d\ude00\/\"\\\b\f\n\r\t"}"#,
    r#"{"a":"\q"}"#,
    "{\"a\":\"x\ny\",\"b\":\"\t\"}",
    "{'a':\"x'y\"}",
    "{'a':'x\\'y'}",
    r#"{"a":"x"#,
    "",
    "   ",
    "{\"a\":1}  ",
    "{\"a\":1}/",
    "{\"a\":1} /",
    "{\"a\":1}/* unterminated",
    "/* c */{\"a\":1}",
    r#"{"a":/*x*/1}"#,
    "{\"a\":1 # c}",
    r#"{"a":1,"a":2}"#,
    r#"{"a":tru}"#,
    r#"{"a":truex}"#,
    r#"{"":1,"b":[],"c":{}}"#,
    "\u{feff}{\"a\":1}",
    r#"{"doca_general_flags": {"log-level": 60,}, /* x */ "doca_program_flags": {'count': 7, "verbose": TRUE,},}"#,
];

const HELPER: &str = r#"
#include <json-c/json.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct json_object *o = json_object_from_file(argv[i]);
		if (o == NULL) {
			printf("ERR\n");
			continue;
		}
		printf("OK %s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	}
	return 0;
}
"#;

#[test]
fn argp_json_files_are_read_as_json_c_reads_them() {
    let flags = Command::new("pkg-config")
        .args(["--cflags", "--libs", "json-c"])
        .output();
    let Some(flags) = flags.ok().filter(|o| o.status.success()) else {
        eprintln!("skipped: json-c is not installed (Debian: libjson-c-dev)");
        return;
    };
    let dir = scratch().join("jsonc");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("jsonc_read.c");
    std::fs::write(&src, HELPER).unwrap();
    let bin = dir.join("jsonc_read");
    let flags = String::from_utf8_lossy(&flags.stdout).into_owned();
    check(
        &Command::new("cc")
            .arg(&src)
            .arg("-o")
            .arg(&bin)
            .args(flags.split_whitespace())
            .output()
            .unwrap(),
        "compiling the json-c reader",
    );
    let files: Vec<_> = CORPUS
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let f = dir.join(format!("case{i}.json"));
            std::fs::write(&f, t).unwrap();
            f
        })
        .collect();
    let out = check(
        &Command::new(&bin).args(&files).output().unwrap(),
        "the json-c reader",
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), CORPUS.len(), "{out}");
    for (t, line) in CORPUS.iter().zip(lines) {
        let ours = jsonc::parse(t);
        match line.strip_prefix("OK ") {
            None => assert!(ours.is_err(), "json-c refuses {t:?}, we took {ours:?}"),
            Some(printed) => {
                let theirs = jsonc::parse(printed).expect(printed);
                assert_eq!(
                    ours.as_ref().ok(),
                    Some(&theirs),
                    "json-c takes {t:?} as {printed}"
                );
            }
        }
    }
}
