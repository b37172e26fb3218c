//! The sweep's chart: two panels, mean request tokens against span survival and against
//! reference survival, one line per strategy through its windows, each point labelled
//! with its effective cost relative to no compaction.

use std::path::Path;

use plotters::prelude::*;

use crate::ReplayError;
use crate::sweep::Point;

/// A strategy's colour and the offset of its point labels (the policy's to the right,
/// trim-oldest's to the left: at the same size they do not overwrite each other).
fn style(label: &str) -> (RGBColor, (i32, i32)) {
    if label.starts_with("policy") {
        (RGBColor(200, 30, 30), (6, -16))
    } else if label.starts_with("trim-oldest") {
        (RGBColor(30, 90, 200), (-40, 2))
    } else if label.starts_with("mask-old") {
        (RGBColor(30, 150, 60), (6, -28))
    } else {
        (RGBColor(90, 90, 90), (6, 14))
    }
}

/// Which survival a panel shows.
#[derive(Clone, Copy)]
enum Measure {
    Spans,
    Refs,
}

impl Measure {
    fn of(self, p: &Point) -> Option<f64> {
        match self {
            Measure::Spans => p.spans,
            Measure::Refs => p.refs,
        }
    }

    fn title(self) -> &'static str {
        match self {
            Measure::Spans => "exact-text span survival",
            Measure::Refs => "reference survival",
        }
    }
}

/// Draws the sweep into an SVG file at `path`.
pub fn draw_sweep(path: &Path, points: &[Point]) -> Result<(), ReplayError> {
    crate::svg::titled_svg(
        path,
        (1200, 560),
        "sweep chart",
        "window sweep: mean request tokens (x) against survival (y), one point per window (100k, 150k, 200k, 300k); labels: effective cost × no compaction",
        |body| {
            let (left, right) = body.split_horizontally(600);
            panel(&left, points, Measure::Spans)?;
            panel(&right, points, Measure::Refs)
        },
    )
}

/// The strategies of `points`, in order of first appearance.
fn labels(points: &[Point]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for p in points {
        if !out.contains(&p.label.as_str()) {
            out.push(&p.label);
        }
    }
    out
}

fn panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    points: &[Point],
    measure: Measure,
) -> Result<(), String> {
    let xmax = points.iter().map(|p| p.mean_tokens).fold(1.0, f64::max) * 1.1;
    let ymin = points
        .iter()
        .filter_map(|p| measure.of(p))
        .fold(1.0, f64::min);
    let ylow = ((ymin - 0.02) * 50.0).floor() / 50.0;
    let mut chart = ChartBuilder::on(area)
        .caption(measure.title(), ("sans-serif", 15))
        .margin(10)
        .x_label_area_size(34)
        .y_label_area_size(50)
        .build_cartesian_2d(0f64..xmax, ylow.min(0.98)..1.005)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("mean request tokens")
        .y_desc(measure.title())
        .x_label_formatter(&|x| format!("{:.0}k", x / 1000.0))
        .y_label_formatter(&|y| format!("{y:.2}"))
        .label_style(("sans-serif", 11))
        .draw()
        .map_err(|e| e.to_string())?;
    for label in labels(points) {
        let (color, offset) = style(label);
        let mut series: Vec<&Point> = points.iter().filter(|p| p.label == label).collect();
        series.sort_by_key(|p| p.window);
        let xy: Vec<(f64, f64, &Point)> = series
            .iter()
            .filter_map(|p| measure.of(p).map(|y| (p.mean_tokens, y, *p)))
            .collect();
        chart
            .draw_series(LineSeries::new(
                xy.iter().map(|(x, y, _)| (*x, *y)),
                color.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
        chart
            .draw_series(xy.iter().map(|(x, y, p)| {
                let cost = p
                    .cost
                    .map_or_else(|| "–".to_owned(), |c| format!("{c:.2}×"));
                let text = if label.starts_with("policy") {
                    format!("{}k: {cost}", p.window / 1000)
                } else {
                    cost
                };
                EmptyElement::at((*x, *y))
                    + Circle::new((0, 0), 4, color.filled())
                    + Text::new(text, offset, ("sans-serif", 11).into_font().color(&color))
            }))
            .map_err(|e| e.to_string())?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests;
