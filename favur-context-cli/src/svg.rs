//! The chart: per transcript, request tokens over the steps stacked by class, the tier
//! thresholds, and each compaction marked.

use std::path::Path;

use plotters::prelude::*;

use crate::ReplayError;
use crate::replay::Run;

/// One panel: a transcript's policy run. See [`draw`] for an example.
#[derive(Debug, Clone)]
pub struct Panel<'a> {
    /// Title (the transcript id).
    pub title: &'a str,
    /// The run.
    pub run: &'a Run,
}

const CLASS_COLORS: [RGBColor; 4] = [
    RGBColor(120, 120, 120), // pinned + framing
    RGBColor(141, 211, 199), // forgettable
    RGBColor(128, 177, 211), // fuzzy
    RGBColor(251, 128, 114), // strict
];
const TIER_COLORS: [RGBColor; 4] = [
    RGBColor(60, 60, 60),
    RGBColor(230, 160, 0),
    RGBColor(200, 80, 0),
    RGBColor(160, 0, 0),
];

/// Draws the panels into an SVG file at `path`, three per row.
pub fn draw(path: &Path, panels: &[Panel<'_>], window: u64) -> Result<(), ReplayError> {
    let cols = 3usize;
    let rows = panels.len().div_ceil(cols).max(1);
    let (w, h) = (480u32 * cols as u32, 300u32 * rows as u32 + 40);
    titled_svg(
        path,
        (w, h),
        "chart",
        "request tokens per step, stacked by class (grey: pinned + framing, green: forgettable, blue: fuzzy, red: strict); dashed: tier thresholds; vertical: compactions (tier colour)",
        |body| {
            let areas = body.split_evenly((rows, cols));
            for (area, panel) in areas.iter().zip(panels) {
                draw_panel(area, panel, window)?;
            }
            Ok(())
        },
    )
}

/// Draws an SVG file at `path` of `size` pixels: a white page, `title` in a band at its
/// top, and what `body` draws on the rest. Errors name the file as the `what`.
pub(crate) fn titled_svg(
    path: &Path,
    size: (u32, u32),
    what: &str,
    title: &str,
    body: impl FnOnce(&DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> Result<(), String>,
) -> Result<(), ReplayError> {
    let err = |e: String| ReplayError::Write {
        what: format!("{what} {}", path.display()),
        source: std::io::Error::other(e),
    };
    let root = SVGBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let (top, rest) = root.split_vertically(40);
    top.draw(&Text::new(title, (10, 12), ("sans-serif", 13).into_font()))
        .map_err(|e| err(e.to_string()))?;
    body(&rest).map_err(err)?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}

fn draw_panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    panel: &Panel<'_>,
    window: u64,
) -> Result<(), String> {
    let steps = &panel.run.steps;
    let n = steps.len().max(1);
    let peak = steps.iter().map(|s| s.tokens).max().unwrap_or(0).max(1);
    let thresholds: Vec<f64> = panel
        .run
        .thresholds
        .iter()
        .map(|t| t * window as f64)
        .collect();
    // Show thresholds up to a little above the peak.
    let ymax = thresholds
        .iter()
        .copied()
        .filter(|t| *t <= peak as f64 * 1.6)
        .fold(peak as f64 * 1.1, f64::max);
    let mut chart = ChartBuilder::on(area)
        .caption(panel.title, ("sans-serif", 14))
        .margin(6)
        .x_label_area_size(30)
        .y_label_area_size(48)
        .build_cartesian_2d(0f64..n as f64, 0f64..ymax)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("step")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{:.0}k", y / 1000.0))
        .label_style(("sans-serif", 10))
        .draw()
        .map_err(|e| e.to_string())?;
    // Cumulative layers: pinned+framing, +forgettable, +fuzzy, +strict (= tokens).
    let layer = |k: usize| -> Vec<(f64, f64)> {
        steps
            .iter()
            .enumerate()
            .map(|(i, s)| (i as f64, layer_top(s.tokens, &s.by_class, k) as f64))
            .collect()
    };
    for k in (0..4).rev() {
        let color = CLASS_COLORS[k];
        chart
            .draw_series(AreaSeries::new(layer(k), 0.0, color.mix(0.8)))
            .map_err(|e| e.to_string())?;
    }
    for (t, y) in thresholds.iter().enumerate() {
        if *y > ymax {
            continue;
        }
        let dashes = dashed(*y, n as f64, TIER_COLORS[(t + 1).min(3)]);
        chart.draw_series(dashes).map_err(|e| e.to_string())?;
    }
    let marks: Vec<PathElement<(f64, f64)>> = steps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.event.map(|e| (i, e.tier)))
        .map(|(i, tier)| {
            PathElement::new(
                vec![(i as f64, 0.0), (i as f64, ymax)],
                TIER_COLORS[tier.map_or(0, |t| usize::from(t.get())).min(3)].stroke_width(1),
            )
        })
        .collect();
    chart.draw_series(marks).map_err(|e| e.to_string())?;
    Ok(())
}

/// The top of layer `k` of a step: the tokens outside the classes plus the first `k`
/// classes'.
fn layer_top(tokens: u64, by_class: &[u64], k: usize) -> u64 {
    let classes: u64 = by_class.iter().sum();
    tokens.saturating_sub(classes) + by_class.iter().take(k).sum::<u64>()
}

/// A dashed horizontal line at `y` across `0..n`.
fn dashed(y: f64, n: f64, color: RGBColor) -> Vec<PathElement<(f64, f64)>> {
    let mut x = 0.0;
    let mut dashes = Vec::new();
    while x < n {
        dashes.push(PathElement::new(
            vec![(x, y), ((x + n / 80.0).min(n), y)],
            color.stroke_width(1),
        ));
        x += n / 40.0;
    }
    dashes
}

#[cfg(test)]
mod tests;
