package schema

import (
	"fmt"
	"io"
	"strings"

	"github.com/ssgen/ssgen/internal/textsafe"
)

// WriteMermaid writes a Mermaid flowchart of the schema's key tree, the
// form GitHub renders inside a ```mermaid block: the store, each group
// with its path, each key (path, type, TTL, persistence) and lock (path,
// lease TTL) under its group or the store, and a dotted "guards" arrow
// from each lock to the keys it fences. Nodes are numbered in declaration
// order, so the text changes only where the schema does.
func WriteMermaid(w io.Writer, s *Schema) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("flowchart LR\n")
	p("  store[(\"%s\")]\n", mermaidLabel(s.Package))
	ids := map[any]string{}
	n := 0
	id := func(x any) string {
		n++
		ids[x] = fmt.Sprintf("n%d", n)
		return ids[x]
	}
	key := func(parent string, k *Key) {
		lines := []string{k.Name, fmt.Sprintf("%s: %s", k.Path, k.Type)}
		var notes []string
		if k.TTL > 0 {
			notes = append(notes, "ttl "+k.TTL.String())
		}
		if k.Persist {
			notes = append(notes, "persist")
		}
		if len(notes) > 0 {
			lines = append(lines, strings.Join(notes, ", "))
		}
		p("  %s --> %s[\"%s\"]\n", parent, id(k), mermaidLabel(lines...))
	}
	lock := func(parent string, l *Lock) {
		p("  %s --> %s{{\"%s\"}}\n", parent, id(l), mermaidLabel(l.Name+" (lock)", fmt.Sprintf("%s, lease %s", l.Path, l.TTL)))
	}
	for _, l := range s.Locks {
		lock("store", l)
	}
	for _, k := range s.Keys {
		key("store", k)
	}
	for _, g := range s.Groups {
		gid := id(g)
		p("  store --> %s([\"%s\"])\n", gid, mermaidLabel(g.Name, g.Path.String()))
		for _, l := range g.Locks {
			lock(gid, l)
		}
		for _, k := range g.Keys {
			key(gid, k)
		}
	}
	for _, k := range s.AllKeys() {
		if k.Guard != nil && ids[k.Guard] != "" {
			p("  %s -. guards .-> %s\n", ids[k.Guard], ids[k])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mermaidLabel joins lines into a quoted Mermaid label. Quotes, angle
// brackets, '&', '#' and backquotes become Mermaid's #code; entities, so
// that neither a path nor a name can end the label, the ```mermaid block
// or inject markup; hidden and line-breaking characters are written as
// \uXXXX; the lines are joined with <br/>.
func mermaidLabel(lines ...string) string {
	for i, l := range lines {
		var b strings.Builder
		for _, c := range strings.ToValidUTF8(l, "\uFFFD") {
			switch {
			case textsafe.Hidden(c) || textsafe.LineBreak(c):
				b.WriteString(textsafe.Escape(c))
			default:
				b.WriteString(mermaidEntities.Replace(string(c)))
			}
		}
		lines[i] = b.String()
	}
	return strings.Join(lines, "<br/>")
}

var mermaidEntities = strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "&", "#amp;", "#", "#35;", "`", "#96;")
