//! What the face tells a client in `initialize`: the position encoding negotiated with it
//! alone, and the union of what the root's servers serve (each provider as the first server
//! offering it announced it, trigger characters and resolve support merged), plus the requests
//! the face routes without a capability of lspgate's own (`EXTRA`).

use serde_json::{Map, Value, json};

use crate::lsp::Cap;
use crate::text::Encoding;

/// Requests routed by the provider their servers announce, beyond lspgate's own capabilities.
pub(crate) const EXTRA: &[(&str, &str)] = &[
    (
        "textDocument/documentHighlight",
        "documentHighlightProvider",
    ),
    ("textDocument/prepareRename", "renameProvider"),
    (
        "textDocument/rangeFormatting",
        "documentRangeFormattingProvider",
    ),
    ("textDocument/foldingRange", "foldingRangeProvider"),
    ("textDocument/selectionRange", "selectionRangeProvider"),
    ("callHierarchy/incomingCalls", "callHierarchyProvider"),
    ("callHierarchy/outgoingCalls", "callHierarchyProvider"),
    ("typeHierarchy/supertypes", "typeHierarchyProvider"),
    ("typeHierarchy/subtypes", "typeHierarchyProvider"),
];

/// The provider key a request of `method` needs, if the face routes it.
pub(crate) fn provider_of(method: &str) -> Option<&'static str> {
    if let Some(cap) = Cap::of_method(method) {
        // Not offered (see `union`): refused rather than passed on unconverted (tokens) or
        // as the server wrote them (diagnostics are published as `lsp::quotes` confines them).
        let refused = matches!(cap, Cap::SemanticTokens | Cap::PullDiagnostics);
        return (!refused).then(|| cap.provider_key());
    }
    EXTRA.iter().find(|(m, _)| *m == method).map(|(_, k)| *k)
}

/// Whether capabilities `caps` (a server's) announce `key`: the LSP layer's one reading.
pub(crate) use crate::lsp::announces;

/// The encoding for a client: the one every server of the root speaks when the client offers
/// it (nothing to convert), else UTF-16 when offered (LSP's default, most servers'), else the
/// client's first. A client that offers nothing speaks UTF-16.
pub(crate) fn negotiate(client: &Value, servers: &[Encoding]) -> Encoding {
    let offered: Vec<Encoding> = client
        .pointer("/general/positionEncodings")
        .or_else(|| client.get("offsetEncoding"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().and_then(Encoding::from_lsp))
                .collect()
        })
        .unwrap_or_default();
    if offered.is_empty() {
        return Encoding::Utf16;
    }
    if let Some(first) = servers.first()
        && servers.iter().all(|e| e == first)
        && offered.contains(first)
    {
        return *first;
    }
    if offered.contains(&Encoding::Utf16) {
        Encoding::Utf16
    } else {
        offered[0]
    }
}

/// The server capabilities a client is told: document sync (whole documents), then every
/// provider some server announces.
pub(crate) fn union(servers: &[&Value], encoding: Encoding) -> Value {
    let mut out = Map::new();
    out.insert("positionEncoding".into(), json!(encoding_name(encoding)));
    out.insert(
        "textDocumentSync".into(),
        json!({"openClose": true, "change": 1, "save": {"includeText": false}}),
    );
    let keys = Cap::ALL
        .into_iter()
        // Semantic tokens are positions packed in numbers, in the server's encoding and legend:
        // not converted, so not offered (protocol §8).
        .filter(|c| !matches!(c, Cap::PullDiagnostics | Cap::SemanticTokens))
        .map(|c| c.provider_key())
        .chain(EXTRA.iter().map(|(_, k)| *k));
    for key in keys {
        let offered: Vec<&Value> = servers
            .iter()
            .filter(|c| announces(c, key))
            .filter_map(|c| c.get(key))
            .collect();
        let Some(first) = offered.first() else {
            continue;
        };
        let mut value = (*first).clone();
        merge_options(&mut value, &offered[1..]);
        out.entry(key).or_insert(value);
    }
    // Workspace folders, as the first server supporting them announced them.
    if let Some(folders) = servers
        .iter()
        .filter_map(|c| c.pointer("/workspace/workspaceFolders"))
        .find(|f| f.get("supported") == Some(&Value::Bool(true)))
    {
        out.insert("workspace".into(), json!({"workspaceFolders": folders}));
    }
    Value::Object(out)
}

/// Trigger characters united, resolve support if any server has it.
fn merge_options(value: &mut Value, others: &[&Value]) {
    let Value::Object(map) = value else {
        return;
    };
    for field in [
        "triggerCharacters",
        "retriggerCharacters",
        "codeActionKinds",
    ] {
        let mut all: Vec<Value> = Vec::new();
        for v in std::iter::once(&*map)
            .map(|m| m.get(field))
            .chain(others.iter().map(|o| o.get(field)))
        {
            for item in v.and_then(Value::as_array).into_iter().flatten() {
                if !all.contains(item) {
                    all.push(item.clone());
                }
            }
        }
        if !all.is_empty() {
            map.insert(field.into(), Value::Array(all));
        }
    }
    if others
        .iter()
        .any(|o| o.get("resolveProvider") == Some(&Value::Bool(true)))
    {
        map.insert("resolveProvider".into(), Value::Bool(true));
    }
}

/// The LSP name of an encoding.
pub(crate) fn encoding_name(e: Encoding) -> &'static str {
    match e {
        Encoding::Utf8 => "utf-8",
        Encoding::Utf16 => "utf-16",
        Encoding::Utf32 => "utf-32",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_encoding_is_the_clients_and_spares_conversions_where_it_can() {
        let both = json!({"general": {"positionEncodings": ["utf-8", "utf-16"]}});
        assert_eq!(negotiate(&both, &[Encoding::Utf8]), Encoding::Utf8);
        assert_eq!(
            negotiate(&both, &[Encoding::Utf8, Encoding::Utf16]),
            Encoding::Utf16
        );
        assert_eq!(negotiate(&json!({}), &[Encoding::Utf8]), Encoding::Utf16);
        let clangd_style = json!({"offsetEncoding": ["utf-32"]});
        assert_eq!(
            negotiate(&clangd_style, &[Encoding::Utf16]),
            Encoding::Utf32
        );
    }

    #[test]
    fn capabilities_are_the_union_of_the_servers() {
        let pyright =
            json!({"hoverProvider": true, "completionProvider": {"triggerCharacters": [".", "["]}});
        let ruff = json!({"codeActionProvider": {"codeActionKinds": ["quickfix"], "resolveProvider": true},
                          "completionProvider": {"triggerCharacters": ["."], "resolveProvider": true},
                          "hoverProvider": false});
        let u = union(&[&pyright, &ruff], Encoding::Utf16);
        assert_eq!(u["hoverProvider"], true);
        assert_eq!(
            u["completionProvider"]["triggerCharacters"],
            json!([".", "["])
        );
        assert_eq!(u["completionProvider"]["resolveProvider"], true);
        assert_eq!(
            u["codeActionProvider"]["codeActionKinds"],
            json!(["quickfix"])
        );
        assert!(u.get("definitionProvider").is_none());
        assert_eq!(u["positionEncoding"], "utf-16");
        assert!(u.get("workspace").is_none());
        let folders = json!({"workspace": {"workspaceFolders": {"supported": true, "changeNotifications": true}}});
        let u = union(&[&ruff, &folders], Encoding::Utf16);
        assert_eq!(
            u["workspace"]["workspaceFolders"]["changeNotifications"],
            true
        );
    }
}
