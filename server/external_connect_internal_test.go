package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// TestConnectAttemptEndsWithItsConnection: a broker that dies after
// CONNACK, before SUBACK (a restart at the wrong moment), ends the attempt
// at once. paho's Subscribe alone waits out its context, so the service
// stayed detached for connectTimeout (10 s) and its clients' requests
// found no state store meanwhile.
func TestConnectAttemptEndsWithItsConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		r := bufio.NewReader(conn)
		if readPacket(r) != nil { // CONNECT
			return
		}
		// CONNACK: no session present, success, no properties.
		if _, err := conn.Write([]byte{0x20, 0x03, 0x00, 0x00, 0x00}); err != nil {
			return
		}
		_ = readPacket(r) // SUBSCRIBE, never answered: the broker is gone
	}()
	s, err := New(Options{Broker: "mqtt://" + ln.Addr().String(), Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	x := s.tr.(*external)
	done := make(chan error, 1)
	go func() {
		_, err := x.connect(context.Background())
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("connect succeeded without a SUBACK")
		}
	case <-time.After(connectTimeout / 2):
		t.Fatal("the attempt outlived its connection: it waits for a SUBACK that cannot come")
	}
}

// readPacket reads one MQTT control packet (fixed header, variable byte
// length, body) and drops it.
func readPacket(r *bufio.Reader) error {
	if _, err := r.ReadByte(); err != nil {
		return err
	}
	n, mult := 0, 1
	for {
		b, err := r.ReadByte()
		if err != nil {
			return err
		}
		n += int(b&0x7f) * mult
		if b&0x80 == 0 {
			break
		}
		mult *= 128
	}
	_, err := io.CopyN(io.Discard, r, int64(n))
	return err
}
