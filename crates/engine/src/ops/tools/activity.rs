//! `activity`: state, progress and result of a background call, or its cancellation.

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::ops::Engine;
use crate::ops::activity::ActivityResult;
use crate::ops::durable::ActivityParams;

pub struct Activity;
impl Tool for Activity {
    const NAME: &'static str = "activity";
    const TITLE: &'static str = "Activity";
    const DESCRIPTION: &'static str = "State, progress and final result of a background call (`background: true`); `cancel` stops it.";
    const GROUP: Group = Group::Gates;
    const EFFECT: Effect = Effect::Control;
    const CLI: CliShape = CliShape {
        help: &[("id", "The `activity_id` a background call returned")],
        ..CliShape::PLAIN
    };
    type Params = ActivityParams;
    type Result = ActivityResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.activity(&p.id, p.cancel.unwrap_or(false)).await
    }
}
