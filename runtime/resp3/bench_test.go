package resp3

import "testing"

var (
	benchKey   = []byte("thermostats/kitchen/setPoint")
	benchValue = make([]byte, 100)
	sink       []byte
)

func BenchmarkEncodeSet(b *testing.B) {
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendArray(buf[:0], 5)
		buf = AppendBulkString(buf, "SET")
		buf = AppendBulk(buf, benchKey)
		buf = AppendBulk(buf, benchValue)
		buf = AppendBulkString(buf, "PX")
		buf = AppendBulkString(buf, "30000")
	}
	sink = buf
}

func BenchmarkEncodeGet(b *testing.B) {
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendArray(buf[:0], 2)
		buf = AppendBulkString(buf, "GET")
		buf = AppendBulk(buf, benchKey)
	}
	sink = buf
}

func BenchmarkParseSetRequest(b *testing.B) {
	payload := AppendCommand(nil, []byte("SET"), benchKey, benchValue, []byte("PX"), []byte("30000"))
	args := make([][]byte, 0, 8)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		var err error
		if args, err = ParseRequest(payload, args[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseGetResponse(b *testing.B) {
	payload := AppendBulk(nil, benchValue)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseResponse(payload); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseNotification(b *testing.B) {
	payload := AppendNotifySet(nil, benchValue)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseNotification(payload); err != nil {
			b.Fatal(err)
		}
	}
}
