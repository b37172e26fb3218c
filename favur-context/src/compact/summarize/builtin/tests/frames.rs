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
