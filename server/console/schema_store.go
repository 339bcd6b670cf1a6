package console

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ssgen/ssgen/internal/schemastore"
	"github.com/ssgen/ssgen/schema"
)

// storeSchema is the schema published in the console's own server under
// schemastore.Key (Options.SchemaFromStore): read when the console first
// needs it and again after the key changes (OnKeyChange marks it stale).
// A value there that is not a published schema leaves the console without
// one, and says why in the log and in /api/session.
type storeSchema struct {
	stale atomic.Bool
	mu    sync.Mutex
	view  *schemaView
	err   string // why the value under the key is not used, "" when it is or there is none
}

func newStoreSchema() *storeSchema {
	s := &storeSchema{}
	s.stale.Store(true)
	return s
}

// schemaView is the schema the console reads keys through now: the
// published one with SchemaFromStore, else Options.Schema's; nil when
// there is none.
func (c *Console) schemaView() *schemaView {
	st := c.store
	if st == nil {
		return c.fixed
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	// Cleared before the read: a change after it marks it stale again.
	if !st.stale.Swap(false) {
		return st.view
	}
	st.view, st.err = nil, ""
	ent, ok := c.srv.Engine().Lookup([]byte(schemastore.Key))
	if !ok {
		c.log.Info("console: no schema is published under " + schemastore.Key)
		return nil
	}
	p, err := schemastore.Decode(ent.Value)
	if err != nil {
		st.err = clipText(err.Error())
		c.log.Warn("console: the value under "+schemastore.Key+" is not used", "error", st.err)
		return nil
	}
	st.view = newSchemaView(p.Schema)
	c.log.Info("console: schema", "source", schema.Pos{Filename: schemastore.Source(p.Time)}.String(), "digest", p.Digest,
		"keys", len(p.Schema.AllKeys()), "locks", len(p.Schema.AllLocks()))
	return st.view
}

// schemaError is why the published schema is not used, "" when it is,
// when there is none, or without SchemaFromStore.
func (c *Console) schemaError() string {
	if c.store == nil {
		return ""
	}
	c.schemaView()
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	return c.store.err
}

// clipText bounds a message built from a value any client may write.
func clipText(s string) string {
	const max = 2000
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "..."
}
