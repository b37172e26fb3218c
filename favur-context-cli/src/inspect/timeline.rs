//! The inspector's timeline: one bar per request, stacked by band, each compaction marked
//! with its tier, each regret marked on the request after it; choosing a bar shows what
//! that request carried.
//!
//! The page stays self-contained (no network, no server): the bars are inline SVG links
//! to `#q<N>`, the items of every request are a JSON island of numbers, and one inline
//! script fills the request panel by cloning rows of the entries table, so no text from
//! the history is ever parsed as markup.

use std::fmt::Write as _;

use favur_context::audit::{Band, Ledger, RequestPoint, Timeline};
use serde_json::json;

/// Height of the tallest bar, in pixels.
const HEIGHT: f64 = 160.0;

fn colour(band: Band) -> &'static str {
    match band {
        Band::Pinned => "#6a5acd",
        Band::Strict => "#c0392b",
        Band::Fuzzy => "#e67e22",
        Band::Forgettable => "#95a5a6",
        Band::Summary => "#2e86c1",
    }
}

/// The CSS of the timeline and the request panel.
pub(super) const STYLE: &str = "svg#timeline{display:block;margin-bottom:.5em}a.bar rect{stroke:none}a.bar:hover rect,a.bar.chosen rect{opacity:.7}\
line.mark{stroke:#333;stroke-dasharray:2,2}text.mark{font-size:10px}circle.regret{fill:#c00}\
ul.legend{list-style:none;padding:0;display:flex;gap:1em}ul.legend span{display:inline-block;width:.9em;height:.9em;margin-right:.3em}\
tr.sent.regretted td:first-child{border-left:4px solid #c00}";

/// The timeline section: the legend, the SVG and the (empty) request panel.
pub fn timeline_html(ledger: &Ledger) -> String {
    let timeline = ledger.timeline();
    let requests = timeline.requests();
    let n = requests.len();
    let mut out = String::from("<h2>Requests</h2>\n");
    if n == 0 {
        out.push_str("<p id=\"no-requests\">No assistant message, so no request to show.</p>\n");
        return out;
    }
    let width = (900.0 / n as f64).clamp(2.0, 14.0);
    let max = requests.iter().map(|r| r.total()).max().unwrap_or(0).max(1) as f64;
    let svg_width = width * n as f64;
    out.push_str("<ul class=\"legend\">");
    for band in Band::ALL {
        let _ = write!(
            out,
            "<li><span style=\"background:{}\"></span>{}</li>",
            colour(band),
            band.label()
        );
    }
    out.push_str("<li>dashed line: a compaction and its tier; red dot: a regret</li></ul>\n");
    let _ = writeln!(
        out,
        "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{svg_width:.0}\" height=\"{}\" viewBox=\"0 0 {svg_width:.1} {}\">",
        HEIGHT + 24.0,
        HEIGHT + 24.0
    );
    bars(&mut out, requests, width, max);
    marks(&mut out, timeline, ledger, width);
    out.push_str("</svg>\n");
    data_island(&mut out, timeline);
    out.push_str("<section id=\"request\"><h3 id=\"request-title\">Choose a request on the timeline to see what it carried.</h3>\n<table><thead><tr><th>id</th><th>role</th><th>class</th><th>fate</th><th>tokens</th><th>site</th><th>regret</th><th>text</th></tr></thead><tbody id=\"request-items\"></tbody></table></section>\n");
    out.push_str(SCRIPT);
    out
}

/// One stacked bar per request, a rect per band, linking to its panel.
fn bars(out: &mut String, requests: &[RequestPoint], width: f64, max: f64) {
    for (i, r) in requests.iter().enumerate() {
        let x = i as f64 * width;
        let _ = write!(
            out,
            "<a class=\"bar\" href=\"#q{i}\" data-request=\"{i}\"><title>request {} (before entry {}): {} tokens</title>",
            i + 1,
            r.at,
            r.total()
        );
        let mut y = HEIGHT + 12.0;
        for band in Band::ALL {
            let h = r.tokens(band) as f64 / max * HEIGHT;
            if h <= 0.0 {
                continue;
            }
            y -= h;
            let _ = write!(
                out,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"{}\" data-band=\"{}\"/>",
                (width - 0.5).max(1.0),
                colour(band),
                band.label()
            );
        }
        out.push_str("</a>\n");
    }
}

/// A dashed line per compaction (with its tier) and a red dot under the request after
/// each regret.
fn marks(out: &mut String, timeline: &Timeline, ledger: &Ledger, width: f64) {
    let requests = timeline.requests();
    let index_of = |at: u64| requests.partition_point(|r| r.at.0 < at);
    for mark in timeline.compactions() {
        let x = index_of(mark.at.0) as f64 * width;
        let _ = writeln!(
            out,
            "<line class=\"mark\" data-tier=\"{}\" x1=\"{x:.1}\" y1=\"10\" x2=\"{x:.1}\" y2=\"{}\"/><text class=\"mark\" x=\"{:.1}\" y=\"9\">t{}</text>",
            mark.tier,
            HEIGHT + 12.0,
            x + 1.0,
            mark.tier
        );
    }
    for e in ledger.regrets() {
        let i = requests.partition_point(|r| r.at.0 <= e.at.0);
        if i < requests.len() {
            let _ = writeln!(
                out,
                "<circle class=\"regret\" cx=\"{:.1}\" cy=\"{}\" r=\"2.5\"/>",
                i as f64 * width + width / 2.0,
                HEIGHT + 19.0
            );
        }
    }
}

/// The requests (entry, tokens, view items) as a JSON island the script reads.
fn data_island(out: &mut String, timeline: &Timeline) {
    let data: Vec<_> = timeline
        .requests()
        .iter()
        .map(|r| {
            let items: Vec<u64> = timeline.items_at(r.at).iter().map(|id| id.0).collect();
            json!({"at": r.at.0, "tokens": r.total(), "items": items})
        })
        .collect();
    // Numbers only; `<` is escaped all the same, so the island can never close itself.
    let island = serde_json::Value::from(data)
        .to_string()
        .replace('<', "\\u003c");
    let _ = writeln!(
        out,
        "<script type=\"application/json\" id=\"requests-data\">{island}</script>"
    );
}

/// Fills the request panel from the JSON island for the request named by `#q<N>`: each
/// item's row is a clone of its row in the entries table (text nodes stay text).
const SCRIPT: &str = r#"<script>
(function () {
  var data = JSON.parse(document.getElementById('requests-data').textContent);
  function show() {
    var m = /^#q(\d+)$/.exec(location.hash);
    if (!m || !data[+m[1]]) return;
    var n = +m[1], r = data[n];
    var body = document.getElementById('request-items');
    while (body.firstChild) body.removeChild(body.firstChild);
    document.getElementById('request-title').textContent = 'Request ' + (n + 1) + ' of ' + data.length +
      ': what was sent before entry #' + r.at + ' (' + r.items.length + ' items, ' + r.tokens + ' tokens)';
    r.items.forEach(function (id) {
      var src = document.getElementById('e' + id), tr = document.createElement('tr');
      tr.className = 'sent' + (src && / regretted/.test(src.className) ? ' regretted' : '');
      tr.setAttribute('data-id', String(id));
      if (src) {
        for (var i = 0; i < src.cells.length; i++) tr.appendChild(src.cells[i].cloneNode(true));
      } else {
        var td = document.createElement('td');
        td.textContent = '#' + id + ' (original not held in memory)';
        tr.appendChild(td);
      }
      body.appendChild(tr);
    });
    var bars = document.querySelectorAll('a.bar');
    for (var b = 0; b < bars.length; b++) {
      bars[b].setAttribute('class', bars[b].getAttribute('data-request') === String(n) ? 'bar chosen' : 'bar');
    }
  }
  window.addEventListener('hashchange', show);
  // The entries table comes after the timeline: wait until the document is parsed.
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', show);
  else show();
})();
</script>
"#;
