package versions

func convertReadingV1(from ReadingV1, to *Reading) error {
	to.Kelvin = (from.Fahrenheit-32)*5/9 + 273.15
	to.Unit = "K"
	return nil
}

func convertReadingV2(from ReadingV2, to *Reading) error {
	to.Kelvin = from.Celsius + 273.15
	to.Unit = "K"
	return nil
}

func convertReadingToV2(from Reading, to *ReadingV2) error {
	to.Celsius = from.Kelvin - 273.15
	return nil
}
