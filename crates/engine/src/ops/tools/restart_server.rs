//! `restart_server`: restart a language server by its name.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::ops::Engine;
use crate::ops::types::ServersResult;

pub struct RestartServer;
impl Tool for RestartServer {
    const NAME: &'static str = "restart_server";
    const TITLE: &'static str = "Restart server";
    const DESCRIPTION: &'static str = "Restart a language server by its name in `servers`.";
    const GROUP: Group = Group::Admin;
    const EFFECT: Effect = Effect::Control;
    const CLI: CliShape = CliShape {
        help: &[(
            "name",
            "The server's name, as `servers` lists it (e.g. builtin/pyright)",
        )],
        ..CliShape::PLAIN
    };
    type Params = RestartServerParams;
    type Result = ServersResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.restart_server(p).await
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RestartServerParams {
    // The server's name, as `servers` lists it (e.g. builtin/pyright).
    pub name: String,
    #[serde(default)]
    pub terse: Option<bool>,
}
