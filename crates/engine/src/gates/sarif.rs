//! SARIF 2.1.0 for check reports, in the shape GitHub code scanning accepts: lspgate's own run
//! (its invocation: whether the check could check everything, the exit code, and what it could
//! not as `toolExecutionNotifications`), then one run per origin with its findings.

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

/// Something the check could not do: `id` its cause, the file when it is about one.
pub struct Notification<'a> {
    pub id: &'a str,
    pub message: &'a str,
    pub file: Option<&'a str>,
    /// The whole `unchecked` entry.
    pub properties: Value,
}

/// How the check went.
pub struct Execution<'a> {
    /// Everything in scope was checked.
    pub successful: bool,
    pub exit_code: i32,
    pub notifications: Vec<Notification<'a>>,
}

/// A SARIF log: lspgate's run with the invocation, then one run per origin (server or task).
pub fn log(findings: &[Finding], execution: &Execution) -> Value {
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
                "invocations": [{"executionSuccessful": execution.successful}],
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
    let notifications: Vec<Value> = execution
        .notifications
        .iter()
        .map(|n| {
            let mut v = json!({
                "level": "error",
                "message": {"text": n.message},
                "descriptor": {"id": n.id},
                "properties": n.properties,
            });
            if let Some(file) = n.file {
                v["locations"] = json!([{"physicalLocation": {
                    "artifactLocation": {"uri": file, "uriBaseId": "%SRCROOT%"},
                }}]);
            }
            v
        })
        .collect();
    let own = json!({
        "tool": {"driver": {
            "name": "lspgate",
            "version": env!("CARGO_PKG_VERSION"),
        }},
        "invocations": [{
            "executionSuccessful": execution.successful,
            "exitCode": execution.exit_code,
            "toolExecutionNotifications": notifications,
        }],
        "results": [],
    });
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": std::iter::once(own).chain(runs).collect::<Vec<_>>(),
    })
}
