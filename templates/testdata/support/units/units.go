// Package units is the go_type used by the gotype golden case; the
// compile test copies it next to the generated code.
package units

import "strconv"

// Celsius is a temperature that brings its own text codec.
type Celsius float64

// MarshalText writes the temperature with a unit.
func (c Celsius) MarshalText() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(c), 'f', -1, 64), nil
}

// UnmarshalText parses what MarshalText writes.
func (c *Celsius) UnmarshalText(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*c = Celsius(f)
	return nil
}
