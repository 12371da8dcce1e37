//! The client's name for the root, when it reaches the root through a symlink (a worktree's
//! linked folder, `/tmp` on macOS): the servers know the root by its real path, the client by
//! its own. URIs under one are rewritten to the other, both ways, so that a request names a
//! document the servers have open and an answer names documents the client knows.

use serde_json::Value;

/// The two spellings of the root's URI, when they differ.
#[derive(Debug, Clone, Default)]
pub(crate) struct Aliases {
    /// (the client's, the real one), each ending in `/`.
    pair: Option<(String, String)>,
}

impl Aliases {
    /// From the client's root URI (`rootUri`, its first workspace folder) and the real root.
    pub(crate) fn new(client_root: Option<&str>, real_root: &std::path::Path) -> Aliases {
        let real = url::Url::from_directory_path(real_root)
            .ok()
            .map(|u| u.to_string());
        let client = client_root.map(|c| {
            let mut c = c.to_string();
            if !c.ends_with('/') {
                c.push('/');
            }
            c
        });
        Aliases {
            pair: match (client, real) {
                (Some(c), Some(r)) if c != r && c.starts_with("file:") => Some((c, r)),
                _ => None,
            },
        }
    }

    /// The client's URIs in `value` made the servers'.
    pub(crate) fn to_server(&self, value: &mut Value) {
        if let Some((client, real)) = &self.pair {
            rewrite(value, client, real);
        }
    }

    /// The servers' URIs in `value` made the client's.
    pub(crate) fn to_client(&self, value: &mut Value) {
        if let Some((client, real)) = &self.pair {
            rewrite(value, real, client);
        }
    }
}

/// Every string (and object key: a `WorkspaceEdit`'s `changes`) starting with `from` made to
/// start with `to`.
fn rewrite(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::String(s) if s.starts_with(from) => {
            *s = format!("{to}{}", &s[from.len()..]);
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite(v, from, to)),
        Value::Object(map) => {
            if map.keys().any(|k| k.starts_with(from)) {
                let old = std::mem::take(map);
                for (k, v) in old {
                    let k = match k.strip_prefix(from) {
                        Some(rest) => format!("{to}{rest}"),
                        None => k,
                    };
                    map.insert(k, v);
                }
            }
            map.values_mut().for_each(|v| rewrite(v, from, to));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn uris_under_the_root_are_each_sides_own() {
        let a = Aliases::new(Some("file:///w/link"), std::path::Path::new("/real/root"));
        let mut v = json!({"textDocument": {"uri": "file:///w/link/a.py"}, "other": "file:///x"});
        a.to_server(&mut v);
        assert_eq!(v["textDocument"]["uri"], "file:///real/root/a.py");
        assert_eq!(v["other"], "file:///x");
        let mut edit = json!({"changes": {"file:///real/root/b.py": [{"newText": "x"}]}});
        a.to_client(&mut edit);
        assert!(edit["changes"]["file:///w/link/b.py"].is_array(), "{edit}");
        let same = Aliases::new(
            Some("file:///real/root/"),
            std::path::Path::new("/real/root"),
        );
        let mut v = json!({"uri": "file:///real/root/a.py"});
        same.to_client(&mut v);
        assert_eq!(v["uri"], "file:///real/root/a.py");
    }
}
