//! Tool profiles: which tools a session offers (`--tools`, `tools = [...]` in lspgate.toml),
//! by group or by name. A tool outside the profile is not listed and a call to it is refused.

use super::{Group, TOOLS};

/// The tools a session offers. Those declared `ALWAYS_OFFERED` (`servers`) are always among
/// them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Tool names, in table order; `None`: every tool.
    tools: Option<Vec<&'static str>>,
    /// As it was given (`navigation,edit`), to name it in refusals.
    spec: String,
}

impl Default for Profile {
    fn default() -> Profile {
        Profile::all()
    }
}

impl Profile {
    /// Every tool (the default).
    pub fn all() -> Profile {
        Profile {
            tools: None,
            spec: "all".into(),
        }
    }

    /// Group names (`navigation`, `diagnostics`, `edits`, `gates`, `admin`, or `all`) and tool
    /// names; an item may itself be comma-separated. Unknown names are an error naming them
    /// and what is known.
    pub fn parse<S: AsRef<str>>(items: &[S]) -> Result<Profile, String> {
        let names: Vec<&str> = items
            .iter()
            .flat_map(|i| i.as_ref().split(','))
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        if names.is_empty() {
            return Err(format!("the tool profile is empty; {}", known()));
        }
        let unknown: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| {
                *n != "all" && Group::by_name(n).is_none() && !TOOLS.iter().any(|t| t.name == *n)
            })
            .collect();
        if !unknown.is_empty() {
            return Err(format!(
                "unknown tool or group {} in the tool profile; {}",
                unknown
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                known()
            ));
        }
        let spec = names.join(",");
        if names.contains(&"all") {
            return Ok(Profile { tools: None, spec });
        }
        let tools = TOOLS
            .iter()
            .filter(|t| {
                t.always_offered
                    || names
                        .iter()
                        .any(|n| *n == t.name || Group::by_name(n) == Some(t.group))
            })
            .map(|t| t.name)
            .collect();
        Ok(Profile {
            tools: Some(tools),
            spec,
        })
    }

    /// Whether tool `name` is offered.
    pub fn allows(&self, name: &str) -> bool {
        self.tools.as_ref().is_none_or(|t| t.contains(&name))
    }

    /// The profile as given, e.g. `navigation,diagnostics`.
    pub fn spec(&self) -> &str {
        &self.spec
    }
}

fn known() -> String {
    let groups: Vec<&str> = Group::ALL.iter().map(|g| g.name()).collect();
    let tools: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
    format!(
        "groups: {}, all; tools: {}",
        groups.join(", "),
        tools.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_names_combine_and_servers_is_always_there() {
        let p = Profile::parse(&["navigation", "check"]).unwrap();
        for t in ["hover", "references", "call_hierarchy", "check", "servers"] {
            assert!(p.allows(t), "{t}");
        }
        for t in ["diagnostics", "edit", "rename", "shrink", "restart_server"] {
            assert!(!p.allows(t), "{t}");
        }
        assert_eq!(p.spec(), "navigation,check");
        let p = Profile::parse(&["edits,diagnostics"]).unwrap();
        assert!(p.allows("undo") && p.allows("diagnostics") && !p.allows("hover"));
        assert!(Profile::parse(&["all"]).unwrap().allows("execute_command"));
        assert!(Profile::all().allows("rename"));
    }

    #[test]
    fn every_tool_is_in_exactly_one_group() {
        for t in &TOOLS {
            let groups: Vec<_> = Group::ALL
                .iter()
                .filter(|g| Profile::parse(&[g.name()]).unwrap().allows(t.name))
                .collect();
            assert!(
                groups.len() == 1 || t.always_offered,
                "{} is in {groups:?}",
                t.name
            );
        }
    }

    #[test]
    fn unknown_names_are_refused_with_what_is_known() {
        let e = Profile::parse(&["navgation", "hover", "hovr"]).unwrap_err();
        assert!(e.contains("`navgation`, `hovr`"), "{e}");
        assert!(
            e.contains("groups: navigation, diagnostics, edits, gates, admin"),
            "{e}"
        );
        assert!(Profile::parse::<&str>(&[]).is_err());
        assert!(Profile::parse(&[" , "]).is_err());
    }
}
