package etcdstore

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
	"github.com/ssgen/ssgen/server/engine"
)

// Sub-prefixes of the layout (doc.go).
const (
	keysDir    = "k/"
	watchesDir = "w/"
	clockKey   = "clock"
	leaderDir  = "leader"
)

// recordFormat is the first byte of a record's etcd value.
const recordFormat = 1

var errBadRecord = errors.New("etcdstore: malformed record")

// encodeRecord is r's etcd value: the format byte, the version and the
// fencing token as length-prefixed text, the deadline in Unix nanoseconds
// (0: none), then the value.
func encodeRecord(r *engine.Record) []byte {
	v, f := r.Version.String(), ""
	if !r.Fence.IsZero() {
		f = r.Fence.String()
	}
	b := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(v)+len(f)+binary.MaxVarintLen64+len(r.Value))
	b = append(b, recordFormat)
	b = binary.AppendUvarint(b, uint64(len(v)))
	b = append(b, v...)
	b = binary.AppendUvarint(b, uint64(len(f)))
	b = append(b, f...)
	var dl int64
	if !r.Deadline.IsZero() {
		dl = r.Deadline.UnixNano()
	}
	b = binary.AppendVarint(b, dl)
	return append(b, r.Value...)
}

// decodeRecord is encodeRecord's inverse; the value aliases b.
func decodeRecord(key string, b []byte) (engine.Record, error) {
	r := engine.Record{Key: key}
	if len(b) == 0 || b[0] != recordFormat {
		return r, errBadRecord
	}
	b = b[1:]
	text := func() (string, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return "", false
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s, true
	}
	v, ok := text()
	if !ok {
		return r, errBadRecord
	}
	f, ok := text()
	if !ok {
		return r, errBadRecord
	}
	dl, k := binary.Varint(b)
	if k <= 0 {
		return r, errBadRecord
	}
	b = b[k:]
	var err error
	if r.Version, err = hlc.Parse(v); err != nil {
		return r, errBadRecord
	}
	if f != "" {
		if r.Fence, err = hlc.Parse(f); err != nil {
			return r, errBadRecord
		}
	}
	if dl != 0 {
		r.Deadline = time.Unix(0, dl)
	}
	r.Value = b
	return r, nil
}

// watchKey is the suffix (after the prefix) of client's registration for
// key; watchClient is the prefix of all of client's registrations. The
// client's length comes first, so no client's registrations share a
// prefix with another's.
func watchClient(client string) string {
	return watchesDir + string(binary.AppendUvarint(nil, uint64(len(client)))) + client
}

func watchKey(client, key string) string { return watchClient(client) + key }

// parseWatch splits a registration's suffix (after watchesDir).
func parseWatch(s string) (client, key string, ok bool) {
	n, k := binary.Uvarint([]byte(s))
	if k <= 0 || n > uint64(len(s)-k) {
		return "", "", false
	}
	return s[k : k+int(n)], s[k+int(n):], true
}
