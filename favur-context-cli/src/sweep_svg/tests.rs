use super::draw_sweep;
use crate::sweep::Point;

#[test]
fn the_sweep_chart_labels_cost_and_its_axes() -> Result<(), Box<dyn std::error::Error>> {
    let pt = |window, mean, spans| Point {
        window,
        label: "policy".into(),
        mean_tokens: mean,
        spans: Some(spans),
        refs: Some(0.99),
        cost: Some(0.6),
    };
    let points = [pt(100_000, 6000.0, 0.9), pt(200_000, 10000.0, 0.95)];
    let path = std::env::temp_dir().join(format!("favur-sweep-unit-{}.svg", std::process::id()));
    draw_sweep(&path, &points)?;
    let svg = std::fs::read_to_string(&path);
    let _ = std::fs::remove_file(&path);
    let svg = svg?;
    assert!(svg.contains("<svg") && svg.contains("0.60×") && svg.contains("span survival"));
    Ok(())
}
