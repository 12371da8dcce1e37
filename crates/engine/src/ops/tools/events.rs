//! `events`: what happened since a cursor, kept across restarts.

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::ops::Engine;
use crate::ops::durable::{EventsParams, EventsResult};

pub struct Events;
impl Tool for Events {
    const NAME: &'static str = "events";
    const TITLE: &'static str = "Events";
    const DESCRIPTION: &'static str = "What happened since a cursor (`after`), kept across restarts: file changes by anyone, diagnostics counts, edits, undos, server lifecycle, activities.";
    const GROUP: Group = Group::Admin;
    const EFFECT: Effect = Effect::Read;
    const CLI: CliShape = CliShape {
        help: &[
            (
                "limit",
                "At most this many events (default 100, at most 1,000)",
            ),
            ("kinds", "Only events of these kinds"),
        ],
        ..CliShape::PLAIN
    };
    type Params = EventsParams;
    type Result = EventsResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.events(p).await
    }
}
