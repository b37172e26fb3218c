//! `favur-context inspect`: the HTML page of a history, with hostile tool output and a
//! hostile rule name, read back by headless Chromium. In CI (`CI=true`) a missing
//! Chromium is installed with apt; elsewhere the browser check is skipped visibly.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use favur_context::audit::Ledger;
use favur_context::journal::JournaledHistory;
use favur_context::message::CallSite;
use favur_context::{Classified, History, Message, Retention, Store, strict};

/// Tool output that would run script, add an element or break out of the table if it
/// were written into the page as markup.
const HOSTILE: &str = "</pre></td></tr></table><script>document.body.setAttribute('data-pwned','script')</script>\
<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\"><b id=\"injected\">bold</b> & 'quotes'";

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("favur-inspect-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A journal: the same command run four times, each output dropped before the next run;
/// the outputs carry `HOSTILE`, and one message has a rule name made of markup.
fn journal(path: &Path) {
    let mut j = JournaledHistory::open(path).unwrap();
    j.pin(strict!(system: "You are a coding agent.")).unwrap();
    let site = CallSite::from_parts("import:openai/<i onmouseover=\"x()\">rule</i>".into(), 1, 1);
    j.append(Classified::with_site(
        Message::user("Fix <the> parser & tests"),
        Retention::Strict,
        site,
    ))
    .unwrap();
    for round in 0..4 {
        common::append_bash_call(&mut j, &format!("c{round}"), "cat <input.txt");
        let out = Message::tool_result(format!("c{round}"), HOSTILE, false);
        let id = j.append(out.classify(Retention::Forgettable)).unwrap();
        common::drop_at(&mut j, 2, id);
    }
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

const BROWSERS: [&str; 4] = [
    "chromium",
    "chromium-browser",
    "google-chrome",
    "chrome-headless-shell",
];

/// A headless Chromium: found on the PATH; in CI installed with apt when missing.
fn chromium() -> Option<PathBuf> {
    if let Some(found) = BROWSERS.iter().find_map(|b| on_path(b)) {
        return Some(found);
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        for args in [
            &["update"][..],
            &["install", "-y", "--no-install-recommends", "chromium"][..],
        ] {
            let status = Command::new("apt-get")
                .args(args)
                .env("DEBIAN_FRONTEND", "noninteractive")
                .status()
                .expect("apt-get runs in CI");
            assert!(status.success(), "apt-get {args:?} failed in CI");
        }
        return Some(on_path("chromium").expect("chromium installed by apt"));
    }
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: no headless Chromium on the PATH ({}); the page is checked without a browser (CI installs it with apt)",
        BROWSERS.join(", ")
    );
    None
}

/// Runs `favur-context inspect FILE --out PAGE`.
fn inspect(file: &Path, page: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_favur-context"))
        .arg("inspect")
        .arg(file)
        .arg("--out")
        .arg(page)
        .output()
        .expect("the binary runs")
}

/// Runs `favur-context inspect FILE --out PAGE`, asserts it succeeded and returns its
/// standard output.
fn inspect_ok(file: &Path, page: &Path) -> String {
    succeeded(inspect(file, page))
}

/// The standard output of a process that must have succeeded (else its standard error).
fn succeeded(out: std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_page_escapes_what_the_history_holds_and_a_browser_reads_it_as_text() {
    let d = temp("page");
    let file = d.join("agent.jsonl");
    journal(&file);
    let page = d.join("agent.html");
    let stdout = inspect_ok(&file, &page);
    assert!(
        stdout.contains("10 entries, 4 sites, 3 regret events"),
        "{stdout}"
    );
    let (ledger, history, _) = Ledger::of_journal(std::fs::File::open(&file).unwrap()).unwrap();
    assert_eq!((history.len(), ledger.regrets().len()), (10, 3));

    let html = std::fs::read_to_string(&page).unwrap();
    // As written: no markup from the history survives, all of it is there as text.
    // The page's own two scripts (the request data and the panel's code), nothing else.
    assert_eq!(html.matches("<script").count(), 2);
    assert!(html.contains("<script type=\"application/json\" id=\"requests-data\">"));
    for markup in [
        "<script>document",
        "<img",
        "<b id",
        "<i onmouseover",
        "<the>",
        "<input.txt",
    ] {
        assert!(!html.contains(markup), "{markup} written as markup");
    }
    assert_eq!(html.matches("&lt;script&gt;document.body.setAttribute(&#39;data-pwned&#39;,&#39;script&#39;)&lt;/script&gt;").count(), 4);
    assert!(html.contains("import:openai/&lt;i onmouseover=&quot;x()&quot;&gt;rule&lt;/i&gt;"));
    assert_eq!(html.matches("<tr class=\"entry ").count(), 10);
    assert_eq!(html.matches(" regretted\"").count(), 3);
    // The timeline: one bar per assistant message, four tier-2 marks, and a red dot on
    // the request after each regret that has one (the last regret is the last entry).
    let requests = ledger.timeline().requests();
    assert_eq!(
        requests.iter().map(|r| r.at.0).collect::<Vec<_>>(),
        [2, 4, 6, 8]
    );
    assert_eq!(html.matches("<a class=\"bar\"").count(), 4);
    assert_eq!(
        html.matches("<line class=\"mark\" data-tier=\"2\"").count(),
        4
    );
    assert_eq!(html.matches("<circle class=\"regret\"").count(), 2);
    // The third request carried the system prompt, the task and the two earlier calls:
    // both earlier outputs had been dropped.
    let third: Vec<u64> = ledger
        .timeline()
        .items_at(requests[2].at)
        .iter()
        .map(|id| id.0)
        .collect();
    assert_eq!(third, [0, 1, 2, 4]);

    let Some(browser) = chromium() else { return };
    let url = format!("file://{}", page.display());
    let dom = dump_dom(&browser, &d.join("profile"), &url);
    // The document the browser built: the page's own structure, none of the history's.
    assert!(dom.contains("<title>favur-context inspect: "), "{dom}");
    // A script that ran would have set an attribute on the body; injected markup would be
    // an element.
    assert!(dom.contains("<body>\n"), "script ran: {dom}");
    assert!(!dom.contains("<b id="), "markup was injected: {dom}");
    assert!(
        !dom.contains("data-pwned=\"") && !dom.contains("<img"),
        "{dom}"
    );
    assert_eq!(dom.matches("<script").count(), 2, "{dom}");
    // The timeline rendered; no request chosen yet, so the panel is empty.
    assert_eq!(dom.matches("<a class=\"bar\"").count(), 4, "{dom}");
    assert_eq!(dom.matches("<tr class=\"sent").count(), 0, "{dom}");
    assert_eq!(dom.matches("<tr class=\"entry ").count(), 10, "{dom}");
    assert_eq!(
        dom.matches("<table").count(),
        3, // sites, entries, the request panel
        "the tool output closed a table"
    );
    assert_eq!(
        dom.matches("class=\"entry fate-dropped regretted\"")
            .count(),
        3
    );
    // The text is there, as text (the browser serializes text nodes with < and & escaped).
    assert_eq!(
        dom.matches(
            "&lt;script&gt;document.body.setAttribute('data-pwned','script')&lt;/script&gt;"
        )
        .count(),
        4
    );
    assert!(
        dom.contains("import:openai/&lt;i onmouseover=\"x()\"&gt;rule&lt;/i&gt;"),
        "{dom}"
    );

    // Choosing the third request on the timeline (its link, `#q2`) shows what it carried.
    let chosen = dump_dom(&browser, &d.join("profile-chosen"), &format!("{url}#q2"));
    assert!(
        chosen.contains("Request 3 of 4: what was sent before entry #6 (4 items, "),
        "{chosen}"
    );
    let sent: Vec<&str> = chosen
        .split("<tr class=\"sent")
        .skip(1)
        .map(|row| {
            let at = row.find("data-id=\"").expect("data-id") + 9;
            &row[at..at + row[at..].find('"').unwrap()]
        })
        .collect();
    assert_eq!(sent, ["0", "1", "2", "4"], "{chosen}");
    assert!(
        chosen.contains("<a class=\"bar chosen\" href=\"#q2\""),
        "{chosen}"
    );
    // The rows are the entries' own cells, text as text.
    let panel = &chosen[chosen.find("id=\"request-items\"").expect("panel")..];
    let panel = &panel[..panel.find("</tbody>").expect("end of panel")];
    assert!(
        panel.contains("<tr class=\"sent\" data-id=\"1\"><td>#1</td><td>user</td><td>strict</td>"),
        "{panel}"
    );
    assert!(
        panel.contains("Fix &lt;the&gt; parser &amp; tests"),
        "{panel}"
    );
    assert!(!panel.contains("not held in memory"), "{panel}");
    assert!(
        !chosen.contains("data-pwned=\"") && !chosen.contains("<b id="),
        "{chosen}"
    );
}

/// The document headless Chromium builds for `url`, after its scripts ran.
fn dump_dom(browser: &Path, profile: &Path, url: &str) -> String {
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--no-first-run",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url)
        .output()
        .expect("chromium runs");
    succeeded(out)
}

#[test]
fn a_page_of_a_saved_history_lists_every_entry_and_a_bad_output_path_is_an_error() {
    let mut h = History::new();
    h.append(strict!(user: "one"));
    h.append(strict!(assistant: "two"));
    let d = temp("saved");
    let saved = d.join("h.json");
    std::fs::write(&saved, h.to_json()).unwrap();
    let page = d.join("h.html");
    inspect_ok(&saved, &page);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<tr class=\"entry fate-kept\"").count(), 2);
    assert!(
        html.contains("<pre>entry #1 (assistant, strict)\ntwo</pre>"),
        "{html}"
    );

    let out = inspect(&saved, &d.join("no/such/dir/h.html"));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write"));
}
