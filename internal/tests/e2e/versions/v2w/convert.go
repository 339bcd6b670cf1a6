package versionsv2w

import "errors"

// convertSetPointV1 brings a SetPoint stored as version 1 (Fahrenheit)
// to version 2: mode and note arrive copied.
func convertSetPointV1(from SetPointV1, to *SetPoint) error {
	to.Celsius = (from.Fahrenheit - 32) * 5 / 9
	return nil
}

// convertSetPointToV1 writes a SetPoint as version 1, which this
// schema's write_version keeps writing: mode and note arrive copied.
func convertSetPointToV1(from SetPoint, to *SetPointV1) error {
	if from.Celsius < -273.15 {
		return errors.New("below absolute zero")
	}
	to.Fahrenheit = from.Celsius*9/5 + 32
	return nil
}
