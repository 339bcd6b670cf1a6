package templates

import (
	"fmt"
	"testing"
	"time"

	"github.com/dave/jennifer/jen"
)

func TestDurationsAreSpelledInTheLargestUnitThatDividesThem(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{10 * time.Second, "10 * time.Second"},
		{90 * time.Second, "90 * time.Second"},
		{2 * time.Hour, "2 * time.Hour"},
		{time.Hour + 2*time.Minute + 3*time.Second, "3723 * time.Second"},
		{500 * time.Millisecond, "500 * time.Millisecond"},
		{1500 * time.Microsecond, "1500 * time.Microsecond"},
		{7, "7 * time.Nanosecond"},
	}
	for _, tt := range tests {
		got := fmt.Sprintf("%#v", jen.Add(durationExpr(tt.d)))
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.d, got, tt.want)
		}
	}
}
