package schema

import "testing"

func TestExportedNameSplitsWireNamesIntoWords(t *testing.T) {
	for in, want := range map[string]string{
		"celsius": "Celsius", "updatedBy": "UpdatedBy", "raised_at": "RaisedAt", "heat-pump": "HeatPump",
		"e-stop": "EStop", "_x": "X", "2nd": "2nd", "+": "", "a.b c": "ABC",
		// Initialisms are written in capitals, whatever their case.
		"id": "ID", "deviceId": "DeviceID", "device_id": "DeviceID", "deviceID": "DeviceID",
		"url": "URL", "homepageUrl": "HomepageURL", "http-server": "HTTPServer", "HTTPServer": "HTTPServer",
		"ttl": "TTL", "apiKey": "APIKey", "userIDs": "UserIDs", "ids": "Ids", "idle": "Idle",
		"v2": "V2", "utf8": "UTF8", "jsonPath": "JSONPath", "cpuPct": "CPUPct",
	} {
		if got := exportedName(in); got != want {
			t.Errorf("exportedName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnexportedNameLowersTheFirstWord(t *testing.T) {
	for in, want := range map[string]string{
		"Thermostat": "thermostat", "Line_Station": "lineStation", "HTTPServer": "httpServer",
		"ID": "id", "DeviceId": "deviceID", "": "",
	} {
		if got := unexportedName(in); got != want {
			t.Errorf("unexportedName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWordsCutsAtCaseChanges(t *testing.T) {
	for in, want := range map[string][]string{
		"updatedBy":  {"updated", "By"},
		"HTTPServer": {"HTTP", "Server"},
		"userIDs":    {"user", "I", "Ds"},
		"a1B":        {"a1", "B"},
		"x_y-z":      {"x", "y", "z"},
		"":           nil,
	} {
		got := words(in)
		if len(got) != len(want) {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("words(%q) = %q, want %q", in, got, want)
			}
		}
	}
}

func TestGeneratedUnexportedNamesUseInitialisms(t *testing.T) {
	g := &Group{Name: "HTTPServer"}
	p := &Param{Name: "id"}
	if got := g.TemplateVarName(); got != "httpServerTemplate" {
		t.Errorf("TemplateVarName = %q", got)
	}
	if got := p.PatternVarName("Line.Station"); got != "lineStationIDPattern" {
		t.Errorf("PatternVarName = %q", got)
	}
	if got := p.FieldName(); got != "ID" {
		t.Errorf("FieldName = %q", got)
	}
}
