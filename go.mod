module github.com/ssgen/ssgen

go 1.24.0

require (
	github.com/dave/jennifer v1.7.1
	github.com/eclipse/paho.golang v0.23.0
	github.com/google/btree v1.1.3
	github.com/mochi-mqtt/server/v2 v2.7.9
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
	github.com/vmihailenco/msgpack/v5 v5.4.1
	go.etcd.io/bbolt v1.4.3
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/crypto v0.45.0
	golang.org/x/sys v0.38.0
)

require (
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/rs/xid v1.4.0 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	golang.org/x/text v0.31.0 // indirect
)
