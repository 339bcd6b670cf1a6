module github.com/ssgen/ssgen/interop

go 1.25.0

require (
	github.com/Azure/iot-operations-sdks/go/mqtt v0.4.2
	github.com/Azure/iot-operations-sdks/go/protocol v0.4.3
	github.com/Azure/iot-operations-sdks/go/services v0.4.1
	github.com/ssgen/ssgen v0.0.0
)

require (
	github.com/Azure/iot-operations-sdks/go/internal v0.3.1 // indirect
	github.com/VividCortex/ewma v1.2.0 // indirect
	github.com/cheggaaa/pb/v3 v3.1.7 // indirect
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/eclipse/paho.golang v0.23.0 // indirect
	github.com/fatih/color v1.19.0 // indirect
	github.com/fsnotify/fsnotify v1.9.0 // indirect
	github.com/google/btree v1.1.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/iancoleman/strcase v0.3.0 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/mattn/go-runewidth v0.0.21 // indirect
	github.com/mochi-mqtt/server/v2 v2.7.9 // indirect
	github.com/princjef/mageutil v1.0.0 // indirect
	github.com/relvacode/iso8601 v1.7.0 // indirect
	github.com/rs/xid v1.4.0 // indirect
	github.com/sosodev/duration v1.4.0 // indirect
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	go.etcd.io/bbolt v1.4.3 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/crypto v0.45.0 // indirect
	golang.org/x/sys v0.42.0 // indirect
)

replace github.com/ssgen/ssgen => ../
