package keyset

import "testing"

func TestAdd(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want []bool
	}{
		{"empty key first", []string{"", "a", ""}, []bool{true, true, false}},
		{"ascending", []string{"a", "b", "c"}, []bool{true, true, true}},
		{"repeat of the last", []string{"a", "b", "b"}, []bool{true, true, false}},
		{"repeat of an earlier one", []string{"a", "c", "b", "a", "c", "d"}, []bool{true, true, true, false, false, true}},
		{"descending", []string{"c", "b", "a", "b"}, []bool{true, true, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Set
			for i, k := range tt.keys {
				if got := s.Add([]byte(k)); got != tt.want[i] {
					t.Errorf("Add(%q) #%d = %v, want %v", k, i, got, tt.want[i])
				}
			}
		})
	}
}
