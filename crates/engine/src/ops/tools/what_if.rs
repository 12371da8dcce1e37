//! `what_if`: the errors edits would introduce and resolve, and the hover at a probe, without
//! writing.

use std::fmt::Write;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::ops::Engine;
use crate::ops::render::{Render, partial_note, render_diags};
use crate::ops::types::{EditSpec, FileDiag, Num, compact};

pub struct WhatIf;
impl Tool for WhatIf {
    const NAME: &'static str = "what_if";
    const TITLE: &'static str = "What if";
    const DESCRIPTION: &'static str = "The errors `edits` (as for `edit`) would introduce and resolve in a file, and the hover at `probe`; writes nothing.";
    const GROUP: Group = Group::Gates;
    const EFFECT: Effect = Effect::Read;
    const CLI: CliShape = CliShape {
        help: &[
            (
                "edits",
                "Changes as `edit` takes them (a JSON list); the disk never sees them",
            ),
            (
                "probe",
                "Where to ask for hover and definition after the change: LINE[:COL] or a JSON position",
            ),
        ],
        ..CliShape::PLAIN
    };
    type Params = WhatIfParams;
    type Result = WhatIfResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.what_if(p).await
    }
}

// Where `what_if` hovers after the edits (positions in the edited text).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Probe {
    pub line: Num,
    #[serde(default)]
    pub column: Option<Num>,
    #[serde(default)]
    pub symbol: Option<String>,
    #[serde(default)]
    pub occurrence: Option<Num>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct WhatIfParams {
    pub file: String,
    // Changes as `edit` takes them; the disk never sees them.
    pub edits: Vec<EditSpec>,
    #[serde(default)]
    pub probe: Option<Probe>,
    #[serde(default)]
    pub terse: Option<bool>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WhatIfResult {
    #[serde(serialize_with = "compact::file_diags")]
    #[schemars(with = "Vec<compact::FileDiagnosticsShape>")]
    pub introduced: Vec<FileDiag>,
    #[serde(serialize_with = "compact::file_diags")]
    #[schemars(with = "Vec<compact::FileDiagnosticsShape>")]
    pub resolved: Vec<FileDiag>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hover_at_probe: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Render for WhatIfResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        partial_note(&mut out, self.partial, &self.reason);
        render_diags(
            &mut out,
            "introduced",
            &Some(self.introduced.clone()),
            terse,
        );
        render_diags(&mut out, "resolved", &Some(self.resolved.clone()), terse);
        if let Some(h) = &self.hover_at_probe {
            let _ = writeln!(out, "hover at probe:\n{}", h.trim());
        }
        out.trim_end().to_string()
    }
}
