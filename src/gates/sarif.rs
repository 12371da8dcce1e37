//! SARIF 2.1.0 for check reports, in the shape GitHub code scanning accepts.

use serde_json::{Value, json};

/// One finding: file (root-relative, `/`), position, severity, rule (code), message, origin.
pub struct Finding<'a> {
    pub file: &'a str,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    pub level: &'a str,
    pub rule: Option<&'a str>,
    pub message: &'a str,
    pub origin: &'a str,
}

/// A SARIF log with one run per origin (server or task).
pub fn log(findings: &[Finding]) -> Value {
    let mut origins: Vec<&str> = findings.iter().map(|f| f.origin).collect();
    origins.sort();
    origins.dedup();
    let runs: Vec<Value> = origins
        .iter()
        .map(|origin| {
            let mine: Vec<&Finding> = findings.iter().filter(|f| f.origin == *origin).collect();
            let mut rules: Vec<&str> = mine.iter().filter_map(|f| f.rule).collect();
            rules.sort();
            rules.dedup();
            json!({
                "tool": {"driver": {
                    "name": format!("lspgate/{origin}"),
                    "rules": rules.iter().map(|r| json!({"id": r})).collect::<Vec<_>>(),
                }},
                "results": mine.iter().map(|f| {
                    let mut r = json!({
                        "level": f.level,
                        "message": {"text": f.message},
                        "locations": [{"physicalLocation": {
                            "artifactLocation": {"uri": f.file, "uriBaseId": "%SRCROOT%"},
                            "region": {
                                "startLine": f.line.max(1), "startColumn": f.column.max(1),
                                "endLine": f.end_line.max(f.line).max(1),
                                "endColumn": f.end_column.max(1),
                            },
                        }}],
                    });
                    if let Some(rule) = f.rule {
                        r["ruleId"] = json!(rule);
                    }
                    r
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": runs,
    })
}
