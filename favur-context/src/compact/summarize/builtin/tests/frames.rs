//! A Python traceback: its innermost frame (where it failed) shows the source line
//! printed under it; the frames above it show their place only.

use super::*;

const TRACEBACK: &str = "Traceback (most recent call last):\n  File \"/testbed/run.py\", line 4, in <module>\n    main()\n  File \"/testbed/src/app.py\", line 12, in main\n    settings = load(path)\n  File \"/testbed/src/conf.py\", line 30, in load\n    raise ImproperlyConfigured(\"SECRET_KEY must not be empty\")\nsrc.conf.ImproperlyConfigured: SECRET_KEY must not be empty\n";

#[test]
fn the_innermost_frame_shows_the_line_that_failed() {
    let text = summary_of_run("python run.py", TRACEBACK);
    let innermost = "| /testbed/src/conf.py:30 in load: raise ImproperlyConfigured(\"SECRET_KEY must not be empty\")\n";
    assert!(text.contains(innermost), "{text}");
    for outer in [
        "| /testbed/src/app.py:12 in main\n",
        "| /testbed/run.py:4 in <module>\n",
    ] {
        assert!(text.contains(outer), "{outer:?} missing from:\n{text}");
    }
    assert!(!text.contains("main()"), "{text}");
    assert!(!text.contains("load(path)"), "{text}");
}

#[test]
fn frames_with_control_characters_and_long_lines_are_joined_and_parted_safely() {
    // C1 controls (two bytes each, one space once cut), a path past the line limit, and
    // frames that follow a joined one: every frame is shown, none panics.
    let long = "d/".repeat(120);
    let traceback = format!(
        "Traceback (most recent call last):\n  File \"/src/\u{85}a\u{85}.py\", line 4, in f\u{85}\n    g(\u{85}\u{9f}x)\n  File \"/{long}b.py\", line 9, in g\n    {}\n  File \"/src/c.py\", line 2, in h\n    raise KeyError(\"\u{85}k\")\nKeyError: 'k'\n",
        "y = 1 + ".repeat(40)
    );
    let text = summary_of_run("python run.py", &traceback);
    assert!(text.contains("/src/c.py:2 in h: raise KeyError("), "{text}");
    assert!(!text.contains("g(  x)"), "{text}");
    assert!(!text.contains("y = 1"), "{text}");
}
