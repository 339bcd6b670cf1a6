// Package browser holds the web console's tests in a real browser:
// headless Chromium, driven by chromedp, loads the console of a running
// server, watches a key written by a runtime client appear in the key
// browser and in the request trace, deletes it from the console and
// checks that the store lost it; and, with the thermostat example's
// schema, sees declared keys by their declaration names and values as
// JSON, edits one in JSON under its guard lock and reads it back with the
// generated package, and checks deep links, the trace's links to keys,
// the fenced delete's dialog and the layout. It is a package of its own
// so that the browser's time is bounded and accounted for separately.
//
// The test needs Chromium (Debian's chromium package, /usr/bin/chromium,
// or CHROMIUM=path). Without it the test is skipped, unless
// SSGEN_REQUIRE_CHROMIUM is set, as CI sets it: then it fails.
//
//	go test ./server/console/browser -screenshot
//
// also rewrites docs/console.png, the screenshot of docs/console.md.
package browser
