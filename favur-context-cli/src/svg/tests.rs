use super::{Panel, draw};
use crate::replay::{Run, Step};

#[test]
fn a_run_is_drawn_as_an_svg_file() -> Result<(), Box<dyn std::error::Error>> {
    let step = Step {
        tokens: 100,
        by_class: [10, 20, 30],
        ..Step::default()
    };
    let run = Run {
        label: "p".into(),
        thresholds: vec![0.05],
        steps: vec![step; 3],
    };
    let path = std::env::temp_dir().join(format!("favur-svg-unit-{}.svg", std::process::id()));
    draw(
        &path,
        &[Panel {
            title: "t",
            run: &run,
        }],
        2000,
    )?;
    let svg = std::fs::read_to_string(&path);
    let _ = std::fs::remove_file(&path);
    assert!(svg?.contains("<svg"));
    Ok(())
}
