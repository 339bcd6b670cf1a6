package pahostore

import (
	"bytes"
	"errors"
	"testing"
)

func TestDiscardKeepsNothing(t *testing.T) {
	var d Discard
	if err := d.Put(1, 3, bytes.NewBufferString("packet")); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if ids, err := d.List(); err != nil || len(ids) != 0 {
		t.Fatalf("List = %v, %v; want nothing", ids, err)
	}
	if _, err := d.Get(1); !errors.Is(err, ErrNotStored) {
		t.Fatalf("Get: %v, want ErrNotStored", err)
	}
	for name, err := range map[string]error{"Delete": d.Delete(1), "Quarantine": d.Quarantine(1), "Reset": d.Reset()} {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if NewState() == nil {
		t.Fatal("NewState returned nil")
	}
}
