package versionsv2

import (
	"errors"
	"math"
)

// convertSetPointV1 brings a SetPoint stored as version 1 (Fahrenheit)
// to version 2: mode and note arrive copied.
func convertSetPointV1(from SetPointV1, to *SetPoint) error {
	if math.IsNaN(from.Fahrenheit) {
		return errors.New("fahrenheit is NaN")
	}
	to.Celsius = (from.Fahrenheit - 32) * 5 / 9
	return nil
}
