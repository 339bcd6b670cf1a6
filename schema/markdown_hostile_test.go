package schema

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
)

// hostileDoc tries every way schema text could change the Markdown the
// review action posts as its bot's comment: the action's marker, HTML,
// mentions, issue references, links and images, block starters, a code
// fence, table pipes, and hidden or line-breaking characters.
const hostileDoc = "<!-- ssgen-review -->\n# Owned\n@octocat and @github/security see #1 " +
	"<img src=x onerror=alert(1)> <b>bold</b> [click](https://evil.example) ![t](https://evil.example/t.png) " +
	"&amp; *em* _em_ ~~del~~ `code` $\\huge x$ \\\n```\n- item\n+ item\n1. one\n2) two\n    indented\n> quote\n" +
	"| a | b |\n---\n===\n***\n\u202eevil\u2066 split\u2028here\r\nNUL\x00 BOM\ufeff NEL\u0085end"

// hostileMarkdownSchema holds hostileDoc at every doc, and hostile text in
// every other string ssgen doc prints: enum values, path literals,
// patterns, principals.
func hostileMarkdownSchema(t *testing.T) *Schema {
	t.Helper()
	q, err := json.Marshal(hostileDoc)
	if err != nil {
		t.Fatal(err)
	}
	src := strings.ReplaceAll(`version: 1
package: hostile
doc: DOC
types:
  Level:
    doc: DOC
    enum:
      - {value: "a`+"`"+`b|c<!--d @octocat", go_name: LevelA, doc: DOC}
      - {value: "`+"``"+`", go_name: LevelB}
  Point:
    doc: DOC
    fields:
      x: {type: int, doc: DOC}
keys:
  K:
    path: "k`+"`"+`|<!--@octocat#1/x/{p}"
    params:
      p: {type: string, pattern: "a|`+"`"+`<!--", doc: DOC}
    type: Level
    doc: DOC
locks:
  L: {path: "l<b>`+"```"+`", ttl: 1s, doc: DOC}
groups:
  G:
    path: g/{id}
    doc: DOC
    params: {id: string}
    keys:
      V: {path: v, type: Point, doc: DOC}
roles:
  r:
    doc: DOC
    client_ids: ["<!-- ssgen-review -->`+"`"+`@octocat|"]
    usernames: ["@octocat"]
    attributes: [{team: "<b>@org/team</b>"}]
    read: [K]
`, "DOC", string(q))
	s, err := Load("ssgen.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMarkdownShowsSchemaTextAsTextOnly(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b, hostileMarkdownSchema(t)); err != nil {
		t.Fatal(err)
	}
	md := b.String()

	// The Markdown itself: one mermaid fence that closes where ssgen
	// closes it, whose only markup is <br/>; no hidden or line-breaking
	// character besides '\n'.
	_, rest, ok := strings.Cut(md, "```mermaid\n")
	if !ok {
		t.Fatalf("no mermaid block:\n%s", md)
	}
	mermaid, after, ok := strings.Cut(rest, "\n```\n")
	if !ok || strings.Contains(mermaid, "`") || regexp.MustCompile("(?m)^ {0,3}(```|~~~)").MatchString(after) {
		t.Fatalf("the mermaid block does not close where it should:\n%s", md)
	}
	if strings.Contains(strings.ReplaceAll(mermaid, "<br/>", ""), "<") {
		t.Errorf("markup in the mermaid block:\n%s", mermaid)
	}
	if strings.ContainsAny(md, "\x00\r\u0085\u2028\u202e\u2066\ufeff") {
		t.Errorf("a hidden or line-breaking character passed:\n%q", md)
	}

	// Rendered as GitHub does (CommonMark, GFM tables and strikethrough,
	// raw HTML let through so that any that passed would show).
	var h bytes.Buffer
	gm := goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough), goldmark.WithRendererOptions(html.WithUnsafe()))
	if err := gm.Convert(b.Bytes(), &h); err != nil {
		t.Fatal(err)
	}
	out := h.String()
	tags := map[string]int{}
	for _, m := range regexp.MustCompile(`<(/?[a-zA-Z0-9!-]+)`).FindAllStringSubmatch(out, -1) {
		tags[m[1]]++
	}
	allowed := map[string]bool{"h1": true, "/h1": true, "h2": true, "/h2": true, "h3": true, "/h3": true,
		"p": true, "/p": true, "br": true, "code": true, "/code": true, "pre": true, "/pre": true,
		"table": true, "/table": true, "thead": true, "/thead": true, "tbody": true, "/tbody": true,
		"tr": true, "/tr": true, "th": true, "/th": true, "td": true, "/td": true}
	for tag, n := range tags {
		if !allowed[tag] {
			t.Errorf("the rendered doc has %d <%s>:\n%s", n, tag, out)
		}
	}
	if tags["h1"] != 1 || tags["pre"] != 1 {
		t.Errorf("want one h1 (the title) and one pre (the diagram), got %d and %d:\n%s", tags["h1"], tags["pre"], out)
	}
	if !strings.Contains(md, `\$\\huge x\$`) {
		t.Errorf("math delimiters are not escaped:\n%s", md)
	}
	if !strings.Contains(out, "&lt;!-- ssgen-review --&gt;") || !strings.Contains(out, "&lt;img src=x") {
		t.Errorf("the doc text is not shown as text:\n%s", out)
	}

	// Every table row has as many cells as its header.
	for _, table := range regexp.MustCompile(`(?s)<table>.*?</table>`).FindAllString(out, -1) {
		rows := regexp.MustCompile(`(?s)<tr>.*?</tr>`).FindAllString(table, -1)
		want := strings.Count(rows[0], "<th")
		for _, r := range rows[1:] {
			if got := strings.Count(r, "<td"); got != want {
				t.Errorf("a row of %d cells under %d headers:\n%s", got, want, r)
			}
		}
	}

	// Outside code, no mention and no issue reference is left for GitHub
	// to link.
	text := regexp.MustCompile(`(?s)<pre>.*?</pre>|<code>.*?</code>`).ReplaceAllString(out, "")
	if m := regexp.MustCompile(`@[A-Za-z0-9]|#[0-9]`).FindString(text); m != "" {
		t.Errorf("%q left outside code:\n%s", m, text)
	}

	// Code spans show the value exactly, backquotes and pipes included.
	for _, want := range []string{"<code>a`b|c&lt;!--d @octocat</code>", "<code>``</code>", "<code>k`|&lt;!--@octocat#1/x/{p}</code>",
		"<code>a|`&lt;!--</code>", "<code>&lt;!-- ssgen-review --&gt;`@octocat|</code>"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in:\n%s", want, out)
		}
	}
}

func TestMermaidLabelsKeepHiddenAndBreakingCharactersVisible(t *testing.T) {
	got := mermaidLabel("a\u2028b\u202e\"<&#`")
	if want := `a\u2028b\u202E#quot;#lt;#amp;#35;#96;`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
