package bench

import (
	"os"
	"runtime"
	"strings"
)

// Machine is what the figures were measured on. The load average matters:
// the machine may be shared, and absolute numbers move with it.
type Machine struct {
	NumCPU     int    `json:"num_cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	LoadAvg    string `json:"load_avg"` // 1, 5 and 15 minutes; "" where unknown
	GoVersion  string `json:"go_version"`
}

func thisMachine() Machine {
	m := Machine{NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version()}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			m.LoadAvg = strings.Join(f[:3], " ")
		}
	}
	return m
}
