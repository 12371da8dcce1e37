//! Which code action an agent's `apply` names: the list as the tool shows it, and an index or a
//! title resolved against the server's list now, an index by the title it was shown with.
//!
//! The server's list may change between two asks: an index names the action the session was shown
//! at it, and that action is applied, or none (`revision_conflict`).

use serde_json::{Value, json};

use super::super::types::ActionInfo;
use crate::error::{Code, ToolError};
use crate::lsp::wire::WireCodeAction;

/// The actions as listed to the agent, numbered from 1.
pub(super) fn action_infos(actions: &[WireCodeAction]) -> Vec<ActionInfo> {
    actions
        .iter()
        .enumerate()
        .map(|(i, a)| ActionInfo {
            index: i + 1,
            title: a.title.clone(),
            kind: a.kind.clone(),
            preferred: a.preferred,
            fixes: a.fixes.clone(),
            disabled: a.disabled.clone(),
        })
        .collect()
}

/// The action `choice` names: its number (from 1) or its title.
/// The action `choice` names: an index (1-based) or a title. An index names the action shown at
/// it when the session was last shown this list (`shown`): the server's list can change
/// between two asks (gopls's, for a file it has just seen), and the action at the same index
/// then is another; the one shown is applied, or none if it is gone.
pub(super) fn choose_action(
    choice: &Value,
    actions: &[WireCodeAction],
    list: &[ActionInfo],
    shown: Option<&[String]>,
) -> Result<WireCodeAction, ToolError> {
    let index = match choice {
        Value::Number(n) => n.as_u64().map(|n| n as usize),
        Value::String(s) => s.trim().parse::<usize>().ok(),
        _ => None,
    }
    .and_then(|i| i.checked_sub(1));
    if let Some(title) = index.and_then(|i| shown?.get(i)) {
        return actions
            .iter()
            .find(|a| a.title == *title)
            .cloned()
            .ok_or_else(|| {
                ToolError::new(
                    Code::RevisionConflict,
                    format!(
                        "action {choice} was `{title}` when listed, and the server offers it no \
                         more; the actions now are: {}",
                        titles(list)
                    ),
                )
                .with_data(json!({"actions": list}))
            });
    }
    index
        .and_then(|i| actions.get(i))
        .or_else(|| {
            choice
                .as_str()
                .and_then(|t| actions.iter().find(|a| a.title == t))
        })
        .cloned()
        .ok_or_else(|| {
            ToolError::invalid(format!(
                "no action {choice} here; the actions are: {}",
                titles(list)
            ))
            .with_data(json!({"actions": list}))
        })
}

fn titles(list: &[ActionInfo]) -> String {
    if list.is_empty() {
        return "(none)".into();
    }
    list.iter()
        .map(|a| format!("{}. {}", a.index, a.title))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action(title: &str) -> WireCodeAction {
        WireCodeAction {
            title: title.into(),
            kind: None,
            preferred: false,
            fixes: Vec::new(),
            disabled: None,
            raw: Value::Null,
        }
    }

    #[test]
    fn an_index_names_the_action_shown_at_it() {
        let now = [action("Show details"), action("Fill Command")];
        let list = action_infos(&now);
        let shown = vec!["Fill Command".to_string(), "Show details".to_string()];
        let pick = |choice: Value, shown: Option<&[String]>| {
            choose_action(&choice, &now, &list, shown).map(|a| a.title)
        };
        // The list moved between the listing and the apply: index 1 was `Fill Command`.
        assert_eq!(pick(json!(1), Some(&shown)).unwrap(), "Fill Command");
        assert_eq!(pick(json!("2"), Some(&shown)).unwrap(), "Show details");
        // Never listed in this session: the index as it stands; titles as given.
        assert_eq!(pick(json!(1), None).unwrap(), "Show details");
        assert_eq!(
            pick(json!("Fill Command"), Some(&shown)).unwrap(),
            "Fill Command"
        );
        // The action shown is gone: nothing applied.
        let gone = vec!["Extract function".to_string()];
        let e = pick(json!(1), Some(&gone)).unwrap_err();
        assert_eq!(e.code, Code::RevisionConflict, "{}", e.message);
        assert!(pick(json!(9), None).is_err());
    }
}
