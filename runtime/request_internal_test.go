package runtime

import (
	"bytes"
	"testing"
	"time"

	"github.com/ssgen/ssgen/runtime/hlc"
)

func TestPublishSizeIsTheEncodedSize(t *testing.T) {
	c := &Client{cfg: Config{ClientID: "size-client"}, respTopic: ResponseTopic("size-client")}
	for _, n := range []int{0, 1, 100, 127, 128, 16000, 16384, 70000, 2100000} {
		for _, o := range []reqOpts{{}, {fencing: hlc.HLC{Wall: 1, Node: "n"}, persist: true}} {
			cl := c.getCall()
			cl.payload = make([]byte, n)
			pub := c.envelope(cl, hlc.HLC{Wall: 12345, Node: "size-client"}, o, time.Now().Add(time.Second))
			pub.PacketID = 1
			var buf bytes.Buffer
			if _, err := pub.Packet().WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			if got := publishSize(pub); got != buf.Len() {
				t.Errorf("payload %d, opts %+v: publishSize = %d, encoded %d", n, o, got, buf.Len())
			}
		}
	}
}
