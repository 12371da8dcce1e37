//! `servers`: the language servers, their state, capabilities and commands.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::ops::Engine;
use crate::ops::types::ServersResult;

pub struct Servers;
impl Tool for Servers {
    const NAME: &'static str = "servers";
    const TITLE: &'static str = "Servers";
    const DESCRIPTION: &'static str = "The language servers: state, capabilities, commands, last error. Look here after no_server or not_supported.";
    const GROUP: Group = Group::Admin;
    const EFFECT: Effect = Effect::Read;
    const ALWAYS_OFFERED: bool = true;
    type Params = ServersParams;
    type Result = ServersResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.servers(p).await
    }
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct ServersParams {
    #[serde(default)]
    pub terse: Option<bool>,
}
