package thermostat

//go:generate go run github.com/ssgen/ssgen/cmd/ssgen generate
