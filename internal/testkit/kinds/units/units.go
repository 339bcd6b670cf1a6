// Package units holds Celsius, the go_type of the schemaval test fixture:
// a type that brings its own text form ("21.5C"), which encoding/json
// and the string encoding use.
package units

import (
	"errors"
	"strconv"
	"strings"
)

// Celsius is a temperature. Its text form is the number followed by "C".
type Celsius float64

// MarshalText writes "21.5C".
func (c Celsius) MarshalText() ([]byte, error) {
	return append(strconv.AppendFloat(nil, float64(c), 'g', -1, 64), 'C'), nil
}

// UnmarshalText reads what MarshalText writes.
func (c *Celsius) UnmarshalText(b []byte) error {
	s, ok := strings.CutSuffix(string(b), "C")
	if !ok {
		return errors.New("units: want a number followed by C")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return err
	}
	*c = Celsius(f)
	return nil
}
