package bench

import (
	"encoding/binary"
	"strconv"

	"github.com/eclipse/paho.golang/paho"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/runtime/hlc"
)

// echoShape is what the raw echo's packets carry besides their payload.
//
// By default that is the state store protocol's envelope
// (docs/wire-protocol.md): a request with the five user properties,
// content type, payload format and message expiry every request carries,
// and a reply with the content type and the __stat, __ts and __protVer of
// every response, with values as long as ssgen's. The
// echo then moves the same MQTT bytes as ssgen, which the protocol
// requires of any client, and the ratio to it is what ssgen adds on top.
// A bare echo carries only the response topic and correlation data.
//
// The values are built once: a raw echo computes no timestamps.
type echoShape struct {
	bare    bool
	reqUser paho.UserProperties
	expiry  uint32
	format  byte
	repUser []packets.UserProperty // the in-broker echo's
	repPaho paho.UserProperties    // the same, for the paho responder
}

const corrBytes = 16 // the runtime's correlation data length

func newEchoShape(bare bool, clientID string) *echoShape {
	s := &echoShape{bare: bare, expiry: 10}
	if bare {
		return s
	}
	ts := hlc.HLC{Wall: 1_763_800_000_000, Node: clientID}.String()
	s.reqUser = paho.UserProperties{
		{Key: protocol.PropSourceID, Value: clientID},
		{Key: protocol.PropTimestamp, Value: ts},
		{Key: protocol.PropProtocolVersion, Value: protocol.ProtocolVersion},
		{Key: protocol.PropPartition, Value: clientID},
		{Key: protocol.PropHighPriority, Value: ""},
	}
	s.repUser = []packets.UserProperty{
		{Key: protocol.PropStatus, Val: strconv.Itoa(protocol.StatusOK)},
		{Key: protocol.PropTimestamp, Val: hlc.HLC{Wall: 1_763_800_000_000, Node: protocol.ServiceNodeID}.String()},
		{Key: protocol.PropProtocolVersion, Val: protocol.ProtocolVersion},
	}
	for _, u := range s.repUser {
		s.repPaho = append(s.repPaho, paho.UserProperty{Key: u.Key, Value: u.Val})
	}
	return s
}

// request is the echo request with correlation id id.
func (s *echoShape) request(topic, respTopic string, payload []byte, id uint64) *paho.Publish {
	corr := make([]byte, corrBytes)
	binary.BigEndian.PutUint64(corr, id)
	p := &paho.Publish{
		QoS: 1, Topic: topic, Payload: payload,
		Properties: &paho.PublishProperties{ResponseTopic: respTopic, CorrelationData: corr},
	}
	if !s.bare {
		p.Properties.ContentType = protocol.ContentType
		p.Properties.PayloadFormat = &s.format
		p.Properties.MessageExpiry = &s.expiry
		p.Properties.User = s.reqUser
	}
	return p
}

// pahoReply is the paho responder's answer to req.
func (s *echoShape) pahoReply(req *paho.Publish) *paho.Publish {
	p := &paho.Publish{
		QoS: 1, Topic: req.Properties.ResponseTopic, Payload: make([]byte, len(req.Payload)),
		Properties: &paho.PublishProperties{CorrelationData: req.Properties.CorrelationData},
	}
	if !s.bare {
		p.Properties.ContentType = protocol.ContentType
		p.Properties.User = s.repPaho
	}
	return p
}

// mochiProps are the in-broker echo's reply properties for correlation
// data corr.
func (s *echoShape) mochiProps(corr []byte) packets.Properties {
	p := packets.Properties{CorrelationData: corr}
	if !s.bare {
		p.ContentType = protocol.ContentType
		p.User = s.repUser
	}
	return p
}
