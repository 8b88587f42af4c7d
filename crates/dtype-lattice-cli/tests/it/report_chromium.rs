//! The report in a real browser: headless Chromium (Debian's `chromium`) loads the page,
//! which reports what laid out (every drawing and table with a non-zero size, no horizontal
//! overflow), and takes a screenshot that must be a real picture, not a blank page.
//!
//! Ignored by a plain `cargo test` (it needs Chromium, which a test cannot ask for at run
//! time and then report as skipped): run it with
//! `cargo test -p dtype-lattice-cli --test it report_chromium -- --ignored`, as `.ci/run` does
//! after installing Chromium. Once asked for, it fails when Chromium is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

fn headless(chromium: &Path, args: &[&str]) -> std::process::Output {
    Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-extensions",
            "--hide-scrollbars",
            "--virtual-time-budget=5000",
        ])
        .args(args)
        .output()
        .expect("chromium runs")
}

fn attr<'a>(dom: &'a str, name: &str) -> &'a str {
    let key = format!("{name}=\"");
    let start = dom
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in the DOM"))
        + key.len();
    &dom[start..start + dom[start..].find('"').unwrap()]
}

#[test]
#[ignore = "needs Chromium: cargo test -p dtype-lattice-cli --test it report_chromium -- --ignored"]
fn the_report_renders_in_chromium() {
    let chromium = chromium().expect(
        "Chromium is not installed (apt-get install chromium, or set CHROMIUM=/path/to/it)",
    );
    let dir = std::env::temp_dir().join(format!("dtype-lattice-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("report.html");
    let status = Command::new(env!("CARGO_BIN_EXE_dtype-lattice"))
        .args(["report", "--x64", "-o"])
        .arg(&page)
        .status()
        .unwrap();
    assert!(status.success());
    let html = std::fs::read_to_string(&page).unwrap();
    let url = format!("file://{}", page.display());

    // Layout: every drawing and table has a size; nothing overflows a 1400-pixel window.
    let out = headless(&chromium, &["--window-size=1400,900", "--dump-dom", &url]);
    let dom = String::from_utf8_lossy(&out.stdout);
    let svgs = html.matches("<svg").count();
    let tables = html.matches("<table").count();
    assert!(
        svgs >= 15 && tables == 11,
        "{svgs} drawings, {tables} tables"
    );
    assert_eq!(attr(&dom, "data-svgs"), svgs.to_string());
    assert_eq!(attr(&dom, "data-tables"), tables.to_string());
    assert_eq!(attr(&dom, "data-overflow"), "no");

    // A screenshot: a PNG of the requested size with real content (a blank page compresses
    // to a few kilobytes).
    let shot = dir.join("report.png");
    let out = headless(
        &chromium,
        &[
            "--window-size=1400,2200",
            &format!("--screenshot={}", shot.display()),
            &url,
        ],
    );
    assert!(shot.exists(), "{}", String::from_utf8_lossy(&out.stderr));
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    assert_eq!((be(&png[16..20]), be(&png[20..24])), (1400, 2200));
    assert!(png.len() > 150_000, "{} bytes: a blank page?", png.len());
}
